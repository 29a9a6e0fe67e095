/* SPDX-License-Identifier: MIT */
/*
 * The image source of rebuild mode: SOURCE is one or more EROFS images,
 * layers given bottom first, merged as overlayfs would show them.  Each
 * layer is read through the reader (lib/read/), which checks every byte;
 * its tree is laid over the layers below:
 *
 *  - a name given again replaces what lower layers had (its inode, its
 *    data, its xattrs), but a directory over a directory merges into it,
 *    taking the upper one's owner, mode, times and xattrs;
 *  - a whiteout (a 0:0 character device) deletes the lower entry and stays
 *    in the result, so that the merged image still hides what lies below
 *    it when it is used as a layer; --ovlfs-strip=1 leaves it out;
 *  - a directory with trusted.overlay.opaque="y" hides the lower
 *    directory's entries; --ovlfs-strip=1 leaves the marker out.
 *
 * Hard links stay links inside one layer (files that share a nid).
 *
 * Where file data goes (--clean=MODE, erofs_build_options::layer_data):
 *  - index (the default): nowhere; each regular file becomes chunk-based,
 *    its chunk indexes naming its layer as extra device N (the layer's
 *    slot: its block count, its UUID as 32 hex digits for a tag).  Only
 *    data stored in whole blocks of the layer can be pointed at: plain
 *    files, chunk-based files, tail-inlined files whose size is a multiple
 *    of the block size.  A compressed or tail-packed file is refused,
 *    naming the layer and the path, with what would make it work.  A layer
 *    that is itself an index (a --tar=i image) stands for its one extra
 *    device: chunks point there, and the slot takes that device's size.
 *  - data: every file's bytes, decoded, are copied once into an unlinked
 *    spool beside the image (holes kept), then built like a tar's: -z,
 *    --chunksize, dedup and fragments all apply.  Any source layout.
 *  - rvsp: the files keep their sizes and get blocks, left unwritten.
 */
#ifndef EROFS_IMGSRC_H
#define EROFS_IMGSRC_H

#include "erofs/common/build.h"
#include "erofs/source/inode.h"
#include "erofs/source/work.h"

struct erofs_image_source {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
};

/* The erofs_source::run of rebuild mode (arg: struct erofs_image_source). */
int erofs_image_source_run(void *arg, erofs_file_sink sink, void *pipeline);

#endif
