/* SPDX-License-Identifier: MIT */
/*
 * liberofs-forge: EROFS images read without the kernel.
 *
 * The reader behind erofs-forge's fsck.erofs, dump.erofs and erofsfuse, as
 * a library: open an image (a file, or a range of one, with its extra
 * devices), look paths up, walk directories, stat inodes, read file bytes
 * at any offset, list xattrs and the extents a file's data is stored in,
 * and say which Linux release mounts the image.  Every layout Linux 6.1 to
 * 6.17 reads: plain, inline, chunked, LZ4, MicroLZMA, DEFLATE and zstd
 * compressed (big pclusters, compact indexes, inline tails, fragments,
 * 48-bit encoded extents), multi-device, metabox.
 *
 * An image is hostile until proven otherwise: every offset, length and
 * count is checked before use, so any byte string gives an error, never a
 * crash, a hang or unbounded memory.  Calls return 0 (or a count) on
 * success and a negative errno on failure: -EUCLEAN for corruption,
 * -EOPNOTSUPP for a feature this reader does not handle, -EIO for a failed
 * read, -ENXIO for data on an extra device that was not given, -ENOMEM,
 * -ENOENT/-ENOTDIR for lookups, -EINVAL for a bad argument.
 * eforge_error() then describes the failure in one line, naming the nid,
 * block or entry.  The library prints nothing and keeps no global state.
 *
 * A handle is used by one thread at a time; open one per thread to read
 * an image in parallel.  The image must not change while it is open.
 *
 *	struct eforge_image *img;
 *	char err[256];
 *	uint64_t nid;
 *	if (eforge_open(&img, "system.img", NULL, err, sizeof(err)) < 0)
 *		die(err);
 *	if (eforge_lookup(img, "/etc/hosts", &nid) < 0)
 *		die(eforge_error(img));
 *	n = eforge_read(img, nid, buf, sizeof(buf), 0);
 *	eforge_close(img);
 *
 * Link with `pkg-config --cflags --libs erofs-forge`.
 */
#ifndef EROFS_FORGE_H
#define EROFS_FORGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct eforge_image;

/* ---- opening ---- */

struct eforge_open_opts {
	uint64_t offset;		/* bytes of the file before the image */
	const char *const *devices;	/* extra devices, in device table order */
	unsigned int nr_devices;	/* all of the image's, or none (their data then
					 * fails to read, with -ENXIO) */
};

/*
 * Opens the image in the file (or block device) at path and checks its
 * superblock.  opts may be NULL.  On failure *out is NULL and err (errlen
 * bytes, may be NULL) says why, naming the file.
 */
int eforge_open(struct eforge_image **out, const char *path, const struct eforge_open_opts *opts,
		char *err, size_t errlen);

/*
 * eforge_open() with flags (0 is eforge_open()), for what to do when the
 * image has extra devices:
 *   EFORGE_OPEN_ALL_DEVICES  every one of them must be given: else the
 *                            open fails with -ENXIO, err naming each
 *                            missing slot (number, tag, size).  A mount
 *                            or a checker wants this: a device missing
 *                            would fail every read of its data later.
 *   EFORGE_OPEN_NO_DEVICES   none is used, on purpose (metadata only):
 *                            devices in opts are refused (-EINVAL), and
 *                            devices appended to the file are not read;
 *                            data on a device fails with -ENXIO.
 * Without either, devices appended to the image file where the device
 * table maps them (containerd's tar-index layers) are read from there
 * when opts gives none.
 * Failures that are the image's (a bad superblock, a device shorter than
 * its slot) are -EUCLEAN, -EOPNOTSUPP or -EIO; those of the arguments
 * (no such file, an offset past its end, a device count the table does
 * not have) other errnos.  Added after 0.2.0 (library interface 1).
 */
#define EFORGE_OPEN_ALL_DEVICES		0x1u
#define EFORGE_OPEN_NO_DEVICES		0x2u
int eforge_open_flags(struct eforge_image **out, const char *path,
		      const struct eforge_open_opts *opts, unsigned int flags, char *err,
		      size_t errlen);
/* The same for an image held in memory (size bytes at buf, which must stay
 * valid and unchanged until eforge_close()). */
int eforge_open_mem(struct eforge_image **out, const void *buf, size_t size, char *err,
		    size_t errlen);
void eforge_close(struct eforge_image *img);

/* The last failure of a call on img, in one line. */
const char *eforge_error(const struct eforge_image *img);

/* ---- the image ---- */

struct eforge_super {
	uint32_t block_size;
	uint64_t blocks;		/* of the image itself */
	uint64_t inodes;
	uint64_t root_nid;
	uint64_t packed_nid;		/* 0: none (no fragments) */
	int64_t build_time;		/* seconds since the epoch */
	uint32_t build_time_nsec;
	uint32_t feature_compat, feature_incompat;
	uint16_t compr_algs;		/* bit 1 << EFORGE_ALG_* per algorithm used */
	unsigned int extra_devices;
	uint8_t uuid[16];
	char volume_name[17];		/* NUL-terminated */
};

