// SPDX-License-Identifier: MIT
/*
 * The operations of a read-only filesystem on an image, for erofsfuse and
 * its tests (see include/erofs/fsops/fsops.h): inode numbers, attributes,
 * lookup, readdir with resumable cookies, readlink, reads through a
 * bounded cache of decoded extents, xattrs and statfs.  Everything the
 * image says is checked by the reader (lib/read/); this
 * file turns its verdicts into the errno a filesystem returns.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "erofs/common/ondisk.h"
#include "erofs/fsops/fsops.h"
#include "erofs/read/handle.h"
#include "erofs/read/zread.h"	/* erofs_reader_fail() */

/* readdir cookies past "." (1) and ".." (2): block + 1 above, entry below */
#define COOKIE_DOT		1u
#define COOKIE_DOTDOT		2u
#define COOKIE_ENTRY_BITS	20u
#define COOKIE_MAX_BLOCKS	(UINT64_C(1) << 43)

struct erofs_fs_extent {
	bool used;
	uint64_t nid;
	struct erofs_map map;
	uint8_t *data;
	uint64_t stamp;
};

/* The reader's failure, named by nid, as the errno a filesystem returns. */
static int fs_fail(struct erofs_fs *fs, uint64_t nid, int err)
{
	snprintf(fs->err, sizeof(fs->err), "nid %" PRIu64 ": %s", nid,
		 erofs_reader_error(fs->r));
	return err == -ENOMEM ? -ENOMEM : -EIO;
}

const char *erofs_fs_error(const struct erofs_fs *fs)
{
	return fs->err[0] ? fs->err : "no error";
}

int erofs_fs_init(struct erofs_fs *fs, struct erofs_reader *r, size_t cache_bytes)
{
	memset(fs, 0, sizeof(*fs));
	fs->r = r;
	fs->cache_bytes = cache_bytes ? cache_bytes : EROFS_FS_CACHE_DEFAULT;
	fs->cache = calloc(EROFS_FS_CACHE_SLOTS, sizeof(*fs->cache));
	return fs->cache ? 0 : -ENOMEM;
}

int erofs_fs_init_image(struct erofs_fs *fs, struct eforge_image *img, size_t cache_bytes)
{
	return erofs_fs_init(fs, erofs_forge_reader(img), cache_bytes);
}

void erofs_fs_close(struct erofs_fs *fs)
{
	unsigned int i;

	if (fs->cache)
		for (i = 0; i < EROFS_FS_CACHE_SLOTS; i++)
			free(fs->cache[i].data);
	free(fs->cache);
	fs->cache = NULL;
}

uint64_t erofs_fs_ino_of(const struct erofs_fs *fs, uint64_t nid)
{
	return nid == fs->r->root_nid ? EROFS_FS_ROOT_INO : nid + 2;
}

int erofs_fs_nid_of(struct erofs_fs *fs, uint64_t ino, uint64_t *nid)
{
	if (ino == EROFS_FS_ROOT_INO) {
		*nid = fs->r->root_nid;
		return 0;
	}
	if (ino < 2) {
		snprintf(fs->err, sizeof(fs->err), "inode number %" PRIu64 " is not ours", ino);
		return -EIO;
	}
	*nid = ino - 2;
	return 0;
}

/* nids a directory may name: inside the metadata area */
static bool nid_possible(const struct erofs_fs *fs, uint64_t nid)
{
	const struct erofs_reader *r = fs->r;

	if (nid & EROFS_NID_METABOX_BIT)
		return r->mbox && (nid & ~EROFS_NID_METABOX_BIT) < r->mbox->size >> EROFS_SLOT_BITS;
	return nid < (r->size - r->meta_base) >> EROFS_SLOT_BITS;
}

/* The inode of ino, checked; valid until the next load. */
static int load(struct erofs_fs *fs, uint64_t ino, const struct erofs_rd_inode **out)
{
	uint64_t nid;
	int err = erofs_fs_nid_of(fs, ino, &nid);

	if (err)
		return err;
	if (!fs->last_valid || fs->last.nid != nid) {
		fs->last_valid = false;
		err = erofs_read_inode(fs->r, nid, &fs->last);
		if (err)
			return fs_fail(fs, nid, err);
		fs->last_valid = true;
	}
	*out = &fs->last;
	return 0;
}

