/* SPDX-License-Identifier: MIT */
/*
 * The data pipeline: a source (a directory scan, later a tar stream) hands
 * over regular files in a fixed order as it finds them; files are cut into
 * pieces of work at fixed points; workers read, hash and compress pieces
 * in parallel; the committer (the calling thread) takes finished pieces
 * strictly in order and writes them to their final place in the image.
 * Only a bounded number of pieces is in flight, so memory is bounded by
 * them, not by the tree's data; and since cut points and commit order do
 * not depend on the workers, neither does the image.  With -E fragments,
 * the packed inode's data is compressed the same way once every file has
 * committed.
 */
#ifndef EROFS_PIPELINE_H
#define EROFS_PIPELINE_H

#include "erofs/build/image.h"
#include "erofs/build/tails.h"
#include "erofs/source/work.h"

int erofs_pipeline_run(const struct erofs_build_options *opts, struct erofs_tree *tree,
		       const struct erofs_source *source, struct erofs_image *img,
		       struct erofs_tails *tails, struct erofs_build_stats *stats);

#endif
