/* SPDX-License-Identifier: MIT */
/*
 * Whole-file deduplication: regular files with identical contents share
 * their data.  Candidates must have equal sizes, then equal 128-bit content
 * hashes, then equal bytes; the first file in plan order keeps the data and
 * the others point at it (inode->same_data).
 */
#ifndef EROFS_DEDUP_H
#define EROFS_DEDUP_H

#include <stdint.h>

#include "erofs/build.h"

struct erofs_tree;

struct erofs_dedup_stats {
	uint32_t files;		/* files whose data is another file's */
	uint64_t bytes;		/* their logical bytes */
};

int erofs_dedup_files(const struct erofs_build_options *opts, struct erofs_tree *tree,
		      struct erofs_dedup_stats *stats);

#endif
