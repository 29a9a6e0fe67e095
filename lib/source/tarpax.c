// SPDX-License-Identifier: MIT
/*
 * PAX extended headers for the tar parser (see include/erofs/source/tarpax.h):
 * records, xattrs (SCHILY and LIBARCHIVE forms), times with fractions and
 * GNU sparse maps given as records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/diag.h"
#include "erofs/source/tarpax.h"

void erofs_tar_ext_free(struct erofs_tar_ext *e)
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

int erofs_tar_ext_put_xattr(struct erofs_tar_ext *e, const char *name, size_t name_len, const uint8_t *value,
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
static int put_libarchive_xattr(struct erofs_tar_ext *e, const char *key, size_t key_len,
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
	err = erofs_tar_ext_put_xattr(e, name, n, bytes, nb);
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

int erofs_tar_ext_add_segment(struct erofs_tar_ext *e, uint64_t offset, uint64_t len)
{
	if (e->nr_map == EROFS_TAR_SPARSE_MAX)
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
static int pax_sparse(struct erofs_tar_ext *e, const char *key, size_t key_len, const char *value,
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
		return erofs_tar_ext_add_segment(e, e->sparse_offset, v);
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
			if ((err = erofs_tar_ext_add_segment(e, v, w)))
				return err;
			i = end2 + 1;
		}
		return 0;
	}
	return 0;	/* minor, numblocks: implied by the rest */
}

static int pax_record(struct erofs_tar_ext *e, bool global, const char *key, size_t key_len,
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
		return erofs_tar_ext_put_xattr(e, key + 13, key_len - 13, (const uint8_t *)value, len);
	if (key_len > 17 && !memcmp(key, "LIBARCHIVE.xattr.", 17))
		return put_libarchive_xattr(e, key + 17, key_len - 17, value, len);
	if (key_len > 11 && !memcmp(key, "GNU.sparse.", 11) && !global)
		return pax_sparse(e, key + 11, key_len - 11, value, len);
	return 0;	/* uname, gname, atime, ctime, comment, charset...: not stored */
}

int erofs_tar_parse_pax(struct erofs_tar_ext *e, bool global, const char *buf, size_t size,
			const char *name, uint64_t at)
{
	size_t pos = 0;

	while (pos < size) {
		const char *rec = buf + pos, *sp, *eq;
		size_t left = size - pos, digits;
		uint64_t len;
		int err;

		if (!rec[0] && !memcmp(rec, rec + 1, left - 1))
			break;	/* some writers pad with NULs */
		sp = memchr(rec, ' ', left < 24 ? left : 24);
		digits = sp ? (size_t)(sp - rec) : 0;
		if (!sp || !parse_decimal(rec, digits, left, &len) || len <= digits + 1 ||
		    rec[len - 1] != '\n' || !(eq = memchr(sp + 1, '=', len - digits - 2))) {
			erofs_err("%s: PAX header at byte %llu: record at byte %zu is malformed "
				  "or longer than the header", name, (unsigned long long)at, pos);
			return -EINVAL;
		}
		err = pax_record(e, global, sp + 1, (size_t)(eq - sp - 1), eq + 1,
				 (size_t)(rec + len - 1 - eq - 1));
		if (err) {
			if (err == -EINVAL)
				erofs_err("%s: PAX header at byte %llu: bad value in record '%.*s'",
					  name, (unsigned long long)at,
					  (int)(eq - sp - 1), sp + 1);
			return err;
		}
		pos += (size_t)len;
	}
	return 0;
}
