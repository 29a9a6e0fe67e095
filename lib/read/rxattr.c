// SPDX-License-Identifier: MIT
/*
 * Extended attributes, the reading side: shared and inline entries with
 * every length checked, long name prefixes resolved through the prefix
 * table (loaded once, from the packed inode or the image), and each name
 * checked against the inode's name filter when the superblock enables it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rmcache.h"

#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

/* One long prefix: its short prefix's index and the infix that follows. */
struct erofs_rd_prefix {
	uint8_t base;
	uint16_t infix_len;
	char *infix;
};

/* Where the entries go: hidden, also the digest under a prefix of no namespace. */
struct sink {
	erofs_xattr_fn fn;
	void *arg;
	bool hidden;
};

static bool is_ishare(const struct erofs_reader *r, unsigned int n)
{
	return (r->sb.feature_compat & EROFS_COMPAT_ISHARE_XATTRS) &&
	       n == r->sb.ishare_xattr_prefix_id;
}

void erofs_xattr_prefixes_free(struct erofs_reader *r)
{
	for (unsigned int i = 0; r->prefixes && i < r->sb.xattr_prefix_count; i++)
		free(r->prefixes[i].infix);
	free(r->prefixes);
	r->prefixes = NULL;
}

static int read_table(struct erofs_reader *r, void *buf, size_t len, uint64_t off)
{
	if (r->prefixes_in_packed)
		return erofs_read_packed(r, buf, len, off);
	return erofs_meta_read(r, r->prefixes_in_mbox, buf, len, off);
}

/* Names the record whose read failed, keeping the reader's reason. */
static void table_error(struct erofs_reader *r, int err, unsigned int i, uint64_t pos,
			bool in_packed)
{
	char why[EROFS_ERRMSG_LEN];

	memcpy(why, r->err, sizeof(why));
	fail(r, err, "xattr prefix %u at byte %llu of the %s: %s", i, (unsigned long long)pos,
	     in_packed ? "packed inode's data" : r->prefixes_in_mbox ? "metabox" : "image", why);
}

/*
 * Loads the table on first use: xattr_prefix_count records from byte
 * xattr_prefix_start * 4 of the packed inode's data (when the image has
 * one and COMPAT_PLAIN_XATTR_PFX is clear, as Linux 6.4 reads it) or of
 * the image.
 */
static int load_prefixes(struct erofs_reader *r)
{
	const struct erofs_rd_inode *packed = NULL;
	uint64_t pos = (uint64_t)r->sb.xattr_prefix_start * 4;
	unsigned int n = r->sb.xattr_prefix_count;
	int err;

	if (r->prefixes)
		return 0;
	if (!(r->sb.feature_incompat & EROFS_INCOMPAT_XATTR_PREFIXES) || !n)
		return fail(r, -EFSCORRUPTED,
			    "long xattr name prefix used, but the superblock lists no prefix table");
	err = 0;
	/* Linux 6.17: in the metabox when there is one, else the packed inode */
	r->prefixes_in_mbox = !(r->sb.feature_compat & EROFS_COMPAT_PLAIN_XATTR_PFX) && r->mbox;
	if (!(r->sb.feature_compat & EROFS_COMPAT_PLAIN_XATTR_PFX) && !r->mbox)
		err = erofs_packed_inode(r, &packed);
	if (err < 0)
		return err;
	r->prefixes_in_packed = packed != NULL;
	if (r->prefixes_in_mbox && pos >= r->mbox->size)
		return fail(r, -EFSCORRUPTED,
			    "xattr prefix table at byte %llu: beyond the end of the metabox",
			    (unsigned long long)pos);
	if (!packed && !r->prefixes_in_mbox && (pos < r->sb_end || pos >= r->size))
		return fail(r, -EFSCORRUPTED,
			    "xattr prefix table at byte %llu: outside the image's metadata",
			    (unsigned long long)pos);
	r->prefixes = calloc(n, sizeof(*r->prefixes));
	if (!r->prefixes)
		return fail(r, -ENOMEM, "out of memory");
	for (unsigned int i = 0; i < n; i++) {
		struct erofs_rd_prefix *p = &r->prefixes[i];
		uint8_t hdr[3];
		uint16_t len;

		pos = (pos + 3) & ~(uint64_t)3;
		if ((err = read_table(r, hdr, sizeof(hdr), pos))) {
			table_error(r, err, i, pos, packed != NULL);
			goto bad;
		}
		len = get_le16(hdr);
		p->base = hdr[2];
		/* the digest's (--xattr-inode-digest) may be of any base, even none */
		if (!len || len - 1u >= EROFS_NAME_LEN ||
		    (!is_ishare(r, i) && (!erofs_rd_xattr_prefix(p->base) ||
					  p->base == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
					  p->base == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT))) {
			err = fail(r, -EFSCORRUPTED,
				   "xattr prefix %u: %u bytes over base index %u (want 1..%u bytes over user., trusted. or security.)",
				   i, len, p->base, EROFS_NAME_LEN);
			goto bad;
		}
		p->infix_len = len - 1;
		p->infix = malloc(p->infix_len + 1u);
		if (!p->infix) {
			err = fail(r, -ENOMEM, "out of memory");
			goto bad;
		}
		if ((err = read_table(r, p->infix, p->infix_len, pos + 3))) {
			table_error(r, err, i, pos, packed != NULL);
			goto bad;
		}
		pos += 2 + len;
	}
	return 0;
bad:
	erofs_xattr_prefixes_free(r);
	return err;
}