static void fill_stat(const struct erofs_fs *fs, const struct erofs_rd_inode *vi, struct stat *st)
{
	const unsigned int bits = fs->r->blkszbits;

	memset(st, 0, sizeof(*st));
	st->st_ino = erofs_fs_ino_of(fs, vi->nid);
	st->st_mode = vi->di.mode;
	st->st_nlink = vi->di.nlink;
	st->st_uid = vi->di.uid;
	st->st_gid = vi->di.gid;
	st->st_size = (off_t)vi->size;
	st->st_blksize = (blksize_t)fs->r->blksz;
	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	    vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT)
		st->st_blocks = (blkcnt_t)((uint64_t)vi->z_blocks << (bits - 9));
	else
		st->st_blocks = (blkcnt_t)(((vi->size + fs->r->blksz - 1) >> bits) << (bits - 9));
	if (S_ISCHR(vi->di.mode) || S_ISBLK(vi->di.mode)) {
		uint32_t major, minor;

		erofs_decode_rdev(vi->di.u, &major, &minor);
		st->st_rdev = makedev(major, minor);
	}
	st->st_mtim.tv_sec = (time_t)vi->mtime;
	st->st_mtim.tv_nsec = (long)vi->mtime_nsec;
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

int erofs_fs_getattr(struct erofs_fs *fs, uint64_t ino, struct stat *st)
{
	const struct erofs_rd_inode *vi;
	int err = load(fs, ino, &vi);

	if (err)
		return err;
	fill_stat(fs, vi, st);
	return 0;
}

/* ------------------------------------------------------------------ */
/* directories                                                         */

static mode_t ftype_mode(uint8_t ft)
{
	static const mode_t modes[EROFS_FT_MAX] = {
		[EROFS_FT_REG_FILE] = S_IFREG, [EROFS_FT_DIR] = S_IFDIR,
		[EROFS_FT_CHRDEV] = S_IFCHR, [EROFS_FT_BLKDEV] = S_IFBLK,
		[EROFS_FT_FIFO] = S_IFIFO, [EROFS_FT_SOCK] = S_IFSOCK,
		[EROFS_FT_SYMLINK] = S_IFLNK,
	};

	return ft < EROFS_FT_MAX ? modes[ft] : 0;
}

struct lookup_ctx {
	const char *name;
	size_t namelen;
	uint64_t nid;
	bool below;		/* a name before it was seen in this block */
};

enum { LOOKUP_FOUND = 1, LOOKUP_PASSED = 2 };

static int lookup_one(void *arg, const struct erofs_rd_dentry *de)
{
	struct lookup_ctx *c = arg;
	size_t n = de->namelen < c->namelen ? de->namelen : c->namelen;
	int cmp = memcmp(de->name, c->name, n);

	if (!cmp && de->namelen == c->namelen) {
		c->nid = de->nid;
		return LOOKUP_FOUND;
	}
	/* names are sorted within a block: once past the name, it is not there */
	if (cmp > 0 || (!cmp && de->namelen > c->namelen))
		return LOOKUP_PASSED;
	c->below = true;
	return 0;
}

static int dir_block(struct erofs_fs *fs, const struct erofs_rd_inode *vi, uint8_t *buf,
		     uint64_t blk, struct erofs_dir_cursor *cur, erofs_dirent_fn fn, void *c);

/*
 * A binary search over the blocks, as the kernel looks names up (names
 * are sorted across the directory): O(log blocks) blocks parsed, each
 * with every check of erofs_dirblock_parse().  1 with c->nid set when
 * found, 0 when not, or a negative errno.
 */
static int lookup_blocks(struct erofs_fs *fs, const struct erofs_rd_inode *dir,
			 struct lookup_ctx *c)
{
	uint64_t lo = 0, hi = (dir->size + fs->r->blksz - 1) >> fs->r->blkszbits;
	struct erofs_dir_cursor cur;
	uint8_t *buf = malloc(fs->r->blksz);
	int ret = 0;

