/* SPDX-License-Identifier: MIT */
/*
 * Planning the metadata once the data is in the image: the epoch, every
 * inode's form and layout, the shared xattr area, nids, and the blocks of
 * directories and symlinks that do not fit inline.  Nothing is written
 * here; the writer follows the plan.
 *
 * Image layout, data first: block 0 holds the superblock at 1024; file data
 * follows from block 1 in the order the pipeline committed it (then the
 * packed inode's data); then the blocks of directories, long symlinks and
 * small files whose tail did not fit inline;
 * then the metadata area: the shared xattrs (unless they fit beside the
 * superblock) and the inode records (with their xattrs, indexes and inline
 * tails), placed best fit.  nid 0 is the
 * first byte of block 0 when the root's record fits beside the superblock
 * (the rest of block 0 holds records too), else of the metadata area; the
 * root's nid must fit the superblock's 16 bits either way.
 * --MZ: the records start a zone of their own (nothing beside the
 * superblock; nid 0 a block before it), --MZ=id's directory blocks after
 * them.  After the records: the metabox inode's data (-m), then --zD's
 * packed inode (zdir.h).
 */
#ifndef EROFS_LAYOUT_H
#define EROFS_LAYOUT_H

#include <stdint.h>

#include "erofs/build/epoch.h"
#include "erofs/common/build.h"
#include "erofs/common/format.h"
#include "erofs/source/tree.h"
#include "erofs/source/work.h"
#include "erofs/source/xattr.h"

struct erofs_plan {
	unsigned int blkszbits;
	struct erofs_epoch epoch;	/* superblock build time: compact inodes' mtime */
	struct erofs_xattr_table shared;
	uint64_t shared_pos;		/* where the shared area is (0: there is none) */
	uint32_t prefix_size;		/* the long xattr prefix table's bytes (0: none) */
	uint64_t prefix_pos;		/* its byte offset in the image, or 0 in the packed inode */
	uint32_t xattr_blkaddr;		/* shared xattr ids count from this block */
	uint32_t meta_blkaddr;		/* nid 0 is this block's first byte */
	uint32_t data_end;		/* the first block after the file data */
	uint32_t nr_blocks;		/* image size in blocks */
	uint64_t inline_bytes;		/* tails kept inside the metadata */
	uint32_t feature_incompat;
	uint16_t sb_u1;			/* lz4_max_distance, or the algorithm bitmap */
	uint16_t cfg_algs;		/* config records after the superblock, a bit each */
	uint32_t dict_size[EROFS_COMPR_MAX];	/* their lzma, deflate, zstd dictionaries */
	uint16_t max_pclusterblks;	/* the largest pcluster of the image, in blocks */
	uint32_t nr_extended;		/* inodes that needed the 64-byte form */
	/* --blobdev: one extra device, its slot right after the superblock */
	uint16_t extra_devices;
	uint16_t devt_slotoff;		/* the slot's byte offset / 128 */
	uint32_t blob_blocks;		/* the blob's size, set once its data is in */
	/*
	 * -m: every inode of the tree has its record in the data of this
	 * hidden inode (metabox_size bytes, whole blocks; nids with
	 * EROFS_NID_METABOX_BIT); its own record is in the metadata area, its
	 * data blocks follow the area (the writer compresses it and sets
	 * nr_blocks).  NULL without -m.
	 */
	struct erofs_inode *metabox;
	uint64_t metabox_size;
};

/* Whether the planner places the inode's data blocks: directories, symlinks,
 * and files under a block whose tail may go inline. */
bool erofs_placed_late(const struct erofs_inode *inode);

/* The end of what the superblock (with extslots extension slots) and the
 * config records of cfg_algs take in block 0. */
uint32_t erofs_super_end(uint16_t cfg_algs, unsigned int extslots);
/* The end of a device table of nr_devices slots after sb_end (sb_end for none). */
uint32_t erofs_devt_end(uint32_t sb_end, unsigned int nr_devices);

/* data_end: the first block the pipeline left free. */
int erofs_plan_image(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     uint32_t data_end, struct erofs_plan *plan);
void erofs_plan_free(struct erofs_plan *plan);

/* The records of the metadata area (see layout.c), in placement order. */
uint32_t erofs_plan_nr_area_records(const struct erofs_tree *tree, const struct erofs_plan *plan);
struct erofs_inode *erofs_plan_area_record(const struct erofs_tree *tree,
					   const struct erofs_plan *plan, uint32_t i);

static inline uint64_t erofs_inode_pos(const struct erofs_plan *plan, uint64_t nid)
{
	return ((uint64_t)plan->meta_blkaddr << plan->blkszbits) + (nid << 5);
}

#endif
