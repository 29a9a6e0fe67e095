// SPDX-License-Identifier: MIT
/* The pcluster index of -E dedupe (see include/erofs/build/zdedupe.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/build/zdedupe.h"

void erofs_zdedupe_free(struct erofs_zdedupe *d)
{
	free(d->entries);
	free(d->heads);
	memset(d, 0, sizeof(*d));
}

static bool same_key(const struct erofs_zdedupe_key *a, const struct erofs_zdedupe_key *b)
{
	return XXH128_isEqual(a->hash, b->hash) && a->decoded == b->decoded &&
	       a->nblks == b->nblks && a->raw == b->raw && a->algorithm == b->algorithm;
}

static uint32_t bucket(const struct erofs_zdedupe_key *key, uint32_t mask)
{
	return (uint32_t)key->hash.low64 & mask;
}

/* Doubles the entries and, with them, the buckets, chaining every entry again. */
static int grow(struct erofs_zdedupe *d)
{
	uint32_t cap = d->cap ? d->cap * 2 : 1u << 14;
	struct erofs_zdedupe_entry *bigger = realloc(d->entries, cap * sizeof(*bigger));
	uint32_t *heads;

	if (!bigger)
		return -ENOMEM;
	d->entries = bigger;
	heads = calloc(cap, sizeof(*heads));
	if (!heads)
		return -ENOMEM;
	d->cap = cap;
	d->mask = cap - 1;
	for (uint32_t i = 0; i < d->nr_entries; i++) {
		uint32_t b = bucket(&d->entries[i].key, d->mask);

		d->entries[i].next = heads[b];
		heads[b] = i + 1;
	}
	free(d->heads);
	d->heads = heads;
	return 0;
}

int erofs_zdedupe_add(struct erofs_zdedupe *d, const struct erofs_zdedupe_entry *entry)
{
	uint32_t b;
	int err;

	if (d->nr_entries == d->cap && (err = grow(d)))
		return err;
	b = bucket(&entry->key, d->mask);
	d->entries[d->nr_entries] = *entry;
	d->entries[d->nr_entries].next = d->heads[b];
	d->heads[b] = ++d->nr_entries;
	return 0;
}

const struct erofs_zdedupe_entry *erofs_zdedupe_next(const struct erofs_zdedupe *d,
						     const struct erofs_zdedupe_key *key,
						     uint32_t *cursor)
{
	/* the cursor is the index + 1 of the entry to look at next; 0: start */
	uint32_t i = *cursor ? *cursor : d->nr_entries ? d->heads[bucket(key, d->mask)] : 0;

	for (; i && i != UINT32_MAX; i = d->entries[i - 1].next) {
		const struct erofs_zdedupe_entry *e = &d->entries[i - 1];

		if (same_key(&e->key, key)) {
			*cursor = e->next ? e->next : UINT32_MAX;
			return e;
		}
	}
	*cursor = UINT32_MAX;
	return NULL;
}

void erofs_zdedupe_truncate(struct erofs_zdedupe *d, uint32_t mark)
{
	/* newest first: each entry taken back heads its bucket */
	while (d->nr_entries > mark) {
		struct erofs_zdedupe_entry *e = &d->entries[--d->nr_entries];

		d->heads[bucket(&e->key, d->mask)] = e->next;
	}
}
