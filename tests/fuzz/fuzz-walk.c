// SPDX-License-Identifier: MIT
/*
 * The image walk of the libFuzzer harnesses: what it checks and how it is
 * bounded is told in fuzz-walk.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check/check.h"
#include "erofs/check/extract.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "fuzz-diag.h"
#include "fuzz-walk.h"

/* Reading a fragment may decode a whole extent of the packed inode, up to
 * 12 MiB, however few bytes it takes from it: charged once per file. */
#define FZ_FRAGMENT_COST	(12ull << 20)

void *fz_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();	/* inputs are small: out of memory is a bug */
	return p;
}

void *fz_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

/* Order-sensitive digest of the walk: two walks of one image (from memory
 * and through a descriptor) must agree on it. */
void fz_fold(struct fz *f, uint64_t v)
{
	f->sink = (f->sink ^ v) * 0x100000001b3ULL;
}

void fz_fold_bytes(struct fz *f, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = n, w;

	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	fz_fold(f, h);
}

/* Every failure must be a negative errno this harness expects, with a
 * message; -EINVAL means the reader broke its own invariants. */
void fz_failed(struct fz *f, int err)
{
	FZ_CHECK(err < 0);
	FZ_CHECK(err == -EUCLEAN || err == -EOPNOTSUPP || err == -EIO ||
		 err == -ENOMEM);
	FZ_CHECK(f->r.err[0] != '\0');
	FZ_CHECK(memchr(f->r.err, '\0', sizeof(f->r.err)) != NULL);
	f->problems++;
	fz_fold(f, (uint64_t)-err);
	fz_fold_bytes(f, f->r.err, strlen(f->r.err));
}

static void fz_clear_err(struct fz *f)
{
	f->r.err[0] = '\0';
}

/* Names go through erofs_escape() as fsck's messages do, at a few sizes. */
static void fz_escape(struct fz *f, const void *s, size_t len)
{
	static const size_t sizes[] = { 0, 1, 11, 12, 13, 80, 1024 };
	char out[1024];
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		erofs_escape(out, n, s, len);
		if (n) {
			size_t l = strnlen(out, n);

			FZ_CHECK(l < n);
			fz_fold(f, l);
		}
	}
}

/* ---- nid table and paths: fsck's own (lib/check/check-image.c) ---- */

struct erofs_check_node *fz_find(struct fz *f, uint64_t nid)
{
	return erofs_nidtab_find(&f->nids, nid);
}

struct erofs_check_node *fz_add(struct fz *f, uint64_t nid)
{
	struct erofs_check_node *ni = erofs_nidtab_add(&f->nids, nid);

	if (!ni)
		abort();
	return ni;
}

static void fz_name(struct fz *f, struct erofs_check_node *ni, uint64_t dir, const char *name)
{
	if (!erofs_nidtab_name(&f->nids, ni, dir, name, strlen(name)))
		abort();
}

/* A node's path, as fsck's messages build it, at a few sizes. */
static void fz_node_path(struct fz *f, const struct erofs_check_node *ni)
{
	static const size_t sizes[] = { 0, 1, 5, 6, 13, 80, 1024 };
	char out[1024];
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		erofs_nidtab_node_path(&f->nids, ni, out, n);
		if (n) {
			size_t l = strnlen(out, n);

			FZ_CHECK(l < n);
			FZ_CHECK(n < 6 || out[0] == '/');
			fz_fold(f, l);
		}
	}
}

/* ---- data ---- */

static bool fz_is_compressed(const struct erofs_rd_inode *vi)
{
	return vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	       vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
}

