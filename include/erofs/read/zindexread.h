/* SPDX-License-Identifier: MIT */
/*
 * Lcluster index entries of compressed files, full and compact, decoded
 * as Linux 6.1 decodes them (lib/read/zindexread.c); exposed for unit tests.
 */
#ifndef EROFS_ZINDEXREAD_H
#define EROFS_ZINDEXREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* Compact index packs: 2 entries of 16 bits, or 16 of 14 bits, + u32 blkaddr */
#define EROFS_Z_COMPACT_4B_PACK	8u
#define EROFS_Z_COMPACT_2B_PACK	32u

/* One lcluster's index entry, decoded the way Linux 6.1's zmap.c does. */
struct erofs_lcluster {
	uint64_t lcn;
	unsigned int type;		/* enum erofs_lcluster_type */
	unsigned int clusterofs;	/* heads: where the extent starts; nonheads: blksz */
	unsigned int delta[2];		/* nonheads: back to the head, on to the next head */
	uint32_t pblk;			/* heads: first block of the pcluster */
	uint32_t cblkcnt;		/* the CBLKCNT nonhead: its block count */
	bool has_cblkcnt;		/* this nonhead carries CBLKCNT (delta[0] is then 1) */
	bool partialref;		/* full index heads: PARTIAL_REF */
};

/* Decodes the index entry of lcluster lcn (< vi->z_nlclusters),  With lookahead, delta[1] of a compact nonhead is
 * worked out as well. */
int erofs_z_load_lcluster(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			  uint64_t lcn, bool lookahead, struct erofs_lcluster *lc);

#endif
