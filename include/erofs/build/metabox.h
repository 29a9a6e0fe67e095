/* SPDX-License-Identifier: MIT */
/*
 * Metadata compression (-m): the metabox inode's data, the records of every
 * inode of the tree laid out by the planner, is compressed like a file
 * into whole pclusters of -m bytes, each stored compressed when that saves
 * a block and raw otherwise.  One thread, so the bytes never depend on
 * --workers.
 */
#ifndef EROFS_METABOX_H
#define EROFS_METABOX_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/*
 * Compresses size bytes of data (whole blocks) into zi's extents; *out
 * receives the pclusters back to back (zi->nr_blocks blocks, malloc'd).
 */
int erofs_metabox_compress(const struct erofs_build_options *opts, const uint8_t *data,
			   uint64_t size, struct erofs_zinfo *zi, uint8_t **out);

#endif
