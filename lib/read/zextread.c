// SPDX-License-Identifier: MIT
/*
 * Encoded extent records (48-bit images, Linux 6.15): a compressed file of
 * the COMPRESSED_FULL layout whose map header has EROFS_ZADVISE_EXTENTS keeps
 * a table of records instead of lcluster indexes.  A record is, cut to its
 * size (4, 8, 16 or 32 bytes, advise bits 1..2):
 *
 *   le32 plen       bits 0..20 the stored length, bit 27 partial reference,
 *                   bits 28..31 0 for raw data, else the algorithm + 1
 *   le32 pstart_lo  byte address of the stored data (not a block number)
 *   le32 pstart_hi
 *   le32 lstart_lo  the file offset where the extent starts
 *   le32 lstart_hi
 *
 * With 16 and 32-byte records the map header holds their count, and the
 * extents start at their lstart, which must rise strictly from 0; with 4 and
 * 8-byte records there is one record per lcluster (2^lclusterbits bytes,
 * header byte 7), and with 4-byte ones a le64 base address comes first,
 * each extent stored right after the one before.  A zero length is a hole.
 * The file's last extent may instead be a fragment (advise FRAGMENT): its
 * offset in the packed inode is plen, with pstart_lo as the high 32 bits
 * when the record has it.
 *
 * Written for erofs-forge from fs/erofs/erofs_fs.h and zmap.c of Linux 6.15+
 * (read to learn the format; no code taken).  Everything is checked before
 * use: lengths, reserved bits, the algorithm against the superblock's,
 * physical ranges against the image, 48-bit address arithmetic, and the
 * ordering of the whole table when the inode is loaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rmcache.h"
#include "erofs/read/zextread.h"
#include "erofs/read/zpacked.h"

#define EFSCORRUPTED	EUCLEAN

#define PLEN_RESERVED	(~(EROFS_EXTENT_PLEN_MASK | EROFS_EXTENT_PLEN_PARTIAL) & 0x0FFFFFFFu)
#define ADDR_LIMIT	(1ull << 60)	/* 48-bit blocks of at most 4 KiB */

static int zx_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int zx_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EFSCORRUPTED;
}

void erofs_zext_decode(const uint8_t *raw, unsigned int recsz, struct erofs_zext_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->plen = get_le32(raw);
	if (recsz >= 8)
		rec->pstart = get_le32(raw + 4);
	if (recsz >= 16) {
		rec->pstart |= (uint64_t)get_le32(raw + 8) << 32;
		rec->lstart = get_le32(raw + 12);
	}
	if (recsz >= 32)
		rec->lstart |= (uint64_t)get_le32(raw + 16) << 32;
}

static int get_rec(struct erofs_zext_table *t, uint64_t i, struct erofs_zext_rec *rec,
		   char *err, size_t errlen)
{
	uint8_t raw[EROFS_EXTENT_MAX_SIZE];
	int ret;

	if (i >= t->nrecs)
		return zx_fail(err, errlen, "extent record %" PRIu64 " beyond the table (%" PRIu64 " records)",
			       i, t->nrecs);
	ret = t->get(t->arg, i, raw);
	if (ret)
		return ret;
	erofs_zext_decode(raw, t->recsz, rec);
	return 0;
}

