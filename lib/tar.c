// SPDX-License-Identifier: MIT
/*
 * The tar parser (see include/erofs/tar.h): ustar, GNU (long names and
 * links) and PAX (local and global records) headers, read strictly forward.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/diag.h"
#include "erofs/tar.h"
#include "erofs/tario.h"

#define BLOCK		512u
/* Larger extension headers are refused: they would only hold memory. */
#define PAX_MAX		(8u << 20)
#define LONG_NAME_MAX	(64u << 10)
/* An entry claiming more is broken or hostile (2^48 bytes: 256 TiB). */
#define SIZE_MAX_SANE	(1ull << 48)

/* ustar header fields: offset, length */
#define F_NAME		0, 100
#define F_MODE		100, 8
#define F_UID		108, 8
#define F_GID		116, 8
#define F_SIZE		124, 12
#define F_MTIME		136, 12
#define F_CHKSUM	148, 8
#define F_TYPE		156
#define F_LINKNAME	157, 100
#define F_MAGIC		257
#define F_DEVMAJOR	329, 8
#define F_DEVMINOR	337, 8
#define F_PREFIX	345, 155

/* What PAX records (or GNU long-name headers) say about an entry. */
struct ext {
	char *path, *link;
	bool has_size, has_uid, has_gid, has_mtime, has_major, has_minor;
	uint64_t size;
	uint32_t uid, gid, major, minor;
	int64_t mtime;
	uint32_t mtime_nsec;
	struct erofs_tar_xattr *xattrs;
	size_t nr_xattrs;
	/* GNU sparse: the file's size, its segments (PAX 0.0 gives them key by key) */
	bool sparse, sparse_map_in_data, has_sparse_offset;
	uint64_t sparse_size, sparse_offset;
	char *sparse_name;
	struct erofs_tar_sparse *map;
	size_t nr_map;
};

struct erofs_tar {
	struct erofs_tar_stream s;
	const char *name;
	uint64_t data_left, pad;	/* the current entry's unread data, then its padding */
	uint64_t data_header;		/* the current entry's header offset, for messages */
	const char *data_path;
	struct ext global, local;	/* 'g' records; 'x' and 'L'/'K' for the next entry */
	struct ext entry;		/* what the current entry's strings live in */
	bool ended;
};

static void ext_free(struct ext *e)
{
	free(e->map);
	free(e->sparse_name);
	free(e->path);
	free(e->link);
	for (size_t i = 0; i < e->nr_xattrs; i++) {
		free(e->xattrs[i].name);
		free(e->xattrs[i].value);
	}
	free(e->xattrs);
	memset(e, 0, sizeof(*e));
}

static bool all_zero(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Names are cut in messages: a hostile one may be megabytes long. */
#define SHOWN_NAME_MAX	256

static int bad(const struct erofs_tar *t, uint64_t at, const char *path, const char *why)
{
	if (path)
		erofs_err("%s: entry '%.*s%s' (header at byte %llu): %s", t->name, SHOWN_NAME_MAX,
			  path, strlen(path) > SHOWN_NAME_MAX ? "..." : "",
			  (unsigned long long)at, why);
	else
		erofs_err("%s: header at byte %llu: %s", t->name, (unsigned long long)at, why);
	return -EINVAL;
}

/*
 * A numeric field: octal digits (leading spaces, then a space or NUL or the
 * field's end), or base-256 when the first byte's top bit is set.
 */
static bool parse_num(const uint8_t *h, size_t off, size_t len, bool may_be_negative,
		      int64_t *out)
{
	const uint8_t *f = h + off;
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		bool negative = f[0] == 0xff;

		if (negative && !may_be_negative)
			return false;
		v = negative ? UINT64_MAX : 0;
		for (i = 0; i < len; i++) {
			uint8_t b = i ? f[i] : (uint8_t)(negative ? f[0] : f[0] & 0x7f);

			if (!negative && v >> 55)
				return false;
			if (negative && (v >> 55) != 0x1ff)
				return false;
			v = v << 8 | b;
		}
		if (!negative && v > INT64_MAX)
			return false;
		*out = (int64_t)v;
		return true;
	}
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	if (i < len && f[i] != ' ' && f[i] != '\0')
		return false;
	*out = (int64_t)v;
	return true;
}

