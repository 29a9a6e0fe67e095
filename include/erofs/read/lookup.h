/* SPDX-License-Identifier: MIT */
/* Looking a path up in an image (lib/read/lookup.c): fsck and dump --path. */
#ifndef EROFS_LOOKUP_H
#define EROFS_LOOKUP_H

#include <stdint.h>

#include "erofs/read/reader.h"

/*
 * fsck --path: the nid at path (components separated by '/', "." and ".."
 * as usual, at most EROFS_LOOKUP_MAXDEPTH deep) and the nid of the
 * directory holding it (the root's: itself).  -ENOENT or -ENOTDIR when
 * there is no such entry, else what the reader said (erofs_reader_error()).
 */
#define EROFS_LOOKUP_MAXDEPTH	2048
int erofs_lookup_path(struct erofs_reader *r, const char *path, uint64_t *nid, uint64_t *parent);

#endif
