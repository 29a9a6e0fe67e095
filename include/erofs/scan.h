/* SPDX-License-Identifier: MIT */
/*
 * The directory source: scans opts->source into the tree breadth first, as
 * the planner numbers inodes, each directory's entries in name-byte order
 * (so nothing depends on readdir order), and hands every regular file with
 * data to the pipeline as it finds it.  Directories are opened relative to
 * their parents, so no path length limit applies and nothing the tree
 * contains is followed; only a bounded number stay open however deep the
 * tree is, and moving from one directory to the next costs as many opens as
 * directories lie between them.
 * Owners, times, xattrs, the Android image step, exclusions and compress
 * hints are applied here, where each path is at hand.
 */
#ifndef EROFS_SCAN_H
#define EROFS_SCAN_H

#include "erofs/build.h"
#include "erofs/tree.h"
#include "erofs/work.h"

struct erofs_scan_source {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
};

/* The erofs_source::run of a directory scan (arg: struct erofs_scan_source). */
int erofs_scan_run(void *arg, erofs_file_sink sink, void *pipeline);

#endif
