// SPDX-License-Identifier: MIT
/* Whole-file deduplication (see include/erofs/build/dedup.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/build/dedup.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/image.h"
#include "erofs/common/io.h"
#include "erofs/build/tails.h"
#include "erofs/source/tree.h"

#define COMPARE_PIECE	(1u << 20)

/* A stored file, chained by size. */
struct stored {
	uint64_t size;
	XXH128_hash_t hash;
	struct erofs_inode *inode;
	uint32_t next;		/* index + 1 of the next one in its bucket; 0: none */
	bool hashed;
};

/* A whole file a worker hashed: the lowest seq that had these bytes. */
struct hint {
	uint64_t size;
	XXH128_hash_t hash;
	uint64_t seq_plus1;	/* 0: empty slot */
};

struct erofs_dedup {
	struct stored *stored;
	uint32_t nr_stored, cap_stored;
	uint32_t *heads;	/* by size: index + 1 of the newest stored file */
	uint32_t heads_mask;

	pthread_mutex_t hint_lock;
	struct hint *hints;
	uint32_t hints_mask, nr_hints;
};

static uint32_t size_slot(uint64_t size, uint32_t mask)
{
	uint64_t h = size * 0x9E3779B97F4A7C15ull;

	return (uint32_t)(h >> 32) & mask;
}

int erofs_dedup_init(struct erofs_dedup **out)
{
	struct erofs_dedup *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->heads_mask = 4095;
	d->heads = calloc(d->heads_mask + 1, sizeof(*d->heads));
	d->hints_mask = 4095;
	d->hints = calloc(d->hints_mask + 1, sizeof(*d->hints));
	pthread_mutex_init(&d->hint_lock, NULL);
	*out = d;
	if (!d->heads || !d->hints) {
		erofs_dedup_free(d);
		return -ENOMEM;
	}
	return 0;
}

void erofs_dedup_free(struct erofs_dedup *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->hint_lock);
	free(d->stored);
	free(d->heads);
	free(d->hints);
	free(d);
}

static bool same_file_key(const struct hint *h, uint64_t size, XXH128_hash_t hash)
{
	return h->size == size && XXH128_isEqual(h->hash, hash);
}

