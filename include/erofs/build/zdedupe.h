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
 *
 * Entries are kept in the order they were added, so the ones of a file
 * that is then stored another way can be taken back (erofs_zdedupe_mark()
 * and erofs_zdedupe_truncate()).
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
	uint8_t algorithm;	/* EROFS_COMPR_* of a compressed one */
};

struct erofs_zdedupe_entry {
	struct erofs_zdedupe_key key;
	const struct erofs_inode *owner;	/* the file whose blocks hold it */
	uint32_t pblk;			/* first block, counted in the owner's blocks */
	uint64_t lofs;			/* where it starts in the owner's data */
	uint32_t next;			/* index + 1 of the next entry in its bucket */
};

struct erofs_zdedupe {
	struct erofs_zdedupe_entry *entries;	/* in the order added */
	uint32_t nr_entries, cap;
	uint32_t *heads;		/* by hash: index + 1 of the newest entry */
	uint32_t mask;
};

void erofs_zdedupe_free(struct erofs_zdedupe *d);
int erofs_zdedupe_add(struct erofs_zdedupe *d, const struct erofs_zdedupe_entry *entry);
/*
 * Walks the entries with this key, newest first: *cursor starts at 0;
 * returns NULL when there are no more.  The caller confirms a candidate by
 * comparing bytes.
 */
const struct erofs_zdedupe_entry *erofs_zdedupe_next(const struct erofs_zdedupe *d,
						     const struct erofs_zdedupe_key *key,
						     uint32_t *cursor);
static inline uint32_t erofs_zdedupe_mark(const struct erofs_zdedupe *d)
{
	return d->nr_entries;
}
/* Forgets the entries added since the mark. */
void erofs_zdedupe_truncate(struct erofs_zdedupe *d, uint32_t mark);

#endif
