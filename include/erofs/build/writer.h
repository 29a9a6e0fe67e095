/* SPDX-License-Identifier: MIT */
/*
 * Writing the metadata the planner laid out, after the data: directory and
 * symlink blocks, the shared xattr area, every inode record (core, xattrs,
 * index, inline tail), and last the superblock and its checksum, which
 * covers the records that share its block.
 */
#ifndef EROFS_WRITER_H
#define EROFS_WRITER_H

#include "erofs/common/build.h"
#include "erofs/build/image.h"
#include "erofs/build/layout.h"
#include "erofs/build/tails.h"
#include "erofs/source/tree.h"

/* With -m, plan->nr_blocks grows by the metabox inode's compressed blocks. */
int erofs_write_metadata(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			 struct erofs_plan *plan, struct erofs_image *img,
			 struct erofs_tails *tails);

#endif
