// SPDX-License-Identifier: MIT
/* The superblock's epoch (see include/erofs/build/epoch.h). */
#include <errno.h>
#include <stdlib.h>

#include "erofs/build/epoch.h"

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
static int choose_epoch_32bit(const struct erofs_build_options *opts,
			      const struct erofs_tree *tree, struct erofs_epoch *epoch)
{
	struct mtime_key *keys, best = { 0, 0 };
	uint32_t n = tree->nr_inodes, best_run = 0;

	if (tree->base) {	/* the kept compact inodes read their mtime from it */
		epoch->sec = (int64_t)tree->base->sb.build_time;
		epoch->nsec = tree->base->sb.build_time_nsec;
		return 0;
	}
	if (opts->mkfs_time_set) {
		epoch->sec = opts->mkfs_time;
		epoch->nsec = 0;
		return 0;
	}
	if (opts->time_policy != EROFS_TIME_KEEP) {
		epoch->sec = opts->fixed_time;
		epoch->nsec = 0;
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
	epoch->sec = best.sec;
	epoch->nsec = best.nsec;
	return 0;
}

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * 48-bit: the time chosen above is the mkfs time; the epoch goes as far
 * back as the superblock's 32-bit delta allows (erofs-utils' rule), and
 * compact inodes carry their own seconds from it.  Their nanoseconds are
 * the superblock's: the most common of the tree (the smallest on a tie),
 * so that as many inodes as possible stay compact without losing any.
 */
static int move_epoch_48bit(const struct erofs_tree *tree, struct erofs_epoch *epoch)
{
	int64_t mkfs_time = epoch->sec;
	uint32_t n = tree->nr_inodes, *nsecs, best = 0, best_run = 0;

	epoch->sec = mkfs_time > (int64_t)UINT32_MAX ? mkfs_time - (int64_t)UINT32_MAX : 0;
	epoch->delta = mkfs_time > 0 ? (uint32_t)(mkfs_time - epoch->sec) : 0;
	nsecs = malloc((n ? n : 1) * sizeof(*nsecs));
	if (!nsecs)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		nsecs[i] = tree->inodes[i]->mtime_nsec;
	qsort(nsecs, n, sizeof(*nsecs), compare_u32);
	for (uint32_t start = 0, end; start < n; start = end) {
		for (end = start + 1; end < n && nsecs[end] == nsecs[start]; end++)
			;
		if (end - start > best_run) {
			best_run = end - start;
			best = nsecs[start];
		}
	}
	free(nsecs);
	epoch->nsec = best;
	return 0;
}

int erofs_choose_epoch(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		       struct erofs_epoch *epoch)
{
	int err = choose_epoch_32bit(opts, tree, epoch);

	if (!err && opts->layout_48bit)
		err = move_epoch_48bit(tree, epoch);
	return err;
}
