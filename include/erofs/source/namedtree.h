/* SPDX-License-Identifier: MIT */
/*
 * Building the tree of inode.h by names, for the sources that are handed
 * entries rather than a directory to scan: a tar stream (tarsrc.h) and
 * EROFS layer images (imgsrc.h).  A (directory, name) hash finds an entry
 * in constant time however large the directory; a name given again is
 * replaced by pointing its entry at a new inode, and what no name reaches
 * any more is freed when the tree is finished.
 *
 * Finishing seals every directory (names sorted into one arena, whiteouts
 * dropped with --ovlfs-strip=1), gives each inode its first name, parent
 * and depth, and counts links, breadth first from the root.
 */
#ifndef EROFS_NAMEDTREE_H
#define EROFS_NAMEDTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"
#include "erofs/source/work.h"

#define EROFS_XATTR_OVL_OPAQUE	"trusted.overlay.opaque"
#define EROFS_XATTR_OVL_ORIGIN	"trusted.overlay.origin"

struct erofs_name_slot;

struct erofs_tree_builder {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_name_slot *slots;	/* (directory, name) -> its entry */
	size_t mask, used;
	struct erofs_inode **all;	/* every inode made, in the order made */
	size_t nr_all, cap_all;
};

/* A new, zeroed inode, owned by the builder until the tree is finished. */
struct erofs_inode *erofs_builder_new_inode(struct erofs_tree_builder *b);

/* The entry for name in dir (NULL: none and !create, or out of memory);
 * a created one names no inode yet: the caller sets d->inode at once. */
struct erofs_dentry *erofs_builder_lookup(struct erofs_tree_builder *b, struct erofs_inode *dir,
					  const char *name, size_t len, bool create);

/* An overlayfs whiteout: a 0:0 character device. */
static inline bool erofs_inode_is_whiteout(const struct erofs_inode *inode)
{
	return (inode->mode & 0170000) == 0020000 && !inode->rdev_major && !inode->rdev_minor;
}

/* Whether the xattrs make a directory opaque (trusted.overlay.opaque "y"). */
bool erofs_xattrs_opaque(const struct erofs_xattr_set *set);

/*
 * Seals the tree from tree->root and frees what no name reaches.  files:
 * the regular files with data, depth first as the directory source hands
 * them over (malloc'd).  On failure the tree is left for
 * erofs_builder_release() to free.
 */
int erofs_builder_finish(struct erofs_tree_builder *b, struct erofs_inode ***files,
			 size_t *nr_files);

/*
 * Hands files to the pipeline in batches, choosing each one's compression
 * (--compress-hints) and noting sizes seen before (whole-file dedup);
 * counts the tree's regular files and data bytes.
 */
int erofs_builder_hand_over(struct erofs_tree_builder *b, struct erofs_inode **files, size_t nr,
			    erofs_file_sink sink, void *pipeline);

/* Frees the builder's tables; with discard, every inode too (a failed
 * build whose tree was never finished: tree->root becomes NULL). */
void erofs_builder_release(struct erofs_tree_builder *b, bool discard);

#endif
