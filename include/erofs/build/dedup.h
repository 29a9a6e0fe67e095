/* SPDX-License-Identifier: MIT */
/*
 * Whole-file deduplication: a regular file larger than a block whose bytes
 * equal an earlier file's shares that file's data (inode->same_data).  The
 * decision is made when the file commits, in order, so it does not depend
 * on the workers: equal size, then equal 128-bit hash, then equal bytes.
 *
 * Workers hash what they read anyway.  A file of a size no earlier file
 * had (the scan knows) is not hashed at all; an earlier file stored plain
 * without a hash is hashed from the image when a file of its size comes.
 * A worker that finds an earlier piece of work with the same size and hash
 * skips compressing (erofs_dedup_hint): the committer confirms, and
 * compresses after all in the rare case the bytes differ.
 */
#ifndef EROFS_DEDUP_H
#define EROFS_DEDUP_H

#include <stdbool.h>
#include <stdint.h>
#include <xxhash.h>

#include "erofs/source/work.h"

int erofs_dedup_init(struct erofs_dedup **out);
void erofs_dedup_free(struct erofs_dedup *d);

/*
 * For workers: whether an earlier piece of work (lower seq) had a whole
 * file of this size and hash; if not, this one is remembered.  Thread-safe.
 */
bool erofs_dedup_hint(struct erofs_dedup *d, uint64_t size, XXH128_hash_t hash, uint64_t seq);

/* The hash of a file from the hashes of its segments, in order. */
void erofs_dedup_hash_begin(struct erofs_commit *cc);
void erofs_dedup_hash_segment(struct erofs_commit *cc, const struct erofs_work *w);
/* Whether every segment was hashed; *hash is then the file's hash. */
bool erofs_dedup_hash_end(struct erofs_commit *cc, XXH128_hash_t *hash);

/*
 * For the committer: a stored file with the same bytes as inode (open as
 * fd), or NULL.  Returns 0, or an error already reported.
 */
int erofs_dedup_find(struct erofs_commit *cc, const struct erofs_inode *inode,
		     XXH128_hash_t hash, int fd, struct erofs_inode **orig);
/* Records a file that stored its own data; hashed false: hash it when needed. */
int erofs_dedup_record(struct erofs_commit *cc, struct erofs_inode *inode, bool hashed,
		       XXH128_hash_t hash);

#endif
