// SPDX-License-Identifier: MIT
/* The packed inode's data: fragments, stored once each (see include/erofs/build/fragment.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "erofs/common/diag.h"
#include "erofs/build/fragment.h"
#include "erofs/common/io.h"

struct erofs_fragment_slot {
	XXH128_hash_t hash;
	uint64_t off;
	uint32_t len;		/* 0: empty slot */
};

/* a stored fragment of EROFS_FRAGMENT_TAIL_KEY bytes or more, by its last ones */
struct erofs_fragment_tail {
	uint64_t key;		/* xxh64 of the last EROFS_FRAGMENT_TAIL_KEY bytes */
	uint64_t off;
	uint32_t len;		/* 0: empty slot */
};

int erofs_packed_open(struct erofs_packed *p, const char *image, bool suffixes)
{
	memset(p, 0, sizeof(*p));
	p->suffixes = suffixes;
	p->fd = erofs_scratch_open(image);
	return p->fd < 0 ? p->fd : 0;
}

void erofs_packed_close(struct erofs_packed *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p->slots);
	free(p->tails);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

static uint32_t slot_of(const struct erofs_packed *p, XXH128_hash_t hash)
{
	return (uint32_t)hash.low64 & (p->nr_slots - 1);
}

static int grow_index(struct erofs_packed *p)
{
	uint32_t old_n = p->nr_slots, n = old_n ? old_n * 2 : 4096;
	struct erofs_fragment_slot *old = p->slots;

	p->slots = calloc(n, sizeof(*p->slots));
	if (!p->slots) {
		p->slots = old;
		return -ENOMEM;
	}
	p->nr_slots = n;
	for (uint32_t i = 0; i < old_n; i++) {
		uint32_t s;

		if (!old[i].len)
			continue;
		for (s = slot_of(p, old[i].hash); p->slots[s].len; s = (s + 1) & (n - 1))
			;
		p->slots[s] = old[i];
	}
	free(old);
	return 0;
}

static uint64_t tail_key(const uint8_t *data, uint32_t len)
{
	return XXH3_64bits(data + len - EROFS_FRAGMENT_TAIL_KEY, EROFS_FRAGMENT_TAIL_KEY);
}

/* Several fragments may share a key: each has a slot of its own. */
static int add_tail(struct erofs_packed *p, uint64_t key, uint64_t off, uint32_t len)
{
	uint32_t s;

	if (p->nr_tails + 1 > p->nr_tail_slots / 2) {
		uint32_t old_n = p->nr_tail_slots, n = old_n ? old_n * 2 : 4096;
		struct erofs_fragment_tail *old = p->tails;

		if (!(p->tails = calloc(n, sizeof(*p->tails)))) {
			p->tails = old;
			return -ENOMEM;
		}
		p->nr_tail_slots = n;
		p->nr_tails = 0;
		for (uint32_t i = 0; i < old_n; i++)
			if (old[i].len)
				add_tail(p, old[i].key, old[i].off, old[i].len);
		free(old);
	}
	for (s = (uint32_t)key & (p->nr_tail_slots - 1); p->tails[s].len;
	     s = (s + 1) & (p->nr_tail_slots - 1))
		;
	p->tails[s] = (struct erofs_fragment_tail){ .key = key, .off = off, .len = len };
	p->nr_tails++;
	return 0;
}

/* The length of the run that ends both data and the stored_len bytes ending at stored_end. */
static int common_run(const struct erofs_packed *p, uint64_t stored_end, uint32_t stored_len,
		      const uint8_t *data, uint32_t len, uint32_t *run)
{
	uint8_t buf[16384];
	uint32_t most = stored_len < len ? stored_len : len;

	*run = 0;
	while (*run < most) {
		uint32_t n = most - *run < sizeof(buf) ? most - *run : (uint32_t)sizeof(buf);
		const uint8_t *mine = data + len - *run - n;
		int err = erofs_pread_all(p->fd, buf, n, stored_end - *run - n);

		if (err)
			return err;
		for (uint32_t i = n; i; i--)
			if (buf[i - 1] != mine[i - 1]) {
				*run += n - i;
				return 0;
			}
		*run += n;
	}
	return 0;
}

