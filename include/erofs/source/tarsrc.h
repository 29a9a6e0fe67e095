/* SPDX-License-Identifier: MIT */
/*
 * The tar source: builds the tree from a tar stream (tar.h) as tar -x would
 * extract it, then hands its regular files to the pipeline.  Later entries
 * replace earlier ones of the same name (a directory over a directory only
 * updates it); missing parent directories are made 0755, owned as their
 * parent; hard links name the inode their target names at that point of
 * the stream.  Names with "..", absolute names and names under a
 * non-directory are refused.  With --aufs, ".wh.NAME" becomes an overlayfs
 * whiteout (a 0:0 character device) and ".wh..wh..opq" its directory's
 * trusted.overlay.opaque="y"; a directory holding whiteouts gets an empty
 * trusted.overlay.origin, as erofs-utils does.  --ovlfs-strip=1 leaves out
 * every whiteout and opaque marker instead.
 *
 * Data is not kept in memory: a plain, seekable input is read in place
 * (each file at its offset in the tar); anything else (a pipe, a
 * compressed stream) is copied once into an unlinked scratch file beside
 * the image.  Either way the tree's data_fd holds every file's bytes at
 * its inode's data_pos, which is all the pipeline's workers need.
 */
#ifndef EROFS_TARSRC_H
#define EROFS_TARSRC_H

#include "erofs/common/build.h"
#include "erofs/source/inode.h"
#include "erofs/source/work.h"

struct erofs_tar_source {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
};

/* The erofs_source::run of a tar stream (arg: struct erofs_tar_source). */
int erofs_tar_source_run(void *arg, erofs_file_sink sink, void *pipeline);

#endif
