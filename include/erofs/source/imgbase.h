/* SPDX-License-Identifier: MIT */
/*
 * --incremental added in place: the tree built from the new layer (a
 * directory or a tar) laid over the image it is added to, with overlayfs
 * rules, reading of the image only the directories the new layer reaches.
 *
 * The new layer's root and each of its directories that merges into a
 * directory of the image take that directory's record (EROFS_BASE_REWRITTEN:
 * rewritten over it, keeping its nid, so that the ".." of the image's
 * subdirectories stays true); every other entry of those directories is a
 * stub (EROFS_BASE_KEPT) that knows its nid and type only, so an untouched
 * subtree costs nothing and keeps its records.  Names of the new layer
 * win; its whiteouts (0:0 character devices) hide the image's entry and
 * stay; its opaque directories hide the image's contents; a directory
 * merged over an opaque one, or made over a whiteout, is opaque; with
 * --ovlfs-strip=1 the whiteouts and opaque markers go once they did that.
 * What the directories read show of damage the rewrite would make worse is
 * refused: a nid named twice where either name is a directory (a loop, or a
 * directory hard link), a file under two types, a kept entry naming a slot
 * inside a rewritten record or past the image's end, rewritten records
 * overlapping.  An entry's type is believed but where its inode is read
 * (an unknown type, a name the layer replaces): then the inode says.
 *
 * What the in-place form cannot express fails with EROFS_REWRITE_ALL, and
 * the build runs again rewriting all metadata: options that change what
 * the kept records mean or where the superblock's block ends (a metabox,
 * 48-bit, extra devices, fragments, long xattr prefixes, --zD, --MZ),
 * such an image, another block size, a compressed or metabox directory to
 * merge into, and a hard-linked file of the image losing a name (the link
 * count in its kept record would lie).
 */
#ifndef EROFS_IMGBASE_H
#define EROFS_IMGBASE_H

#include <stdbool.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/*
 * Whether the options leave the image's records their meaning (see above):
 * asked before the new layer is built, so that a build that must rewrite
 * all metadata does not first build the layer in place for nothing.
 */
bool erofs_base_options_allow(const struct erofs_build_options *opts);

/*
 * Lays tree (finished: its files' data in the image) over the image
 * opts->image and fills tree->base.  0, EROFS_REWRITE_ALL, or -errno
 * (reported, naming the image and the path).
 */
int erofs_base_graft(const struct erofs_build_options *opts, struct erofs_tree *tree);

#endif
