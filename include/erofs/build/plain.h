/* SPDX-License-Identifier: MIT */
/*
 * Files stored plain (uncompressed, not chunked): their whole blocks go to
 * the data area, copied inside the kernel where it can and with the
 * source's holes kept as holes; the last partial block goes inline after
 * the inode when it surely fits there, or to a block of its own.
 */
#ifndef EROFS_PLAIN_H
#define EROFS_PLAIN_H

#include <stdbool.h>

#include "erofs/source/tree.h"
#include "erofs/source/work.h"

/*
 * Whether the file's tail goes inline: decided before the inode's final
 * record size is known, so against the largest record it can have.
 */
bool erofs_plain_tail_inline(const struct erofs_build_options *opts,
			     const struct erofs_inode *inode);

/* Whether whole-file dedup hashes this file (an earlier file had its size). */
bool erofs_plain_wants_hash(const struct erofs_work_ctx *ctx, const struct erofs_inode *inode);

/* Worker: opens the file; reads and hashes its segment when dedup wants it. */
int erofs_plain_work(const struct erofs_work_ctx *ctx, struct erofs_work *w,
		     struct erofs_dir_cache *dirs);
/* Committer: a plain file's segment into the image (or the file shared with an earlier one). */
int erofs_plain_commit(struct erofs_commit *cc, struct erofs_work *w);

/*
 * --incremental: a base image's file keeps its whole blocks where they are
 * (kept_blkaddr); its tail, read from the spool, goes inline again, or,
 * where the new record has no room for it, into a block of its own, the
 * file becoming a block map over both.
 */
int erofs_plain_keep(struct erofs_commit *cc, struct erofs_work *w);
/*
 * Committer: stores the whole file plain from its source, from cc->file_blk
 * on (a file whose compressed form did not gain).
 */
int erofs_plain_store(struct erofs_commit *cc, struct erofs_inode *inode, int fd);

/* Committer: makes inode share orig's data, if its record can hold orig's inline tail. */
bool erofs_share_data(struct erofs_commit *cc, struct erofs_inode *inode,
		      struct erofs_inode *orig);

#endif