int erofs_zext_check(struct erofs_zext_table *t, char *err, size_t errlen)
{
	struct erofs_zext_rec rec;
	uint64_t i, prev = 0;
	int ret;

	if (t->recsz != 4 && t->recsz != 8 && t->recsz != 16 && t->recsz != 32)
		return zx_fail(err, errlen, "extent records of %u bytes", t->recsz);
	if (!t->isize)
		return 0;
	if (t->recsz <= 8) {
		if (t->lclusterbits < t->blkszbits || t->lclusterbits > 23)
			return zx_fail(err, errlen,
				       "extent records of 2^%u-byte lclusters (blocks of 2^%u bytes, extents of at most %u bytes)",
				       t->lclusterbits, t->blkszbits, EROFS_PCLUSTER_MAX_DSIZE);
		if (t->nrecs != ((t->isize - 1) >> t->lclusterbits) + 1)
			return zx_fail(err, errlen, "%" PRIu64 " extent records for %" PRIu64 " lclusters",
				       t->nrecs, ((t->isize - 1) >> t->lclusterbits) + 1);
		if (t->recsz == 4 && t->base >= ADDR_LIMIT)
			return zx_fail(err, errlen, "extent base address %" PRIu64 " out of range", t->base);
		return 0;	/* each record is checked when it is mapped */
	}
	if (!t->nrecs)
		return zx_fail(err, errlen, "no extent record for %" PRIu64 " bytes", t->isize);
	/* the binary search needs lstart to rise strictly from 0, below i_size */
	for (i = 0; i < t->nrecs; i++) {
		ret = get_rec(t, i, &rec, err, errlen);
		if (ret)
			return ret;
		if (!i && rec.lstart)
			return zx_fail(err, errlen, "extent record 0 starts at byte %" PRIu64 ", not 0",
				       rec.lstart);
		if (i && rec.lstart <= prev)
			return zx_fail(err, errlen,
				       "extent record %" PRIu64 ": lstart %" PRIu64 " not after the previous one (%" PRIu64 ")",
				       i, rec.lstart, prev);
		if (rec.lstart >= t->isize)
			return zx_fail(err, errlen,
				       "extent record %" PRIu64 ": lstart %" PRIu64 " at or beyond i_size %" PRIu64,
				       i, rec.lstart, t->isize);
		prev = rec.lstart;
	}
	return 0;
}

/* Record idx of a 4-byte table: its start is the base plus every length before it. */
static int running_pa(struct erofs_zext_table *t, uint64_t idx, uint64_t *pa, char *err,
		      size_t errlen)
{
	struct erofs_zext_rec rec;
	uint64_t i = 0, at = t->base;
	int ret;

	if (t->run_valid && t->run_idx <= idx) {
		i = t->run_idx;
		at = t->run_pa;
	}
	for (; i < idx; i++) {
		ret = get_rec(t, i, &rec, err, errlen);
		if (ret)
			return ret;
		at += rec.plen & EROFS_EXTENT_PLEN_MASK;	/* < 2^21 each: no overflow */
		if (at >= ADDR_LIMIT)
			return zx_fail(err, errlen, "extent record %" PRIu64 ": address past 2^60", i);
	}
	t->run_valid = true;
	t->run_idx = idx;
	t->run_pa = at;
	*pa = at;
	return 0;
}

/* The record holding la and where its extent ends. */
static int find_rec(struct erofs_zext_table *t, uint64_t la, uint64_t *idx,
		    struct erofs_zext_rec *rec, uint64_t *end, char *err, size_t errlen)
{
	struct erofs_zext_rec next;
	uint64_t lo = 0, hi = t->nrecs;
	int ret;

	if (t->recsz <= 8) {
		*idx = la >> t->lclusterbits;
		ret = get_rec(t, *idx, rec, err, errlen);
		if (ret)
			return ret;
		rec->lstart = *idx << t->lclusterbits;
		*end = rec->lstart + (1ull << t->lclusterbits);
		if (*end > t->isize)
			*end = t->isize;
		if (t->recsz == 4)
			return running_pa(t, *idx, &rec->pstart, err, errlen);
		return 0;
	}
	/* the last record whose lstart is at or before la (record 0 starts at 0) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		ret = get_rec(t, mid, &next, err, errlen);
		if (ret)
			return ret;
		if (next.lstart <= la)
			lo = mid;
		else
			hi = mid;
	}
	*idx = lo;
	ret = get_rec(t, lo, rec, err, errlen);
	if (ret)
		return ret;
	*end = t->isize;
	if (lo + 1 < t->nrecs) {
		ret = get_rec(t, lo + 1, &next, err, errlen);
		if (ret)
			return ret;
		*end = next.lstart;
	}
	/* checked when loaded; the image may not change under us, but be sure */
	if (rec->lstart > la || *end <= la || *end > t->isize)
		return zx_fail(err, errlen,
			       "extent record %" PRIu64 " (bytes %" PRIu64 "..%" PRIu64 ") does not hold offset %" PRIu64,
			       lo, rec->lstart, *end, la);
	return 0;
}