static void fz_check_map(struct fz *f, const struct erofs_rd_inode *vi, uint64_t la,
			 const struct erofs_map *m)
{
	FZ_CHECK(m->llen > 0);
	FZ_CHECK(m->la <= la && la - m->la < m->llen);
	FZ_CHECK(m->llen <= vi->size - m->la);
	if (m->flags & EROFS_MAP_FRAGMENT) {
		const struct erofs_rd_inode *pk = NULL;

		/* an offset in the packed inode's data, inside it */
		FZ_CHECK(m->flags & EROFS_MAP_MAPPED);
		FZ_CHECK(!(m->flags & (EROFS_MAP_ENCODED | EROFS_MAP_META | EROFS_MAP_INTERLACED)));
		FZ_CHECK(m->plen == m->llen);
		FZ_CHECK(fz_is_compressed(vi));
		FZ_CHECK(erofs_packed_inode(&f->r, &pk) == 1 && pk);
		FZ_CHECK(pk->nid != vi->nid);
		FZ_CHECK(m->pa <= pk->size && m->llen <= pk->size - m->pa);
	} else if (m->flags & EROFS_MAP_MAPPED && m->device) {
		/* on an extra device (given or not): inside the blocks its slot lists */
		uint64_t dev_bytes;

		FZ_CHECK(m->device <= f->r.nr_devs);
		FZ_CHECK(!(m->flags & (EROFS_MAP_ENCODED | EROFS_MAP_META | EROFS_MAP_INTERLACED)));
		dev_bytes = f->r.devs[m->device - 1].blocks << f->r.blkszbits;
		FZ_CHECK(m->pa <= dev_bytes && m->plen <= dev_bytes - m->pa && m->llen <= m->plen);
	} else if (m->flags & EROFS_MAP_MBOX) {
		/* an inline tail of an inode in the metabox: inside the metabox data */
		FZ_CHECK(vi->in_mbox && f->r.mbox && (m->flags & EROFS_MAP_META));
		FZ_CHECK(m->pa <= f->r.mbox->size && m->plen <= f->r.mbox->size - m->pa);
	} else if (m->flags & EROFS_MAP_MAPPED) {
		FZ_CHECK(m->pa <= f->r.size && m->plen <= f->r.size - m->pa);
		if (!(m->flags & EROFS_MAP_ENCODED))
			FZ_CHECK(m->llen <= m->plen);
	} else {
		FZ_CHECK(!(m->flags & (EROFS_MAP_ENCODED | EROFS_MAP_META | EROFS_MAP_INTERLACED)));
	}
	if (m->flags & EROFS_MAP_INTERLACED) {
		FZ_CHECK(!(m->flags & (EROFS_MAP_ENCODED | EROFS_MAP_META)));
		FZ_CHECK(m->plen == f->r.blksz && !(m->pa % f->r.blksz));
	}
	if (m->flags & EROFS_MAP_ENCODED) {
		FZ_CHECK(fz_is_compressed(vi));
		FZ_CHECK(m->plen > 0);
	}
}

/* lib/check/check-image.c's scan_data(): every extent mapped; compressed extents decoded and
 * mapped ones read while the budget lasts. */
static int fz_scan(struct fz *f, const struct erofs_rd_inode *vi)
{
	uint64_t off = 0;

	while (off < vi->size) {
		struct erofs_map m;
		int err;

		if (!f->maps_left)
			return 0;
		f->maps_left--;
		fz_clear_err(f);
		err = erofs_map_blocks(&f->r, vi, off, &m);
		if (err) {
			fz_failed(f, err);
			return err;
		}
		fz_check_map(f, vi, off, &m);
		if ((m.flags & EROFS_MAP_ENCODED) && f->data_left >= m.llen) {
			const uint8_t *dec = NULL;

			f->data_left -= m.llen;
			fz_clear_err(f);
			err = erofs_decode_extent(&f->r, vi, &m, &dec);
			if (err) {
				fz_failed(f, err);
				return err;
			}
			FZ_CHECK(dec != NULL);
			fz_fold(f, dec[0] + dec[m.llen - 1] + dec[(off - m.la)]);
		} else if (!(m.flags & (EROFS_MAP_ENCODED | EROFS_MAP_FRAGMENT)) &&
			   (m.flags & EROFS_MAP_MAPPED)) {
			uint64_t pos = off, left = m.llen - (off - m.la);

			while (left && f->data_left) {
				size_t n = left < FZ_READ_CHUNK ? (size_t)left : FZ_READ_CHUNK;

				if (n > f->data_left)
					n = (size_t)f->data_left;
				f->data_left -= n;
				fz_clear_err(f);
				err = erofs_read_mapped(&f->r, &m, f->buf, n, pos);
				if (err) {
					fz_failed(f, err);
					return err;
				}
				fz_fold(f, f->buf[0] + f->buf[n - 1]);
				pos += n;
				left -= n;
			}
		}
		off = m.la + m.llen;
	}
	return 0;
}

