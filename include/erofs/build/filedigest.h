/* SPDX-License-Identifier: MIT */
/*
 * --xattr-inode-digest in the data pipeline: when the source hands a file
 * over, its xattr set gets the digest pair (so the size of its xattrs is
 * known before its data is placed); the worker that takes the file's first
 * piece reads the whole file once more and fills the value in.  Each file's
 * digest is its own, so the image does not depend on the workers.
 */
#ifndef EROFS_FILEDIGEST_H
#define EROFS_FILEDIGEST_H

#include "erofs/source/tree.h"
#include "erofs/source/work.h"

/* Whether the file gets a digest: non-empty regular files of the tree. */
bool erofs_digest_wanted(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			 const struct erofs_inode *inode);
/* On hand-over: adds the pair and grows inode->ibody_bound.  0 or -ENOMEM. */
int erofs_digest_prepare(const struct erofs_build_options *opts, struct erofs_inode *inode);
/* On the worker: the SHA-256 of the file's bytes into its pair (errors reported). */
int erofs_digest_work(const struct erofs_work_ctx *ctx, const struct erofs_work *w,
		      struct erofs_dir_cache *dirs);

#endif
