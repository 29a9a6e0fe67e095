// SPDX-License-Identifier: MIT
/* The pcluster index of -E dedupe (see include/erofs/zdedupe.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/zdedupe.h"

void erofs_zdedupe_free(struct erofs_zdedupe *d)
{
	free(d->slots);
	memset(d, 0, sizeof(*d));
}

static bool same_key(const struct erofs_zdedupe_key *a, const struct erofs_zdedupe_key *b)
{
	return XXH128_isEqual(a->hash, b->hash) && a->decoded == b->decoded &&
	       a->nblks == b->nblks && a->raw == b->raw;
}

static uint32_t home_slot(const struct erofs_zdedupe *d, const struct erofs_zdedupe_key *key)
{
	return (uint32_t)key->hash.low64 & (d->nr_slots - 1);
}

static int grow(struct erofs_zdedupe *d)
{
	struct erofs_zdedupe old = *d;

	d->nr_slots = old.nr_slots ? old.nr_slots * 2 : 1u << 14;
	d->slots = calloc(d->nr_slots, sizeof(*d->slots));
	if (!d->slots) {
		*d = old;
		return -ENOMEM;
	}
	d->nr_used = 0;
	for (uint32_t i = 0; i < old.nr_slots; i++)
		if (old.slots[i].owner)
			erofs_zdedupe_add(d, &old.slots[i]);
	free(old.slots);
	return 0;
}

int erofs_zdedupe_add(struct erofs_zdedupe *d, const struct erofs_zdedupe_entry *entry)
{
	uint32_t s;
	int err;

	if ((d->nr_used + 1) * 2 > d->nr_slots && (err = grow(d)))
		return err;
	for (s = home_slot(d, &entry->key); d->slots[s].owner; s = (s + 1) & (d->nr_slots - 1))
		;
	d->slots[s] = *entry;
	d->nr_used++;
	return 0;
}

const struct erofs_zdedupe_entry *erofs_zdedupe_next(const struct erofs_zdedupe *d,
						     const struct erofs_zdedupe_key *key,
						     uint32_t *cursor)
{
	if (!d->nr_slots)
		return NULL;
	/* the cursor counts probes from the key's home slot */
	for (; *cursor < d->nr_slots; (*cursor)++) {
		const struct erofs_zdedupe_entry *e =
			&d->slots[(home_slot(d, key) + *cursor) & (d->nr_slots - 1)];

		if (!e->owner)
			return NULL;
		if (same_key(&e->key, key)) {
			(*cursor)++;
			return e;
		}
	}
	return NULL;
}
