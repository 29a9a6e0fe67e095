// SPDX-License-Identifier: MIT
/*
 * The checks of the image check that are not the walk itself
 * (include/erofs/check/checkwalk.h): xattrs of each inode, the packed inode
 * (fragments), and after the walk link counts and overlapping metadata.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check/checkwalk.h"
#include "erofs/common/ondisk.h"

const struct place ck_packed_place = { 0, NULL, 0, true, false };
const struct place ck_mbox_place = { 0, NULL, 0, false, true };

/* ------------------------------------------------------------------ */
/* xattrs                                                              */

struct xname {
	unsigned int index;
	unsigned int len;
	char *name;
};

struct xcheck {
	struct checker *f;
	const struct place *at;
	uint64_t nid;
	struct xname *v;
	size_t n, cap;
};

static int xattr_collect(void *arg, const struct erofs_rd_xattr *x)
{
	struct xcheck *c = arg;
	struct xname *e;

	if ((x->index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	     x->index == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT) &&
	    !erofs_acl_value_ok(x->value, x->value_size))
		ck_report(c->f, c->at, c->nid, "malformed POSIX ACL in %s (%u bytes)",
		       erofs_rd_xattr_prefix(x->index), x->value_size);
	if (x->ishare)
		ck_digest_note(c->f, c->at, c->nid, x);
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = ck_xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	if (x->shared)
		ck_record_extent(c->f, x->addr, x->entry_size, c->nid, true);
	e = &c->v[c->n++];
	e->index = x->index;
	e->len = x->name_len;
	e->name = ck_xrealloc(NULL, x->name_len);
	memcpy(e->name, x->name, x->name_len);
	return 0;
}

static int xname_cmp(const void *a, const void *b)
{
	const struct xname *x = a, *y = b;
	int c;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

void ck_check_xattrs(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi)
{
	struct xcheck c = { f, at, vi->nid, NULL, 0, 0 };
	size_t i;

	f->digest_seen = false;
	if (erofs_xattr_iterate_all(f->r, vi, xattr_collect, &c))
		ck_rfail(f, at, vi->nid);
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), xname_cmp);
	for (i = 1; i < c.n; i++) {
		if (!xname_cmp(&c.v[i - 1], &c.v[i])) {
			char n[300];

			const char *prefix = erofs_rd_xattr_prefix(c.v[i].index);

			ck_report(f, at, vi->nid, "duplicate xattr %s%s", prefix ? prefix : "",
			       erofs_escape(n, sizeof(n), c.v[i].name, c.v[i].len));
		}
	}
	for (i = 0; i < c.n; i++)
		free(c.v[i].name);
	free(c.v);
}

static int inode_cmp(const void *a, const void *b)
{
	const struct erofs_check_node *x = *(struct erofs_check_node *const *)a;
	const struct erofs_check_node *y = *(struct erofs_check_node *const *)b;

	return x->iloc < y->iloc ? -1 : x->iloc > y->iloc;
}

static int dext_cmp(const void *a, const void *b)
{
	const struct dext *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->nid < y->nid ? -1 : x->nid > y->nid;
}

/*
 * Data blocks must not hold the superblock or any inode (with its xattrs,
 * inline tail or chunk table): the kernel would serve such metadata as
 * file contents.  v holds the inodes sorted by position.
 */
