/* SPDX-License-Identifier: MIT */
/*
 * The packed inode (fragments, lib/read/zpacked.c): loaded once, on first
 * use, through erofs_reader.load_inode; what a fragment of a file is
 * checked against.  erofs_packed_inode() itself is in reader.h.
 */
#ifndef EROFS_ZPACKED_H
#define EROFS_ZPACKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* The fragment of vi (z_fragoff, z_frag_la) must lie inside the packed inode. */
int erofs_z_check_fragment(struct erofs_reader *r, const struct erofs_rd_inode *vi);

/* Whether vi is the packed inode, loaded and usable. */
bool erofs_is_packed_inode(const struct erofs_reader *r, const struct erofs_rd_inode *vi);

/* Frees what the packed inode took (erofs_reader_close() does). */
void erofs_packed_free(struct erofs_reader *r);

#endif