	if (!buf)
		return erofs_reader_fail(fs->r, -ENOMEM, "out of memory");
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		c->below = false;
		erofs_dir_cursor_init(&cur, dir->nid, EROFS_NID_UNKNOWN);
		ret = dir_block(fs, dir, buf, mid, &cur, lookup_one, c);
		if (ret < 0 || ret == LOOKUP_FOUND)
			break;
		if (ret == LOOKUP_PASSED && c->below) {
			ret = 0;	/* it would sit between two names of this block */
			break;
		}
		if (ret == LOOKUP_PASSED)
			hi = mid;	/* the block starts after it */
		else
			lo = mid + 1;	/* every name of the block comes before it */
		ret = 0;
	}
	free(buf);
	return ret;
}

int erofs_fs_lookup(struct erofs_fs *fs, uint64_t dir, const char *name, size_t namelen,
		    uint64_t *ino, struct stat *st)
{
	const struct erofs_rd_inode *vi;
	struct erofs_rd_inode dvi;
	struct lookup_ctx c = { .name = name, .namelen = namelen };
	int err = load(fs, dir, &vi);

	if (err)
		return err;
	if (!S_ISDIR(vi->di.mode))
		return -ENOTDIR;
	if (!namelen || namelen > EROFS_NAME_LEN)
		return -ENOENT;
	dvi = *vi;
	err = lookup_blocks(fs, &dvi, &c);
	if (err < 0)
		return fs_fail(fs, dvi.nid, err);
	if (err != LOOKUP_FOUND)
		return -ENOENT;
	err = load(fs, erofs_fs_ino_of(fs, c.nid), &vi);
	if (err)
		return err;
	*ino = erofs_fs_ino_of(fs, c.nid);
	fill_stat(fs, vi, st);
	return 0;
}

struct readdir_ctx {
	struct erofs_fs *fs;
	erofs_fs_fill_fn fill;
	void *arg;
	uint64_t blk;
	uint64_t skip, k;	/* entries of this block already handed out, seen */
	bool stopped;
};

static int readdir_one(void *arg, const struct erofs_rd_dentry *de)
{
	struct readdir_ctx *c = arg;
	uint64_t next;

	if (c->k++ < c->skip)
		return 0;
	if (!nid_possible(c->fs, de->nid))
		return erofs_reader_fail(c->fs->r, -EUCLEAN,
					 "directory block %" PRIu64 ": entry names nid %" PRIu64 ", beyond the metadata area",
					 c->blk, de->nid);
	next = ((c->blk + 1) << COOKIE_ENTRY_BITS) | c->k;
	if (c->fill(c->arg, de->name, de->namelen, erofs_fs_ino_of(c->fs, de->nid),
		    ftype_mode(de->file_type), next)) {
		c->stopped = true;
		return 1;
	}
	return 0;
}

/* Parses block blk of directory vi into the cursor, handing entries to c. */
static int dir_block(struct erofs_fs *fs, const struct erofs_rd_inode *vi, uint8_t *buf,
		     uint64_t blk, struct erofs_dir_cursor *cur, erofs_dirent_fn fn, void *c)
{
	struct erofs_reader *r = fs->r;
	uint64_t pos = blk << r->blkszbits;
	unsigned int n = vi->size - pos < r->blksz ? (unsigned int)(vi->size - pos) : r->blksz;
	int err = erofs_read_data(r, vi, buf, n, pos);

	if (err)
		return err;
	cur->blkno = blk;
	return erofs_dirblock_parse(buf, n, r->blksz, cur, fn, c, r->err, sizeof(r->err));
}

