/* SPDX-License-Identifier: MIT */
/*
 * The tail store: bytes that will sit inline after an inode record (a plain
 * file's last partial block, a compressed file's inline pcluster) wait in a
 * scratch file beside the image from the moment their file commits until
 * the metadata is written, so memory does not grow with them.
 */
#ifndef EROFS_TAILS_H
#define EROFS_TAILS_H

#include <stddef.h>
#include <stdint.h>

#include "erofs/common/io.h"

struct erofs_tails {
	struct erofs_seq_writer out;
	uint64_t size;
	const uint8_t *map;	/* the whole store, once no more is added */
};

int erofs_tails_open(struct erofs_tails *t, const char *image);
void erofs_tails_close(struct erofs_tails *t);
/* Appends len bytes; *pos is where they are. */
int erofs_tails_add(struct erofs_tails *t, const void *data, size_t len, uint64_t *pos);
int erofs_tails_read(struct erofs_tails *t, void *buf, size_t len, uint64_t pos);
/*
 * Once every tail is in: maps the store, so that the metadata writer copies
 * tails from memory instead of making a read for each (a million for a
 * million small files).  Without it (no mapping possible), reads go on.
 */
int erofs_tails_seal(struct erofs_tails *t);

#endif
