/* SPDX-License-Identifier: MIT */
/*
 * Living with the tree of inode.h: paths built on demand from the parent
 * chain, opening a source file without following anything, the planner's
 * breadth-first list, and freeing it all.
 */
#ifndef EROFS_TREE_H
#define EROFS_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/*
 * The inode's path relative to the source root ("" for the root), built
 * from its first name and its parents' names: malloc'd, NULL when out of
 * memory.  Paths may be far longer than PATH_MAX.
 */
char *erofs_inode_path(const struct erofs_inode *inode);

/*
 * The same, for a message: never NULL ("(out of memory)" instead).  Release
 * it with erofs_shown_path_free().
 */
const char *erofs_shown_path(const struct erofs_inode *inode);
void erofs_shown_path_free(const char *shown);

/* Sets an inode's owner from uid/gid through --uid-offset/--gid-offset,
 * --all-root and --force-uid/--force-gid, in that order. */
void erofs_set_owner(const struct erofs_build_options *opts, struct erofs_inode *inode,
		     uint32_t uid, uint32_t gid);

/* Sets an inode's mtime through -T or SOURCE_DATE_EPOCH (fixed, or clamped). */
void erofs_set_mtime(const struct erofs_build_options *opts, struct erofs_inode *inode,
		     int64_t sec, uint32_t nsec);

/*
 * Opening a regular file of the tree for reading, directory by directory,
 * so that no path length limit applies and no symlink is followed.  A
 * cache per thread keeps the last directory chain open (its deepest
 * EROFS_DIR_CACHE_DEPTH levels): files come in tree order, so most opens
 * are one openat() and moving to a neighbouring directory costs as many
 * opens as directories lie between them.
 */
#define EROFS_DIR_CACHE_DEPTH 32
struct erofs_dir_cache {
	const struct erofs_inode *dir[EROFS_DIR_CACHE_DEPTH];	/* by depth % size */
	int fd[EROFS_DIR_CACHE_DEPTH];
	uint32_t depth;		/* depth of the deepest cached directory + 1; 0: empty */
};

void erofs_dir_cache_init(struct erofs_dir_cache *cache);
void erofs_dir_cache_release(struct erofs_dir_cache *cache);

/*
 * The fd of directory `dir`, owned by the cache (the source root's for the
 * root), or -1 with errno set.
 */
int erofs_tree_open_dir(const struct erofs_tree *tree, const struct erofs_inode *dir,
			struct erofs_dir_cache *cache);

/*
 * Returns an fd, or -1 with errno set.  An entry that is no longer a regular
 * file (replaced by a directory, a symlink, a FIFO... since the scan) is
 * ESTALE; it is never followed, and a FIFO is not waited on.  cache may be
 * NULL (then every directory on the way is opened).
 */
int erofs_tree_open_file(const struct erofs_tree *tree, const struct erofs_inode *inode,
			 struct erofs_dir_cache *cache);
/*
 * Where a regular file's first byte is in the fd erofs_tree_open_file()
 * gave: 0 for a directory source, its data_pos when a tar source keeps every
 * file's bytes in one file.
 */
#define EROFS_DATA_SPOOLED	(1ull << 63)
static inline uint64_t erofs_tree_data_base(const struct erofs_tree *tree,
					    const struct erofs_inode *inode)
{
	return tree->data_in_one_file ? inode->data_pos & ~EROFS_DATA_SPOOLED : 0;
}
/* Whether fd, open on inode's data, still holds inode->size bytes. */
bool erofs_tree_size_unchanged(const struct erofs_tree *tree, const struct erofs_inode *inode,
			       int fd);
/* The reason for "PATH: cannot open: REASON" after erofs_tree_open_file(). */
const char *erofs_tree_open_error(int err);
/* Opens the file and reports a failure with its path; fd or -errno. */
int erofs_tree_open_or_report(const struct erofs_build_options *opts,
			      const struct erofs_tree *tree, const struct erofs_inode *inode,
			      struct erofs_dir_cache *cache);

/*
 * Reports a failed read of a source file, naming it: -ENODATA "shrank",
 * -EAGAIN "changed size", anything else the errno's text.
 */
void erofs_report_source_error(const struct erofs_build_options *opts,
			       const struct erofs_inode *inode, int err);

/*
 * Reverses v[from, to): a depth-first walk pushes a directory's
 * subdirectories in name order, and the first name must come off the
 * stack first (scan.c, namedtree.c).
 */
static inline void erofs_inodes_reverse(struct erofs_inode **v, size_t from, size_t to)
{
	for (; from + 1 < to; from++, to--) {
		struct erofs_inode *t = v[from];

		v[from] = v[to - 1];
		v[to - 1] = t;
	}
}

/* Lists the inodes breadth-first into tree->inodes, each directory's
 * children in name order; a hard-linked inode appears once, where it is
 * first reached.  Once the scan is done; a second call keeps the list. */
int erofs_tree_list(struct erofs_tree *tree);

void erofs_tree_free(struct erofs_tree *tree);

/*
 * A regular file of size bytes that are all zeros, stored as nothing: a
 * chunk-based file whose chunks are holes (--tar=headerball, a layer's
 * file without a block).  Its data is settled: it goes to no pipeline.
 */
int erofs_inode_make_hole(struct erofs_inode *inode, uint64_t size, unsigned int blkszbits);

#endif
