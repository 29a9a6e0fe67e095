/* SPDX-License-Identifier: MIT */
/*
 * --block-list-file: the block map Android's target-files tools read
 * (sparse_img / rangelib): one line per regular file that has data blocks,
 * "/<mount point>/<path> <ranges>", ranges being block numbers and
 * inclusive "a-b" spans separated by spaces.  Data stored inline with the
 * inode (tails, ztailpacking) has no block of its own and is not listed; a
 * file with no data block at all gets no line.
 */
#ifndef EROFS_BLOCKLIST_H
#define EROFS_BLOCKLIST_H

#include "erofs/common/build.h"
#include "erofs/build/layout.h"
#include "erofs/source/tree.h"

/* Writes opts->block_list_file (replacing it atomically); no-op without it. */
int erofs_blocklist_write(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			  const struct erofs_plan *plan);

#endif
