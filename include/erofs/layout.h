/* SPDX-License-Identifier: MIT */
/*
 * Planning the image: the epoch, every inode's form, data layout, nid and
 * block address, the shared xattr area, and the image size.  Nothing is
 * written here; the writer follows the plan.
 *
 * Image layout: block 0 holds the superblock at 1024, then the shared xattr
 * area and the inodes (with their xattrs and inline tails) in breadth-first
 * order; whole data blocks follow the metadata, in the same order.
 */
#ifndef EROFS_LAYOUT_H
#define EROFS_LAYOUT_H

#include <stdint.h>

#include "erofs/build.h"
#include "erofs/xattr.h"

struct erofs_tree;

struct erofs_plan {
	unsigned int blkszbits;
	int64_t epoch;			/* superblock build time: compact inodes' mtime */
	uint32_t epoch_nsec;
	struct erofs_xattr_table shared;
	uint64_t shared_pos;		/* byte offset of the shared xattr area */
	uint32_t meta_blkaddr;		/* nid 0 is this block's first byte */
	uint64_t meta_end;		/* end of the metadata blocks */
	uint32_t data_blkaddr;		/* first block after the metadata */
	uint32_t chunk_blkaddr;		/* the chunk area, at the start of the data */
	uint32_t chunk_blocks;
	uint32_t nr_blocks;		/* image size in blocks */
	uint64_t inline_bytes;		/* tails kept inside the metadata */
	uint32_t feature_incompat;
	uint16_t sb_u1;			/* lz4_max_distance, or the algorithm bitmap */
	bool lz4_config;		/* an LZ4 config record follows the superblock */
	uint16_t max_pclusterblks;	/* the largest pcluster of the image, in blocks */
	uint32_t nr_compressed;		/* files stored compressed */
	uint64_t compressed_input;	/* their bytes before compression */
	uint32_t dedup_files;		/* files sharing another file's blocks */
	uint64_t dedup_bytes;		/* the blocks' bytes that sharing saved */
	uint32_t zdedupe_blocks;	/* -E dedupe: pcluster blocks used again, not stored */
	uint32_t nr_extended;		/* inodes that needed the 64-byte form */
};

/* chunk_area_bytes: the spooled chunks of --chunksize, placed first in the data */
int erofs_plan_image(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     uint64_t chunk_area_bytes, struct erofs_plan *plan);
void erofs_plan_free(struct erofs_plan *plan);

static inline uint64_t erofs_inode_pos(const struct erofs_plan *plan, uint64_t nid)
{
	return ((uint64_t)plan->meta_blkaddr << plan->blkszbits) + (nid << 5);
}

#endif
