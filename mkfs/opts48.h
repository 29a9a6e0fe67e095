/* SPDX-License-Identifier: MIT */
/* mkfs.erofs options of the 48-bit layout and metadata compression (-E48bit, -m). */
#ifndef MKFS_OPTS48_H
#define MKFS_OPTS48_H

#include <stddef.h>

#include "erofs/common/build.h"

/* -m BYTES[:X]: X is an index into the -z list or an algorithm of its own. */
int mkfs_parse_metabox(const char *arg, struct erofs_build_options *opts);

/* Checks once -b and -z are known: the metabox pcluster size, its algorithm. */
int mkfs_check_metabox(struct erofs_build_options *opts);

#endif
