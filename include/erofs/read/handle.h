/* SPDX-License-Identifier: MIT */
/*
 * What is behind liberofs-forge's handle (struct eforge_image), for the
 * layers above the reader that this project builds on it: the check
 * (fsck.erofs), dump.erofs's views and erofsfuse's operations.  The front
 * ends open images through the public API (erofs-forge/erofs-forge.h) and
 * hand the handle to those layers, which reach the reader through these;
 * programs outside the project see only the public calls (these are not
 * exported from the shared library).
 */
#ifndef EROFS_HANDLE_H
#define EROFS_HANDLE_H

#include "erofs/read/rdopen.h"
#include "erofs/read/reader.h"

struct eforge_image;	/* erofs-forge/erofs-forge.h */

/* The reader of an open handle (valid until eforge_close()). */
struct erofs_reader *erofs_forge_reader(struct eforge_image *img);
/* The file and devices it was opened from (eforge_open_mem(): nothing
 * open, fd -1). */
const struct erofs_rd_source *erofs_forge_source(const struct eforge_image *img);

#endif
