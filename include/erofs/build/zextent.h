/* SPDX-License-Identifier: MIT */
/*
 * Encoded extents (-E48bit, Linux 6.15): instead of one index entry per
 * block, one record per extent (its encoded length and format, its byte
 * address, its logical start), cut to 4, 8, 16 or 32 bytes.  erofs-utils'
 * rule, followed here: used for compressed files without an inline tail
 * whenever the records take no more than full lcluster indexes would; 16
 * bytes (32 past 4 GiB), 8 when every extent but a shorter last one has the
 * same power-of-two length, 4 when those are also physically contiguous.
 */
#ifndef EROFS_ZEXTENT_H
#define EROFS_ZEXTENT_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/* The record size for this file, 0 when it keeps lcluster indexes. */
unsigned int erofs_zextent_recsz(const struct erofs_build_options *opts, uint32_t meta_size,
				 uint64_t file_size, const struct erofs_zinfo *zi);
/* Bytes after the inode core and xattrs (alignment, map header, records). */
uint32_t erofs_zextent_size(uint32_t meta_size, unsigned int recsz, uint32_t nr_extents);
/* Encodes them at out; blkaddr is the file's first data block. */
void erofs_zextent_encode(const struct erofs_build_options *opts, uint32_t meta_size,
			  uint64_t file_size, const struct erofs_zinfo *zi, uint32_t blkaddr,
			  uint8_t *out);

#endif