static bool checksum_ok(const uint8_t *h)
{
	int64_t stored;
	uint64_t sum_unsigned = 0;
	int64_t sum_signed = 0;

	if (!parse_num(h, F_CHKSUM, false, &stored))
		return false;
	for (unsigned int i = 0; i < BLOCK; i++) {
		uint8_t b = (i >= 148 && i < 156) ? ' ' : h[i];

		sum_unsigned += b;
		sum_signed += (int8_t)b;
	}
	return (uint64_t)stored == sum_unsigned || stored == sum_signed;
}

static char *field_string(const uint8_t *h, size_t off, size_t len)
{
	const char *f = (const char *)h + off;

	return strndup(f, strnlen(f, len));
}

static int read_exact(struct erofs_tar *t, void *buf, size_t len, uint64_t at, const char *path)
{
	size_t got;
	int err = erofs_tar_stream_read(&t->s, buf, len, &got);

	if (err == -ENODATA)
		return bad(t, at, path, "the stream ends inside the entry (truncated)");
	return err;
}

/* Skips the current entry's unread data and its padding. */
static int skip_rest(struct erofs_tar *t)
{
	int err = erofs_tar_stream_skip(&t->s, t->data_left + t->pad);

	t->data_left = t->pad = 0;
	if (err == -ENODATA)
		return bad(t, t->data_header, t->data_path,
			   "the stream ends inside the entry's data (truncated)");
	return err;
}

/* Reads an extension header's data (size bytes, then its padding) into a new buffer. */
static int read_ext_data(struct erofs_tar *t, uint64_t at, uint64_t size, uint64_t max,
			 const char *what, char **out)
{
	char *buf;
	int err;

	if (size > max) {
		erofs_err("%s: header at byte %llu: %s of %llu bytes (more than %llu)", t->name,
			  (unsigned long long)at, what, (unsigned long long)size,
			  (unsigned long long)max);
		return -EINVAL;
	}
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	if ((err = read_exact(t, buf, (size_t)size, at, NULL)) ||
	    (err = erofs_tar_stream_skip(&t->s, (BLOCK - size % BLOCK) % BLOCK))) {
		free(buf);
		return err == -ENODATA ? bad(t, at, NULL, "truncated after an extension header")
				       : err;
	}
	buf[size] = '\0';
	*out = buf;
	return 0;
}

static int put_xattr(struct ext *e, const char *name, size_t name_len, const uint8_t *value,
		     size_t len)
{
	struct erofs_tar_xattr *x = NULL;

	for (size_t i = 0; i < e->nr_xattrs; i++)
		if (strlen(e->xattrs[i].name) == name_len &&
		    !memcmp(e->xattrs[i].name, name, name_len))
			x = &e->xattrs[i];
	if (!x) {
		struct erofs_tar_xattr *bigger = realloc(e->xattrs,
							 (e->nr_xattrs + 1) * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		e->xattrs = bigger;
		x = &e->xattrs[e->nr_xattrs++];
		if (!(x->name = strndup(name, name_len))) {
			e->nr_xattrs--;
			return -ENOMEM;
		}
	} else {
		free(x->value);
	}
	x->value = malloc(len ? len : 1);
	if (!x->value)
		return -ENOMEM;
	memcpy(x->value, value, len);
	x->value_len = len;
	return 0;
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* LIBARCHIVE.xattr.NAME=BASE64: NAME is %-escaped, the value base64 (padding optional). */
static int put_libarchive_xattr(struct ext *e, const char *key, size_t key_len,
				const char *value, size_t len)
{
	char *name = malloc(key_len + 1);
	uint8_t *bytes = malloc(len * 3 / 4 + 3);
	size_t n = 0, nb = 0;
	uint32_t acc = 0;
	int bits = 0, err = -EINVAL;

	if (!name || !bytes) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < key_len; i++) {
		if (key[i] == '%' && i + 2 < key_len) {
			char hex[3] = { key[i + 1], key[i + 2], 0 };
			char *end;
			long c = strtol(hex, &end, 16);

			if (end != hex + 2 || !c)
				goto out;
			name[n++] = (char)c;
			i += 2;
		} else {
			name[n++] = key[i];
		}
	}
	for (size_t i = 0; i < len && value[i] != '='; i++) {
		int v = base64_value(value[i]);

		if (v < 0)
			goto out;
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			bytes[nb++] = (uint8_t)(acc >> bits);
		}
	}
	err = put_xattr(e, name, n, bytes, nb);
out:
	free(name);
	free(bytes);
	return err;
}