const char *erofs_rd_xattr_prefix(unsigned int index)
{
	switch (index) {
	case EROFS_XATTR_INDEX_USER: return "user.";
	case EROFS_XATTR_INDEX_POSIX_ACL_ACCESS: return "system.posix_acl_access";
	case EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT: return "system.posix_acl_default";
	case EROFS_XATTR_INDEX_TRUSTED: return "trusted.";
	case EROFS_XATTR_INDEX_LUSTRE: return "lustre.";
	case EROFS_XATTR_INDEX_SECURITY: return "security.";
	default: return NULL;
	}
}

static int xattr_entry(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		       const struct erofs_xattr_entry *e, const uint8_t *p,
		       bool shared, uint64_t addr, const char *where, uint32_t absent,
		       unsigned int stored_name_len, bool ishare, const struct sink *s);

static void fill_x(struct erofs_rd_xattr *x, const struct erofs_xattr_entry *e,
		   const uint8_t *p, bool shared, uint64_t addr, unsigned int stored_name_len,
		   bool ishare)
{
	x->ishare = ishare;
	x->index = e->name_index;
	x->name = (const char *)p;
	x->name_len = e->name_len;
	x->value = p + e->name_len;
	x->value_size = e->value_size;
	x->shared = shared;
	x->addr = addr;
	x->entry_size = EROFS_XATTR_ENTRY_HEADER_SIZE + stored_name_len + e->value_size;
}

/*
 * The digest under a long prefix of no namespace ("erofs.fingerprint.v1"):
 * no listxattr shows it, but Linux 7.0 looks it up by name, through the
 * name filter.  Handed over (index 0, the whole name) only when asked.
 */
static int hidden_entry(struct erofs_reader *r, const struct erofs_xattr_entry *e,
			const uint8_t *p, bool shared, uint64_t addr, const char *where,
			uint32_t absent, unsigned int stored_name_len, const struct sink *s)
{
	struct erofs_rd_xattr x;
	char pn[80];

	if (absent & (1u << erofs_xattr_filter_bit(EROFS_XATTR_INDEX_NONE, p, e->name_len)))
		return fail(r, -EFSCORRUPTED,
			    "%s xattr '%s' is marked absent by the inode's xattr name filter",
			    where, erofs_escape(pn, sizeof(pn), p, e->name_len));
	if (!s->fn || !s->hidden)
		return 0;
	fill_x(&x, e, p, shared, addr, stored_name_len, true);
	return s->fn(s->arg, &x);
}

/*
 * An entry under long prefix n: checked as the name its base index gives,
 * the table's infix followed by the stored suffix, so readers see only
 * short prefixes.
 */
