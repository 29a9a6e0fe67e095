/* SPDX-License-Identifier: MIT */
/*
 * The directory source: scans opts->source into the tree depth first (a
 * directory's files, then its subdirectories' subtrees), each directory's
 * entries in name-byte order (so nothing depends on readdir order), and
 * hands every regular file with data to the pipeline as it finds it: that
 * is the data's order.  Directories are opened relative to
 * their parents, so no path length limit applies and nothing the tree
 * contains is followed; only a bounded number stay open however deep the
 * tree is, and moving from one directory to the next costs as many opens as
 * directories lie between them.
 * Owners, times, xattrs, the Android image step, exclusions and compress
 * hints are applied here, where each path is at hand.
 */
#ifndef EROFS_SCAN_H
#define EROFS_SCAN_H

#include "erofs/common/build.h"
#include "erofs/source/tree.h"
#include "erofs/source/work.h"

struct erofs_scan_source {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
};

/* The erofs_source::run of a directory scan (arg: struct erofs_scan_source). */
int erofs_scan_run(void *arg, erofs_file_sink sink, void *pipeline);

/*
 * What every source does to a regular file (the tar source too):
 * The pcluster size --compress-hints (or -C) gives a regular file, 0: store
 * it plain; a file of one block or less saves nothing, unless its
 * compressed form can go inline instead of its bytes.  path: relative to
 * the source root (only read when there are hints).
 */
void erofs_choose_compression(const struct erofs_build_options *opts,
			      struct erofs_inode *inode, const char *path);

/* Sizes of the regular files seen so far: a file of a size seen before
 * may be a duplicate, so whole-file dedup hashes it. */
struct erofs_size_set {
	uint64_t *slots;	/* size + 1; 0: empty */
	size_t mask, used;
};

/* Whether a file of this size was seen before; remembers it.  0 or -ENOMEM. */
int erofs_size_seen(struct erofs_size_set *s, uint64_t size, bool *seen);

#endif
