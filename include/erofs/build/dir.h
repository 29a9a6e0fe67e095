/* SPDX-License-Identifier: MIT */
/*
 * Directory data: entries (including "." and "..") sorted by name bytes
 * across the whole directory and packed greedily into blocks.
 */
#ifndef EROFS_DIR_H
#define EROFS_DIR_H

#include <stdbool.h>
#include <stdint.h>

struct erofs_inode;

/*
 * Bytes of directory data: full blocks plus the used part of the last one.
 * dot_omitted (-E dot-omitted, 48-bit): no "." entry.
 */
uint64_t erofs_dir_data_size(const struct erofs_inode *dir, unsigned int blkszbits,
			     bool dot_omitted);

/* Encodes erofs_dir_data_size() bytes into out; children's nids must be planned. */
void erofs_dir_encode(const struct erofs_inode *dir, unsigned int blkszbits, bool dot_omitted,
		      uint8_t *out);

#endif
