/* SPDX-License-Identifier: MIT */
/*
 * --tar=i: an index image of a tar.  The image holds the metadata only;
 * every regular file is one chunk of its own size (rounded up to a power of
 * two) whose data stays in the tar:
 *
 *  - --tar=i: the tar is the image's extra device 1, and the block size is
 *    512 bytes, the tar's own unit (as erofs-utils does): a file's chunk
 *    index names device 1 at its data's 512-byte block in the tar.  Mount
 *    with -o device=TAR (the tar on a block device, e.g. a loop device);
 *    fsck.erofs --device=TAR.  Linux must read 512-byte blocks: upstream
 *    from 6.4 (Debian's 6.1 kernels carry it too).
 *  - --tar=i,MAPFILE: the block size stays (4096 by default) and each file
 *    gets blocks of the image, left as holes; MAPFILE says which bytes of
 *    the tar fill them, one line per file as erofs-utils writes it:
 *    "BLKADDR NBLOCKS TAR_OFFSET [ZEROED]" (hex, hex, hex, then decimal
 *    bytes of zeros ending the last block, when not 0).  Copying those
 *    ranges into the image (or a device-mapper table doing the same) gives
 *    an ordinary one-device image, which Linux 6.1 mounts.
 */
#ifndef EROFS_TARINDEX_H
#define EROFS_TARINDEX_H

#include "erofs/common/build.h"
#include "erofs/source/inode.h"
#include "erofs/source/work.h"

/* The committer's step for one file: its chunk, where its data is. */
int erofs_tarindex_commit(struct erofs_commit *cc, struct erofs_work *w);

/* Writes --tar=i,MAPFILE for the committed tree: 0 or -errno (reported). */
int erofs_tarindex_write_mapfile(const struct erofs_build_options *opts,
				 const struct erofs_tree *tree);

#endif