static int long_prefix_entry(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			     const struct erofs_xattr_entry *e, const uint8_t *p,
			     bool shared, uint64_t addr, const char *where, uint32_t absent,
			     const struct sink *s)
{
	unsigned int n = e->name_index & EROFS_XATTR_LONG_PREFIX_MASK;
	struct erofs_xattr_entry full = *e;
	const struct erofs_rd_prefix *pfx;
	uint8_t *buf;
	int err;

	if (n >= r->sb.xattr_prefix_count)
		return fail(r, -EFSCORRUPTED,
			    "%s xattr with long prefix %u, but the image has %u",
			    where, n, r->sb.xattr_prefix_count);
	if ((err = load_prefixes(r)))
		return err;
	pfx = &r->prefixes[n];
	if (pfx->infix_len + e->name_len > 255u)
		return fail(r, -EFSCORRUPTED,
			    "%s xattr under long prefix %u: name of %u bytes (at most 255)",
			    where, n, pfx->infix_len + e->name_len);
	buf = malloc(pfx->infix_len + e->name_len + e->value_size + 1u);
	if (!buf)
		return fail(r, -ENOMEM, "out of memory");
	memcpy(buf, pfx->infix, pfx->infix_len);
	memcpy(buf + pfx->infix_len, p, e->name_len + e->value_size);
	full.name_index = pfx->base;
	full.name_len = (uint8_t)(pfx->infix_len + e->name_len);
	if (pfx->base == EROFS_XATTR_INDEX_NONE && is_ishare(r, n))
		err = hidden_entry(r, &full, buf, shared, addr, where, absent, e->name_len, s);
	else
		err = xattr_entry(r, vi, &full, buf, shared, addr, where, absent, e->name_len,
				  is_ishare(r, n), s);
	free(buf);
	return err;
}

/* Checks one entry (header + name + value at p) and hands it to fn. */
static int xattr_entry(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		       const struct erofs_xattr_entry *e, const uint8_t *p,
		       bool shared, uint64_t addr, const char *where, uint32_t absent,
		       unsigned int stored_name_len, bool ishare, const struct sink *s)
{
	struct erofs_rd_xattr x;
	char pn[80];
	bool acl;

	if (e->name_index == EROFS_XATTR_INDEX_NONE)
		return 0;	/* hidden full-name entry: the kernel ignores it */
	if (e->name_index & EROFS_XATTR_LONG_PREFIX)
		return long_prefix_entry(r, vi, e, p, shared, addr, where, absent, s);
	if (!erofs_rd_xattr_prefix(e->name_index))
		return fail(r, -EFSCORRUPTED,
			    "%s xattr with unknown name index %u",
			    where, e->name_index);
	acl = e->name_index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	      e->name_index == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT;
	if (acl && e->name_len)
		return fail(r, -EFSCORRUPTED,
			    "%s ACL xattr carries a name suffix '%s'",
			    where, erofs_escape(pn, sizeof(pn), p, e->name_len));
	if (!acl && !e->name_len)
		return fail(r, -EFSCORRUPTED,
			    "%s xattr '%s' with an empty name",
			    where, erofs_rd_xattr_prefix(e->name_index));
	if (memchr(p, '\0', e->name_len))
		return fail(r, -EFSCORRUPTED,
			    "%s xattr name '%s' contains a NUL byte",
			    where, erofs_escape(pn, sizeof(pn), p, e->name_len));
	/* a wrong filter makes Linux 6.6+ answer "no such xattr" for this one */
	if (absent & (1u << erofs_xattr_filter_bit(e->name_index, p, e->name_len)))
		return fail(r, -EFSCORRUPTED,
			    "%s xattr '%s%s' is marked absent by the inode's xattr name filter",
			    where, erofs_rd_xattr_prefix(e->name_index),
			    erofs_escape(pn, sizeof(pn), p, e->name_len));
	if (!s->fn)
		return 0;
	fill_x(&x, e, p, shared, addr, stored_name_len, ishare);
	return s->fn(s->arg, &x);
}

