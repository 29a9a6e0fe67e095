/* SPDX-License-Identifier: MIT */
/*
 * The in-memory tree that mkfs scans from the source directory.  Inodes and
 * directory entries are separate so that hard links share one inode.  The
 * scan fills the "source" part; the planner (layout.c) fills the "plan" part.
 */
#ifndef EROFS_TREE_H
#define EROFS_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "erofs/build.h"

struct erofs_xattr_set;
struct erofs_zinfo;
struct erofs_chunks;

struct erofs_dentry {
	char *name;
	uint16_t name_len;
	struct erofs_inode *inode;
};

struct erofs_inode {
	/* source */
	char *path;			/* relative to the source root ("" for the root) */
	struct erofs_inode *parent;	/* directory that first named it */
	uint16_t mode;
	uint32_t uid, gid;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint64_t size;			/* data bytes (for directories: set by the planner) */
	uint32_t rdev_major, rdev_minor;
	uint32_t nlink;			/* links found inside the tree (+ subdirs for dirs) */
	char *symlink;			/* target of a symlink */
	struct erofs_xattr_set *xattrs;
	struct erofs_zinfo *z;		/* compressed regular files: their extents */
	struct erofs_inode *same_data;	/* dedup: another file holds identical data */
	struct erofs_chunks *chunks;	/* --chunksize: where each chunk is */
	/* --chunksize, a file whose chunks are one run stored for it: kept
	 * flat, its whole blocks in the chunk area from this block on, its
	 * tail inline (no block rounded up, no chunk table) */
	bool in_chunk_area;
	uint32_t chunk_area_block;
	uint32_t ibody_bound;		/* largest xattr ibody among the inodes sharing
					 * this inode's data (an inline tail must fit all) */
	struct erofs_dentry *children;	/* directories: sorted by name bytes */
	uint32_t nr_children;

	/* plan */
	uint64_t nid;
	uint32_t ino;
	uint8_t version;		/* EROFS_INODE_COMPACT / _EXTENDED */
	uint8_t layout;			/* EROFS_LAYOUT_* */
	uint16_t xattr_icount;
	uint32_t xattr_size;
	uint32_t inline_size;		/* tail bytes stored after the inode */
	uint32_t index_size;		/* compressed: map header and lcluster index */
	uint32_t blkaddr;		/* first data block, or EROFS_NULL_ADDR */
	uint32_t nr_blocks;		/* data blocks outside the metadata area */
};

struct erofs_tree {
	struct erofs_inode *root;
	struct erofs_inode **inodes;	/* breadth-first, children in name order */
	uint32_t nr_inodes;
	uint64_t nr_files, nr_dirs, data_bytes;
	int source_dirfd;		/* kept open for the writer */
	/* -E fragments: the hidden inode holding fragments (no directory
	 * names it; not in inodes[]), or NULL */
	struct erofs_inode *packed;
	uint32_t nr_fragments, nr_shared_fragments;	/* fragments, and those stored once for several files */
	uint64_t shared_fragment_bytes;
};

/* Scans opts->source; returns 0 or a negative errno after printing why. */
int erofs_tree_scan(const struct erofs_build_options *opts, struct erofs_tree *tree);
void erofs_tree_free(struct erofs_tree *tree);

/* Sets an inode's owner from uid/gid through --uid-offset/--gid-offset,
 * --all-root and --force-uid/--force-gid, in that order. */
void erofs_set_owner(const struct erofs_build_options *opts, struct erofs_inode *inode,
		     uint32_t uid, uint32_t gid);

/*
 * Opens a regular file of the tree for reading, component by component, so
 * that no path length limit applies and no symlink is followed.  The cache
 * keeps the last parent directory open: files are visited directory by
 * directory, so most opens are one openat().  One cache per thread; NULL
 * for none.
 */
struct erofs_dir_cache {
	const struct erofs_inode *dir;
	int fd;
};

/*
 * Returns an fd, or -1 with errno set.  An entry that is no longer a regular
 * file (replaced by a directory, a symlink, a FIFO... since the scan) is
 * ESTALE; it is never followed, and a FIFO is not waited on.
 */
int erofs_tree_open_file(const struct erofs_tree *tree, const struct erofs_inode *inode,
			 struct erofs_dir_cache *cache);
/* The reason for "PATH: cannot open: REASON" after erofs_tree_open_file(). */
const char *erofs_tree_open_error(int err);
void erofs_dir_cache_release(struct erofs_dir_cache *cache);

static inline bool erofs_inode_is_dir(const struct erofs_inode *inode)
{
	return (inode->mode & 0170000) == 0040000;
}

#endif
