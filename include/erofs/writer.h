/* SPDX-License-Identifier: MIT */
/* Writing the planned image: metadata, data, then the superblock and its checksum. */
#ifndef EROFS_WRITER_H
#define EROFS_WRITER_H

#include "erofs/build.h"
#include "erofs/layout.h"
#include "erofs/tree.h"

/* Writes opts->image, taking compressed data from spool_fd; on failure no
 * file is left at that path. */
int erofs_write_image(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		      const struct erofs_plan *plan, int spool_fd);

#endif
