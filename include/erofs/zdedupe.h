/* SPDX-License-Identifier: MIT */
/*
 * -E dedupe for compressed images: an index of every pcluster written so
 * far, keyed by a 128-bit hash of its stored blocks together with its block
 * count, its raw flag and the bytes it decodes to.  A new pcluster that
 * matches (and whose bytes compare equal) is not written again: its extent
 * points at the stored one.  Only whole pclusters are shared, so every
 * extent still decodes its pcluster in full (no partial references, which
 * Linux 6.1 mishandles in some cases; see man/mkfs.erofs.8).  The index
 * holds hashes and positions only, never data.
 */
#ifndef EROFS_ZDEDUPE_H
#define EROFS_ZDEDUPE_H

#include <stdbool.h>
#include <stdint.h>
#include <xxhash.h>

struct erofs_inode;

struct erofs_zdedupe_key {
	XXH128_hash_t hash;	/* of the nblks stored blocks */
	uint32_t decoded;	/* bytes the pcluster decodes to */
	uint16_t nblks;
	bool raw;
};

struct erofs_zdedupe_entry {
	struct erofs_zdedupe_key key;
	struct erofs_inode *owner;	/* the file whose blocks hold it */
	uint32_t pblk;			/* first block, counted in the owner's blocks */
	uint64_t lofs;			/* where it starts in the owner's data */
	uint64_t spool_pos;		/* where its copy waits, to compare bytes */
};

struct erofs_zdedupe {
	struct erofs_zdedupe_entry *slots;	/* open addressing; owner NULL: empty */
	uint32_t nr_slots, nr_used;
};

void erofs_zdedupe_free(struct erofs_zdedupe *d);
int erofs_zdedupe_add(struct erofs_zdedupe *d, const struct erofs_zdedupe_entry *entry);
/*
 * Walks the entries with this key: *cursor starts at 0; returns NULL when
 * there are no more.  The caller confirms a candidate by comparing bytes.
 */
const struct erofs_zdedupe_entry *erofs_zdedupe_next(const struct erofs_zdedupe *d,
						     const struct erofs_zdedupe_key *key,
						     uint32_t *cursor);

#endif