static void check_data_overlaps(struct checker *f, struct erofs_check_node **v, size_t n)
{
	const uint64_t sb_start = EROFS_SUPER_OFFSET;
	const uint64_t sb_end = f->r->sb_end;	/* with the compression configs */
	uint64_t *maxend;
	size_t i;

	if (!f->ndext)
		return;
	qsort(f->dext, f->ndext, sizeof(*f->dext), dext_cmp);
	/* maxend[i]: the furthest end among inodes 0..i */
	maxend = ck_xrealloc(NULL, (n + 1) * sizeof(*maxend));
	for (i = 0; i < n; i++)
		maxend[i] = i && maxend[i - 1] > v[i]->meta_end ? maxend[i - 1] : v[i]->meta_end;

	for (i = 0; i < f->ndext; i++) {
		const struct dext *d = &f->dext[i];
		struct erofs_check_node *owner = ck_nid_find(f, d->nid);
		const struct place unknown = { f->r->root_nid, "?", 1, false, false };
		const struct place at = owner ? ck_node_place(f, owner) : unknown;
		size_t lo = 0, hi = n, steps, culprit;
		const char *what;
		uint64_t where;
		char p[MSGPATH];

		if (owner && owner->overlap_reported)
			continue;	/* one message per inode */
		what = d->xattr ? "shared xattr at byte" : "data at block";
		where = d->xattr ? d->start : d->start >> f->r->blkszbits;

		if (d->start < sb_end && d->end > sb_start) {
			ck_report(f, &at, d->nid, "%s %" PRIu64 " overlaps the superblock",
			       what, where);
			if (owner)
				owner->overlap_reported = true;
			continue;
		}
		/* the last inode starting before the extent's end */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid]->iloc < d->end)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || maxend[lo - 1] <= d->start)
			continue;
		/* name the culprit: a nearby inode that reaches in */
		culprit = SIZE_MAX;
		for (hi = lo, steps = 0; hi > 0 && steps < 64; steps++) {
			hi--;
			if (v[hi]->meta_end > d->start) {
				culprit = hi;
				break;
			}
		}
		if (culprit != SIZE_MAX)
			ck_report(f, &at, d->nid,
			       "%s %" PRIu64 " overlaps the inode of %s (nid %" PRIu64 ")",
			       what, where, ck_show_node(f, v[culprit], p), v[culprit]->nid);
		else
			ck_report(f, &at, d->nid, "%s %" PRIu64 " overlaps inode metadata",
			       what, where);
		if (owner)
			owner->overlap_reported = true;
	}
	free(maxend);
}

/* After the walk: link counts and overlapping inode records. */
void ck_final_checks(struct checker *f)
{
	struct erofs_check_node **v = ck_xrealloc(NULL, (f->nids.count + 1) * sizeof(*v));
	size_t i, n = 0;
	const struct erofs_check_node *far = NULL;

	for (i = 0; i < f->nids.cap; i++) {
		struct erofs_check_node *ni = &f->nids.tab[i];

		if (!ni->used || ni->bad)
			continue;
		v[n++] = ni;
		if (ni->packed || ni->mbox)
			continue;	/* no directory entry refers to it */
		/* with entries unread, only too many references are certain */
		if (!S_ISDIR(ni->mode) && ni->refs != ni->nlink &&
		    ((!f->dirs_damaged && !f->subtree) || ni->refs > ni->nlink)) {
			const struct place at = ck_node_place(f, ni);

			ck_report(f, &at, ni->nid,
			       "link count %u, but %u directory entries refer to it",
			       ni->nlink, ni->refs);
		}
	}
	qsort(v, n, sizeof(*v), inode_cmp);
	for (i = 0; i < n; i++) {
		if (far && v[i]->iloc < far->meta_end) {
			const struct place at = ck_node_place(f, v[i]);
			char p[MSGPATH];

			ck_report(f, &at, v[i]->nid,
			       "inode overlaps the inode of %s (nid %" PRIu64 ")",
			       ck_show_node(f, far, p), far->nid);
		}
		if (!far || v[i]->meta_end > far->meta_end)
			far = v[i];
	}
	check_data_overlaps(f, v, n);
	free(v);
	if (f->r->sb.inos != f->nids.count && !f->errors && !f->subtree) {
		const struct place root = { f->r->root_nid, NULL, 0, false, false };

		ck_warn(f, &root, f->r->root_nid,
		     "superblock inode count %" PRIu64 " but %zu inodes are reachable",
		     f->r->sb.inos, f->nids.count);
	}
}

/*
 * The packed inode (fragments): a regular file that no directory names,
 * whose data is every fragment.  Checked once, like a file of the tree:
 * its inode, xattrs, index and every extent decoded; it counts towards
 * the inode overlap checks but not as a file of the tree.
 */
