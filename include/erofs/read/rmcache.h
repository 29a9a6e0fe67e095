/* SPDX-License-Identifier: MIT */
/*
 * Metadata reads (lib/read/rmcache.c): through a cache of a few image
 * blocks per reader, or from the metabox's data.
 */
#ifndef EROFS_RMCACHE_H
#define EROFS_RMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* Image metadata through a few cached blocks.
 * erofs_mcache_read() is erofs_dev_read() (reads longer than a block go
 * straight to the image); erofs_mcache_at() points *out at len bytes at
 * pos, which must not cross a block, valid until the next cached read.
 * erofs_meta_at() points *out at len (<= EROFS_META_AT_MAX) bytes of
 * metadata at pos of the image (across blocks too) or of the metabox
 * data, valid until the reader's next metadata read. */
#define EROFS_META_AT_MAX	32u
int erofs_mcache_read(struct erofs_reader *r, void *buf, size_t len, uint64_t pos);
int erofs_mcache_at(struct erofs_reader *r, uint64_t pos, size_t len, const uint8_t **out);
int erofs_meta_at(struct erofs_reader *r, bool in_mbox, uint64_t pos, size_t len,
		  const uint8_t **out);
void erofs_mcache_free(struct erofs_reader *r);

/* Reads len bytes of metadata at pos of the image, or of the metabox's
 * decoded data when in_mbox (through erofs_reader.read_inode_data). */
int erofs_meta_read(struct erofs_reader *r, bool in_mbox, void *buf, size_t len, uint64_t pos);

#endif