static int iterate(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		   const struct sink *s)
{
	uint8_t *ibody, *sbuf = NULL;
	unsigned int count, i, pos;
	uint32_t absent = 0;
	int err = 0;
	/* COMPAT_SHARED_EA_IN_METABOX: the shared area is in the metabox data */
	const bool sh_mbox = r->sb.feature_compat & EROFS_COMPAT_SHARED_EA_IN_METABOX;
	const uint64_t sh_limit = sh_mbox ? (r->mbox ? r->mbox->size : 0) : r->size;
	const char *sh_space = sh_mbox ? "metabox" : "image";

	if (!vi->xattr_isize)
		return 0;
	ibody = malloc(vi->xattr_isize);
	if (!ibody)
		return fail(r, -ENOMEM, "out of memory");
	err = erofs_meta_read(r, vi->in_mbox, ibody, vi->xattr_isize, vi->iloc + vi->isize);
	if (err)
		goto out;
	count = ibody[4];
	/* the filter counts only when the superblock says so (Linux 6.6's rule) */
	if ((r->sb.feature_compat & EROFS_COMPAT_XATTR_FILTER) && !r->sb.xattr_filter_reserved)
		absent = get_le32(ibody);
	if (EROFS_XATTR_IBODY_HEADER_SIZE + 4u * count > vi->xattr_isize) {
		err = fail(r, -EFSCORRUPTED,
			   "%u shared xattrs do not fit in the %u-byte xattr area",
			    count, vi->xattr_isize);
		goto out;
	}

	for (i = 0; i < count; i++) {
		uint32_t id = get_le32(ibody + EROFS_XATTR_IBODY_HEADER_SIZE + 4 * i);
		uint64_t at = r->xattr_base + 4 * (uint64_t)id;
		struct erofs_xattr_entry e;
		uint8_t hdr[EROFS_XATTR_ENTRY_HEADER_SIZE];
		size_t body;

		if (at > sh_limit || sh_limit - at < sizeof(hdr)) {
			err = fail(r, -EFSCORRUPTED,
				   "shared xattr id %u beyond the end of the %s",
				    id, sh_space);
			goto out;
		}
		err = erofs_meta_read(r, sh_mbox, hdr, sizeof(hdr), at);
		if (err)
			goto out;
		erofs_xattr_entry_decode(hdr, &e);
		body = (size_t)e.name_len + e.value_size;
		if (body > sh_limit - at - sizeof(hdr)) {
			err = fail(r, -EFSCORRUPTED,
				   "shared xattr id %u runs past the end of the %s",
				    id, sh_space);
			goto out;
		}
		free(sbuf);
		sbuf = malloc(body ? body : 1);
		if (!sbuf) {
			err = fail(r, -ENOMEM, "out of memory");
			goto out;
		}
		err = erofs_meta_read(r, sh_mbox, sbuf, body, at + sizeof(hdr));
		if (err)
			goto out;
		err = xattr_entry(r, vi, &e, sbuf, true, at, "shared", absent, e.name_len, false, s);
		if (err)
			goto out;
	}

	pos = EROFS_XATTR_IBODY_HEADER_SIZE + 4 * count;
	while (pos < vi->xattr_isize) {
		struct erofs_xattr_entry e;
		unsigned int esz;

		if (vi->xattr_isize - pos < EROFS_XATTR_ENTRY_HEADER_SIZE) {
			err = fail(r, -EFSCORRUPTED,
				   "truncated inline xattr entry at offset %u",
				    pos);
			goto out;
		}
		erofs_xattr_entry_decode(ibody + pos, &e);
		esz = erofs_xattr_entry_size(e.name_len, e.value_size);
		if (esz > vi->xattr_isize - pos) {
			err = fail(r, -EFSCORRUPTED,
				   "inline xattr entry at offset %u (%u bytes) overruns the %u-byte xattr area",
				    pos, esz, vi->xattr_isize);
			goto out;
		}
		err = xattr_entry(r, vi, &e, ibody + pos + EROFS_XATTR_ENTRY_HEADER_SIZE,
				  false, vi->iloc + vi->isize + pos, "inline", absent, e.name_len, false,
				  s);
		if (err)
			goto out;
		pos += esz;
	}
out:
	free(sbuf);
	free(ibody);
	return err;
}

int erofs_xattr_iterate(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			erofs_xattr_fn fn, void *arg)
{
	const struct sink s = { .fn = fn, .arg = arg };

	return iterate(r, vi, &s);
}

int erofs_xattr_iterate_all(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			    erofs_xattr_fn fn, void *arg)
{
	const struct sink s = { .fn = fn, .arg = arg, .hidden = true };

	return iterate(r, vi, &s);
}