uint64_t fz_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* What fsck --extract does to a file's bytes: erofs_read_data() from start
 * to end; then, for small files, ranges at pseudo-random offsets must read
 * back the same bytes (the reader's map and decode caches at work). */
static void fz_read_all(struct fz *f, const struct erofs_rd_inode *vi)
{
	uint64_t off = 0, seed;
	bool keep = vi->size <= FZ_CMP_MAX;
	int i;

	if (fz_is_compressed(vi) && (vi->z_advise & EROFS_ZADVISE_FRAGMENT)) {
		if (f->data_left < FZ_FRAGMENT_COST)
			return;
		f->data_left -= FZ_FRAGMENT_COST;
	}

	while (off < vi->size) {
		size_t n = vi->size - off < FZ_READ_CHUNK ? (size_t)(vi->size - off) : FZ_READ_CHUNK;
		uint8_t *dst = keep ? f->whole + off : f->buf;
		int err;

		if (f->data_left < n || !f->maps_left)
			return;
		f->data_left -= n;
		f->maps_left--;
		fz_clear_err(f);
		err = erofs_read_data(&f->r, vi, dst, n, off);
		if (err) {
			fz_failed(f, err);
			return;
		}
		fz_fold_bytes(f, dst, n);
		off += n;
	}
	if (!keep || !vi->size)
		return;
	seed = vi->nid * 0x9E3779B97F4A7C15ULL + vi->size + 1;
	for (i = 0; i < 6; i++) {
		uint64_t at = fz_rand(&seed) % vi->size;
		size_t n = (size_t)(fz_rand(&seed) % 9000) + 1;
		int err;

		if (n > vi->size - at)
			n = (size_t)(vi->size - at);
		if (f->data_left < n || !f->maps_left)
			return;
		f->data_left -= n;
		f->maps_left--;
		fz_clear_err(f);
		err = erofs_read_data(&f->r, vi, f->buf, n < FZ_READ_CHUNK ? n : FZ_READ_CHUNK, at);
		if (err) {
			/* it read before: the same bytes cannot fail now */
			fprintf(stderr, "fuzz: nid %llu: re-read of %zu bytes at %llu failed: %s\n",
				(unsigned long long)vi->nid, n, (unsigned long long)at,
				erofs_reader_error(&f->r));
			FZ_CHECK(!"a range read before fails now");
		}
		if (n > FZ_READ_CHUNK)
			n = FZ_READ_CHUNK;
		FZ_CHECK(!memcmp(f->buf, f->whole + at, n));
		fz_fold(f, at);
	}
}

/* Extraction writes every byte a file maps (holes excepted) and has no
 * budget of its own: a file whose data would overdraw the harness's is
 * not extracted.  True when the file may be extracted. */
static bool fz_extract_budget(struct fz *f, const struct erofs_rd_inode *vi)
{
	uint64_t off = 0, bytes = 0;

	if (!S_ISREG(vi->di.mode))
		return true;
	if (fz_is_compressed(vi) && (vi->z_advise & EROFS_ZADVISE_FRAGMENT))
		bytes = FZ_FRAGMENT_COST;
	while (off < vi->size) {
		struct erofs_map m;

		if (!f->maps_left)
			return false;
		f->maps_left--;
		fz_clear_err(f);
		if (erofs_map_blocks(&f->r, vi, off, &m))
			return true;	/* the extractor stops there and reports it */
		if (m.flags & EROFS_MAP_MAPPED)
			bytes += m.la + m.llen - off;
		if (bytes > f->data_left)
			return false;
		off = m.la + m.llen;
	}
	f->data_left -= bytes;
	return true;
}

/* ---- xattrs ---- */

static int fz_xattr(void *arg, const struct erofs_rd_xattr *x)
{
	struct fz *f = arg;
	const uint8_t *n = (const uint8_t *)x->name, *v = x->value;

	FZ_CHECK(erofs_rd_xattr_prefix(x->index) != NULL);
	FZ_CHECK(x->entry_size == EROFS_XATTR_ENTRY_HEADER_SIZE + x->name_len + x->value_size);
	FZ_CHECK(!memchr(x->name, '\0', x->name_len));
	if (x->name_len)
		fz_fold(f, n[0] + n[x->name_len - 1]);
	if (x->value_size)
		fz_fold(f, v[0] + v[x->value_size - 1]);
	if ((x->index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	     x->index == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT) &&
	    !erofs_acl_value_ok(v, x->value_size))
		f->problems++;
	fz_escape(f, x->name, x->name_len);
	return 0;
}

static void fz_xattrs(struct fz *f, const struct erofs_rd_inode *vi)
{
	int err;

	fz_clear_err(f);
	err = erofs_xattr_iterate(&f->r, vi, fz_xattr, f);
	if (err)
		fz_failed(f, err);
}

/* ---- the walk ---- */

static int fz_collect(void *arg, const struct erofs_rd_dentry *de)
{
	struct fz *f = arg;
	struct fz_frame *fr = &f->stack[f->depth - 1];
	struct fz_dent *d;

	FZ_CHECK(de->namelen > 0 && de->namelen <= EROFS_NAME_LEN);
	FZ_CHECK(!memchr(de->name, '\0', de->namelen) && !memchr(de->name, '/', de->namelen));
	FZ_CHECK(de->file_type < EROFS_FT_MAX);
	if (!f->dents_left)
		return 1;	/* stop: the budget is spent */
	f->dents_left--;
	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? fr->cap * 2 : 16;
		fr->ents = fz_realloc(fr->ents, fr->cap * sizeof(*fr->ents));
	}
	d = &fr->ents[fr->n++];
	d->nid = de->nid;
	d->ft = de->file_type;
	d->name = fz_alloc(de->namelen + 1);
	memcpy(d->name, de->name, de->namelen);
	d->name[de->namelen] = '\0';
	fz_escape(f, de->name, de->namelen);
	fz_fold(f, de->nid);
	fz_fold_bytes(f, de->name, de->namelen);
	return 0;
}