int erofs_fs_readdir(struct erofs_fs *fs, uint64_t dir, uint64_t cookie,
		     erofs_fs_fill_fn fill, void *arg)
{
	struct readdir_ctx c = { .fs = fs, .fill = fill, .arg = arg };
	const struct erofs_rd_inode *vi;
	struct erofs_rd_inode dvi;
	struct erofs_dir_cursor cur;
	uint64_t nblocks, blk;
	uint8_t *buf;
	int err = load(fs, dir, &vi);

	if (err)
		return err;
	if (!S_ISDIR(vi->di.mode))
		return -ENOTDIR;
	dvi = *vi;
	nblocks = (dvi.size + fs->r->blksz - 1) >> fs->r->blkszbits;
	if (nblocks >= COOKIE_MAX_BLOCKS) {
		snprintf(fs->err, sizeof(fs->err), "nid %" PRIu64 ": directory of %" PRIu64 " bytes is too large",
			 dvi.nid, dvi.size);
		return -EIO;
	}
	if (cookie > COOKIE_DOTDOT && cookie >> COOKIE_ENTRY_BITS == 0)
		return -EINVAL;	/* not a cookie we handed out */
	buf = malloc(fs->r->blksz);
	if (!buf)
		return -ENOMEM;
	erofs_dir_cursor_init(&cur, dvi.nid, EROFS_NID_UNKNOWN);
	cur.seen_dot = dvi.dot_omitted;	/* "." is handed out all the same */
	if (cookie < COOKIE_DOTDOT) {
		/* where ".." points is the parent's number (in block 0 but for
		 * a directory of many names sorted before it) */
		for (blk = 0; !err && blk < nblocks && !cur.seen_dotdot; blk++)
			err = dir_block(fs, &dvi, buf, blk, &cur, NULL, NULL);
		if (!err && !cur.seen_dotdot)
			err = erofs_dir_cursor_finish(&cur, fs->r->err, sizeof(fs->r->err));
		if (!err && !nid_possible(fs, cur.parent_nid))
			err = erofs_reader_fail(fs->r, -EUCLEAN, "'..' names nid %" PRIu64 ", beyond the metadata area",
						cur.parent_nid);
		if (err)
			goto fail;
		if (cookie < COOKIE_DOT &&
		    fill(arg, ".", 1, erofs_fs_ino_of(fs, dvi.nid), S_IFDIR, COOKIE_DOT))
			goto out;
		if (fill(arg, "..", 2, erofs_fs_ino_of(fs, cur.parent_nid), S_IFDIR, COOKIE_DOTDOT))
			goto out;
		erofs_dir_cursor_init(&cur, dvi.nid, EROFS_NID_UNKNOWN);
		cur.seen_dot = dvi.dot_omitted;
	}
	if (cookie <= COOKIE_DOTDOT) {
		blk = 0;
	} else {
		blk = (cookie >> COOKIE_ENTRY_BITS) - 1;
		c.skip = cookie & ((1u << COOKIE_ENTRY_BITS) - 1);
	}
	for (; blk < nblocks; blk++) {
		c.blk = blk;
		c.k = 0;
		err = dir_block(fs, &dvi, buf, blk, &cur, readdir_one, &c);
		if (c.stopped)
			goto out;
		if (err)
			goto fail;
		c.skip = 0;
	}
	/* walked from the start: "." and ".." must both have been there */
	if (cookie <= COOKIE_DOTDOT) {
		err = erofs_dir_cursor_finish(&cur, fs->r->err, sizeof(fs->r->err));
		if (err)
			goto fail;
	}
out:
	free(buf);
	return 0;
fail:
	free(buf);
	return fs_fail(fs, dvi.nid, err);
}

/* ------------------------------------------------------------------ */
/* symlinks and data                                                   */

ssize_t erofs_fs_readlink(struct erofs_fs *fs, uint64_t ino, char *buf, size_t bufsz)
{
	const struct erofs_rd_inode *vi;
	struct erofs_rd_inode lvi;
	int err = load(fs, ino, &vi);

	if (err)
		return err;
	if (!S_ISLNK(vi->di.mode))
		return -EINVAL;
	lvi = *vi;
	err = erofs_read_symlink(fs->r, &lvi, buf, bufsz);
	if (err)
		return fs_fail(fs, lvi.nid, err);
	return (ssize_t)strlen(buf);
}

