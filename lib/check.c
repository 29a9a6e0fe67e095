// SPDX-License-Identifier: MIT
/*
 * The image check behind fsck.erofs (include/erofs/check.h).
 *
 * The walk is depth-first over an explicit stack (no recursion, so nesting
 * depth cannot exhaust the C stack).  Every directory nid is visited once;
 * a second reference to a directory is reported as a loop / directory hard
 * link and not followed, so the total work is bounded by the directory
 * bytes plus the data in the image.  File data is read through a bitmap
 * of image blocks, so data shared by many inodes (or chunks) is read once;
 * compressed extents are decoded (and so checked) once per distinct
 * (pcluster, length) pair.
 *
 * With fragments, the packed inode (no directory names it) is checked
 * first, once: its inode, index and every extent.  A file's fragment is
 * then only checked to lie inside it (the reader does that when it loads
 * the file), not decoded again; --extract reads it through the packed
 * inode's extents, one at a time.
 *
 * No path is kept: each inode's node records the name it was reached by
 * and the directory holding it (lib/nidtab.c), each frame of the stack
 * the names of its directory's entries, and a path is put together only
 * for a message.  Memory is O(inodes + depth) and the walk's time linear,
 * however deep the tree.  With --extract, at most OPEN_DIRS directories of
 * the stack keep a descriptor; one closed to stay under that is reopened
 * through its child's "..", checked to be the directory made.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check.h"
#include "erofs/diag.h"
#include "erofs/dir.h"
#include "erofs/extract.h"
#include "erofs/ondisk.h"
#include "erofs/reader.h"

#define EXIT_NOMEM		EROFS_CHECK_EXIT_NOMEM
#define MAX_PRINTED_ERRORS	1000
#define MSGPATH			1024
#define READ_CHUNK		(1u << 20)
#define OPEN_DIRS		64	/* directory descriptors the stack keeps open */
#define FD_CLOSED		(-2)	/* extracted; descriptor closed for now */

struct zseen {
	uint64_t pa, llen, plen;
	unsigned int flags, alg;
	bool valid;
};

struct dext {
	uint64_t start, end, nid;
	bool xattr;			/* a shared xattr entry, not file data */
};

struct dent {
	uint64_t nid;
	size_t name;			/* offset in the frame's names (NUL-terminated) */
	uint8_t len;
	uint8_t ft;
};

struct frame {
	struct erofs_rd_inode vi;
	struct dent *ents;
	size_t n, cap, next;
	char *names;			/* the entries' names, back to back */
	size_t names_len, names_cap;
	uint32_t subdirs;
	int dirfd;			/* -1: not extracted; FD_CLOSED: reopen */
	uint64_t dev, ino;		/* the extracted directory, to reopen it */
	bool damaged;			/* entries after the damage were not seen */
};

/* What a message is about: entry name of directory dir, or (name NULL)
 * dir itself; or the packed inode. */
struct place {
	uint64_t dir;
	const char *name;
	size_t len;
	bool packed;
};

static const struct place packed_place = { 0, NULL, 0, true };

struct checker {
	struct erofs_check_opts o;
	struct erofs_reader *r;

	struct erofs_nidtab nids;

	uint64_t **bitmap;		/* two-level bitmap of image blocks read */
	uint64_t (*extent_cache)[2];	/* (pa, len) of extents read */
	struct zseen *zseen;		/* compressed extents decoded */
	size_t bitmap_pages;
	uint64_t **metamap;		/* inode metadata claimed, by 32-byte unit */
	size_t metamap_pages;
	uint8_t *buf;

	struct frame *stack;
	size_t depth, stackcap;
	size_t open_dirs;		/* frames below the root with an open dirfd */
	size_t open_lo;			/* no frame in [1, open_lo) has one */
	uint64_t link_dir;		/* a hard link target's directory ... */
	int link_dirfd;			/* ... kept open for the next link to it */

	struct dext *dext;		/* data extents seen */
	size_t ndext, dextcap;

	unsigned long errors, warnings;
	bool dirs_damaged;		/* some entries could not be read */
	struct erofs_check_stats st;
};

