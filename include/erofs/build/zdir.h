/* SPDX-License-Identifier: MIT */
/*
 * --zD (erofs-utils 1.9.4): directory data compressed.  Each directory's
 * entries, the same bytes a plain directory stores, become a whole
 * fragment of the packed inode (a COMPRESSED_FULL inode whose 8-byte map
 * header holds the fragment's offset with bit 63 set), after any file
 * fragments the pipeline stored.  The entries name children's nids, known
 * only once the records are placed, so the packed inode is built by the
 * writer: compressed with the first -z algorithm in pclusters of
 * -E fragments=SIZE (else -C) with full indexes (sized before it is
 * compressed), or stored plain without -z, its blocks after the metadata.
 * Linux reads this from 6.1 on (fragments; compressed data of directories
 * goes through the same page cache as files').
 */
#ifndef EROFS_ZDIR_H
#define EROFS_ZDIR_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/* Gives every directory its fragment and the tree its packed inode. */
int erofs_zdir_plan(const struct erofs_build_options *opts, struct erofs_tree *tree);

/*
 * Fills the packed inode's data and stores it after the image's
 * *image_blocks blocks of 1 << blkszbits bytes (which grows); *blocks
 * receives them (malloc'd).
 */
int erofs_zdir_write(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		     unsigned int blkszbits, uint32_t *image_blocks, uint8_t **blocks);

#endif