int erofs_fs_open(struct erofs_fs *fs, uint64_t ino)
{
	const struct erofs_rd_inode *vi;
	int err = load(fs, ino, &vi);

	if (err)
		return err;
	if (S_ISDIR(vi->di.mode))
		return -EISDIR;
	return S_ISREG(vi->di.mode) ? 0 : -EINVAL;
}

/* The decoded bytes of an encoded extent, through the cache. */
static int decoded(struct erofs_fs *fs, const struct erofs_rd_inode *vi,
		   const struct erofs_map *map, const uint8_t **out)
{
	struct erofs_fs_extent *e, *victim = NULL;
	const uint8_t *dec;
	unsigned int i;
	int err;

	for (i = 0; i < EROFS_FS_CACHE_SLOTS; i++) {
		e = &fs->cache[i];
		if (e->used && e->nid == vi->nid && !memcmp(&e->map, map, sizeof(*map))) {
			e->stamp = ++fs->clock;
			fs->hits++;
			*out = e->data;
			return 0;
		}
	}
	fs->misses++;
	err = erofs_decode_extent(fs->r, vi, map, &dec);
	if (err)
		return err;
	*out = dec;	/* valid until the reader decodes again: enough uncached */
	if (map->llen > fs->cache_bytes)
		return 0;
	/* make room: evict the least recently used until a slot and the bytes are free */
	for (;;) {
		struct erofs_fs_extent *oldest = NULL;

		victim = NULL;
		for (i = 0; i < EROFS_FS_CACHE_SLOTS; i++) {
			e = &fs->cache[i];
			if (!e->used)
				victim = victim ? victim : e;
			else if (!oldest || e->stamp < oldest->stamp)
				oldest = e;
		}
		if (victim && fs->cache_used + map->llen <= fs->cache_bytes)
			break;
		/* oldest exists: the slots or the bytes are taken */
		fs->cache_used -= oldest->map.llen;
		free(oldest->data);
		memset(oldest, 0, sizeof(*oldest));
	}
	victim->data = malloc((size_t)map->llen);
	if (!victim->data)
		return 0;	/* uncached is fine */
	memcpy(victim->data, dec, (size_t)map->llen);
	victim->used = true;
	victim->nid = vi->nid;
	victim->map = *map;
	victim->stamp = ++fs->clock;
	fs->cache_used += map->llen;
	*out = victim->data;
	return 0;
}

