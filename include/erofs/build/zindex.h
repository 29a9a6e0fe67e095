/* SPDX-License-Identifier: MIT */
/*
 * Lcluster indexes of compressed files (full and compact), and the map
 * header in front of them.
 */
#ifndef EROFS_ZINDEX_H
#define EROFS_ZINDEX_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/* Bytes after the inode core and xattrs: alignment, map header and index
 * (zi NULL: the largest a file of this size can need). */
uint32_t erofs_zindex_size(const struct erofs_build_options *opts, uint32_t meta_size,
			   uint64_t file_size, const struct erofs_zinfo *zi);
/* h_advise for a compressed file with these options. */
uint16_t erofs_zadvise(const struct erofs_build_options *opts, const struct erofs_zinfo *zi);
/* Encodes erofs_zindex_size() bytes at out; blkaddr is the first data block. */
void erofs_zindex_encode(const struct erofs_build_options *opts, uint32_t meta_size,
			 uint64_t file_size, const struct erofs_zinfo *zi, uint32_t blkaddr,
			 uint8_t *out);

#endif