int eforge_super(struct eforge_image *img, struct eforge_super *sb);

/* The oldest Linux release that mounts the image, and why (the features
 * that need it, "needs Linux 6.1 (fragments)"-style, in why). */
struct eforge_linux {
	unsigned int major, minor;
	char why[256];
};

int eforge_needs_linux(struct eforge_image *img, struct eforge_linux *out);

/* ---- inodes and directories ---- */

/* The nid at path ('/'-separated from the root; "." and ".." as usual). */
int eforge_lookup(struct eforge_image *img, const char *path, uint64_t *nid);

struct eforge_stat {
	uint64_t nid;
	uint32_t mode;			/* type and permission bits, as st_mode */
	uint32_t uid, gid;
	uint32_t nlink;
	uint64_t size;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint32_t rdev_major, rdev_minor;	/* character and block devices */
	unsigned int layout;		/* on-disk data layout (0..4: flat, compressed, inline, compact, chunked) */
};

int eforge_stat(struct eforge_image *img, uint64_t nid, struct eforge_stat *st);

struct eforge_dirent {
	uint64_t nid;
	const char *name;		/* not NUL-terminated */
	size_t name_len;
	unsigned int type;		/* DT_REG, DT_DIR, ... (<dirent.h>) */
};

/* Return 0 to go on; anything else stops the walk and is returned. */
typedef int (*eforge_dirent_fn)(void *arg, const struct eforge_dirent *de);

/* Calls fn for every entry of directory nid except "." and "..", in the
 * image's (byte) order. */
int eforge_readdir(struct eforge_image *img, uint64_t nid, eforge_dirent_fn fn, void *arg);

/* ---- data ---- */

/* Reads up to len bytes of the file at off: the count (short only at the
 * end of the file, 0 past it), or a negative errno. */
ssize_t eforge_read(struct eforge_image *img, uint64_t nid, void *buf, size_t len, uint64_t off);

/* A symlink's target, NUL-terminated, in buf (bufsz bytes: 4096 is enough). */
int eforge_readlink(struct eforge_image *img, uint64_t nid, char *buf, size_t bufsz);

struct eforge_xattr {
	const char *name;		/* the full name ("user.comment"), NUL-terminated */
	const void *value;
	size_t value_size;
};

typedef int (*eforge_xattr_fn)(void *arg, const struct eforge_xattr *x);

/* Calls fn for every xattr of inode nid: shared ones first, then inline. */
int eforge_listxattr(struct eforge_image *img, uint64_t nid, eforge_xattr_fn fn, void *arg);

/* Where a file's bytes are stored (what an OTA generator asks for). */
#define EFORGE_EXTENT_MAPPED		0x01u	/* stored; otherwise a hole (zeros) */
#define EFORGE_EXTENT_COMPRESSED	0x02u	/* [physical, +physical_length) decodes to the extent */
#define EFORGE_EXTENT_INLINE		0x04u	/* in the metadata, right after the inode */
#define EFORGE_EXTENT_FRAGMENT		0x08u	/* physical is an offset in the packed inode's data */
#define EFORGE_EXTENT_METABOX		0x10u	/* physical is an offset in the metabox's data */
#define EFORGE_EXTENT_PARTIAL		0x20u	/* compressed: the extent is the start of the stream */

enum {
	EFORGE_ALG_LZ4 = 0,
	EFORGE_ALG_LZMA = 1,
	EFORGE_ALG_DEFLATE = 2,
	EFORGE_ALG_ZSTD = 3,
};

struct eforge_extent {
	uint64_t logical, length;	/* bytes of the file */
	uint64_t physical;		/* byte address on device (when MAPPED) */
	uint64_t physical_length;	/* bytes stored: length, or the compressed size */
	unsigned int device;		/* 0: the image; n: extra device n */
	unsigned int flags;		/* EFORGE_EXTENT_* */
	unsigned int algorithm;		/* COMPRESSED: EFORGE_ALG_* */
};

typedef int (*eforge_extent_fn)(void *arg, const struct eforge_extent *e);

/* Calls fn for each extent of the file (or directory, or symlink) nid, in
 * logical order, covering [0, size). */
int eforge_extents(struct eforge_image *img, uint64_t nid, eforge_extent_fn fn, void *arg);

/* "lz4", "lzma", "deflate", "zstd", or NULL. */
const char *eforge_algorithm_name(unsigned int alg);

/* The library's version, "0.1.0". */
const char *eforge_version(void);

#ifdef __cplusplus
}
#endif

#endif
