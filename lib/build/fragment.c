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

/*
 * Beside the key, the hashes of a fragment's last 256 bytes and 4 KiB
 * (where it has them), its "ladder": a fragment whose ladder differs from
 * the data's at a length shares less than that length with it, which is
 * known without reading it back.  Files ending alike (a common footer,
 * zoneinfo's rules) share a key by the thousand: each new one was compared
 * against every stored one, a read each, so the build slowed with the
 * square of their number (8,000 files of 0.5-3 KiB with one 190-byte
 * footer: 26 s, 21 of them in the kernel).
 */
#define TAIL_LADDER	2
static const uint32_t ladder_len[TAIL_LADDER] = {
	EROFS_FRAGMENT_TAIL_KEY << 2, EROFS_FRAGMENT_TAIL_KEY << 6,
};
/*
 * The most stored fragments one search for the longest common run reads
 * back; ladders alike past that are found only among the first ones (in
 * probe order, so the choice still depends only on what was stored before).
 */
#define TAIL_READS	64
/*
 * The most slots one search looks at: fragments that share a key share a
 * run of slots, and tens of thousands of them made every search walk it.
 * Past it, a stored fragment is not found as the end of another.
 */
#define TAIL_PROBES	4096

/* the key and ladder of a fragment's end */
struct tail_sign {
	uint64_t key;		/* xxh64 of the last EROFS_FRAGMENT_TAIL_KEY bytes */
	uint64_t ladder[TAIL_LADDER];	/* of the last ladder_len[i] bytes; 0 past len */
};

/* a stored fragment of EROFS_FRAGMENT_TAIL_KEY bytes or more, by its last ones */
struct erofs_fragment_tail {
	struct tail_sign sign;
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

/* len >= EROFS_FRAGMENT_TAIL_KEY */
static struct tail_sign tail_sign(const uint8_t *data, uint32_t len)
{
	struct tail_sign sign = {
		.key = XXH3_64bits(data + len - EROFS_FRAGMENT_TAIL_KEY, EROFS_FRAGMENT_TAIL_KEY),
	};

	for (int i = 0; i < TAIL_LADDER && ladder_len[i] <= len; i++)
		sign.ladder[i] = XXH3_64bits(data + len - ladder_len[i], ladder_len[i]);
	return sign;
}

/*
 * The most bytes a stored fragment's end can share with data's (len bytes,
 * signed *sign): the first ladder length at which the two differ bounds it.
 */
static uint32_t run_bound(const struct erofs_fragment_tail *t, const struct tail_sign *sign,
			  uint32_t len)
{
	uint32_t most = t->len < len ? t->len : len;

	for (int i = 0; i < TAIL_LADDER && ladder_len[i] <= most; i++)
		if (t->sign.ladder[i] != sign->ladder[i])
			return ladder_len[i] - 1;
	return most;
}

/* Several fragments may share a key: each has a slot of its own. */
static int add_tail(struct erofs_packed *p, const struct tail_sign *sign, uint64_t off,
		    uint32_t len)
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
				add_tail(p, &old[i].sign, old[i].off, old[i].len);
		free(old);
	}
	for (s = (uint32_t)sign->key & (p->nr_tail_slots - 1); p->tails[s].len;
	     s = (s + 1) & (p->nr_tail_slots - 1))
		;
	p->tails[s] = (struct erofs_fragment_tail){ .sign = *sign, .off = off, .len = len };
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
 * run of all of data ends the search.  Runs shorter than `shortest` are
 * not looked for: a stored fragment whose ladder rules that out is not
 * read back, nor one that cannot beat the run found so far.
 */
static int longest_suffix(const struct erofs_packed *p, const uint8_t *data, uint32_t len,
			  const struct tail_sign *sign, uint32_t shortest, uint32_t *common,
			  uint64_t *stored_end)
{
	uint32_t reads = 0, probes = 0;

	*common = 0;
	if (!p->nr_tail_slots)
		return 0;
	for (uint32_t s = (uint32_t)sign->key & (p->nr_tail_slots - 1);
	     p->tails[s].len && *common < len && reads < TAIL_READS && probes++ < TAIL_PROBES;
	     s = (s + 1) & (p->nr_tail_slots - 1)) {
		const struct erofs_fragment_tail *t = &p->tails[s];
		uint32_t run, bound;
		int err;

		if (t->sign.key != sign->key || t->len < shortest)
			continue;
		bound = run_bound(t, sign, len);
		if (bound < shortest || bound <= *common)
			continue;
		reads++;
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
	struct tail_sign sign;
	int err;

	*common = 0;
	if (!p->suffixes || len < EROFS_FRAGMENT_TAIL_KEY)
		return 0;
	sign = tail_sign(data, len);
	err = longest_suffix(p, data, len, &sign, 0, common, stored_end);
	if (err)
		erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
	return err;
}

int erofs_packed_add(struct erofs_packed *p, const uint8_t *data, uint32_t len, bool dedupe,
		     uint64_t *off)
{
	bool keyed = dedupe && p->suffixes && len >= EROFS_FRAGMENT_TAIL_KEY;
	struct tail_sign sign = { 0 };
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
			sign = tail_sign(data, len);
			if ((err = longest_suffix(p, data, len, &sign, len, &common, &end)))
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
		return add_tail(p, &sign, *off, len);
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
