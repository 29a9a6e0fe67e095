/* SPDX-License-Identifier: MIT */
/*
 * Building an image, start to end: the source feeds the data pipeline,
 * which writes the data; then the metadata is planned and written after it,
 * the image is put in place, and the Android block list written.
 */
#ifndef EROFS_MKFS_H
#define EROFS_MKFS_H

#include "erofs/common/build.h"
#include "erofs/build/layout.h"
#include "erofs/source/tree.h"
#include "erofs/source/work.h"

struct erofs_build_result {
	struct erofs_build_stats stats;
	struct erofs_plan plan;
};

/* Builds opts->image from opts->source (a directory, or a tar with opts->tar); on failure nothing is left at that path. */
int erofs_mkfs(const struct erofs_build_options *opts, struct erofs_tree *tree,
	       struct erofs_build_result *result);

#endif
