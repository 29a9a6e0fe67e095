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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	char *name;
	uint8_t ft;
};

struct frame {
	struct erofs_rd_inode vi;
	char *path;
	struct dent *ents;
	size_t n, cap, next;
	uint32_t subdirs;
	int dirfd;
	bool damaged;			/* entries after the damage were not seen */
};

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

	struct dext *dext;		/* data extents seen */
	size_t ndext, dextcap;

	unsigned long errors, warnings;
	bool dirs_damaged;		/* some entries could not be read */
	struct erofs_check_stats st;
};

static void report(struct checker *f, const char *path, uint64_t nid, const char *fmt, ...)
	EROFS_PRINTF(4, 5);

static const char *show(char *buf, const char *path)
{
	return erofs_escape(buf, MSGPATH, path, strlen(path));
}

static void report(struct checker *f, const char *path, uint64_t nid, const char *fmt, ...)
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
	erofs_err("%s (nid %" PRIu64 "): %s", show(p, path), nid, msg);
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

static void warn(struct checker *f, const char *path, uint64_t nid, const char *fmt, ...)
	EROFS_PRINTF(4, 5);

static void warn(struct checker *f, const char *path, uint64_t nid, const char *fmt, ...)
{
	char msg[512], p[MSGPATH];
	va_list ap;

	f->warnings++;
	if (f->o.debug < 1)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	erofs_warn("%s (nid %" PRIu64 "): %s", show(p, path), nid, msg);
}