static bool parse_decimal(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (max - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* mtime=[-]SECONDS[.FRACTION] */
static bool parse_pax_time(const char *s, size_t len, int64_t *sec, uint32_t *nsec)
{
	bool negative = len && s[0] == '-';
	const char *dot = memchr(s, '.', len);
	size_t int_len = (dot ? (size_t)(dot - s) : len) - negative;
	uint64_t v, frac = 0;
	size_t digits = 0;

	if (!parse_decimal(s + negative, int_len, INT64_MAX, &v))
		return false;
	for (size_t i = dot ? (size_t)(dot - s) + 1 : len; i < len; i++, digits++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (digits < 9)
			frac = frac * 10 + (uint64_t)(s[i] - '0');
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (negative && frac) {		/* -1.25 is 2 s before, plus 0.75 */
		*sec = -(int64_t)v - 1;
		*nsec = (uint32_t)(1000000000u - frac);
	} else {
		*sec = negative ? -(int64_t)v : (int64_t)v;
		*nsec = (uint32_t)frac;
	}
	return true;
}

static bool key_is(const char *key, size_t key_len, const char *want)
{
	return strlen(want) == key_len && !memcmp(key, want, key_len);
}

static int pax_string(char **dst, const char *value, size_t len)
{
	if (memchr(value, '\0', len))
		return -EINVAL;
	free(*dst);
	*dst = strndup(value, len);
	return *dst ? 0 : -ENOMEM;
}

#define SPARSE_MAX	(1u << 20)	/* segments: 16 MiB of map at most */

static int add_segment(struct ext *e, uint64_t offset, uint64_t len)
{
	if (e->nr_map == SPARSE_MAX)
		return -EINVAL;
	if (!(e->nr_map & (e->nr_map - 1)) || e->nr_map < 8) {
		size_t cap = e->nr_map < 8 ? 8 : e->nr_map * 2;
		struct erofs_tar_sparse *bigger = realloc(e->map, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		e->map = bigger;
	}
	e->map[e->nr_map++] = (struct erofs_tar_sparse){ offset, len };
	return 0;
}

/* GNU.sparse.KEY of PAX formats 0.0, 0.1 and 1.0. */
static int pax_sparse(struct ext *e, const char *key, size_t key_len, const char *value,
		      size_t len)
{
	uint64_t v, w;

	e->sparse = true;
	if (key_is(key, key_len, "name"))
		return pax_string(&e->sparse_name, value, len);
	if (key_is(key, key_len, "size") || key_is(key, key_len, "realsize"))
		return parse_decimal(value, len, UINT64_MAX, &e->sparse_size) ? 0 : -EINVAL;
	if (key_is(key, key_len, "major")) {
		e->sparse_map_in_data = len == 1 && value[0] == '1';
		return 0;
	}
	if (key_is(key, key_len, "offset")) {
		e->has_sparse_offset = true;
		return parse_decimal(value, len, UINT64_MAX, &e->sparse_offset) ? 0 : -EINVAL;
	}
	if (key_is(key, key_len, "numbytes")) {
		if (!e->has_sparse_offset || !parse_decimal(value, len, UINT64_MAX, &v))
			return -EINVAL;
		e->has_sparse_offset = false;
		return add_segment(e, e->sparse_offset, v);
	}
	if (key_is(key, key_len, "map")) {	/* "OFFSET,LEN,OFFSET,LEN..." */
		for (size_t i = 0; i < len; ) {
			const char *c1 = memchr(value + i, ',', len - i), *c2;
			size_t end2;
			int err;

			if (!c1)
				return -EINVAL;
			c2 = memchr(c1 + 1, ',', len - (size_t)(c1 + 1 - value));
			end2 = c2 ? (size_t)(c2 - value) : len;
			if (!parse_decimal(value + i, (size_t)(c1 - value) - i, UINT64_MAX, &v) ||
			    !parse_decimal(c1 + 1, end2 - (size_t)(c1 + 1 - value), UINT64_MAX, &w))
				return -EINVAL;
			if ((err = add_segment(e, v, w)))
				return err;
			i = end2 + 1;
		}
		return 0;
	}
	return 0;	/* minor, numblocks: implied by the rest */
}

static int pax_record(struct ext *e, bool global, const char *key, size_t key_len,
		      const char *value, size_t len)
{
	uint64_t v;

	if (key_is(key, key_len, "path"))
		return global ? 0 : pax_string(&e->path, value, len);
	if (key_is(key, key_len, "linkpath"))
		return global ? 0 : pax_string(&e->link, value, len);
	if (key_is(key, key_len, "size")) {
		if (global)
			return 0;
		e->has_size = true;
		return parse_decimal(value, len, UINT64_MAX, &e->size) ? 0 : -EINVAL;
	}
	if (key_is(key, key_len, "uid") || key_is(key, key_len, "gid")) {
		if (!parse_decimal(value, len, UINT32_MAX, &v))
			return -EINVAL;
		if (key[0] == 'u')
			e->uid = (uint32_t)v, e->has_uid = true;
		else
			e->gid = (uint32_t)v, e->has_gid = true;
		return 0;
	}
	if (key_is(key, key_len, "mtime")) {
		e->has_mtime = true;
		return parse_pax_time(value, len, &e->mtime, &e->mtime_nsec) ? 0 : -EINVAL;
	}
	if (key_is(key, key_len, "SCHILY.devmajor") || key_is(key, key_len, "SCHILY.devminor")) {
		if (!parse_decimal(value, len, UINT32_MAX, &v))
			return -EINVAL;
		if (key[11] == 'a')
			e->major = (uint32_t)v, e->has_major = true;
		else
			e->minor = (uint32_t)v, e->has_minor = true;
		return 0;
	}
	if (key_len > 13 && !memcmp(key, "SCHILY.xattr.", 13))
		return put_xattr(e, key + 13, key_len - 13, (const uint8_t *)value, len);
	if (key_len > 17 && !memcmp(key, "LIBARCHIVE.xattr.", 17))
		return put_libarchive_xattr(e, key + 17, key_len - 17, value, len);
	if (key_len > 11 && !memcmp(key, "GNU.sparse.", 11) && !global)
		return pax_sparse(e, key + 11, key_len - 11, value, len);
	return 0;	/* uname, gname, atime, ctime, comment, charset...: not stored */
}

/* "LEN KEY=VALUE\n" records, LEN counting the whole record. */
static int parse_pax(struct erofs_tar *t, uint64_t at, const char *buf, size_t size, bool global)
{
	struct ext *e = global ? &t->global : &t->local;
	size_t pos = 0;

	while (pos < size) {
		const char *rec = buf + pos, *sp, *eq;
		size_t left = size - pos, digits;
		uint64_t len;
		int err;

		if (!rec[0] && all_zero(rec, left))
			break;	/* some writers pad with NULs */
		sp = memchr(rec, ' ', left < 24 ? left : 24);
		digits = sp ? (size_t)(sp - rec) : 0;
		if (!sp || !parse_decimal(rec, digits, left, &len) || len <= digits + 1 ||
		    rec[len - 1] != '\n' || !(eq = memchr(sp + 1, '=', len - digits - 2))) {
			erofs_err("%s: PAX header at byte %llu: record at byte %zu is malformed "
				  "or longer than the header", t->name, (unsigned long long)at, pos);
			return -EINVAL;
		}
		err = pax_record(e, global, sp + 1, (size_t)(eq - sp - 1), eq + 1,
				 (size_t)(rec + len - 1 - eq - 1));
		if (err) {
			if (err == -EINVAL)
				erofs_err("%s: PAX header at byte %llu: bad value in record '%.*s'",
					  t->name, (unsigned long long)at,
					  (int)(eq - sp - 1), sp + 1);
			return err;
		}
		pos += (size_t)len;
	}
	return 0;
}


int erofs_tar_open(struct erofs_tar **out, int fd, enum erofs_tar_decoder decoder,
		   const char *name)
{
	struct erofs_tar *t = calloc(1, sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->name = name;
	if ((err = erofs_tar_stream_open(&t->s, fd, decoder, name))) {
		erofs_tar_stream_close(&t->s);
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

bool erofs_tar_in_place(const struct erofs_tar *t, uint64_t *base)
{
	*base = t->s.base;
	return t->s.seekable;
}

void erofs_tar_close(struct erofs_tar *t)
{
	if (!t)
		return;
	ext_free(&t->global);
	ext_free(&t->local);
	ext_free(&t->entry);
	erofs_tar_stream_close(&t->s);
	free(t);
}

int erofs_tar_read_data(struct erofs_tar *t, void *buf, size_t len)
{
	size_t got;
	int err;

	if (len > t->data_left)
		return bad(t, t->data_header, t->data_path, "read past the entry's data");
	err = erofs_tar_stream_read(&t->s, buf, len, &got);
	t->data_left -= got;
	if (err == -ENODATA)
		return bad(t, t->data_header, t->data_path,
			   "the stream ends inside the entry's data (truncated)");
	return err;
}

/* Joins ustar's prefix and name fields. */
static char *header_path(const uint8_t *h)
{
	char *name = field_string(h, F_NAME), *prefix, *joined;

	if (!name || memcmp(h + F_MAGIC, "ustar\0", 6) || !h[345])
		return name;
	prefix = field_string(h, F_PREFIX);
	joined = prefix ? malloc(strlen(prefix) + strlen(name) + 2) : NULL;
	if (joined)
		strcat(strcat(strcpy(joined, prefix), "/"), name);
	free(prefix);
	free(name);
	return joined;
}

static void merge_xattrs(struct ext *into, const struct ext *from, int *err)
{
	for (size_t i = 0; i < from->nr_xattrs && !*err; i++)
		*err = put_xattr(into, from->xattrs[i].name, strlen(from->xattrs[i].name),
				 from->xattrs[i].value, from->xattrs[i].value_len);
}

/* Old GNU sparse headers: 4 segments in the header, 21 in each extension block. */
static int read_gnu_sparse(struct erofs_tar *t, const uint8_t *h, uint64_t at)
{
	uint8_t block[BLOCK];
	const uint8_t *b = h;
	size_t first = 386, count = 4;
	int64_t off, len, realsize;
	int err;

	if (!parse_num(h, 483, 12, false, &realsize))
		return bad(t, at, NULL, "bad GNU sparse real size");
	t->local.sparse = true;
	t->local.sparse_size = (uint64_t)realsize;
	for (;;) {
		bool extended = b[first + count * 24];

		for (size_t i = 0; i < count; i++) {
			const size_t f = first + i * 24;

			if (!b[f] && !b[f + 12])
				break;
			if (!parse_num(b, f, 12, false, &off) || !parse_num(b, f + 12, 12, false, &len))
				return bad(t, at, NULL, "bad GNU sparse map");
			if ((err = add_segment(&t->local, (uint64_t)off, (uint64_t)len)))
				return err == -ENOMEM ? err : bad(t, at, NULL, "GNU sparse map too long");
		}
		if (!extended)
			return 0;
		if ((err = read_exact(t, block, BLOCK, at, NULL)))
			return err;
		b = block;
		first = 0;
		count = 21;
	}
}

/* PAX sparse 1.0: the map leads the data, decimal numbers a line each, in whole blocks. */
static int read_sparse_map(struct erofs_tar *t, struct ext *x, uint64_t at)
{
	char block[BLOCK];
	uint64_t numbers[2], count = 0, value = 0, want = 1;
	size_t pos = BLOCK, digits = 0;
	int err;

	for (uint64_t seen = 0; seen < want; ) {
		if (pos == BLOCK) {
			if (t->data_left < BLOCK)
				return bad(t, at, x->path, "sparse map longer than the data");
			if ((err = erofs_tar_read_data(t, block, BLOCK)))
				return err;
			pos = 0;
		}
		if (block[pos] >= '0' && block[pos] <= '9' && digits < 20) {
			value = value * 10 + (uint64_t)(block[pos++] - '0');
			digits++;
			continue;
		}
		if (block[pos++] != '\n' || !digits)
			return bad(t, at, x->path, "bad sparse map");
		if (!seen++) {
			if (value > SPARSE_MAX)
				return bad(t, at, x->path, "sparse map too long");
			count = value;
			want = 1 + 2 * count;
		} else {
			numbers[(seen - 2) & 1] = value;
			if (!((seen - 1) & 1) && (err = add_segment(x, numbers[0], numbers[1])))
				return err;
		}
		value = 0;
		digits = 0;
	}
	return 0;
}

/* Checks a sparse file's map against its size and the data the stream holds. */
static int finish_sparse(struct erofs_tar *t, struct ext *x, uint64_t at,
			 struct erofs_tar_entry *e)
{
	uint64_t end = 0, stored = 0;
	int err;

	if (x->sparse_map_in_data && (err = read_sparse_map(t, x, at)))
		return err;
	for (size_t i = 0; i < x->nr_map; i++) {
		const struct erofs_tar_sparse *s = &x->map[i];

		if (s->offset < end || s->offset > x->sparse_size ||
		    s->len > x->sparse_size - s->offset)
			return bad(t, at, x->path, "sparse map out of order or past the file's end");
		end = s->offset + s->len;
		stored += s->len;
	}
	if (stored != t->data_left)
		return bad(t, at, x->path, "sparse map does not match the data stored");
	if (x->sparse_size > SIZE_MAX_SANE)
		return bad(t, at, x->path, "size over 2^48 bytes");
	e->size = x->sparse_size;
	e->data_offset = t->s.pos;
	e->sparse = x->map;
	e->nr_sparse = x->nr_map;
	return 0;
}

/* Fills e from the header and the extensions that came before it. */
static int make_entry(struct erofs_tar *t, const uint8_t *h, uint64_t at, uint64_t size,
		      struct erofs_tar_entry *e)
{
	struct ext *x = &t->entry, *l = &t->local, *g = &t->global;
	char type = (char)h[F_TYPE];
	int64_t v;
	int err = 0;

	struct ext local = *l;

	/* the local extensions become the entry's, its xattrs over the global ones */
	memset(l, 0, sizeof(*l));
	*x = local;
	x->xattrs = NULL;
	x->nr_xattrs = 0;
	merge_xattrs(x, g, &err);
	merge_xattrs(x, &local, &err);
	local.path = local.link = local.sparse_name = NULL;	/* now the entry's */
	local.map = NULL;
	ext_free(&local);
	if (err)
		return err;
	if (x->sparse_name) {		/* PAX sparse 0.1 and 1.0 name the file here */
		free(x->path);
		x->path = x->sparse_name;
		x->sparse_name = NULL;
	}
	if (!x->path && !(x->path = header_path(h)))
		return -ENOMEM;
	if (!x->link && (type == '1' || type == '2') && !(x->link = field_string(h, F_LINKNAME)))
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->path = x->path;
	e->link = x->link;
	e->header_offset = at;
	e->data_offset = t->s.pos;
	t->data_header = at;
	t->data_path = x->path;
	if (!x->path[0])
		return bad(t, at, NULL, "empty name");
	if (!parse_num(h, F_MODE, false, &v))
		return bad(t, at, x->path, "bad mode field");
	e->mode = (uint32_t)v & 07777;
	if (!(x->has_uid || g->has_uid) && (!parse_num(h, F_UID, false, &v) || v > UINT32_MAX))
		return bad(t, at, x->path, "bad uid field");
	e->uid = x->has_uid ? x->uid : g->has_uid ? g->uid : (uint32_t)v;
	if (!(x->has_gid || g->has_gid) && (!parse_num(h, F_GID, false, &v) || v > UINT32_MAX))
		return bad(t, at, x->path, "bad gid field");
	e->gid = x->has_gid ? x->gid : g->has_gid ? g->gid : (uint32_t)v;
	if (x->has_mtime || g->has_mtime) {
		e->mtime = x->has_mtime ? x->mtime : g->mtime;
		e->mtime_nsec = x->has_mtime ? x->mtime_nsec : g->mtime_nsec;
	} else if (!parse_num(h, F_MTIME, true, &e->mtime)) {
		return bad(t, at, x->path, "bad mtime field");
	}
	switch (type) {
	case '0': case '\0': case '7':
		type = x->path[strlen(x->path) - 1] == '/' ? '5' : '0';
		break;
	case '1': case '2': case '5': case '6':
		break;
	case '3': case '4':
		if (!x->has_major && (!parse_num(h, F_DEVMAJOR, false, &v) || v > UINT32_MAX))
			return bad(t, at, x->path, "bad device major field");
		e->rdev_major = x->has_major ? x->major : (uint32_t)v;
		if (!x->has_minor && (!parse_num(h, F_DEVMINOR, false, &v) || v > UINT32_MAX))
			return bad(t, at, x->path, "bad device minor field");
		e->rdev_minor = x->has_minor ? x->minor : (uint32_t)v;
		break;
	case 'D':	/* GNU dumpdir: a directory, its data a listing */
		type = '5';
		break;
	case 'S':	/* old GNU sparse: its map was read with the header */
		type = '0';
		break;
	case 'M': case 'N':
		return bad(t, at, x->path, "GNU multi-volume and old long-name entries are not "
					   "supported");
	default:
		erofs_warn("%s: entry '%s' (header at byte %llu): unknown type '%c', "
			   "stored as a regular file, as tar extracts it", t->name, x->path,
			   (unsigned long long)at, type);
		type = '0';
		break;
	}
	e->type = type;
	e->size = type == '0' ? size : 0;
	e->xattrs = x->xattrs;
	e->nr_xattrs = x->nr_xattrs;
	if (type == '0' && x->sparse)
		return finish_sparse(t, x, at, e);
	return err;
}

int erofs_tar_next(struct erofs_tar *t, struct erofs_tar_entry *e)
{
	uint8_t h[BLOCK];
	int err;

	err = t->ended ? 0 : skip_rest(t);
	ext_free(&t->entry);
	t->data_path = NULL;
	if (err || t->ended)
		return err;
	for (;;) {
		uint64_t at = t->s.pos, size;
		bool pending = t->local.path || t->local.link || t->local.nr_xattrs || t->local.sparse ||
			       t->local.has_size || t->local.has_uid || t->local.has_mtime;
		size_t got;
		int64_t v;
		char *buf;

		err = erofs_tar_stream_read(&t->s, h, BLOCK, &got);
		if (err == -ENODATA && !got && !pending) {
			t->ended = true;	/* no end-of-archive blocks: as tar, accept it */
			return 0;
		}
		if (err == -ENODATA)
			return bad(t, at, NULL, "the stream ends inside a header (truncated)");
		if (err)
			return err;
		if (all_zero(h, BLOCK)) {
			if (pending)
				return bad(t, at, t->local.path, "extension headers without an entry");
			t->ended = true;	/* the end marker; what follows is not read */
			return 0;
		}
		if (!checksum_ok(h))
			return bad(t, at, NULL, "bad header checksum (not a tar archive, or damaged)");
		if (!parse_num(h, F_SIZE, false, &v)) {
			char name[101];

			memcpy(name, h, 100);
			name[100] = '\0';
			return bad(t, at, t->local.path ? t->local.path : name, "bad size field");
		}
		size = (uint64_t)v;
		if (t->local.has_size && h[F_TYPE] != 'x' && h[F_TYPE] != 'g')
			size = t->local.size;
		if (size > SIZE_MAX_SANE)
			return bad(t, at, t->local.path, "size over 2^48 bytes");
		switch (h[F_TYPE]) {
		case 'x': case 'g':
			if ((err = read_ext_data(t, at, size, PAX_MAX, "PAX header", &buf)))
				return err;
			err = parse_pax(t, at, buf, (size_t)size, h[F_TYPE] == 'g');
			free(buf);
			if (err)
				return err;
			continue;
		case 'L': case 'K':
			if ((err = read_ext_data(t, at, size, LONG_NAME_MAX, "GNU long name", &buf)))
				return err;
			free(h[F_TYPE] == 'L' ? t->local.path : t->local.link);
			*(h[F_TYPE] == 'L' ? &t->local.path : &t->local.link) = buf;
			continue;
		case 'V':	/* a volume label: nothing to extract */
			if ((err = erofs_tar_stream_skip(&t->s, (size + BLOCK - 1) / BLOCK * BLOCK)))
				return err == -ENODATA ? bad(t, at, NULL, "truncated") : err;
			continue;
		}
		if (h[F_TYPE] == 'S' && (err = read_gnu_sparse(t, h, at)))
			return err;
		t->data_left = size;
		t->pad = (BLOCK - size % BLOCK) % BLOCK;
		err = make_entry(t, h, at, size, e);
		if (err == -ENOMEM)
			erofs_err("out of memory while reading %s", t->name);
		if (!err && e->type != '0')
			err = skip_rest(t);
		return err ? err : 1;
	}
}
