/* SPDX-License-Identifier: MIT */
/*
 * The metabox (INCOMPAT_METABOX, Linux 6.17) of lib/read/rmetabox.c.
 */
#ifndef EROFS_RMETABOX_H
#define EROFS_RMETABOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* The metabox inode, loaded and checked when the reader opens
 * (erofs_mbox_free() on close). */
int erofs_mbox_load(struct erofs_reader *r);
void erofs_mbox_free(struct erofs_reader *r);

#endif
