// SPDX-License-Identifier: MIT
/* Planning the image layout (see include/erofs/layout.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/diag.h"
#include "erofs/dir.h"
#include "erofs/format.h"
#include "erofs/layout.h"
#include "erofs/tree.h"

struct mtime_key {
	int64_t sec;
	uint32_t nsec;
};

static int compare_mtimes(const void *a, const void *b)
{
	const struct mtime_key *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->nsec < y->nsec ? -1 : x->nsec > y->nsec;
}

/*
 * Compact inodes carry no mtime: they read back as the superblock epoch.
 * Unless the user fixed the epoch, use the most common mtime of the tree
 * (the earliest on a tie), so that as many inodes as possible stay compact.
 */
static int choose_epoch(const struct erofs_build_options *opts,
			const struct erofs_tree *tree, struct erofs_plan *plan)
{
	struct mtime_key *keys, best = { 0, 0 };
	uint32_t n = tree->nr_inodes, best_run = 0;

	if (opts->mkfs_time_set) {
		plan->epoch = opts->mkfs_time;
		plan->epoch_nsec = 0;
		return 0;
	}
	if (opts->time_policy != EROFS_TIME_KEEP) {
		plan->epoch = opts->fixed_time;
		plan->epoch_nsec = 0;
		return 0;
	}
	keys = malloc(n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		keys[i] = (struct mtime_key){ tree->inodes[i]->mtime, tree->inodes[i]->mtime_nsec };
	qsort(keys, n, sizeof(*keys), compare_mtimes);
	for (uint32_t start = 0, end; start < n; start = end) {
		for (end = start + 1; end < n && !compare_mtimes(&keys[start], &keys[end]); end++)
			;
		if (end - start > best_run) {
			best_run = end - start;
			best = keys[start];
		}
	}
	free(keys);
	plan->epoch = best.sec;
	plan->epoch_nsec = best.nsec;
	return 0;
}

static bool needs_extended(const struct erofs_build_options *opts,
			   const struct erofs_plan *plan, const struct erofs_inode *inode)
{
	bool mtime_fits = opts->ignore_mtime || opts->inode_form == EROFS_FORM_COMPACT ||
			  (inode->mtime == plan->epoch && inode->mtime_nsec == plan->epoch_nsec);

	return opts->inode_form == EROFS_FORM_EXTENDED || !mtime_fits ||
	       inode->size > UINT32_MAX || inode->uid > UINT16_MAX ||
	       inode->gid > UINT16_MAX || inode->nlink > UINT16_MAX;
}

static bool has_data(const struct erofs_inode *inode)
{
	return S_ISREG(inode->mode) || S_ISDIR(inode->mode) || S_ISLNK(inode->mode);
}

/*
 * Chooses FLAT_INLINE or FLAT_PLAIN and places the inode at *pos.  A tail
 * may not cross a block boundary: when it would, either pad to the next
 * block or give the tail a block of its own, whichever wastes less.
 */
static void place_inode(const struct erofs_build_options *opts, struct erofs_plan *plan,
			struct erofs_inode *inode, uint64_t *pos)
{
	const uint32_t blksz = 1u << plan->blkszbits;
	uint32_t meta = erofs_inode_core_size(inode->version) + inode->xattr_size;
	uint32_t tail = has_data(inode) ? (uint32_t)(inode->size & (blksz - 1)) : 0;
	uint64_t at = *pos;

	inode->layout = EROFS_LAYOUT_FLAT_PLAIN;
	inode->inline_size = 0;
	if (tail && opts->inline_data && meta + tail <= blksz) {
		uint64_t tail_at = at + meta;
		uint64_t next_block = (at | (blksz - 1)) + 1;
		bool crosses = (tail_at & (blksz - 1)) + tail > blksz;

		if (!crosses || next_block - at <= blksz - tail) {
			if (crosses)
				at = next_block;
			inode->layout = EROFS_LAYOUT_FLAT_INLINE;
			inode->inline_size = tail;
			plan->inline_bytes += tail;
		}
	}
	inode->nid = (at - ((uint64_t)plan->meta_blkaddr << plan->blkszbits)) >> EROFS_SLOT_BITS;
	at += meta + inode->inline_size;
	*pos = (at + EROFS_SLOT_SIZE - 1) & ~(uint64_t)(EROFS_SLOT_SIZE - 1);
}

static int assign_data_blocks(struct erofs_tree *tree, struct erofs_plan *plan)
{
	const unsigned int bits = plan->blkszbits;
	uint64_t next = plan->data_blkaddr;

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];
		uint64_t bytes = has_data(inode) ? inode->size - inode->inline_size : 0;

		inode->nr_blocks = (uint32_t)((bytes + (1u << bits) - 1) >> bits);
		inode->blkaddr = inode->nr_blocks ? (uint32_t)next : EROFS_NULL_ADDR;
		next += inode->nr_blocks;
		if (next > UINT32_MAX) {
			erofs_err("the image needs more than 2^32 blocks of %u bytes",
				  1u << bits);
			return -EFBIG;
		}
	}
	plan->nr_blocks = (uint32_t)next;
	return 0;
}

int erofs_plan_image(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     struct erofs_plan *plan)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	uint64_t pos, first_inode;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->blkszbits = opts->blkszbits;
	if ((err = choose_epoch(opts, tree, plan)))
		return err;

	/* the shared xattr area follows the superblock; xattr_blkaddr stays 0 */
	plan->shared_pos = EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE;
	err = erofs_xattr_plan(opts, tree, (uint32_t)(plan->shared_pos / 4), &plan->shared);
	if (err)
		return err;
	first_inode = (plan->shared_pos + plan->shared.size + EROFS_SLOT_SIZE - 1) &
		      ~(uint64_t)(EROFS_SLOT_SIZE - 1);
	/* the root nid is 16 bits wide: move nid 0 up if the area is that large */
	if (first_inode >> EROFS_SLOT_BITS > UINT16_MAX)
		plan->meta_blkaddr = (uint32_t)(first_inode >> opts->blkszbits);

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		inode->ino = i + 1;
		if (erofs_inode_is_dir(inode))
			inode->size = erofs_dir_data_size(inode, opts->blkszbits);
		inode->version = needs_extended(opts, plan, inode) ? EROFS_INODE_EXTENDED
								    : EROFS_INODE_COMPACT;
		plan->nr_extended += inode->version == EROFS_INODE_EXTENDED;
	}

	pos = first_inode;
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		place_inode(opts, plan, tree->inodes[i], &pos);
	if (tree->root->nid > UINT16_MAX) {
		erofs_err("internal error: root nid %llu does not fit the superblock",
			  (unsigned long long)tree->root->nid);
		return -EFBIG;
	}
	plan->meta_end = pos;
	plan->data_blkaddr = (uint32_t)((pos + blksz - 1) >> opts->blkszbits);
	return assign_data_blocks(tree, plan);
}

void erofs_plan_free(struct erofs_plan *plan)
{
	erofs_xattr_table_free(&plan->shared);
}