/* Whether the stored bytes at off equal data: the hash alone is not trusted. */
static int stored_equal(const struct erofs_packed *p, uint64_t off, const uint8_t *data,
			uint32_t len, bool *equal)
{
	uint32_t run;
	int err = common_run(p, off + len, len, data, len, &run);

	*equal = !err && run == len;
	return err;
}

/*
 * The longest run that ends data and a stored fragment of the same key and
 * of at least `shortest` bytes; among equals the first in probe order, so
 * the choice depends only on what was stored before, in commit order.  A
 * run of all of data ends the search.
 */
static int longest_suffix(const struct erofs_packed *p, const uint8_t *data, uint32_t len,
			  uint64_t key, uint32_t shortest, uint32_t *common, uint64_t *stored_end)
{
	*common = 0;
	if (!p->nr_tail_slots)
		return 0;
	for (uint32_t s = (uint32_t)key & (p->nr_tail_slots - 1); p->tails[s].len && *common < len;
	     s = (s + 1) & (p->nr_tail_slots - 1)) {
		const struct erofs_fragment_tail *t = &p->tails[s];
		uint32_t run;
		int err;

		if (t->key != key || t->len < shortest)
			continue;
		if ((err = common_run(p, t->off + t->len, t->len, data, len, &run)))
			return err;
		if (run > *common) {
			*common = run;
			*stored_end = t->off + t->len;
		}
	}
	return 0;
}

int erofs_packed_common_suffix(const struct erofs_packed *p, const uint8_t *data, uint32_t len,
			       uint32_t *common, uint64_t *stored_end)
{
	int err;

	*common = 0;
	if (!p->suffixes || len < EROFS_FRAGMENT_TAIL_KEY)
		return 0;
	err = longest_suffix(p, data, len, tail_key(data, len), 0, common, stored_end);
	if (err)
		erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
	return err;
}

int erofs_packed_add(struct erofs_packed *p, const uint8_t *data, uint32_t len, bool dedupe,
		     uint64_t *off)
{
	bool keyed = dedupe && p->suffixes && len >= EROFS_FRAGMENT_TAIL_KEY;
	uint64_t key = keyed ? tail_key(data, len) : 0;
	XXH128_hash_t hash;
	uint32_t s = 0;
	int err;

	p->nr_fragments++;
	if (dedupe) {
		if (p->nr_used + 1 > p->nr_slots / 2 && (err = grow_index(p)))
			return err;
		hash = XXH3_128bits(data, len);
		for (s = slot_of(p, hash); p->slots[s].len; s = (s + 1) & (p->nr_slots - 1)) {
			bool equal;

			if (p->slots[s].len != len || !XXH128_isEqual(p->slots[s].hash, hash))
				continue;
			if ((err = stored_equal(p, p->slots[s].off, data, len, &equal)))
				goto read_failed;
			if (equal) {
				*off = p->slots[s].off;
				p->nr_shared++;
				p->shared_bytes += len;
				return 0;
			}
		}
		if (keyed) {
			uint32_t common;
			uint64_t end = 0;

			/* the end of a stored fragment: only one as long as data can be */
			if ((err = longest_suffix(p, data, len, key, len, &common, &end)))
				goto read_failed;
			if (common == len) {
				*off = end - len;
				p->nr_shared++;
				p->shared_bytes += len;
				return 0;
			}
		}
	}
	*off = p->size;
	if ((err = erofs_pwrite_all(p->fd, data, len, p->size))) {
		erofs_err("temporary packed-inode file: write failed: %s", strerror(-err));
		return err;
	}
	p->size += len;
	if (dedupe) {
		p->slots[s] = (struct erofs_fragment_slot){ .hash = hash, .off = *off, .len = len };
		p->nr_used++;
	}
	if (keyed)
		return add_tail(p, key, *off, len);
	return 0;
read_failed:
	erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
	return err;
}

int erofs_packed_read_end(const struct erofs_packed *p, uint8_t *buf, uint32_t want,
			  uint32_t *got)
{
	int err;

	*got = p->size < want ? (uint32_t)p->size : want;
	err = erofs_pread_all(p->fd, buf, *got, p->size - *got);
	if (err)
		erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
	return err;
}

void erofs_packed_truncate(struct erofs_packed *p, uint64_t size)
{
	if (size < p->size)
		p->size = size;
}