static void rfail(struct checker *f, const char *path, uint64_t nid)
{
	report(f, path, nid, "%s", erofs_reader_error(f->r));
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

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		erofs_err("out of memory");
		exit(EXIT_NOMEM);
	}
	return d;
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

	if (!ni) {
		erofs_err("out of memory");
		exit(EXIT_NOMEM);
	}
	return ni;
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
static void scan_data(struct checker *f, const char *path, const struct erofs_rd_inode *vi,
		      bool read, bool report)
{
	uint64_t off = 0, zblocks = 0, last_pa = UINT64_MAX;

	while (off < vi->size) {
		struct erofs_map map;

		if (erofs_map_blocks(f->r, vi, off, &map)) {
			if (report)
				rfail(f, path, vi->nid);
			return;
		}
		if (map.flags & EROFS_MAP_FRAGMENT) {
			/* inside the packed inode (checked when vi was loaded),
			 * whose extents check_packed() decodes once for all */
			off = map.la + map.llen;
			continue;
		}
		if ((map.flags & EROFS_MAP_MAPPED) && !(map.flags & EROFS_MAP_META))
			record_extent(f, map.pa, map.plen, vi->nid, false);
		if ((map.flags & EROFS_MAP_MAPPED) && map.pa != last_pa) {
			zblocks += map.plen >> f->r->blkszbits;
			last_pa = map.pa;
		}
		if ((map.flags & EROFS_MAP_ENCODED) && read) {
			if (check_encoded(f, vi, &map)) {
				if (report)
					rfail(f, path, vi->nid);
				return;
			}
		} else if ((map.flags & EROFS_MAP_MAPPED) && read) {
			uint64_t skip = off - map.la;
			int err = map.flags & EROFS_MAP_INTERLACED ?
				  read_range(f, map.pa, map.plen) :	/* the ring, whole */
				  read_range(f, map.pa + skip, map.llen - skip);

			if (err) {
				if (report)
					rfail(f, path, vi->nid);
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
		warn(f, path, vi->nid,
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
	const char *path;
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
		report(c->f, c->path, c->nid, "malformed POSIX ACL in %s (%u bytes)",
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

static void check_xattrs(struct checker *f, const char *path, const struct erofs_rd_inode *vi)
{
	struct xcheck c = { f, path, vi->nid, NULL, 0, 0 };
	size_t i;

	if (erofs_xattr_iterate(f->r, vi, xattr_collect, &c))
		rfail(f, path, vi->nid);
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), xname_cmp);
	for (i = 1; i < c.n; i++) {
		if (!xname_cmp(&c.v[i - 1], &c.v[i])) {
			char n[300];

			report(f, path, vi->nid, "duplicate xattr %s%s",
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

static char *join(const char *dir, const char *name)
{
	char *p = erofs_path_join(dir, name);

	if (!p) {
		erofs_err("out of memory");
		exit(EXIT_NOMEM);
	}
	return p;
}

static int collect_dent(void *arg, const struct erofs_rd_dentry *de)
{
	struct frame *fr = arg;
	struct dent *d;

	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? fr->cap * 2 : 16;
		fr->ents = xrealloc(fr->ents, fr->cap * sizeof(*fr->ents));
	}
	d = &fr->ents[fr->n++];
	d->nid = de->nid;
	d->ft = de->file_type;
	d->name = xrealloc(NULL, de->namelen + 1);
	memcpy(d->name, de->name, de->namelen);
	d->name[de->namelen] = '\0';
	return 0;
}

/* Pushes a directory: reads and checks all its entries first. */
static void push_dir(struct checker *f, const struct erofs_rd_inode *vi, uint64_t parent,
		     char *path, int dirfd)
{
	struct frame *fr;

	if (f->depth == f->stackcap) {
		f->stackcap = f->stackcap ? f->stackcap * 2 : 64;
		f->stack = xrealloc(f->stack, f->stackcap * sizeof(*f->stack));
	}
	fr = &f->stack[f->depth++];
	memset(fr, 0, sizeof(*fr));
	fr->vi = *vi;
	fr->path = path;
	fr->dirfd = dirfd;
	f->st.ndirs++;
	if (f->o.debug >= 7)
		erofs_note("checking directory %s", path);
	if (erofs_dir_iterate(f->r, vi, parent, collect_dent, fr)) {
		rfail(f, path, vi->nid);	/* the entries before the damage are still walked */
		fr->damaged = f->dirs_damaged = true;
	} else {
		scan_data(f, path, vi, false, false);
	}
}

static void pop_dir(struct checker *f)
{
	struct frame *fr = &f->stack[f->depth - 1];
	uint32_t want = 2 + fr->subdirs;
	size_t i;

	/* a damaged directory's subdirectories were not all counted */
	if (!fr->damaged && fr->vi.di.nlink != want && fr->vi.di.nlink != 1)
		report(f, fr->path, fr->vi.nid,
		       "directory link count %u, expected %u (2 + %u subdirectories)",
		       fr->vi.di.nlink, want, fr->subdirs);
	if (fr->dirfd >= 0)
		erofs_extract_dir_end(f->o.x, fr->dirfd, fr->path, &fr->vi);
	for (i = 0; i < fr->n; i++)
		free(fr->ents[i].name);
	free(fr->ents);
	free(fr->path);
	f->depth--;
}

static void check_special(struct checker *f, const char *path, const struct erofs_rd_inode *vi)
{
	if (vi->size)
		warn(f, path, vi->nid, "special file with i_size %" PRIu64, vi->size);
	if ((S_ISFIFO(vi->di.mode) || S_ISSOCK(vi->di.mode)) && vi->di.u)
		warn(f, path, vi->nid, "fifo or socket with non-zero rdev 0x%x", vi->di.u);
}

static void visit(struct checker *f, struct frame *parent, const struct dent *d)
{
	char *path = join(parent->path, d->name);
	struct erofs_check_node *ni = nid_find(f, d->nid);
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;

	if (d->ft == EROFS_FT_DIR)
		parent->subdirs++;
	if (f->o.debug >= 7)
		erofs_note("checking %s", path);

	if (ni) {
		ni->refs++;
		if (ni->packed) {
			report(f, path, d->nid,
			       "the directory entry names the packed inode, which no directory may link");
			goto out;
		}
		if (ni->bad)
			goto out;
		if (erofs_mode_to_ftype(ni->mode) != d->ft)
			report(f, path, d->nid,
			       "file type %u in the directory entry does not match the inode (mode 0%o)",
			       d->ft, ni->mode);
		if (S_ISDIR(ni->mode)) {
			char p[MSGPATH];

			report(f, path, d->nid,
			       "directory already reached as %s (directory hard link or loop)",
			       show(p, ni->first_path));
			goto out;
		}
		f->st.nlinks_extra++;
		if (pfd < 0)
			goto out;
		if (ni->extracted) {
			erofs_extract_hardlink(f->o.x, pfd, d->name, path, ni->first_path + 1);
		} else if (!erofs_read_inode(f->r, d->nid, &vi) &&
			   !erofs_extract_node(f->o.x, pfd, d->name, path, &vi)) {
			free(ni->first_path);
			ni->first_path = xstrdup(path);
			ni->extracted = true;
		}
		goto out;
	}

	ni = nid_add(f, d->nid);
	ni->refs = 1;
	ni->first_path = xstrdup(path);
	if (erofs_read_inode(f->r, d->nid, &vi)) {
		ni->bad = true;
		rfail(f, path, d->nid);
		goto out;
	}
	if (!meta_claim(f, vi.iloc, vi.meta_end)) {
		ni->bad = true;
		if (S_ISDIR(vi.di.mode))
			f->dirs_damaged = true;
		report(f, path, d->nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " with its metadata) overlaps an inode checked before; not checked further",
		       vi.iloc, vi.meta_end - 1);
		goto out;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = vi.iloc;
	ni->meta_end = vi.meta_end;
	if (erofs_mode_to_ftype(vi.di.mode) != d->ft)
		report(f, path, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, vi.di.mode);
	check_xattrs(f, path, &vi);

	if (S_ISDIR(vi.di.mode)) {
		int fd = -1;

		if (pfd >= 0) {
			fd = erofs_extract_dir_begin(f->o.x, pfd, d->name, path);
			if (fd < 0)
				fd = -1;
		}
		push_dir(f, &vi, parent->vi.nid, path, fd);	/* parent may move */
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
		scan_data(f, path, &vi, pfd < 0, pfd < 0);
	} else if (S_ISLNK(vi.di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		f->st.nsymlinks++;
		if (erofs_read_symlink(f->r, &vi, target, sizeof(target)))
			rfail(f, path, vi.nid);
		else
			scan_data(f, path, &vi, false, false);
	} else {
		f->st.nspecial++;
		check_special(f, path, &vi);
	}
	if (pfd >= 0 && !erofs_extract_node(f->o.x, pfd, d->name, path, &vi))
		ni->extracted = true;
out:
	free(path);
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
		const char *path = owner ? owner->first_path : "?";
		size_t lo = 0, hi = n, steps, culprit;
		const char *what;
		uint64_t where;
		char p[MSGPATH];

		if (owner && owner->overlap_reported)
			continue;	/* one message per inode */
		what = d->xattr ? "shared xattr at byte" : "data at block";
		where = d->xattr ? d->start : d->start >> f->r->blkszbits;

		if (d->start < sb_end && d->end > sb_start) {
			report(f, path, d->nid, "%s %" PRIu64 " overlaps the superblock",
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
			report(f, path, d->nid,
			       "%s %" PRIu64 " overlaps the inode of %s (nid %" PRIu64 ")",
			       what, where, show(p, v[culprit]->first_path), v[culprit]->nid);
		else
			report(f, path, d->nid, "%s %" PRIu64 " overlaps inode metadata",
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
		    (!f->dirs_damaged || ni->refs > ni->nlink))
			report(f, ni->first_path, ni->nid,
			       "link count %u, but %u directory entries refer to it",
			       ni->nlink, ni->refs);
	}
	qsort(v, n, sizeof(*v), inode_cmp);
	for (i = 0; i < n; i++) {
		if (far && v[i]->iloc < far->meta_end) {
			char p[MSGPATH];

			report(f, v[i]->first_path, v[i]->nid,
			       "inode overlaps the inode of %s (nid %" PRIu64 ")",
			       show(p, far->first_path), far->nid);
		}
		if (!far || v[i]->meta_end > far->meta_end)
			far = v[i];
	}
	check_data_overlaps(f, v, n);
	free(v);
	if (f->r->sb.inos != f->nids.count && !f->errors)
		warn(f, "/", f->r->sb.root_nid,
		     "superblock inode count %" PRIu64 " but %zu inodes are reachable",
		     f->r->sb.inos, f->nids.count);
}

/*
 * The packed inode (fragments): a regular file that no directory names,
 * whose data is every fragment.  Checked once, like a file of the tree:
 * its inode, xattrs, index and every extent decoded; it counts towards
 * the inode overlap checks but not as a file of the tree.
 */
static void check_packed(struct checker *f)
{
	static const char path[] = "(packed inode)";
	const uint64_t nid = f->r->sb.packed_nid;
	const struct erofs_rd_inode *pk;
	struct erofs_check_node *ni;
	int ret;

	if (!(f->r->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS)) {
		if (nid)
			warn(f, path, nid, "packed_nid set without the fragments feature (ignored)");
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
	ni->first_path = xstrdup(path);
	ni->mode = pk->di.mode;
	ni->nlink = pk->di.nlink;
	ni->iloc = pk->iloc;
	ni->meta_end = pk->meta_end;
	if (!meta_claim(f, pk->iloc, pk->meta_end)) {
		ni->bad = true;
		report(f, path, nid,
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
	check_xattrs(f, path, pk);
	scan_data(f, path, pk, true, true);
}

static void walk(struct checker *f)
{
	uint64_t root = f->r->sb.root_nid;
	struct erofs_rd_inode vi;
	struct erofs_check_node *ni;
	int fd = -1;

	ni = nid_add(f, root);
	ni->first_path = xstrdup("/");
	if (erofs_read_inode(f->r, root, &vi)) {
		ni->bad = true;
		rfail(f, "/", root);
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = vi.iloc;
	ni->meta_end = vi.meta_end;
	meta_claim(f, vi.iloc, vi.meta_end);	/* the first: nothing to overlap */
	check_packed(f);
	if (!S_ISDIR(vi.di.mode)) {
		report(f, "/", root, "root inode is not a directory (mode 0%o)", vi.di.mode);
		return;
	}
	check_xattrs(f, "/", &vi);
	if (f->o.x) {
		fd = erofs_extract_root(f->o.x);
		if (fd < 0)
			fd = -1;
	}
	push_dir(f, &vi, root, xstrdup("/"), fd);

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

		tab = calloc(cap, sizeof(*tab));
		if (!tab)
			return NULL;
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

void erofs_nidtab_free(struct erofs_nidtab *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->tab[i].first_path);
	free(t->tab);
	t->tab = NULL;
	t->cap = t->count = 0;
}

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

char *erofs_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (!dl || p[dl - 1] != '/')
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	return p;
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