void ck_check_packed(struct checker *f)
{
	const struct place *at = &ck_packed_place;
	const uint64_t nid = f->r->sb.packed_nid;
	const struct erofs_rd_inode *pk;
	struct erofs_check_node *ni;
	int ret;

	if (!(f->r->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS)) {
		if (nid)
			ck_warn(f, at, nid, "packed_nid set without the fragments feature (ignored)");
		return;
	}
	ret = erofs_packed_inode(f->r, &pk);
	if (ret < 0) {
		ck_report_image(f, erofs_reader_error(f->r));
		return;
	}
	if (!ret)
		return;		/* files with fragments will say so */
	if (ck_nid_find(f, nid))	/* the root: cannot be, it is not a regular file */
		return;
	ni = ck_nid_add(f, nid);
	ni->packed = true;
	ni->parent = nid;
	ni->mode = pk->di.mode;
	ni->nlink = pk->di.nlink;
	ni->iloc = erofs_meta_vaddr(f->r, pk, pk->iloc);
	ni->meta_end = erofs_meta_vaddr(f->r, pk, pk->meta_end);
	if (!ck_meta_claim(f, ni->iloc, ni->meta_end)) {
		ni->bad = true;
		ck_report(f, at, nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " with its metadata) overlaps the root directory; not checked further",
		       pk->iloc, pk->meta_end - 1);
		return;
	}
	if (f->o.debug >= 7)
		ck_note(f, "checking the packed inode (nid %" PRIu64 ")", nid);
	f->st.has_packed = true;
	f->st.packed_size = pk->size;
	f->st.packed_physical = ck_is_compressed(pk) ? (uint64_t)pk->z_blocks << f->r->blkszbits :
			     (pk->size + f->r->blksz - 1) & ~(uint64_t)(f->r->blksz - 1);
	f->st.zphysical += f->st.packed_physical;
	ck_check_xattrs(f, at, pk);
	ck_scan_data(f, at, pk, true, true);
}

/*
 * The metabox inode (INCOMPAT_METABOX): loaded and checked by the reader
 * when it opened the image, as every inode of the metabox is read through
 * it.  Its metadata claimed, its xattrs checked and every extent decoded
 * here, once, like the packed inode's; it counts in the superblock's inode
 * count.
 */
void ck_check_metabox(struct checker *f)
{
	const struct place *at = &ck_mbox_place;
	const struct erofs_rd_inode *mb = f->r->mbox;
	struct erofs_check_node *ni;

	if (!mb || ck_nid_find(f, mb->nid))
		return;
	ni = ck_nid_add(f, mb->nid);
	ni->mbox = true;
	ni->parent = mb->nid;
	ni->mode = mb->di.mode;
	ni->nlink = mb->di.nlink;
	ni->iloc = mb->iloc;
	ni->meta_end = mb->meta_end;
	if (!ck_meta_claim(f, ni->iloc, ni->meta_end)) {
		ni->bad = true;
		ck_report(f, at, mb->nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " with its metadata) overlaps an inode checked before; not checked further",
		       mb->iloc, mb->meta_end - 1);
		return;
	}
	if (f->o.debug >= 7)
		ck_note(f, "checking the metabox inode (nid %" PRIu64 ")", mb->nid);
	ck_check_xattrs(f, at, mb);
	ck_scan_data(f, at, mb, true, true);
}

/* ------------------------------------------------------------------ */
/* exported pieces                                                     */

bool erofs_acl_value_ok(const uint8_t *v, unsigned int size)
{
	unsigned int i;

	if (size < 4 || (size - 4) % 8 || get_le32(v) != 2)
		return false;
	for (i = 4; i < size; i += 8) {
		switch (get_le16(v + i)) {
		case 0x01: case 0x02: case 0x04: case 0x08: case 0x10: case 0x20:
			break;
		default:
			return false;
		}
	}
	return true;
}
