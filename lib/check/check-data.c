// SPDX-License-Identifier: MIT
/*
 * Reading and decoding file data for the check (include/erofs/check/checkwalk.h).
 * File data is read through a bitmap of image blocks, so data shared by
 * many inodes (or chunks) is read once; compressed extents are decoded
 * (and so checked) once per distinct (pcluster, length) pair.  Each
 * thread has its own scanner: a worker reads what it is given through
 * its own bitmap and caches, so sharing costs at most one read per
 * worker.  What a scan found is applied on the walk's thread, in order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/check/checkwalk.h"
#include "erofs/common/ondisk.h"

/* ------------------------------------------------------------------ */
/* data reading: every image block at most once                        */

#define EXTENT_CACHE	4096	/* extents already read, direct-mapped */
#define ZSEEN_CACHE	4096	/* compressed extents already decoded, direct-mapped */

static uint64_t *bm_page(struct ck_scanner *f, uint64_t blk)
{
	size_t page = (size_t)(blk >> BM_PAGE_BITS);

	if (page >= f->bitmap_pages)
		return NULL;	/* cannot happen: ranges are checked first */
	if (!f->bitmap[page]) {
		f->bitmap[page] = calloc(BM_PAGE_WORDS, sizeof(uint64_t));
		if (!f->bitmap[page]) {
			erofs_err("out of memory");
			exit(EXIT_NOMEM);
		}
	}
	return f->bitmap[page];
}

/* Marks blk as read; true if it already was. */
static bool bm_test_set(struct ck_scanner *f, uint64_t blk)
{
	uint64_t *p = bm_page(f, blk), bit;
	size_t w;

	if (!p)
		return true;
	w = (size_t)((blk & ((1u << BM_PAGE_BITS) - 1)) / 64);
	bit = (uint64_t)1 << (blk % 64);
	if (p[w] & bit)
		return true;
	p[w] |= bit;
	return false;
}

/* Skips 64-block words that are already all read. */
static uint64_t bm_skip_full(struct ck_scanner *f, uint64_t blk, uint64_t last)
{
	while (blk <= last && !(blk % 64)) {
		size_t page = (size_t)(blk >> BM_PAGE_BITS);
		size_t w = (size_t)((blk & ((1u << BM_PAGE_BITS) - 1)) / 64);

		if (page >= f->bitmap_pages || !f->bitmap[page] ||
		    f->bitmap[page][w] != UINT64_MAX)
			break;
		blk += 64;
	}
	return blk;
}

/*
 * Every inode's metadata, [iloc, meta_end): its core, xattrs, inline data,
 * chunk table or lcluster index, is claimed in a bitmap of 32-byte units
 * (the inode slot size).  In a sound image no two inodes share a unit.
 * An inode that reaches into metadata claimed before is not walked: else
 * n inodes laid over one long chunk table or index (each one's table
 * covering the next ones) would cost n times its length, and a 17 MiB
 * image with 2,000 of them kept fsck busy for minutes.  Each unit is
 * claimed at most once, so the claims cost O(image size) in all.
 */

bool ck_meta_claim(struct checker *f, uint64_t start, uint64_t end)
{
	uint64_t u, last;

	if (end <= start)
		return true;
	last = (end - 1) >> EROFS_SLOT_BITS;
	for (u = start >> EROFS_SLOT_BITS; u <= last; u++) {
		size_t page = (size_t)(u >> MM_PAGE_BITS);
		uint64_t *w, bit = (uint64_t)1 << (u % 64);

		if (page >= f->metamap_pages)
			return false;	/* cannot happen: meta_end is inside the image */
		if (!f->metamap[page]) {
			f->metamap[page] = calloc(BM_PAGE_WORDS, sizeof(uint64_t));
			if (!f->metamap[page]) {
				erofs_err("out of memory");
				exit(EXIT_NOMEM);
			}
		}
		w = &f->metamap[page][(u & ((1u << MM_PAGE_BITS) - 1)) / 64];
		if (*w & bit)
			return false;
		*w |= bit;
	}
	return true;
}

/*
 * Reads [pa, pa + len) of the image, skipping blocks read before: data that
 * many inodes or chunks share costs one read, and a repeated extent is
 * recognised in O(1), so hostile sharing cannot multiply the work.
 */