static int grow_hints(struct erofs_dedup *d)
{
	uint32_t mask = d->hints_mask * 2 + 1;
	struct hint *bigger = calloc(mask + 1, sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	for (uint32_t i = 0; i <= d->hints_mask; i++) {
		uint32_t s;

		if (!d->hints[i].seq_plus1)
			continue;
		for (s = (uint32_t)d->hints[i].hash.low64 & mask; bigger[s].seq_plus1;
		     s = (s + 1) & mask)
			;
		bigger[s] = d->hints[i];
	}
	free(d->hints);
	d->hints = bigger;
	d->hints_mask = mask;
	return 0;
}

bool erofs_dedup_hint(struct erofs_dedup *d, uint64_t size, XXH128_hash_t hash, uint64_t seq)
{
	bool earlier = false;
	uint32_t s;

	pthread_mutex_lock(&d->hint_lock);
	if ((d->nr_hints + 1) * 2 > d->hints_mask && grow_hints(d)) {
		pthread_mutex_unlock(&d->hint_lock);
		return false;	/* only a hint: going without is fine */
	}
	for (s = (uint32_t)hash.low64 & d->hints_mask; d->hints[s].seq_plus1;
	     s = (s + 1) & d->hints_mask)
		if (same_file_key(&d->hints[s], size, hash))
			break;
	if (!d->hints[s].seq_plus1) {
		d->hints[s] = (struct hint){ .size = size, .hash = hash, .seq_plus1 = seq + 1 };
		d->nr_hints++;
	} else if (d->hints[s].seq_plus1 <= seq) {
		earlier = true;
	} else {
		d->hints[s].seq_plus1 = seq + 1;	/* a later one got here first */
	}
	pthread_mutex_unlock(&d->hint_lock);
	return earlier;
}

void erofs_dedup_hash_begin(struct erofs_commit *cc)
{
	if (!cc->dedup)
		return;
	cc->nr_segments = 0;
	cc->file_hashed = true;
	XXH3_128bits_reset(cc->file_hash);
}

void erofs_dedup_hash_segment(struct erofs_commit *cc, const struct erofs_work *w)
{
	XXH128_canonical_t c;

	if (!cc->dedup)
		return;
	if (!w->hashed) {
		cc->file_hashed = false;
		return;
	}
	if (!cc->nr_segments++)
		cc->first_hash = w->hash;
	XXH128_canonicalFromHash(&c, w->hash);
	XXH3_128bits_update(cc->file_hash, &c, sizeof(c));
}

bool erofs_dedup_hash_end(struct erofs_commit *cc, XXH128_hash_t *hash)
{
	if (!cc->dedup || !cc->file_hashed || !cc->nr_segments)
		return false;
	/* one segment: its own hash, so a small file needs no second pass */
	*hash = cc->nr_segments == 1 ? cc->first_hash : XXH3_128bits_digest(cc->file_hash);
	return true;
}

/*
 * Reads bytes of a file stored plain: its blocks from the image, its tail
 * from the tail store when it went inline.
 */
static int read_stored_plain(struct erofs_commit *cc, const struct erofs_inode *inode,
			     uint8_t *buf, size_t len, uint64_t off)
{
	const unsigned int bits = cc->opts->blkszbits;
	uint64_t in_blocks = inode->size - inode->tail_inline;
	size_t from_blocks = off < in_blocks ? (size_t)(in_blocks - off < len ? in_blocks - off : len)
					     : 0;
	int err = 0;

	if (from_blocks)
		err = erofs_image_pread(cc->img, buf, from_blocks,
					((uint64_t)inode->blkaddr << bits) + off);
	if (!err && from_blocks < len)
		err = erofs_tails_read(cc->tails, buf + from_blocks, len - from_blocks,
				       inode->tail_pos + (off + from_blocks - in_blocks));
	return err;
}

/* The hash of a plain file's stored bytes, segment by segment as workers hash. */
static int hash_stored_plain(struct erofs_commit *cc, struct stored *s)
{
	XXH3_state_t *state = XXH3_createState();
	XXH3_state_t *seg = XXH3_createState();
	const uint32_t segment = erofs_segment_size(cc->opts);
	uint32_t segments = 0;
	XXH128_hash_t first = { 0, 0 };
	int err = state && seg ? 0 : -ENOMEM;

	if (!err)
		XXH3_128bits_reset(state);
	for (uint64_t start = 0; !err && start < s->size; start += segment) {
		uint64_t end = s->size - start > segment ? start + segment : s->size;
		XXH128_canonical_t c;
		XXH128_hash_t h;

		XXH3_128bits_reset(seg);
		for (uint64_t pos = start; !err && pos < end; pos += COMPARE_PIECE) {
			size_t n = end - pos < COMPARE_PIECE ? (size_t)(end - pos) : COMPARE_PIECE;

			err = read_stored_plain(cc, s->inode, cc->scratch, n, pos);
			if (!err)
				XXH3_128bits_update(seg, cc->scratch, n);
		}
		h = XXH3_128bits_digest(seg);
		if (!segments++)
			first = h;
		XXH128_canonicalFromHash(&c, h);
		XXH3_128bits_update(state, &c, sizeof(c));
	}
	if (!err) {
		s->hash = segments == 1 ? first : XXH3_128bits_digest(state);
		s->hashed = true;
	}
	XXH3_freeState(state);
	XXH3_freeState(seg);
	return err;
}

/* Whether orig's stored bytes equal what fd holds (inode's data): the hash is not trusted alone. */
static int same_bytes(struct erofs_commit *cc, const struct erofs_inode *orig,
		      const struct erofs_inode *inode, int fd)
{
	const uint64_t base = erofs_tree_data_base(cc->tree, inode);
	const uint64_t orig_base = erofs_tree_data_base(cc->tree, orig);
	int orig_fd = -1, result = 1, err = 0;

	/* a compressed original is read from its source */
	if (orig->z && (orig_fd = erofs_tree_open_or_report(cc->opts, cc->tree, orig, NULL)) < 0)
		return orig_fd;
	for (uint64_t pos = 0; result == 1 && pos < orig->size; pos += COMPARE_PIECE) {
		size_t n = orig->size - pos < COMPARE_PIECE ? (size_t)(orig->size - pos)
							    : COMPARE_PIECE;

		/* a file that changes under us is not shared: its commit names it */
		if (erofs_pread_all(fd, cc->scratch2, n, base + pos))
			result = 0;
		else if (orig_fd >= 0)
			result = !erofs_pread_all(orig_fd, cc->scratch, n, orig_base + pos) &&
				 !memcmp(cc->scratch, cc->scratch2, n);
		else if ((err = read_stored_plain(cc, orig, cc->scratch, n, pos)))
			break;
		else
			result = !memcmp(cc->scratch, cc->scratch2, n);
	}
	if (orig_fd >= 0)
		close(orig_fd);
	return err ? err : result;
}

int erofs_dedup_find(struct erofs_commit *cc, const struct erofs_inode *inode,
		     XXH128_hash_t hash, int fd, struct erofs_inode **orig)
{
	struct erofs_dedup *d = cc->dedup;
	int err;

	*orig = NULL;
	for (uint32_t i = d->heads[size_slot(inode->size, d->heads_mask)]; i;
	     i = d->stored[i - 1].next) {
		struct stored *s = &d->stored[i - 1];

		if (s->size != inode->size)
			continue;
		if (!s->hashed && (err = hash_stored_plain(cc, s)))
			return err;
		if (!XXH128_isEqual(s->hash, hash))
			continue;
		err = same_bytes(cc, s->inode, inode, fd);
		if (err < 0)
			return err;
		if (err) {
			*orig = s->inode;
			return 0;
		}
	}
	return 0;
}

static int grow_stored(struct erofs_dedup *d)
{
	uint32_t cap = d->cap_stored ? d->cap_stored * 2 : 1024;
	struct stored *bigger = realloc(d->stored, cap * sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	d->stored = bigger;
	d->cap_stored = cap;
	if (cap > d->heads_mask + 1) {	/* rechain by size into a larger table */
		uint32_t mask = d->heads_mask * 2 + 1;
		uint32_t *heads = calloc(mask + 1, sizeof(*heads));

		if (!heads)
			return -ENOMEM;
		for (uint32_t i = 0; i < d->nr_stored; i++) {
			uint32_t slot = size_slot(d->stored[i].size, mask);

			d->stored[i].next = heads[slot];
			heads[slot] = i + 1;
		}
		free(d->heads);
		d->heads = heads;
		d->heads_mask = mask;
	}
	return 0;
}

int erofs_dedup_record(struct erofs_commit *cc, struct erofs_inode *inode, bool hashed,
		       XXH128_hash_t hash)
{
	struct erofs_dedup *d = cc->dedup;
	uint32_t slot;
	int err;

	if (d->nr_stored == d->cap_stored && (err = grow_stored(d)))
		return err;
	slot = size_slot(inode->size, d->heads_mask);
	d->stored[d->nr_stored] = (struct stored){
		.size = inode->size, .hash = hash, .inode = inode, .next = d->heads[slot],
		.hashed = hashed,
	};
	d->heads[slot] = ++d->nr_stored;
	return 0;
}