static void report(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
	EROFS_PRINTF(4, 5);

/* The path of a place, built now (MSGPATH bytes). */
static const char *show(const struct checker *f, const struct place *at, char *buf)
{
	if (at->packed)
		return strcpy(buf, "(packed inode)");
	return erofs_nidtab_path(&f->nids, at->dir, at->name, at->len, buf, MSGPATH);
}

static const char *show_node(const struct checker *f, const struct erofs_check_node *ni,
			     char *buf)
{
	return erofs_nidtab_node_path(&f->nids, ni, buf, MSGPATH);
}

/* Where a node was reached (the table's names must not grow meanwhile). */
static struct place node_place(const struct checker *f, const struct erofs_check_node *ni)
{
	struct place at = { ni->parent, NULL, ni->namelen, ni->packed };

	if (ni->parent != ni->nid)	/* else the root: the directory itself */
		at.name = f->nids.names + ni->name;
	return at;
}

static void report(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
{
	char msg[512], p[MSGPATH];
	va_list ap;

	f->errors++;
	if (f->errors > MAX_PRINTED_ERRORS) {
		if (f->errors == MAX_PRINTED_ERRORS + 1)
			erofs_err("too many errors; further errors are counted but not shown");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	erofs_err("%s (nid %" PRIu64 "): %s", show(f, at, p), nid, msg);
}

/* An error about the image as a whole, its message complete. */
static void report_image(struct checker *f, const char *msg)
{
	f->errors++;
	if (f->errors > MAX_PRINTED_ERRORS) {
		if (f->errors == MAX_PRINTED_ERRORS + 1)
			erofs_err("too many errors; further errors are counted but not shown");
		return;
	}
	erofs_err("%s", msg);
}

static void warn(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
	EROFS_PRINTF(4, 5);

static void warn(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
{
	char msg[512], p[MSGPATH];
	va_list ap;

	f->warnings++;
	if (f->o.debug < 1)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	erofs_warn("%s (nid %" PRIu64 "): %s", show(f, at, p), nid, msg);
}

static void rfail(struct checker *f, const struct place *at, uint64_t nid)
{
	report(f, at, nid, "%s", erofs_reader_error(f->r));
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		erofs_err("out of memory");
		exit(EXIT_NOMEM);
	}
	return q;
}

static void nomem(void)
{
	erofs_err("out of memory");
	exit(EXIT_NOMEM);
}

/* ------------------------------------------------------------------ */
/* nid table                                                           */

static struct erofs_check_node *nid_find(struct checker *f, uint64_t nid)
{
	return erofs_nidtab_find(&f->nids, nid);
}

static struct erofs_check_node *nid_add(struct checker *f, uint64_t nid)
{
	struct erofs_check_node *ni = erofs_nidtab_add(&f->nids, nid);

	if (!ni)
		nomem();
	return ni;
}

/* Records where ni is named: entry name (len bytes) of directory dir. */
static void nid_name(struct checker *f, struct erofs_check_node *ni, uint64_t dir,
		     const char *name, size_t len)
{
	if (!erofs_nidtab_name(&f->nids, ni, dir, name, len))
		nomem();
}

/* ------------------------------------------------------------------ */
/* data reading: every image block at most once                        */

#define BM_PAGE_BITS	15	/* 32768 blocks per 4 KiB bitmap page */
#define BM_PAGE_WORDS	((1u << BM_PAGE_BITS) / 64)
#define EXTENT_CACHE	4096	/* extents already read, direct-mapped */
#define ZSEEN_CACHE	4096	/* compressed extents already decoded, direct-mapped */

static uint64_t *bm_page(struct checker *f, uint64_t blk)
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
static bool bm_test_set(struct checker *f, uint64_t blk)
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
static uint64_t bm_skip_full(struct checker *f, uint64_t blk, uint64_t last)
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
#define MM_PAGE_BITS	15	/* 32768 units (1 MiB of image) per 4 KiB page */

static bool meta_claim(struct checker *f, uint64_t start, uint64_t end)
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
static int read_range(struct checker *f, uint64_t pa, uint64_t len)
{
	const unsigned int bits = f->r->blkszbits;
	size_t slot = (size_t)(((pa >> bits) * 0x9E3779B97F4A7C15ULL ^ len) % EXTENT_CACHE);
	uint64_t blk, last;

	if (!len)
		return 0;
	if (f->extent_cache[slot][0] == pa && f->extent_cache[slot][1] == len)
		return 0;
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
static int read_device_range(struct checker *f, const struct erofs_map *map, uint64_t pos,
			     uint64_t len)
{
	uint64_t key = map->pa + (pos - map->la) + ((uint64_t)map->device << 48);
	size_t slot = (size_t)((key * 0x9E3779B97F4A7C15ULL ^ len) % EXTENT_CACHE);

	if (f->extent_cache[slot][0] == key && f->extent_cache[slot][1] == len)
		return 0;
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
static void record_extent(struct checker *f, uint64_t pa, uint64_t len, uint64_t nid,
			  bool xattr)
{
	struct dext *d;

	if (f->ndext && f->dext[f->ndext - 1].start == pa &&
	    f->dext[f->ndext - 1].end == pa + len && f->dext[f->ndext - 1].nid == nid)
		return;		/* the same chunk again */
	if (f->ndext == f->dextcap) {
		f->dextcap = f->dextcap ? f->dextcap * 2 : 256;
		f->dext = xrealloc(f->dext, f->dextcap * sizeof(*f->dext));
	}
	d = &f->dext[f->ndext++];
	d->start = pa;
	d->end = pa + len;
	d->nid = nid;
	d->xattr = xattr;
}

/* Decodes a compressed extent unless the same one was decoded before. */
static int check_encoded(struct checker *f, const struct erofs_rd_inode *vi,
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

static bool is_compressed(const struct erofs_rd_inode *vi)
{
	return vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	       vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
}

/*
 * Maps every extent of a file, directory or symlink, records its data
 * blocks and, with read, reads them (each image block once) or decodes
 * them (compressed extents).  Without report, errors are left to whoever
 * reads the data (the extractor).
 */
static void scan_data(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi,
		      bool read, bool report)
{
	uint64_t off = 0, zblocks = 0, last_pa = UINT64_MAX;

	while (off < vi->size) {
		struct erofs_map map;

		if (erofs_map_blocks(f->r, vi, off, &map)) {
			if (report)
				rfail(f, at, vi->nid);
			return;
		}
		if (map.flags & EROFS_MAP_FRAGMENT) {
			/* inside the packed inode (checked when vi was loaded),
			 * whose extents check_packed() decodes once for all */
			off = map.la + map.llen;
			continue;
		}
		if ((map.flags & EROFS_MAP_MAPPED) && !(map.flags & EROFS_MAP_META) &&
		    !map.device)
			record_extent(f, map.pa, map.plen, vi->nid, false);
		if ((map.flags & EROFS_MAP_MAPPED) && map.pa != last_pa) {
			zblocks += map.plen >> f->r->blkszbits;
			last_pa = map.pa;
		}
		if ((map.flags & EROFS_MAP_ENCODED) && read) {
			if (check_encoded(f, vi, &map)) {
				if (report)
					rfail(f, at, vi->nid);
				return;
			}
		} else if ((map.flags & EROFS_MAP_MAPPED) && read) {
			uint64_t skip = off - map.la;
			int err = map.device ? read_device_range(f, &map, off, map.llen - skip) :
				  map.flags & EROFS_MAP_INTERLACED ?
				  read_range(f, map.pa, map.plen) :	/* the ring, whole */
				  read_range(f, map.pa + skip, map.llen - skip);

			if (err) {
				if (report)
					rfail(f, at, vi->nid);
				return;
			}
		}
		off = map.la + map.llen;
	}
	/*
	 * i_u of a compressed file counts blocks for st_blocks (all 6.1 uses
	 * it for).  erofs-utils counts only the blocks the file added: a
	 * pcluster shared with a file written before (-Ededupe, fragments'
	 * inode dedupe) is not counted again, so i_u may be below what the
	 * extents use, down to 0; it is never above.
	 */
	if (is_compressed(vi) && report && vi->z_blocks > zblocks)
		warn(f, at, vi->nid,
		     "compressed block count %u in the inode, but its extents use only %" PRIu64 " blocks",
		     vi->z_blocks, zblocks);
}

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
		report(c->f, c->at, c->nid, "malformed POSIX ACL in %s (%u bytes)",
		       erofs_rd_xattr_prefix(x->index), x->value_size);
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	if (x->shared)
		record_extent(c->f, x->addr, x->entry_size, c->nid, true);
	e = &c->v[c->n++];
	e->index = x->index;
	e->len = x->name_len;
	e->name = xrealloc(NULL, x->name_len);
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

static void check_xattrs(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi)
{
	struct xcheck c = { f, at, vi->nid, NULL, 0, 0 };
	size_t i;

	if (erofs_xattr_iterate(f->r, vi, xattr_collect, &c))
		rfail(f, at, vi->nid);
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), xname_cmp);
	for (i = 1; i < c.n; i++) {
		if (!xname_cmp(&c.v[i - 1], &c.v[i])) {
			char n[300];

			report(f, at, vi->nid, "duplicate xattr %s%s",
			       erofs_rd_xattr_prefix(c.v[i].index),
			       erofs_escape(n, sizeof(n), c.v[i].name, c.v[i].len));
		}
	}
	for (i = 0; i < c.n; i++)
		free(c.v[i].name);
	free(c.v);
}

/* ------------------------------------------------------------------ */
/* the walk                                                            */

static int collect_dent(void *arg, const struct erofs_rd_dentry *de)
{
	struct frame *fr = arg;
	struct dent *d;

	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? fr->cap * 2 : 16;
		fr->ents = xrealloc(fr->ents, fr->cap * sizeof(*fr->ents));
	}
	if (fr->names_cap - fr->names_len < de->namelen + 1u) {
		fr->names_cap = fr->names_cap ? fr->names_cap * 2 : 1024;
		if (fr->names_cap - fr->names_len < de->namelen + 1u)
			fr->names_cap = fr->names_len + de->namelen + 1;
		fr->names = xrealloc(fr->names, fr->names_cap);
	}
	d = &fr->ents[fr->n++];
	d->nid = de->nid;
	d->ft = de->file_type;
	d->name = fr->names_len;
	d->len = (uint8_t)de->namelen;	/* at most 255: checked by the reader */
	memcpy(fr->names + fr->names_len, de->name, de->namelen);
	fr->names[fr->names_len + de->namelen] = '\0';
	fr->names_len += de->namelen + 1u;
	return 0;
}

/* ---- directory descriptors of the stack (extraction) ---- */

/* Keeps at most OPEN_DIRS frames below the root with an open descriptor,
 * closing the shallowest ones; the top frame always keeps its own. */
static void close_far_dirs(struct checker *f)
{
	while (f->open_dirs > OPEN_DIRS && f->open_lo < f->depth - 1) {
		struct frame *fr = &f->stack[f->open_lo++];

		if (f->open_lo == 1 || fr->dirfd < 0)
			continue;	/* the root's stays open */
		close(fr->dirfd);
		fr->dirfd = FD_CLOSED;
		f->open_dirs--;
	}
}

/* Before the top frame goes: its parent, if closed, is reopened through
 * the top's "..", or else from the nearest open ancestor by name. */
static void reopen_parent(struct checker *f)
{
	struct frame *top = &f->stack[f->depth - 1], *up = top - 1;
	size_t k;
	int fd;

	if (f->depth < 2 || up->dirfd != FD_CLOSED)
		return;
	if (top->dirfd >= 0) {
		fd = erofs_extract_reopen_parent(f->o.x, top->dirfd, up->dev, up->ino);
	} else {
		for (k = f->depth - 2; k > 0 && f->stack[k - 1].dirfd < 0; k--)
			;
		fd = k ? erofs_nidtab_open_dir(&f->nids, f->o.x, up->vi.nid,
					       f->stack[k - 1].dirfd, f->stack[k - 1].vi.nid) : -EBADF;
	}
	if (fd < 0) {
		struct place at = { up->vi.nid, NULL, 0, false };

		up->dirfd = -1;
		report(f, &at, up->vi.nid,
		       "cannot reopen the extracted directory for its other entries: %s",
		       strerror(-fd));
		return;
	}
	up->dirfd = fd;
	f->open_dirs++;
	f->open_lo = f->depth - 2;
}

/*
 * A descriptor on the directory where a hard link's target was extracted:
 * its frame's, if open; else one opened down from the nearest ancestor
 * with an open frame, kept for the next link into the same directory.
 * -1 when it cannot be opened (reported).
 */
static int link_dir_fd(struct checker *f, uint64_t dir, const struct place *at, uint64_t nid)
{
	const struct erofs_check_node *a = nid_find(f, dir);
	size_t steps = 0;
	int fd;

	if (a && a->frame && f->stack[a->frame - 1].dirfd >= 0)
		return f->stack[a->frame - 1].dirfd;
	if (f->link_dirfd >= 0 && f->link_dir == dir)
		return f->link_dirfd;
	while (a && !(a->frame && f->stack[a->frame - 1].dirfd >= 0) && a->parent != a->nid &&
	       steps++ <= f->nids.count)
		a = nid_find(f, a->parent);
	if (a && a->frame && f->stack[a->frame - 1].dirfd >= 0)
		fd = erofs_nidtab_open_dir(&f->nids, f->o.x, dir, f->stack[a->frame - 1].dirfd,
					   a->nid);
	else
		fd = -ENOENT;
	if (fd < 0) {
		report(f, at, nid, "cannot open the directory of its first link: %s",
		       strerror(-fd));
		return -1;
	}
	if (f->link_dirfd >= 0)
		close(f->link_dirfd);
	f->link_dir = dir;
	f->link_dirfd = fd;
	return fd;
}

/* ---- the stack ---- */

/* Pushes a directory: reads and checks all its entries first. */
static void push_dir(struct checker *f, const struct erofs_rd_inode *vi, uint64_t parent,
		     const struct place *at, int dirfd)
{
	struct erofs_check_node *ni;
	struct frame *fr;
	struct stat st;

	if (f->depth == f->stackcap) {
		f->stackcap = f->stackcap ? f->stackcap * 2 : 64;
		f->stack = xrealloc(f->stack, f->stackcap * sizeof(*f->stack));
	}
	fr = &f->stack[f->depth++];
	memset(fr, 0, sizeof(*fr));
	fr->vi = *vi;
	fr->dirfd = dirfd;
	if (dirfd >= 0 && !fstat(dirfd, &st)) {
		fr->dev = st.st_dev;
		fr->ino = st.st_ino;
	}
	ni = nid_find(f, vi->nid);
	if (ni)
		ni->frame = (uint32_t)f->depth;
	if (dirfd >= 0 && f->depth > 1) {
		f->open_dirs++;
		close_far_dirs(f);
	}
	f->st.ndirs++;
	if (f->o.debug >= 7) {
		char p[MSGPATH];

		erofs_note("checking directory %s", show(f, at, p));
	}
	if (erofs_dir_iterate(f->r, vi, parent, collect_dent, fr)) {
		rfail(f, at, vi->nid);	/* the entries before the damage are still walked */
		fr->damaged = f->dirs_damaged = true;
	} else {
		scan_data(f, at, vi, false, false);
	}
}

static void pop_dir(struct checker *f)
{
	struct frame *fr = &f->stack[f->depth - 1];
	const struct place at = { fr->vi.nid, NULL, 0, false };
	struct erofs_check_node *ni = nid_find(f, fr->vi.nid);
	uint32_t want = 2 + fr->subdirs;

	/* a damaged directory's subdirectories were not all counted */
	if (!fr->damaged && fr->vi.di.nlink != want && fr->vi.di.nlink != 1)
		report(f, &at, fr->vi.nid,
		       "directory link count %u, expected %u (2 + %u subdirectories)",
		       fr->vi.di.nlink, want, fr->subdirs);
	reopen_parent(f);
	if (fr->dirfd >= 0) {
		struct erofs_check_xpath xp;

		erofs_extract_dir_end(f->o.x, fr->dirfd,
				      erofs_check_xpath(&xp, &f->nids, fr->vi.nid, NULL, 0), &fr->vi);
		if (f->depth > 1)
			f->open_dirs--;
	}
	if (ni)
		ni->frame = 0;
	free(fr->ents);
	free(fr->names);
	f->depth--;
	if (f->open_lo > f->depth)
		f->open_lo = f->depth;
}

static void check_special(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi)
{
	if (vi->size)
		warn(f, at, vi->nid, "special file with i_size %" PRIu64, vi->size);
	if ((S_ISFIFO(vi->di.mode) || S_ISSOCK(vi->di.mode)) && vi->di.u)
		warn(f, at, vi->nid, "fifo or socket with non-zero rdev 0x%x", vi->di.u);
}

/* Another entry naming an inode reached before. */
static void visit_again(struct checker *f, struct frame *parent, const struct dent *d,
			struct erofs_check_node *ni, const struct place *at)
{
	const char *name = parent->names + d->name;
	struct erofs_check_xpath xp;
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;
	char p[MSGPATH];

	ni->refs++;
	if (ni->packed) {
		report(f, at, d->nid,
		       "the directory entry names the packed inode, which no directory may link");
		return;
	}
	if (ni->bad)
		return;
	if (erofs_mode_to_ftype(ni->mode) != d->ft)
		report(f, at, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, ni->mode);
	if (S_ISDIR(ni->mode)) {
		report(f, at, d->nid, "directory already reached as %s (directory hard link or loop)",
		       show_node(f, ni, p));
		return;
	}
	f->st.nlinks_extra++;
	if (pfd < 0)
		return;
	erofs_check_xpath(&xp, &f->nids, parent->vi.nid, name, d->len);
	if (ni->extracted) {
		char tname[EROFS_NAME_LEN + 1];
		int tfd = link_dir_fd(f, ni->parent, at, d->nid);

		memcpy(tname, f->nids.names + ni->name, ni->namelen);
		tname[ni->namelen] = '\0';
		if (tfd >= 0)
			erofs_extract_hardlink(f->o.x, pfd, name, &xp.base, tfd, tname);
	} else if (!erofs_read_inode(f->r, d->nid, &vi) &&
		   !erofs_extract_node(f->o.x, pfd, name, &xp.base, &vi)) {
		/* the first copy extracted is the one later links point at */
		nid_name(f, ni, parent->vi.nid, name, d->len);
		ni->extracted = true;
	}
}

static void visit(struct checker *f, struct frame *parent, const struct dent *d)
{
	const char *name = parent->names + d->name;
	const struct place at = { parent->vi.nid, name, d->len, false };
	struct erofs_check_node *ni = nid_find(f, d->nid);
	struct erofs_check_xpath xp;
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;

	if (d->ft == EROFS_FT_DIR)
		parent->subdirs++;
	if (f->o.debug >= 7) {
		char p[MSGPATH];

		erofs_note("checking %s", show(f, &at, p));
	}
	if (ni) {
		visit_again(f, parent, d, ni, &at);
		return;
	}

	ni = nid_add(f, d->nid);
	ni->refs = 1;
	nid_name(f, ni, parent->vi.nid, name, d->len);
	if (erofs_read_inode(f->r, d->nid, &vi)) {
		ni->bad = true;
		rfail(f, &at, d->nid);
		return;
	}
	if (!meta_claim(f, vi.iloc, vi.meta_end)) {
		ni->bad = true;
		if (S_ISDIR(vi.di.mode))
			f->dirs_damaged = true;
		report(f, &at, d->nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " with its metadata) overlaps an inode checked before; not checked further",
		       vi.iloc, vi.meta_end - 1);
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = vi.iloc;
	ni->meta_end = vi.meta_end;
	if (erofs_mode_to_ftype(vi.di.mode) != d->ft)
		report(f, &at, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, vi.di.mode);
	check_xattrs(f, &at, &vi);
	erofs_check_xpath(&xp, &f->nids, parent->vi.nid, name, d->len);

	if (S_ISDIR(vi.di.mode)) {
		int fd = -1;

		if (pfd >= 0) {
			fd = erofs_extract_dir_begin(f->o.x, pfd, name, &xp.base);
			if (fd < 0)
				fd = -1;
		}
		push_dir(f, &vi, parent->vi.nid, &at, fd);	/* parent may move */
		return;
	}
	if (S_ISREG(vi.di.mode)) {
		f->st.nfiles++;
		f->st.data_bytes += vi.size;
		if (is_compressed(&vi)) {
			f->st.nzfiles++;
			f->st.zlogical += vi.size;
			f->st.zphysical += (uint64_t)vi.z_blocks << f->r->blkszbits;
			if (vi.z_advise & EROFS_ZADVISE_FRAGMENT) {
				f->st.nfragfiles++;
				f->st.fragbytes += vi.size - vi.z_frag_la;
			}
		}
		/* when extracting, the extractor reads and reports */
		scan_data(f, &at, &vi, pfd < 0, pfd < 0);
	} else if (S_ISLNK(vi.di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		f->st.nsymlinks++;
		if (erofs_read_symlink(f->r, &vi, target, sizeof(target)))
			rfail(f, &at, vi.nid);
		else
			scan_data(f, &at, &vi, false, false);
	} else {
		f->st.nspecial++;
		check_special(f, &at, &vi);
	}
	if (pfd >= 0 && !erofs_extract_node(f->o.x, pfd, name, &xp.base, &vi))
		ni->extracted = true;
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
	maxend = xrealloc(NULL, (n + 1) * sizeof(*maxend));
	for (i = 0; i < n; i++)
		maxend[i] = i && maxend[i - 1] > v[i]->meta_end ? maxend[i - 1] : v[i]->meta_end;

	for (i = 0; i < f->ndext; i++) {
		const struct dext *d = &f->dext[i];
		struct erofs_check_node *owner = nid_find(f, d->nid);
		const struct place unknown = { f->r->sb.root_nid, "?", 1, false };
		const struct place at = owner ? node_place(f, owner) : unknown;
		size_t lo = 0, hi = n, steps, culprit;
		const char *what;
		uint64_t where;
		char p[MSGPATH];

		if (owner && owner->overlap_reported)
			continue;	/* one message per inode */
		what = d->xattr ? "shared xattr at byte" : "data at block";
		where = d->xattr ? d->start : d->start >> f->r->blkszbits;

		if (d->start < sb_end && d->end > sb_start) {
			report(f, &at, d->nid, "%s %" PRIu64 " overlaps the superblock",
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
			report(f, &at, d->nid,
			       "%s %" PRIu64 " overlaps the inode of %s (nid %" PRIu64 ")",
			       what, where, show_node(f, v[culprit], p), v[culprit]->nid);
		else
			report(f, &at, d->nid, "%s %" PRIu64 " overlaps inode metadata",
			       what, where);
		if (owner)
			owner->overlap_reported = true;
	}
	free(maxend);
}

/* After the walk: link counts and overlapping inode records. */
static void final_checks(struct checker *f)
{
	struct erofs_check_node **v = xrealloc(NULL, (f->nids.count + 1) * sizeof(*v));
	size_t i, n = 0;
	const struct erofs_check_node *far = NULL;

	for (i = 0; i < f->nids.cap; i++) {
		struct erofs_check_node *ni = &f->nids.tab[i];

		if (!ni->used || ni->bad)
			continue;
		v[n++] = ni;
		if (ni->packed)
			continue;	/* no directory entry refers to it */
		/* with entries unread, only too many references are certain */
		if (!S_ISDIR(ni->mode) && ni->refs != ni->nlink &&
		    (!f->dirs_damaged || ni->refs > ni->nlink)) {
			const struct place at = node_place(f, ni);

			report(f, &at, ni->nid,
			       "link count %u, but %u directory entries refer to it",
			       ni->nlink, ni->refs);
		}
	}
	qsort(v, n, sizeof(*v), inode_cmp);
	for (i = 0; i < n; i++) {
		if (far && v[i]->iloc < far->meta_end) {
			const struct place at = node_place(f, v[i]);
			char p[MSGPATH];

			report(f, &at, v[i]->nid,
			       "inode overlaps the inode of %s (nid %" PRIu64 ")",
			       show_node(f, far, p), far->nid);
		}
		if (!far || v[i]->meta_end > far->meta_end)
			far = v[i];
	}
	check_data_overlaps(f, v, n);
	free(v);
	if (f->r->sb.inos != f->nids.count && !f->errors) {
		const struct place root = { f->r->sb.root_nid, NULL, 0, false };

		warn(f, &root, f->r->sb.root_nid,
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
static void check_packed(struct checker *f)
{
	const struct place *at = &packed_place;
	const uint64_t nid = f->r->sb.packed_nid;
	const struct erofs_rd_inode *pk;
	struct erofs_check_node *ni;
	int ret;

	if (!(f->r->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS)) {
		if (nid)
			warn(f, at, nid, "packed_nid set without the fragments feature (ignored)");
		return;
	}
	ret = erofs_packed_inode(f->r, &pk);
	if (ret < 0) {
		report_image(f, erofs_reader_error(f->r));
		return;
	}
	if (!ret)
		return;		/* files with fragments will say so */
	if (nid_find(f, nid))	/* the root: cannot be, it is not a regular file */
		return;
	ni = nid_add(f, nid);
	ni->packed = true;
	ni->parent = nid;
	ni->mode = pk->di.mode;
	ni->nlink = pk->di.nlink;
	ni->iloc = pk->iloc;
	ni->meta_end = pk->meta_end;
	if (!meta_claim(f, pk->iloc, pk->meta_end)) {
		ni->bad = true;
		report(f, at, nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " with its metadata) overlaps the root directory; not checked further",
		       pk->iloc, pk->meta_end - 1);
		return;
	}
	if (f->o.debug >= 7)
		erofs_note("checking the packed inode (nid %" PRIu64 ")", nid);
	f->st.has_packed = true;
	f->st.packed_size = pk->size;
	f->st.packed_physical = is_compressed(pk) ? (uint64_t)pk->z_blocks << f->r->blkszbits :
			     (pk->size + f->r->blksz - 1) & ~(uint64_t)(f->r->blksz - 1);
	f->st.zphysical += f->st.packed_physical;
	check_xattrs(f, at, pk);
	scan_data(f, at, pk, true, true);
}

static void walk(struct checker *f)
{
	uint64_t root = f->r->sb.root_nid;
	const struct place at = { root, NULL, 0, false };
	struct erofs_rd_inode vi;
	struct erofs_check_node *ni;
	int fd = -1;

	ni = nid_add(f, root);
	nid_name(f, ni, root, "", 0);
	if (erofs_read_inode(f->r, root, &vi)) {
		ni->bad = true;
		rfail(f, &at, root);
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = vi.iloc;
	ni->meta_end = vi.meta_end;
	meta_claim(f, vi.iloc, vi.meta_end);	/* the first: nothing to overlap */
	check_packed(f);
	if (!S_ISDIR(vi.di.mode)) {
		report(f, &at, root, "root inode is not a directory (mode 0%o)", vi.di.mode);
		return;
	}
	check_xattrs(f, &at, &vi);
	if (f->o.x) {
		fd = erofs_extract_root(f->o.x);
		if (fd < 0)
			fd = -1;
	}
	push_dir(f, &vi, root, &at, fd);

	while (f->depth) {
		struct frame *fr = &f->stack[f->depth - 1];

		if (fr->next < fr->n) {
			struct dent d = fr->ents[fr->next++];

			visit(f, fr, &d);
			continue;
		}
		pop_dir(f);
	}
	final_checks(f);
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

/* ------------------------------------------------------------------ */
/* the check                                                           */

int erofs_check_image(struct erofs_reader *r, const struct erofs_check_opts *o,
		      struct erofs_check_result *res)
{
	struct checker c, *f = &c;
	size_t i;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.o = *o;
	c.r = r;
	c.link_dirfd = -1;
	c.buf = malloc(READ_CHUNK);
	c.bitmap_pages = (size_t)(((r->size >> r->blkszbits) >> BM_PAGE_BITS) + 1);
	c.bitmap = calloc(c.bitmap_pages, sizeof(*c.bitmap));
	c.metamap_pages = (size_t)(((r->size >> EROFS_SLOT_BITS) >> MM_PAGE_BITS) + 1);
	c.metamap = calloc(c.metamap_pages, sizeof(*c.metamap));
	c.extent_cache = calloc(EXTENT_CACHE, sizeof(*c.extent_cache));
	c.zseen = calloc(ZSEEN_CACHE, sizeof(*c.zseen));
	if (c.buf && c.bitmap && c.metamap && c.extent_cache && c.zseen) {
		walk(f);
		res->errors = c.errors;
		res->warnings = c.warnings;
		res->st = c.st;
	} else {
		ret = -ENOMEM;
	}

	if (c.link_dirfd >= 0)
		close(c.link_dirfd);
	erofs_nidtab_free(&c.nids);
	for (i = 0; c.bitmap && i < c.bitmap_pages; i++)
		free(c.bitmap[i]);
	free(c.bitmap);
	for (i = 0; c.metamap && i < c.metamap_pages; i++)
		free(c.metamap[i]);
	free(c.metamap);
	free(c.extent_cache);
	free(c.zseen);
	free(c.stack);
	free(c.dext);
	free(c.buf);
	return ret;
}