static int read_range(struct ck_scanner *f, uint64_t pa, uint64_t len)
{
	const unsigned int bits = f->r->blkszbits;
	size_t slot = (size_t)(((pa >> bits) * 0x9E3779B97F4A7C15ULL ^ len) % EXTENT_CACHE);
	uint64_t blk, last;

	if (!len)
		return 0;
	if (f->extent_cache[slot][0] == pa && f->extent_cache[slot][1] == len)
		return 0;
	if (!f->buf) {		/* made on first use: most scanners decode only */
		f->buf = malloc(READ_CHUNK);
		if (!f->buf)
			ck_nomem();
	}
	blk = pa >> bits;
	last = (pa + len - 1) >> bits;
	while (blk <= last) {
		uint64_t start, from, to;

		blk = bm_skip_full(f, blk, last);
		if (blk > last)
			break;
		if (bm_test_set(f, blk)) {
			blk++;
			continue;
		}
		start = blk++;
		while (blk <= last && (blk - start) < (READ_CHUNK >> bits) &&
		       !bm_test_set(f, blk))
			blk++;
		/* blk, if <= last, was already read: tested, not newly set */
		from = start << bits;
		if (from < pa)
			from = pa;
		to = blk << bits;
		if (to > pa + len)
			to = pa + len;
		if (erofs_dev_read(f->r, f->buf, (size_t)(to - from), from))
			return -EIO;
	}
	f->extent_cache[slot][0] = pa;
	f->extent_cache[slot][1] = len;
	return 0;
}

/*
 * Reads an extent of an extra device (each one read once, as far as the
 * extent cache remembers).  Their blocks are not in the image's bitmap,
 * nor in the overlap check: a blob device's chunks are shared by design.
 */
static int read_device_range(struct ck_scanner *f, const struct erofs_map *map, uint64_t pos,
			     uint64_t len)
{
	uint64_t key = map->pa + (pos - map->la) + ((uint64_t)map->device << 48);
	size_t slot = (size_t)((key * 0x9E3779B97F4A7C15ULL ^ len) % EXTENT_CACHE);

	if (f->extent_cache[slot][0] == key && f->extent_cache[slot][1] == len)
		return 0;
	if (!f->buf) {
		f->buf = malloc(READ_CHUNK);
		if (!f->buf)
			ck_nomem();
	}
	for (uint64_t done = 0; done < len;) {
		size_t n = len - done < READ_CHUNK ? (size_t)(len - done) : READ_CHUNK;

		if (erofs_read_mapped(f->r, map, f->buf, n, pos + done))
			return -EIO;
		done += n;
	}
	f->extent_cache[slot][0] = key;
	f->extent_cache[slot][1] = len;
	return 0;
}

/* Remembers where data lives, for the overlap check after the walk. */
void ck_record_extent(struct checker *f, uint64_t pa, uint64_t len, uint64_t nid,
			  bool xattr)
{
	struct dext *d;

	if (f->ndext && f->dext[f->ndext - 1].start == pa &&
	    f->dext[f->ndext - 1].end == pa + len && f->dext[f->ndext - 1].nid == nid)
		return;		/* the same chunk again */
	if (f->ndext == f->dextcap) {
		f->dextcap = f->dextcap ? f->dextcap * 2 : 256;
		f->dext = ck_xrealloc(f->dext, f->dextcap * sizeof(*f->dext));
	}
	d = &f->dext[f->ndext++];
	d->start = pa;
	d->end = pa + len;
	d->nid = nid;
	d->xattr = xattr;
}

/* Decodes a compressed extent unless the same one was decoded before. */
static int check_encoded(struct ck_scanner *f, const struct erofs_rd_inode *vi,
			 const struct erofs_map *map)
{
	size_t slot = (size_t)(((map->pa >> f->r->blkszbits) * 0x9E3779B97F4A7C15ULL ^
				map->llen ^ (map->plen << 20)) % ZSEEN_CACHE);
	struct zseen *z = &f->zseen[slot];
	const uint8_t *dec;
	int err;

	if (z->valid && z->pa == map->pa && z->llen == map->llen && z->plen == map->plen &&
	    z->flags == map->flags && z->alg == map->alg)
		return 0;
	err = erofs_decode_extent(f->r, vi, map, &dec);
	if (err)
		return err;
	*z = (struct zseen){ map->pa, map->llen, map->plen, map->flags, map->alg, true };
	return 0;
}

bool ck_is_compressed(const struct erofs_rd_inode *vi)
{
	return vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	       vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
}

void ck_scan_extents(struct ck_scanner *f, const struct erofs_rd_inode *vi, bool read,
		     struct ck_scan *out)
{
	uint64_t off = 0, last_pa = UINT64_MAX;