static void fz_push_dir(struct fz *f, const struct erofs_rd_inode *vi, uint64_t parent,
			int dirfd)
{
	struct fz_frame *fr;
	int err;

	if (f->depth == f->stackcap) {
		f->stackcap = f->stackcap ? f->stackcap * 2 : 32;
		f->stack = fz_realloc(f->stack, f->stackcap * sizeof(*f->stack));
	}
	fr = &f->stack[f->depth++];
	memset(fr, 0, sizeof(*fr));
	fr->vi = *vi;
	fr->dirfd = dirfd;
	fz_clear_err(f);
	err = erofs_dir_iterate(&f->r, vi, parent, fz_collect, f);
	fr = &f->stack[f->depth - 1];
	if (err > 0) {
		fr->damaged = true;	/* out of budget */
	} else if (err) {
		fz_failed(f, err);
		fr->damaged = true;
	} else {
		fz_scan(f, vi);
	}
}

void fz_pop_dir(struct fz *f)
{
	struct fz_frame *fr = &f->stack[f->depth - 1];
	size_t i;

	if (!fr->damaged && fr->vi.di.nlink != 2 + fr->subdirs && fr->vi.di.nlink != 1)
		f->problems++;
	if (fr->dirfd >= 0) {
		struct erofs_check_xpath xp;

		erofs_extract_dir_end(f->x, fr->dirfd,
				      erofs_check_xpath(&xp, &f->nids, fr->vi.nid, NULL, 0), &fr->vi);
	}
	for (i = 0; i < fr->n; i++)
		free(fr->ents[i].name);
	free(fr->ents);
	f->depth--;
}

