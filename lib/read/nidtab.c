// SPDX-License-Identifier: MIT
/*
 * The walk's table of nids (include/erofs/read/nidtab.h): what fsck.erofs
 * and dump.erofs know of each inode reached, with the name it was reached
 * by and the directory holding that name.  Paths are never stored: one is put
 * together from those names, leaf to root, only when a message needs it,
 * so memory is O(inodes) whatever the depth of the tree, and the walk does
 * no work per path byte.
 */
#include <stdlib.h>
#include <string.h>

#include "erofs/read/nidtab.h"
#include "erofs/read/zread.h"

#define PACKED_NAME	"(packed inode)"
#define MBOX_NAME	"(metabox inode)"
#define ELLIPSIS	"/..."

static size_t nid_hash(uint64_t nid, size_t cap)
{
	nid ^= nid >> 33;
	nid *= 0xff51afd7ed558ccdULL;
	nid ^= nid >> 33;
	return (size_t)nid & (cap - 1);
}

struct erofs_check_node *erofs_nidtab_find(const struct erofs_nidtab *t, uint64_t nid)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = nid_hash(nid, t->cap); t->tab[i].used; i = (i + 1) & (t->cap - 1))
		if (t->tab[i].nid == nid)
			return &t->tab[i];
	return NULL;
}

struct erofs_check_node *erofs_nidtab_add(struct erofs_nidtab *t, uint64_t nid)
{
	size_t i;

	if ((t->count + 1) * 2 > t->cap) {
		struct erofs_check_node *old = t->tab, *tab;
		size_t oldcap = t->cap, cap = oldcap ? oldcap * 2 : 1024, j;

		/*
		 * Zeroed by writing, not calloc(): a fresh mapping's pages
		 * would first be mapped to the zero page by lookups and
		 * copied on the first write, each copy a TLB flush across
		 * every CPU running a worker thread.  explicit_bzero(), as
		 * GCC turns malloc() + memset(0) into calloc().
		 */
		tab = malloc(cap * sizeof(*tab));
		if (!tab)
			return NULL;
		explicit_bzero(tab, cap * sizeof(*tab));
		for (j = 0; j < oldcap; j++) {
			if (!old[j].used)
				continue;
			for (i = nid_hash(old[j].nid, cap); tab[i].used; i = (i + 1) & (cap - 1))
				;
			tab[i] = old[j];
		}
		free(old);
		t->tab = tab;
		t->cap = cap;
	}
	for (i = nid_hash(nid, t->cap); t->tab[i].used; i = (i + 1) & (t->cap - 1))
		;
	memset(&t->tab[i], 0, sizeof(t->tab[i]));
	t->tab[i].used = 1;
	t->tab[i].nid = nid;
	t->count++;
	return &t->tab[i];
}

bool erofs_nidtab_name(struct erofs_nidtab *t, struct erofs_check_node *n, uint64_t parent,
		       const char *name, size_t len)
{
	if (len > EROFS_NAME_LEN)
		len = EROFS_NAME_LEN;	/* cannot happen: the reader checks names */
	if (t->names_cap - t->names_len < len) {
		size_t cap = t->names_cap ? t->names_cap * 2 : 65536;
		char *p;

		while (cap - t->names_len < len)
			cap *= 2;
		p = realloc(t->names, cap);
		if (!p)
			return false;
		t->names = p;
		t->names_cap = cap;
	}
	if (len)	/* the root's name is empty: the store may not exist yet */
		memcpy(t->names + t->names_len, name, len);
	n->parent = parent;
	n->name = t->names_len;
	n->namelen = (uint8_t)len;
	t->names_len += len;
	return true;
}

void erofs_nidtab_free(struct erofs_nidtab *t)
{
	free(t->tab);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

/*
 * Puts "/" and the escaped name before *pos in out, keeping room for "/..."
 * in front unless this is the path's first component (last); with cut, a
 * name too long for the room left is shortened ("name...") rather than
 * left out.
 */
static bool prepend_name(char *out, size_t *pos, const char *name, size_t len, bool last,
			 bool cut)
{
	const size_t keep = last ? 1 : sizeof(ELLIPSIS);	/* with the "/" */
	char esc[EROFS_NAME_LEN * 4 + 8];
	size_t room = *pos > keep ? *pos - keep : 0, n;

	erofs_escape(esc, sizeof(esc), name, len);
	n = strlen(esc);
	if (n > room && cut) {
		erofs_escape(esc, room + 1, name, len);	/* "" when too small to cut */
		n = strlen(esc);
	}
	if (n > room || !n)
		return false;
	*pos -= n;
	memcpy(out + *pos, esc, n);
	out[--*pos] = '/';
	return true;
}

/* Is d the root (named in itself)? */
static bool is_root(const struct erofs_check_node *d)
{
	return d && d->parent == d->nid;
}

const char *erofs_nidtab_path(const struct erofs_nidtab *t, uint64_t dir, const char *name,
			      size_t len, char *out, size_t outlen)
{
	const struct erofs_check_node *d = erofs_nidtab_find(t, dir);
	size_t pos = outlen - 1, steps = 0;
	bool whole = true;

	if (outlen < sizeof(ELLIPSIS) + 1) {
		if (outlen)
			out[0] = '\0';
		return out;
	}
	out[pos] = '\0';
	if (name)
		whole = prepend_name(out, &pos, name, len, is_root(d), true);
	/* up to the root; each step is a directory's first (only) parent */
	while (whole && d && !is_root(d) && steps++ <= t->count) {
		const struct erofs_check_node *up = erofs_nidtab_find(t, d->parent);

		whole = prepend_name(out, &pos, t->names + d->name, d->namelen, is_root(up), false);
		d = up;
	}
	if (!whole || !is_root(d)) {
		/* room was kept for it, or the name did not go in at all */
		if (pos < sizeof(ELLIPSIS) - 1)
			pos = sizeof(ELLIPSIS) - 1;
		pos -= sizeof(ELLIPSIS) - 1;
		memcpy(out + pos, ELLIPSIS, sizeof(ELLIPSIS) - 1);
	} else if (pos == outlen - 1) {
		out[--pos] = '/';		/* the root itself */
	}
	memmove(out, out + pos, outlen - pos);
	return out;
}

const char *erofs_nidtab_node_path(const struct erofs_nidtab *t, const struct erofs_check_node *n,
				   char *out, size_t outlen)
{
	if (n->packed) {
		erofs_escape(out, outlen, PACKED_NAME, sizeof(PACKED_NAME) - 1);
		return out;
	}
	if (n->mbox) {
		erofs_escape(out, outlen, MBOX_NAME, sizeof(MBOX_NAME) - 1);
		return out;
	}
	if (n->parent == n->nid)
		return erofs_nidtab_path(t, n->nid, NULL, 0, out, outlen);
	return erofs_nidtab_path(t, n->parent, t->names + n->name, n->namelen, out, outlen);
}