	while (off < vi->size) {
		struct erofs_map map;

		if (erofs_map_blocks(f->r, vi, off, &map))
			goto fail;
		if (map.flags & EROFS_MAP_FRAGMENT) {
			/* inside the packed inode (checked when vi was loaded),
			 * whose extents ck_check_packed() decodes once for all */
			off = map.la + map.llen;
			continue;
		}
		if ((map.flags & EROFS_MAP_MAPPED) && !(map.flags & EROFS_MAP_META) &&
		    !map.device) {
			if (out->n == out->cap) {
				out->cap = out->cap ? out->cap * 2 : 16;
				out->v = ck_xrealloc(out->v, out->cap * sizeof(*out->v));
			}
			out->v[out->n++] = (struct ck_rext){ map.pa, map.plen };
		}
		if ((map.flags & EROFS_MAP_MAPPED) && map.pa != last_pa) {
			const uint64_t bmask = f->r->blksz - 1;

			/* encoded extent records are byte-addressed: the blocks they touch */
			if (vi->z_recsz)
				out->zblocks += ((map.pa + map.plen + bmask) >> f->r->blkszbits) -
						(map.pa >> f->r->blkszbits);
			else
				out->zblocks += map.plen >> f->r->blkszbits;
			last_pa = map.pa;
		}
		if ((map.flags & EROFS_MAP_MAPPED) && map.device &&
		    !erofs_reader_has_device(f->r, map.device)) {
			/* its device and bounds are checked (erofs_map_blocks());
			 * reading it would fail with -ENXIO */
			if (!out->missing_dev)
				out->missing_dev = map.device;
			out->missing_bytes += map.la + map.llen - off;
			if (f->skip_missing) {
				off = map.la + map.llen;
				continue;
			}
		}
		if ((map.flags & EROFS_MAP_ENCODED) && read) {
			if (check_encoded(f, vi, &map))
				goto fail;
		} else if ((map.flags & EROFS_MAP_MAPPED) && read) {
			uint64_t skip = off - map.la;
			int err = map.device ? read_device_range(f, &map, off, map.llen - skip) :
				  map.flags & EROFS_MAP_INTERLACED ?
				  read_range(f, map.pa, map.plen) :	/* the ring, whole */
				  read_range(f, map.pa + skip, map.llen - skip);

			if (err)
				goto fail;
		}
		off = map.la + map.llen;
	}
	return;
fail:
	out->failed = true;
	snprintf(out->msg, sizeof(out->msg), "%s", erofs_reader_error(f->r));
}

void ck_scan_apply(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi,
		   struct ck_scan *out, bool report)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		ck_record_extent(f, out->v[i].pa, out->v[i].plen, vi->nid, false);
	free(out->v);
	out->v = NULL;
	out->n = out->cap = 0;
	if (out->missing_dev && !out->failed) {	/* each file is scanned once */
		f->st.nunverified++;
		f->st.unverified_bytes += out->missing_bytes;
	}
	if (!report)
		return;
	if (out->failed) {
		ck_report(f, at, vi->nid, "%s", out->msg);
		return;
	}
	/*
	 * i_u of a compressed file counts blocks for st_blocks (all 6.1 uses
	 * it for).  erofs-utils counts only the blocks the file added: a
	 * pcluster shared with a file written before (-Ededupe, fragments'
	 * inode dedupe) is not counted again, so i_u may be below what the
	 * extents use, down to 0; it is never above.
	 */
	if (ck_is_compressed(vi) && vi->z_blocks > out->zblocks)
		ck_warn(f, at, vi->nid,
			"compressed block count %u in the inode, but its extents use only %" PRIu64 " blocks",
			vi->z_blocks, out->zblocks);
}

/*
 * Maps every extent of a file, directory or symlink, records its data
 * blocks and, with read, reads them (each image block once) or decodes
 * them (compressed extents).  Without report, errors are left to whoever
 * reads the data (the extractor).
 */
unsigned int ck_scan_data(struct checker *f, const struct place *at,
			  const struct erofs_rd_inode *vi, bool read, bool report)
{
	struct ck_scan out;

	memset(&out, 0, sizeof(out));
	ck_scan_extents(&f->scan, vi, read, &out);
	ck_scan_apply(f, at, vi, &out, report);
	return out.failed ? 0 : out.missing_dev;
}

void ck_not_extracted(struct checker *f, const struct place *at, uint64_t nid, unsigned int dev)
{
	char p[MSGPATH], name[EROFS_DEVICE_NAME_LEN];

	erofs_fq_drain(f->q);	/* after what the jobs before it print */
	f->st.nnot_extracted++;
	if (dev)
		erofs_reader_device_name(f->r, dev, name, sizeof(name));
	erofs_err("%s (nid %" PRIu64 "): not extracted: its data is on %s%s, not given (--no-devices)",
		  ck_show(f, at, p), nid, dev ? "extra " : "an extra device", dev ? name : "");
}

int ck_scanner_init(struct ck_scanner *s, struct erofs_reader *r)
{
	memset(s, 0, sizeof(*s));
	s->r = r;
	s->bitmap_pages = (size_t)(((r->size >> r->blkszbits) >> BM_PAGE_BITS) + 1);
	s->bitmap = calloc(s->bitmap_pages, sizeof(*s->bitmap));
	s->extent_cache = calloc(EXTENT_CACHE, sizeof(*s->extent_cache));
	s->zseen = calloc(ZSEEN_CACHE, sizeof(*s->zseen));
	return s->bitmap && s->extent_cache && s->zseen ? 0 : -ENOMEM;
}

void ck_scanner_fini(struct ck_scanner *s)
{
	size_t i;

	for (i = 0; s->bitmap && i < s->bitmap_pages; i++)
		free(s->bitmap[i]);
	free(s->bitmap);
	free(s->extent_cache);
	free(s->zseen);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}