/* [off, off + len) of vi (inside i_size); depth 1 inside the packed inode. */
static int read_range(struct erofs_fs *fs, const struct erofs_rd_inode *vi, uint8_t *p,
		      size_t len, uint64_t off, unsigned int depth)
{
	struct erofs_reader *r = fs->r;

	while (len) {
		struct erofs_map map;
		const struct erofs_rd_inode *pk;
		const uint8_t *dec;
		uint64_t skip, n;
		int err = erofs_map_blocks(r, vi, off, &map);

		if (err)
			return err;
		skip = off - map.la;
		n = map.llen - skip < len ? map.llen - skip : len;
		if (map.flags & EROFS_MAP_ENCODED) {
			err = decoded(fs, vi, &map, &dec);
			if (err)
				return err;
			memcpy(p, dec + skip, (size_t)n);
		} else if (map.flags & EROFS_MAP_FRAGMENT) {
			/* the packed inode's data, through the same cache */
			err = erofs_packed_inode(r, &pk);
			if (err < 0)
				return err;
			if (!err || depth ||
			    map.pa > pk->size || skip + n > pk->size - map.pa)
				return erofs_reader_fail(r, -EUCLEAN,
							 "fragment of %" PRIu64 " bytes at %" PRIu64 " outside the packed inode",
							 map.llen, map.pa);
			err = read_range(fs, pk, p, (size_t)n, map.pa + skip, depth + 1);
			if (err)
				return err;
		} else if (map.flags & EROFS_MAP_MAPPED) {
			err = erofs_read_mapped(r, &map, p, (size_t)n, off);
			if (err)
				return err;
		} else {
			memset(p, 0, (size_t)n);
		}
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t erofs_fs_read(struct erofs_fs *fs, uint64_t ino, void *buf, size_t len, uint64_t off)
{
	const struct erofs_rd_inode *vi;
	struct erofs_rd_inode fvi;
	int err = load(fs, ino, &vi);

	if (err)
		return err;
	if (S_ISDIR(vi->di.mode))
		return -EISDIR;
	if (!S_ISREG(vi->di.mode))
		return -EINVAL;
	if (off >= vi->size)
		return 0;
	if (len > vi->size - off)
		len = (size_t)(vi->size - off);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	fvi = *vi;
	err = read_range(fs, &fvi, buf, len, off, 0);
	if (err)
		return fs_fail(fs, fvi.nid, err);
	return (ssize_t)len;
}

/* ------------------------------------------------------------------ */
/* xattrs and statfs                                                   */

struct xattr_ctx {
	const char *name;	/* getxattr: the name looked for */
	char *buf;
	size_t size, used;
	bool found;
};

static int list_one(void *arg, const struct erofs_rd_xattr *x)
{
	struct xattr_ctx *c = arg;
	const char *prefix = erofs_rd_xattr_prefix(x->index);
	size_t plen = strlen(prefix), n = plen + x->name_len + 1;

	if (c->size && c->used + n <= c->size) {
		memcpy(c->buf + c->used, prefix, plen);
		memcpy(c->buf + c->used + plen, x->name, x->name_len);
		c->buf[c->used + n - 1] = '\0';
	}
	c->used += n;
	return 0;
}

/* Every xattr of ino through fn; a negative errno, else 0. */
static int xattr_walk(struct erofs_fs *fs, uint64_t ino, erofs_xattr_fn fn, struct xattr_ctx *c)
{
	const struct erofs_rd_inode *vi;
	struct erofs_rd_inode xvi;
	int err = load(fs, ino, &vi);

	if (err)
		return err;
	xvi = *vi;
	err = erofs_xattr_iterate(fs->r, &xvi, fn, c);
	return err < 0 ? fs_fail(fs, xvi.nid, err) : 0;
}

ssize_t erofs_fs_listxattr(struct erofs_fs *fs, uint64_t ino, char *buf, size_t size)
{
	struct xattr_ctx c = { .buf = buf, .size = size };
	int err = xattr_walk(fs, ino, list_one, &c);

	if (err)
		return err;
	if (size && c.used > size)
		return -ERANGE;
	return (ssize_t)c.used;
}

static int get_one(void *arg, const struct erofs_rd_xattr *x)
{
	struct xattr_ctx *c = arg;
	const char *prefix = erofs_rd_xattr_prefix(x->index);
	size_t plen = strlen(prefix), nlen = strlen(c->name);

	if (nlen != plen + x->name_len || memcmp(c->name, prefix, plen) ||
	    memcmp(c->name + plen, x->name, x->name_len))
		return 0;
	c->found = true;
	c->used = x->value_size;
	if (c->size && x->value_size <= c->size)
		memcpy(c->buf, x->value, x->value_size);
	return 1;
}

ssize_t erofs_fs_getxattr(struct erofs_fs *fs, uint64_t ino, const char *name, void *buf,
			  size_t size)
{
	struct xattr_ctx c = { .name = name, .buf = buf, .size = size };
	int err = xattr_walk(fs, ino, get_one, &c);

	if (err)
		return err;
	if (!c.found)
		return -ENODATA;
	if (size && c.used > size)
		return -ERANGE;
	return (ssize_t)c.used;
}

int erofs_fs_statfs(struct erofs_fs *fs, struct statvfs *st)
{
	const struct erofs_reader *r = fs->r;

	memset(st, 0, sizeof(*st));
	st->f_bsize = r->blksz;
	st->f_frsize = r->blksz;
	st->f_blocks = r->blocks;
	st->f_files = r->sb.inos;
	st->f_namemax = EROFS_NAME_LEN;
	st->f_flag = ST_RDONLY;
	memcpy(&st->f_fsid, r->sb.uuid, sizeof(st->f_fsid) < 8 ? sizeof(st->f_fsid) : 8);
	return 0;
}
