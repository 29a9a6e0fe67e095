/* SPDX-License-Identifier: MIT */
/*
 * A read-only filesystem's operations on an image (lib/fsops/fsops.c), without
 * libfuse: what erofsfuse (fuse/main.c) answers the kernel with, and what
 * the host tests and the fuzz harness call directly.
 *
 * Every operation takes inode numbers as FUSE sees them (the root is
 * EROFS_FS_ROOT_INO, any other inode nid + 2) and returns 0 or a count on
 * success and a negative errno on failure.  The image is hostile: whatever
 * it holds, an operation returns -EIO (structural corruption, a feature
 * this reader does not decode) or -ENOMEM, never crashes; the reason, with
 * the nid, is in erofs_fs_error() until the next failing call.  Ordinary
 * answers keep their usual errno: -ENOENT, -ENOTDIR, -EISDIR, -EINVAL
 * (readlink of a non-symlink), -ENODATA, -ERANGE.
 *
 * File data is read through a bounded cache of decoded extents (pclusters
 * decompressed, whole): at most EROFS_FS_CACHE_SLOTS of them and at most
 * cache_bytes in all, least recently used first out; a file read in small
 * pieces decodes each extent once.  The packed inode's extents (fragments)
 * are cached the same way, so files sharing one are cheap to read.
 *
 * Not thread-safe: one caller at a time (erofsfuse runs one FUSE thread).
 */
#ifndef EROFS_FSOPS_H
#define EROFS_FSOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include "erofs/read/reader.h"

struct eforge_image;

#define EROFS_FS_ROOT_INO	1u	/* FUSE_ROOT_ID */
#define EROFS_FS_CACHE_SLOTS	64u
#define EROFS_FS_CACHE_DEFAULT	(32u << 20)	/* bytes of decoded data kept */

/* readdir cookies: 0 starts, the ones handed to the fill function resume */
#define EROFS_FS_DIR_START	0u

struct erofs_fs_extent;

struct erofs_fs {
	struct erofs_reader *r;

	/* the last inode loaded: FUSE asks about the same one many times */
	bool last_valid;
	struct erofs_rd_inode last;

	/* decoded extents, least recently used evicted first */
	struct erofs_fs_extent *cache;
	size_t cache_bytes, cache_used;
	uint64_t clock;
	uint64_t hits, misses;		/* for tests and statistics */

	char err[EROFS_ERRMSG_LEN + 64];
};

/* Sets fs up on a reader opened by the caller (who closes it after
 * erofs_fs_close()).  cache_bytes 0: EROFS_FS_CACHE_DEFAULT. */
int erofs_fs_init(struct erofs_fs *fs, struct erofs_reader *r, size_t cache_bytes);
/* The same on an image opened through liberofs-forge (erofsfuse). */
int erofs_fs_init_image(struct erofs_fs *fs, struct eforge_image *img, size_t cache_bytes);
void erofs_fs_close(struct erofs_fs *fs);
const char *erofs_fs_error(const struct erofs_fs *fs);

uint64_t erofs_fs_ino_of(const struct erofs_fs *fs, uint64_t nid);
/* -EIO for an inode number that cannot be one of ours */
int erofs_fs_nid_of(struct erofs_fs *fs, uint64_t ino, uint64_t *nid);

/* stat of an inode: st_ino is the FUSE inode number */
int erofs_fs_getattr(struct erofs_fs *fs, uint64_t ino, struct stat *st);

/* name (namelen bytes, no NUL needed) in directory dir: *ino and *st */
int erofs_fs_lookup(struct erofs_fs *fs, uint64_t dir, const char *name, size_t namelen,
		    uint64_t *ino, struct stat *st);

/*
 * Directory entries from cookie on, "." and ".." first.  fill gets each
 * entry with the cookie of the one after it, and returns non-zero to stop
 * (its buffer is full: the entry was not taken).  Returns 0 at the end or
 * when fill stopped, or a negative errno.
 */
typedef int (*erofs_fs_fill_fn)(void *arg, const char *name, size_t namelen, uint64_t ino,
				mode_t type, uint64_t next_cookie);
int erofs_fs_readdir(struct erofs_fs *fs, uint64_t dir, uint64_t cookie,
		     erofs_fs_fill_fn fill, void *arg);

/* Symlink target into buf (bufsz >= EROFS_SYMLINK_MAXLEN), NUL-terminated;
 * returns its length. */
ssize_t erofs_fs_readlink(struct erofs_fs *fs, uint64_t ino, char *buf, size_t bufsz);

/* Checks that ino is a regular file (open). */
int erofs_fs_open(struct erofs_fs *fs, uint64_t ino);

/* Up to len bytes at off: the count read, short (or 0) at the end. */
ssize_t erofs_fs_read(struct erofs_fs *fs, uint64_t ino, void *buf, size_t len, uint64_t off);

/* Full xattr names, each NUL-terminated; with size 0 the size needed,
 * -ERANGE when size is too small. */
ssize_t erofs_fs_listxattr(struct erofs_fs *fs, uint64_t ino, char *buf, size_t size);
/* Value of xattr name; with size 0 its size; -ENODATA, -ERANGE. */
ssize_t erofs_fs_getxattr(struct erofs_fs *fs, uint64_t ino, const char *name, void *buf,
			  size_t size);

int erofs_fs_statfs(struct erofs_fs *fs, struct statvfs *st);

#endif
