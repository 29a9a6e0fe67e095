/* SPDX-License-Identifier: MIT */
/*
 * Rebuild mode on the command line: SOURCE arguments that are EROFS images
 * (not directories) are layers to merge, bottom first; --clean=MODE says
 * where their data goes, and some options make no sense for each mode.
 */
#ifndef MKFS_REBUILD_H
#define MKFS_REBUILD_H

#include <stdbool.h>

#include "erofs/common/build.h"

/*
 * After the options: decides whether argv[first..argc) (IMAGE SOURCE...)
 * is rebuild mode; if so sets opts->image, the layers and, unless -b was
 * given, the first layer's block size.  0 (not rebuild mode: nothing set),
 * 1 (rebuild mode), or -errno (reported).
 */
int mkfs_rebuild_detect(int argc, char **argv, int first, struct erofs_build_options *opts,
			bool block_size_given);

/* --clean=MODE: what it means here, or -EINVAL/-EOPNOTSUPP (reported). */
int mkfs_rebuild_clean(const char *clean, struct erofs_build_options *opts);

/* Once every option is known: refuses what the mode cannot honour. */
int mkfs_rebuild_check(struct erofs_build_options *opts);

/*
 * --incremental[=MODE] (mode: its value, NULL when not given), after the
 * options: argv[first] must be an EROFS image to add to; takes its block
 * size (-b must agree), UUID (unless -U) and label (unless -L), and refuses
 * what cannot be added to it in place.  0, or -errno (reported).
 */
int mkfs_incremental_setup(int argc, char **argv, int first, struct erofs_build_options *opts,
			   const char *mode, bool block_size_given, bool uuid_given);

#endif
