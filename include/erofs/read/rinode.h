/* SPDX-License-Identifier: MIT */
/*
 * Inodes (lib/read/rinode.c): what the data reader needs besides
 * erofs_read_inode() (reader.h).
 */
#ifndef EROFS_RINODE_H
#define EROFS_RINODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

/* Only regular files, directories and symlinks have data to map. */
static inline bool erofs_mode_has_data(uint16_t mode)
{
	return S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode);
}

#endif
