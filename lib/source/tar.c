// SPDX-License-Identifier: MIT
/*
 * The tar parser (see include/erofs/source/tar.h): ustar, GNU (long names and
 * links) and PAX (local and global records) headers, read strictly forward.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/diag.h"
#include "erofs/source/tar.h"
#include "erofs/source/tario.h"
#include "erofs/source/tarpax.h"

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

struct erofs_tar {
	struct erofs_tar_stream s;
	const char *name;
	uint64_t data_left, pad;	/* the current entry's unread data, then its padding */
	uint64_t data_header;		/* the current entry's header offset, for messages */
	const char *data_path;
	struct erofs_tar_ext global, local;	/* 'g' records; 'x' and 'L'/'K' for the next entry */
	struct erofs_tar_ext entry;		/* what the current entry's strings live in */
	bool ended;
	bool headers_only;		/* --tar=headerball: no data after the headers */
};

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

void erofs_tar_dump_decoded(struct erofs_tar *t, int fd)
{
	t->s.dump_fd = fd;
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
	erofs_tar_ext_free(&t->global);
	erofs_tar_ext_free(&t->local);
	erofs_tar_ext_free(&t->entry);
	erofs_tar_stream_close(&t->s);
	free(t);
}

int erofs_tar_drain(struct erofs_tar *t, uint64_t *total)
{
	uint8_t buf[BLOCK * 8];
	size_t got;
	int err;

	while (!(err = erofs_tar_stream_read(&t->s, buf, sizeof(buf), &got)))
		;
	if (err != -ENODATA)	/* the end of the stream is what we read up to */
		return err;
	*total = t->s.pos;
	return 0;
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

static void merge_xattrs(struct erofs_tar_ext *into, const struct erofs_tar_ext *from, int *err)
{
	for (size_t i = 0; i < from->nr_xattrs && !*err; i++)
		*err = erofs_tar_ext_put_xattr(into, from->xattrs[i].name, strlen(from->xattrs[i].name),
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
			if ((err = erofs_tar_ext_add_segment(&t->local, (uint64_t)off, (uint64_t)len)))
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
static int read_sparse_map(struct erofs_tar *t, struct erofs_tar_ext *x, uint64_t at)
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
			if (value > EROFS_TAR_SPARSE_MAX)
				return bad(t, at, x->path, "sparse map too long");
			count = value;
			want = 1 + 2 * count;
		} else {
			numbers[(seen - 2) & 1] = value;
			if (!((seen - 1) & 1) && (err = erofs_tar_ext_add_segment(x, numbers[0], numbers[1])))
				return err;
		}
		value = 0;
		digits = 0;
	}
	return 0;
}

/* Checks a sparse file's map against its size and the data the stream holds. */
static int finish_sparse(struct erofs_tar *t, struct erofs_tar_ext *x, uint64_t at,
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
	struct erofs_tar_ext *x = &t->entry, *l = &t->local, *g = &t->global;
	char type = (char)h[F_TYPE];
	int64_t v;
	int err = 0;

	struct erofs_tar_ext local = *l;

	/* the local extensions become the entry's, its xattrs over the global ones */
	memset(l, 0, sizeof(*l));
	*x = local;
	x->xattrs = NULL;
	x->nr_xattrs = 0;
	merge_xattrs(x, g, &err);
	merge_xattrs(x, &local, &err);
	local.path = local.link = local.sparse_name = NULL;	/* now the entry's */
	local.map = NULL;
	erofs_tar_ext_free(&local);
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
	erofs_tar_ext_free(&t->entry);
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
			err = erofs_tar_parse_pax(h[F_TYPE] == 'g' ? &t->global : &t->local,
						  h[F_TYPE] == 'g', buf, (size_t)size, t->name, at);
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
		t->data_left = t->headers_only ? 0 : size;
		t->pad = t->headers_only ? 0 : (BLOCK - size % BLOCK) % BLOCK;
		err = make_entry(t, h, at, size, e);
		if (!err && t->headers_only && e->sparse)
			err = bad(t, at, e->path, "a sparse entry in a headerball (no data to map)");
		if (err == -ENOMEM)
			erofs_err("out of memory while reading %s", t->name);
		if (!err && e->type != '0')
			err = skip_rest(t);
		return err ? err : 1;
	}
}

void erofs_tar_headers_only(struct erofs_tar *t)
{
	t->headers_only = true;
}