int erofs_zext_map(struct erofs_zext_table *t, uint64_t la, struct erofs_map *map, char *err,
		   size_t errlen)
{
	struct erofs_zext_rec rec;
	uint64_t idx, end, len;
	unsigned int fmt;
	int ret;

	memset(map, 0, sizeof(*map));
	if (la >= t->isize)
		return zx_fail(err, errlen, "offset %" PRIu64 " beyond i_size %" PRIu64, la, t->isize);
	ret = find_rec(t, la, &idx, &rec, &end, err, errlen);
	if (ret)
		return ret;
	map->la = rec.lstart;
	map->llen = end - rec.lstart;
	if (t->fragment && idx + 1 == t->nrecs) {
		/* the tail: its fields hold the offset in the packed inode */
		map->pa = rec.plen;
		if (t->recsz >= 8)
			map->pa |= (rec.pstart & 0xFFFFFFFFu) << 32;
		map->plen = map->llen;
		map->flags = EROFS_MAP_MAPPED | EROFS_MAP_FRAGMENT;
		return 0;
	}
	if (rec.plen & PLEN_RESERVED)
		return zx_fail(err, errlen, "extent record %" PRIu64 ": reserved bits in plen 0x%08x",
			       idx, rec.plen);
	len = rec.plen & EROFS_EXTENT_PLEN_MASK;
	fmt = rec.plen >> EROFS_EXTENT_PLEN_FMT_SHIFT;
	if (!len) {
		if (rec.plen)
			return zx_fail(err, errlen,
				       "extent record %" PRIu64 ": a hole (length 0) with flags 0x%08x",
				       idx, rec.plen);
		return 0;	/* a hole: zeros */
	}
	if (rec.pstart >= ADDR_LIMIT || rec.pstart + len > t->phys_limit)
		return zx_fail(err, errlen,
			       "extent record %" PRIu64 ": %" PRIu64 " bytes at byte %" PRIu64 " beyond the end of the image (%" PRIu64 " bytes)",
			       idx, len, rec.pstart, t->phys_limit);
	map->pa = rec.pstart;
	map->plen = len;
	map->flags = EROFS_MAP_MAPPED;
	if (!fmt) {
		/* raw data: the extent is the stored bytes, no more */
		if (map->llen > len || (rec.plen & EROFS_EXTENT_PLEN_PARTIAL))
			return zx_fail(err, errlen,
				       "extent record %" PRIu64 ": uncompressed extent of %" PRIu64 " bytes from %" PRIu64 " stored%s",
				       idx, map->llen, len,
				       (rec.plen & EROFS_EXTENT_PLEN_PARTIAL) ? ", marked partial" : "");
		if (t->interlaced && !((rec.pstart | len) & ((1ull << t->blkszbits) - 1))) {
			if (len != 1ull << t->blkszbits)
				return zx_fail(err, errlen,
					       "extent record %" PRIu64 ": interlaced extent of %" PRIu64 " bytes (one block at most)",
					       idx, len);
			map->flags |= EROFS_MAP_INTERLACED;
		}
		return 0;
	}
	if (fmt - 1 >= EROFS_COMPR_MAX || !(t->algs & (1u << (fmt - 1))))
		return zx_fail(err, errlen,
			       "extent record %" PRIu64 ": algorithm %u, which the superblock does not list (0x%x)",
			       idx, fmt - 1, t->algs);
	if (len > EROFS_PCLUSTER_MAX_SIZE || map->llen > EROFS_PCLUSTER_MAX_DSIZE)
		return zx_fail(err, errlen,
			       "extent record %" PRIu64 ": %" PRIu64 " bytes stored for %" PRIu64 " (at most %u and %u)",
			       idx, len, map->llen, EROFS_PCLUSTER_MAX_SIZE, EROFS_PCLUSTER_MAX_DSIZE);
	map->alg = fmt - 1;
	map->flags |= EROFS_MAP_ENCODED;
	if (rec.plen & EROFS_EXTENT_PLEN_PARTIAL)
		map->flags |= EROFS_MAP_PARTIAL;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the reader's side: tables in the image or the metabox               */

struct table_src {
	struct erofs_reader *r;
	const struct erofs_rd_inode *vi;
	uint64_t first;			/* byte of record 0 */
	uint64_t bstart, blen;		/* what buf holds */
	uint8_t buf[4096];
};

static int table_get(void *arg, uint64_t i, uint8_t *raw)
{
	struct table_src *s = arg;
	const unsigned int recsz = s->vi->z_recsz;
	const uint64_t pos = s->first + i * recsz;	/* inside the checked table */

	if (pos < s->bstart || pos + recsz > s->bstart + s->blen) {
		uint64_t limit = s->vi->meta_end;
		uint64_t n = limit - pos < sizeof(s->buf) ? limit - pos : sizeof(s->buf);
		int err;

		s->blen = 0;
		if (pos < s->first || pos + recsz > limit)
			return erofs_reader_fail(s->r, -EFSCORRUPTED,
						 "extent record %" PRIu64 " outside the table", i);
		err = erofs_meta_read(s->r, s->vi->in_mbox, s->buf, (size_t)n, pos);
		if (err)
			return err;
		s->bstart = pos;
		s->blen = n;
	}
	memcpy(raw, s->buf + (pos - s->bstart), recsz);
	return 0;
}

static void table_of(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		     struct erofs_zext_table *t, struct table_src *s)
{
	memset(t, 0, sizeof(*t));
	s->r = r;
	s->vi = vi;
	s->first = vi->z_index;
	s->bstart = s->blen = 0;
	t->recsz = vi->z_recsz;
	t->lclusterbits = vi->z_lclusterbits;
	t->nrecs = vi->z_extents;
	t->isize = vi->size;
	t->base = vi->z_ext_base;
	t->fragment = vi->z_advise & EROFS_ZADVISE_FRAGMENT;
	t->interlaced = vi->z_advise & EROFS_ZADVISE_INTERLACED;
	t->blkszbits = r->blkszbits;
	t->algs = r->available_compr_algs;
	t->phys_limit = r->size;
	t->get = table_get;
	t->arg = s;
}

/* A reader error from the table code: its message is already in r->err. */
static int table_err(struct erofs_reader *r, int ret, const char *msg)
{
	if (ret == -EFSCORRUPTED && msg[0])
		return erofs_reader_fail(r, ret, "%s", msg);
	return ret;
}

int erofs_zext_setup(struct erofs_reader *r, struct erofs_rd_inode *vi, const uint8_t h[8],
		     uint64_t hdr)
{
	const uint64_t limit = vi->in_mbox ? r->mbox->size : r->size;
	struct erofs_zext_table t;
	struct table_src *s;
	struct erofs_map map;
	uint64_t pos, bytes;
	char msg[EROFS_ERRMSG_LEN] = "";
	int ret;

	if (!(r->sb.feature_incompat & EROFS_INCOMPAT_48BIT))
		return erofs_reader_fail(r, -EFSCORRUPTED,
					 "extent records (advise 0x%04x) without the superblock's 48bit feature",
					 vi->z_advise);
	if (vi->z_advise & EROFS_ZADVISE_INLINE_PCLUSTER)
		return erofs_reader_fail(r, -EFSCORRUPTED,
					 "extent records with an inline tail pcluster (advise 0x%04x)",
					 vi->z_advise);
	vi->z_recsz = 4u << ((vi->z_advise >> EROFS_ZADVISE_EXTRECSZ_SHIFT) &
			     EROFS_ZADVISE_EXTRECSZ_MASK);
	pos = hdr + EROFS_ZMAP_HEADER_SIZE;
	pos = (pos + vi->z_recsz - 1) & ~(uint64_t)(vi->z_recsz - 1);
	if (vi->z_recsz <= 8) {
		vi->z_lclusterbits = r->blkszbits + (h[7] & 15);
		if (vi->z_lclusterbits > 23)
			return erofs_reader_fail(r, -EFSCORRUPTED,
						 "extent records of 2^%u-byte lclusters (extents of at most %u bytes)",
						 vi->z_lclusterbits, EROFS_PCLUSTER_MAX_DSIZE);
		vi->z_extents = ((vi->size - 1) >> vi->z_lclusterbits) + 1;
		if (vi->z_recsz == 4) {
			uint8_t base[8];

			if (pos > limit || 8 > limit - pos)
				return erofs_reader_fail(r, -EFSCORRUPTED,
							 "extent base address beyond the end of the %s",
							 vi->in_mbox ? "metabox" : "image");
			ret = erofs_meta_read(r, vi->in_mbox, base, sizeof(base), pos);
			if (ret)
				return ret;
			vi->z_ext_base = get_le64(base);
			pos += 8;
		}
	} else {
		vi->z_lclusterbits = r->blkszbits;
		vi->z_extents = get_le32(h) | (uint64_t)get_le16(h + 6) << 32;
	}
	vi->z_index = pos;
	bytes = vi->z_extents * vi->z_recsz;	/* z_extents < 2^48 */
	if (pos > limit || bytes > limit - pos)
		return erofs_reader_fail(r, -EFSCORRUPTED,
					 "extent table (%" PRIu64 " records of %u bytes) beyond the end of the %s",
					 vi->z_extents, vi->z_recsz, vi->in_mbox ? "metabox" : "image");
	vi->meta_end = pos + bytes;

	s = malloc(sizeof(*s));
	if (!s)
		return erofs_reader_fail(r, -ENOMEM, "out of memory");
	table_of(r, vi, &t, s);
	ret = erofs_zext_check(&t, msg, sizeof(msg));
	if (!ret && (vi->z_advise & EROFS_ZADVISE_FRAGMENT)) {
		/* the tail extent, read now: the fragment must lie in the packed inode */
		ret = erofs_zext_map(&t, vi->size - 1, &map, msg, sizeof(msg));
		if (!ret) {
			vi->z_fragoff = map.pa;
			vi->z_frag_la = map.la;
			vi->z_tail_lcn = vi->z_extents - 1;
		}
	}
	free(s);
	if (ret)
		return table_err(r, ret, msg);
	if (vi->z_advise & EROFS_ZADVISE_FRAGMENT)
		return erofs_z_check_fragment(r, vi);
	return 0;
}

int erofs_zext_map_inode(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
			 struct erofs_map *map, uint64_t *run_idx, uint64_t *run_pa, bool *run_valid)
{
	struct erofs_zext_table t;
	struct table_src *s = malloc(sizeof(*s));
	char msg[EROFS_ERRMSG_LEN] = "";
	int ret;

	if (!s)
		return erofs_reader_fail(r, -ENOMEM, "out of memory");
	table_of(r, vi, &t, s);
	t.run_valid = *run_valid;
	t.run_idx = *run_idx;
	t.run_pa = *run_pa;
	ret = erofs_zext_map(&t, la, map, msg, sizeof(msg));
	*run_valid = t.run_valid;
	*run_idx = t.run_idx;
	*run_pa = t.run_pa;
	free(s);
	return ret ? table_err(r, ret, msg) : 0;
}
