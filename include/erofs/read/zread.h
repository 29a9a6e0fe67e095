/* SPDX-License-Identifier: MIT */
/*
 * The compressed-data half of the image reader (lib/read/zread.c): map
 * headers, extent mapping and decoding, over the lcluster indexes
 * (zindexread.h), the extent records (zextread.h) and the fragment checks
 * (zpacked.h); rinode.c and rdata.c call into it for the compressed layouts.
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

/* Inode: map header and index placement for the compressed layouts;
 * extends vi->meta_end over the header and the index. */
int erofs_z_setup_inode(struct erofs_reader *r, struct erofs_rd_inode *vi);

/* Maps la (< i_size) to the whole extent containing it, with every index
 * entry of that extent checked. */
int erofs_z_map(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
		struct erofs_map *map);

void erofs_z_release(struct erofs_reader *r);

#endif
