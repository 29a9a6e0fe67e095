/* SPDX-License-Identifier: MIT */
/*
 * Metadata compression (-m): the metabox inode's data, the records of every
 * inode of the tree laid out by the planner, is compressed like a file
 * into whole pclusters of -m bytes, each stored compressed when that saves
 * a block and raw otherwise.  One thread, so the bytes never depend on
 * --workers.  --zD's packed inode (file fragments, then the directories'
 * entries, known only once the records are placed) is compressed the same
 * way, in pclusters of its own size.
 */
#ifndef EROFS_METABOX_H
#define EROFS_METABOX_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/*
 * Compresses size bytes of data with algorithms[alg] into zi's extents
 * (pclusters of zi->pcluster_size); *out receives the pclusters back to
 * back (zi->nr_blocks blocks, malloc'd).
 */
int erofs_buffer_compress(const struct erofs_build_options *opts, unsigned int alg,
			  const uint8_t *data, uint64_t size, struct erofs_zinfo *zi, uint8_t **out);

#endif
