/* SPDX-License-Identifier: MIT */
/*
 * --incremental: adds SOURCE (a directory, or a tar with --tar=f) to the
 * existing image opts->image as a new top layer, with rebuild mode's
 * overlayfs rules (whiteouts delete, opaque directories hide).
 *
 * Two builds: SOURCE alone into an unnamed scratch image beside the image
 * (every option about the tree applies there: --aufs, owners, times,
 * excludes), then rebuild mode's merge of that layer over the image
 * (lib/source/imgsrc.c), whose files' blocks and pclusters stay where
 * they are;
 * what the merge writes, new data and all the metadata, goes after the
 * image's blocks, and the superblock keeps its UUID.  The image is written
 * in place (erofs_image_open_append()): the superblock, last, is the
 * commit, and a failure or a signal before puts the image back as it was.
 */
#ifndef EROFS_INCREMENTAL_H
#define EROFS_INCREMENTAL_H

#include "erofs/build/mkfs.h"

int erofs_mkfs_incremental(const struct erofs_build_options *opts, struct erofs_tree *tree,
			   struct erofs_build_result *result);

#endif
