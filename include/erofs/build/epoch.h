/* SPDX-License-Identifier: MIT */
/*
 * The superblock's epoch: the build time compact inodes read as their
 * mtime (they carry none of their own), chosen so that as many inodes as
 * possible stay compact.
 */
#ifndef EROFS_EPOCH_H
#define EROFS_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/tree.h"

struct erofs_epoch {
	int64_t sec;		/* superblock build time */
	uint32_t nsec;
	/* -E48bit: sec = max(0, mkfs time - 2^32 + 1), compact inodes' mtime
	 * counts from it; the superblock keeps mkfs time - sec here */
	uint32_t delta;
};

/*
 * The base image's epoch when appending; else --mkfs-time's, or the
 * fixed time of -T or SOURCE_DATE_EPOCH, or the tree's most common mtime (the
 * earliest on a tie).  -E48bit then moves it back as far as delta allows.
 */
int erofs_choose_epoch(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		       struct erofs_epoch *epoch);

/* The mkfs time: what the packed and metabox inodes take as their mtime. */
static inline int64_t erofs_epoch_mkfs_time(const struct erofs_epoch *epoch)
{
	return epoch->sec + epoch->delta;
}

/*
 * 48-bit: whether a compact inode can carry these mtime seconds (as
 * mtime - sec); its nanoseconds read as the superblock's nsec.
 */
static inline bool erofs_epoch_seconds_fit(const struct erofs_epoch *epoch, int64_t mtime)
{
	return mtime >= epoch->sec && (uint64_t)(mtime - epoch->sec) <= UINT32_MAX;
}

#endif
