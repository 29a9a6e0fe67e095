// SPDX-License-Identifier: MIT
/* The nid map (see include/erofs/source/nidmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/source/nidmap.h"

static size_t home_slot(uint64_t key, size_t mask)
{
	return (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

static int nid_map_grow(struct erofs_nid_map *m)
{
	size_t mask = m->keys ? m->mask * 2 + 1 : 1023;
	uint64_t *keys = calloc(mask + 1, sizeof(*keys));
	struct erofs_inode **inodes = calloc(mask + 1, sizeof(*inodes));

	if (!keys || !inodes) {
		free(keys);
		free(inodes);
		return -ENOMEM;
	}
	for (size_t i = 0; m->keys && i <= m->mask; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = home_slot(m->keys[i], mask); keys[j]; j = (j + 1) & mask)
			;
		keys[j] = m->keys[i];
		inodes[j] = m->inodes[i];
	}
	free(m->keys);
	free(m->inodes);
	m->keys = keys;
	m->inodes = inodes;
	m->mask = mask;
	return 0;
}

/* The slot of nid: its inode, or where it goes. */
static size_t nid_map_slot(const struct erofs_nid_map *m, uint64_t nid)
{
	size_t i = home_slot(nid + 1, m->mask);

	while (m->keys[i] && m->keys[i] != nid + 1)
		i = (i + 1) & m->mask;
	return i;
}

struct erofs_inode *erofs_nid_map_get(const struct erofs_nid_map *m, uint64_t nid)
{
	return m->keys ? m->inodes[nid_map_slot(m, nid)] : NULL;
}

int erofs_nid_map_put(struct erofs_nid_map *m, uint64_t nid, struct erofs_inode *inode)
{
	size_t i;

	if ((!m->keys || (m->used + 1) * 2 > m->mask) && nid_map_grow(m))
		return -ENOMEM;
	i = nid_map_slot(m, nid);
	m->used += !m->keys[i];
	m->keys[i] = nid + 1;
	m->inodes[i] = inode;
	return 0;
}

void erofs_nid_map_free(struct erofs_nid_map *m)
{
	free(m->keys);
	free(m->inodes);
	memset(m, 0, sizeof(*m));
}
