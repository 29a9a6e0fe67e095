/* SPDX-License-Identifier: MIT */
/*
 * --incremental: adds SOURCE (a directory, or a tar with --tar=f) to the
 * existing image opts->image as a new top layer, with rebuild mode's
 * overlayfs rules (whiteouts delete, opaque directories hide).
 *
 * First, in place: SOURCE is built straight into the image, its data after
 * the image's blocks, and its tree laid over the image's
 * (lib/source/imgbase.c): only the directories it reaches are rewritten,
 * over their own records; every other record of the image stays, so an
 * increment costs what it adds.  Where that cannot be (EROFS_REWRITE_ALL),
 * the image is put back and two builds run instead: SOURCE alone into an
 * unnamed scratch image beside the image (every option about the tree
 * applies there), then rebuild mode's merge of that layer over the image
 * (lib/source/imgsrc.c), whose files' blocks and pclusters stay where they
 * are and whose metadata is all written anew after them.  A tar read from
 * a pipe is kept in a scratch file first, so that it can be read twice.
 *
 * The superblock keeps its UUID.  The image is written in place
 * (erofs_image_open_append()): the superblock, last, is the commit, and a
 * failure or a signal before puts the image back as it was (its first
 * block, its size, and every old record written over).
 */
#ifndef EROFS_INCREMENTAL_H
#define EROFS_INCREMENTAL_H

#include "erofs/build/mkfs.h"

int erofs_mkfs_incremental(const struct erofs_build_options *opts, struct erofs_tree *tree,
			   struct erofs_build_result *result);

#endif