static void fz_visit(struct fz *f, const struct fz_dent *d)
{
	struct fz_frame *parent = &f->stack[f->depth - 1];
	struct erofs_check_node *ni = fz_find(f, d->nid);
	struct erofs_check_xpath xp;
	const struct erofs_xpath *path = erofs_check_xpath(&xp, &f->nids, parent->vi.nid, d->name,
							   strlen(d->name));
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd, err;

	if (d->ft == EROFS_FT_DIR)
		parent->subdirs++;
	if (ni) {
		ni->refs++;
		if (ni->bad || S_ISDIR(ni->mode))
			return;		/* a directory loop or directory hard link */
		if (pfd < 0)
			return;
		if (ni->extracted) {
			/* the target's directory, opened down from the root by name */
			char tname[EROFS_NAME_LEN + 1];
			int tfd = erofs_nidtab_open_dir(&f->nids, f->x, ni->parent, -1, 0);

			memcpy(tname, f->nids.names + ni->name, ni->namelen);
			tname[ni->namelen] = '\0';
			if (tfd >= 0) {
				erofs_extract_hardlink(f->x, pfd, d->name, path, tfd, tname);
				close(tfd);
			}
		} else if (!erofs_read_inode(&f->r, d->nid, &vi) && fz_extract_budget(f, &vi) &&
			   !erofs_extract_node(f->x, pfd, d->name, path, &vi)) {
			fz_name(f, ni, parent->vi.nid, d->name);
			ni->extracted = true;
		}
		return;
	}

	ni = fz_add(f, d->nid);
	ni->refs = 1;
	fz_name(f, ni, parent->vi.nid, d->name);
	fz_node_path(f, ni);
	fz_clear_err(f);
	err = erofs_read_inode(&f->r, d->nid, &vi);
	if (err) {
		fz_failed(f, err);
		ni->bad = true;
		return;
	}
	FZ_CHECK(vi.nid == d->nid);
	FZ_CHECK(vi.size <= (uint64_t)INT64_MAX);
	FZ_CHECK(vi.iloc < vi.meta_end &&
		 vi.meta_end <= (vi.in_mbox ? f->r.mbox->size : f->r.size));
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	fz_fold(f, vi.size);
	fz_fold(f, vi.meta_end);
	if (erofs_mode_to_ftype(vi.di.mode) != d->ft)
		f->problems++;
	fz_xattrs(f, &vi);

	if (S_ISDIR(vi.di.mode)) {
		int fd = -1;

		if (pfd >= 0) {
			fd = erofs_extract_dir_begin(f->x, pfd, d->name, path);
			if (fd < 0)
				fd = -1;
		}
		fz_push_dir(f, &vi, parent->vi.nid, fd);	/* parent may move */
		return;
	}
	if (S_ISREG(vi.di.mode)) {
		if (pfd < 0) {
			if (!fz_scan(f, &vi))
				fz_read_all(f, &vi);
		}
	} else if (S_ISLNK(vi.di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		fz_clear_err(f);
		err = erofs_read_symlink(&f->r, &vi, target, sizeof(target));
		if (err) {
			fz_failed(f, err);
		} else {
			FZ_CHECK(strlen(target) == vi.size);
			fz_escape(f, target, vi.size);
			fz_scan(f, &vi);
		}
	}
	if (pfd >= 0 && fz_extract_budget(f, &vi) &&
	    !erofs_extract_node(f->x, pfd, d->name, path, &vi))
		ni->extracted = true;
}

/* The packed inode, as lib/check/check-image.c's check_packed(): not a file of the tree. */
static void fz_packed(struct fz *f)
{
	const struct erofs_rd_inode *pk = NULL;
	int ret;

	fz_clear_err(f);
	ret = erofs_packed_inode(&f->r, &pk);
	if (ret < 0) {
		fz_failed(f, ret);
		return;
	}
	if (!ret)
		return;
	FZ_CHECK(pk && S_ISREG(pk->di.mode) && pk->nid == f->r.sb.packed_nid);
	FZ_CHECK(!fz_is_compressed(pk) || !(pk->z_advise & EROFS_ZADVISE_FRAGMENT));
	fz_fold(f, pk->size);
	fz_xattrs(f, pk);
	if (!fz_scan(f, pk))
		fz_read_all(f, pk);
}

/* The whole walk; x (may be NULL) extracts as fsck --extract=DIR does. */
void fz_walk(struct fz *f, struct erofs_extractor *x)
{
	uint64_t root = f->r.root_nid;
	struct erofs_rd_inode vi;
	struct erofs_check_node *ni;
	size_t i;
	int err, fd = -1;

	f->x = x;
	f->data_left = FZ_DATA_BUDGET;
	f->maps_left = FZ_MAP_BUDGET;
	f->dents_left = FZ_DENT_BUDGET;

	ni = fz_add(f, root);
	fz_name(f, ni, root, "");
	fz_clear_err(f);
	err = erofs_read_inode(&f->r, root, &vi);
	if (err) {
		fz_failed(f, err);
		ni->bad = true;
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	if (!S_ISDIR(vi.di.mode)) {
		f->problems++;
		return;
	}
	fz_xattrs(f, &vi);
	fz_packed(f);
	if (x) {
		fd = erofs_extract_root(x);
		if (fd < 0)
			fd = -1;
	}
	fz_push_dir(f, &vi, root, fd);
	while (f->depth) {
		struct fz_frame *fr = &f->stack[f->depth - 1];

		if (fr->next < fr->n) {
			struct fz_dent d = fr->ents[fr->next++];

			fz_visit(f, &d);
			continue;
		}
		fz_pop_dir(f);
	}
	/* link counts, as lib/check/check-image.c's final checks */
	for (i = 0; i < f->nids.cap; i++) {
		struct erofs_check_node *n = &f->nids.tab[i];

		if (n->used && !n->bad && !S_ISDIR(n->mode) && n->refs != n->nlink)
			f->problems++;
	}
}

/* ---- setup and teardown for one input ---- */

/* A private copy of the input, the superblock checksum resealed unless
 * byte 0 says otherwise. */
uint8_t *fz_image(const uint8_t *data, size_t size, unsigned int *flags)
{
	uint8_t *img = fz_alloc(size);

	memcpy(img, data, size);
	*flags = size ? data[0] : 0;
	if (!(*flags & FZ_KEEP_CSUM) && size >= EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE) {
		struct erofs_super sb;

		erofs_super_decode(img + EROFS_SUPER_OFFSET, EROFS_SUPER_SIZE, &sb);
		if (sb.magic == EROFS_MAGIC && (sb.feature_compat & EROFS_COMPAT_SB_CHKSUM) &&
		    sb.blkszbits >= EROFS_MIN_BLKSZBITS && sb.blkszbits <= EROFS_MAX_BLKSZBITS) {
			size_t span = erofs_sb_checksum_span(sb.blkszbits);

			if (EROFS_SUPER_OFFSET + span <= size)
				put_le32(img + EROFS_SUPER_OFFSET + EROFS_SB_CHECKSUM_OFFSET,
					 erofs_sb_checksum(img + EROFS_SUPER_OFFSET, span));
		}
	}
	return img;
}

/* A memfd holding the image, as fsck.erofs would be given one. */
int fz_memfd(const uint8_t *img, size_t size)
{
	int fd = memfd_create("fuzz-image", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		abort();
	while (done < size) {
		ssize_t n = write(fd, img + done, size - done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	return fd;
}

/* Opens the image from memory or, with FZ_USE_FD, through a memfd
 * (returned in *fdp for the caller to close). */
int fz_open(struct fz *f, const uint8_t *img, size_t size, unsigned int flags,
	    int *fdp)
{
	*fdp = -1;
	if (flags & FZ_USE_FD) {
		*fdp = fz_memfd(img, size);
		return erofs_reader_open_fd(&f->r, *fdp, size);
	}
	return erofs_reader_open_mem(&f->r, img, size);
}

void fz_init(struct fz *f)
{
	memset(f, 0, sizeof(*f));
	f->buf = fz_alloc(FZ_READ_CHUNK);
	f->whole = fz_alloc(FZ_CMP_MAX);
}

void fz_free(struct fz *f)
{
	while (f->depth)
		fz_pop_dir(f);
	erofs_nidtab_free(&f->nids);
	free(f->stack);
	free(f->buf);
	free(f->whole);
	erofs_reader_close(&f->r);
}
