/* SPDX-License-Identifier: MIT */
/*
 * The compressed-data half of the image reader (lib/read/zread.c): compression
 * configuration in the superblock, map headers, lcluster indexes (full and
 * compact), extent mapping and LZ4 decoding.  reader.c calls into it for
 * the compressed layouts; the lcluster decoder is exposed for unit tests.
 *
 * Every value from the image is hostile: index positions are checked to lie
 * inside the inode's index and the image, every walk over lclusters is
 * bounded by the largest extent allowed (EROFS_Z_MAX_DSIZE), and decoding
 * uses liblz4's bounds-checked decoders into buffers of the expected size.
 */
#ifndef EROFS_ZREAD_H
#define EROFS_ZREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* Limits this reader enforces (newer kernels enforce the same). */
#define EROFS_Z_MAX_DSIZE	(12u << 20)	/* decoded bytes of one extent */
#define EROFS_Z_MAX_PCLUSTER_BLKS	256u	/* 1 MiB of 4 KiB blocks */
#define EROFS_ZFRAGMENT_INODE_BIT	7u	/* h_clusterbits: whole file in the packed inode */

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

/* Internal: names for the bits of a feature or algorithm mask. */
struct erofs_bitname {
	uint32_t bit;
	const char *name;
};

/* Writes the names of the bits set in mask ("a, b, unknown bits 0x..."). */
const char *erofs_name_bits(char *out, size_t len, uint32_t mask,
			    const struct erofs_bitname *names, size_t n);

/* Superblock: available algorithms and their configuration records. */
int erofs_z_load_config(struct erofs_reader *r);

/* Inode: map header and index placement for the compressed layouts;
 * extends vi->meta_end over the header and the index. */
int erofs_z_setup_inode(struct erofs_reader *r, struct erofs_rd_inode *vi);

/* Decodes the index entry of lcluster lcn (< vi->z_nlclusters), in
 * lib/read/zindexread.c.  With lookahead, delta[1] of a compact nonhead is
 * worked out as well. */
int erofs_z_load_lcluster(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			  uint64_t lcn, bool lookahead, struct erofs_lcluster *lc);

/* Maps la (< i_size) to the whole extent containing it, with every index
 * entry of that extent checked. */
int erofs_z_map(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
		struct erofs_map *map);

void erofs_z_release(struct erofs_reader *r);

/* The fragment of vi (z_fragoff, z_frag_la) must lie inside the packed inode. */
int erofs_z_check_fragment(struct erofs_reader *r, const struct erofs_rd_inode *vi);

/* ---- encoded extent records (48-bit), lib/build/zextent.c ---- */

struct erofs_zext_rec {
	uint32_t plen;			/* raw: length, partial bit, format */
	uint64_t pstart;		/* byte address (recsz >= 8) */
	uint64_t lstart;		/* file offset (recsz >= 16) */
};

/* A table of records, fetched one at a time through get (so that the unit
 * tests can hand-build them, and the reader read them from the metabox). */
struct erofs_zext_table {
	unsigned int recsz;		/* 4, 8, 16 or 32 */
	unsigned int lclusterbits;	/* recsz <= 8: one record per lcluster */
	uint64_t nrecs;
	uint64_t isize;
	uint64_t base;			/* recsz 4: where record 0's data starts */
	bool fragment;			/* the last record is the packed inode's tail */
	bool interlaced;		/* advise INTERLACED */
	unsigned int blkszbits;
	uint16_t algs;			/* the superblock's available algorithms */
	uint64_t phys_limit;		/* stored bytes must end at or before this */
	int (*get)(void *arg, uint64_t i, uint8_t *raw);	/* recsz bytes of record i */
	void *arg;
	/* recsz 4: the start of record run_idx, so sequential maps stay O(1) */
	bool run_valid;
	uint64_t run_idx, run_pa;
};

void erofs_zext_decode(const uint8_t *raw, unsigned int recsz, struct erofs_zext_rec *rec);
/* Checks the table as a whole (its size; with 16 and 32-byte records that
 * lstart rises strictly from 0 and stays below i_size): 0 or -EUCLEAN with
 * a message in err; an error of get is returned as is. */
int erofs_zext_check(struct erofs_zext_table *t, char *err, size_t errlen);
/* Maps la (< isize) to its extent, every field of its record checked.  A
 * hole comes back unmapped; the fragment tail as EROFS_MAP_FRAGMENT with
 * its offset in the packed inode in pa. */
int erofs_zext_map(struct erofs_zext_table *t, uint64_t la, struct erofs_map *map, char *err,
		   size_t errlen);

/* The reader's side: the map header h at byte hdr of vi's metadata space. */
int erofs_zext_setup(struct erofs_reader *r, struct erofs_rd_inode *vi, const uint8_t h[8],
		     uint64_t hdr);
int erofs_zext_map_inode(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
			 struct erofs_map *map, uint64_t *run_idx, uint64_t *run_pa, bool *run_valid);

#endif
