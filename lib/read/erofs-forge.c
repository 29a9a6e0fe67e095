// SPDX-License-Identifier: MIT
/*
 * liberofs-forge's public calls (include/erofs-forge/erofs-forge.h): the
 * read layer behind one opaque handle.  Only these eforge_* symbols are
 * exported from the shared library; everything below stays private, so the
 * reader's structures can change without breaking a program linked to it.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs-forge/erofs-forge.h"
#include "erofs/common/compalg.h"
#include "erofs/common/kernel.h"
#include "erofs/read/handle.h"
#include "erofs/read/lookup.h"

struct eforge_image {
	struct erofs_rd_source src;	/* the file and its devices (not for eforge_open_mem) */
	struct erofs_reader r;
};

static void say(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

/* A handle with nothing open yet; NULL (and err says so) when out of memory. */
static struct eforge_image *new_image(const char *path, char *err, size_t errlen)
{
	struct eforge_image *img = calloc(1, sizeof(*img));

	if (!img)
		say(err, errlen, "out of memory");
	else
		erofs_rd_source_init(&img->src, path);
	return img;
}

/* Whether opts names each of its devices. */
static bool devices_named(const struct eforge_open_opts *opts)
{
	if (!opts || !opts->nr_devices)
		return true;
	if (!opts->devices)
		return false;
	for (unsigned int i = 0; i < opts->nr_devices; i++)
		if (!opts->devices[i])
			return false;
	return true;
}

int eforge_open(struct eforge_image **out, const char *path, const struct eforge_open_opts *opts,
		char *err, size_t errlen)
{
	return eforge_open_flags(out, path, opts, 0, err, errlen);
}

int eforge_open_flags(struct eforge_image **out, const char *path,
		      const struct eforge_open_opts *opts, unsigned int flags, char *err,
		      size_t errlen)
{
	struct eforge_image *img;
	int ret = 0;

	*out = NULL;
	if (!path || !devices_named(opts)) {
		say(err, errlen, "eforge_open: no image path, or a device without its path");
		return -EINVAL;
	}
	if (flags & ~(EFORGE_OPEN_ALL_DEVICES | EFORGE_OPEN_NO_DEVICES) ||
	    (flags & EFORGE_OPEN_ALL_DEVICES && flags & EFORGE_OPEN_NO_DEVICES)) {
		say(err, errlen, "eforge_open_flags: unknown or contradictory flags");
		return -EINVAL;
	}
	img = new_image(path, err, errlen);
	if (!img)
		return -ENOMEM;
	if (flags & EFORGE_OPEN_ALL_DEVICES)
		img->src.flags |= EROFS_RD_ALL_DEVICES;
	if (flags & EFORGE_OPEN_NO_DEVICES)
		img->src.flags |= EROFS_RD_NO_DEVICES;
	if (opts) {
		img->src.offset = opts->offset;
		for (unsigned int i = 0; i < opts->nr_devices && !ret; i++)
			ret = erofs_rd_source_add_device(&img->src, opts->devices[i]);
	}
	if (!ret)
		ret = erofs_rd_source_open(&img->src, &img->r);
	if (ret) {
		/* what failed (an empty device path, the file, the image) is in src.err */
		say(err, errlen, img->src.err);
		erofs_rd_source_close(&img->src);
		free(img);
		return ret < 0 ? ret : -EIO;
	}
	*out = img;
	return 0;
}

/* The layers above the reader (check, dump, fsops) behind the handle. */
struct erofs_reader *erofs_forge_reader(struct eforge_image *img)
{
	return &img->r;
}

const struct erofs_rd_source *erofs_forge_source(const struct eforge_image *img)
{
	return &img->src;
}

int eforge_open_mem(struct eforge_image **out, const void *buf, size_t size, char *err,
		    size_t errlen)
{
	struct eforge_image *img;
	int ret;

	*out = NULL;
	if (!buf && size) {
		say(err, errlen, "eforge_open_mem: no buffer");
		return -EINVAL;
	}
	img = new_image(NULL, err, errlen);
	if (!img)
		return -ENOMEM;
	ret = erofs_reader_open_mem(&img->r, buf, size);
	if (ret) {
		say(err, errlen, erofs_reader_error(&img->r));
		free(img);
		return ret;
	}
	*out = img;
	return 0;
}

void eforge_close(struct eforge_image *img)
{
	if (!img)
		return;
	erofs_reader_close(&img->r);
	erofs_rd_source_close(&img->src);
	free(img);
}

const char *eforge_error(const struct eforge_image *img)
{
	return img ? erofs_reader_error(&img->r) : "no image";
}

int eforge_super(struct eforge_image *img, struct eforge_super *out)
{
	const struct erofs_super *sb = &img->r.sb;

	memset(out, 0, sizeof(*out));
	out->block_size = img->r.blksz;
	out->blocks = img->r.blocks;
	out->inodes = sb->inos;
	out->root_nid = img->r.root_nid;
	if (sb->feature_incompat & EROFS_INCOMPAT_FRAGMENTS)
		out->packed_nid = sb->packed_nid;
	out->build_time = img->r.epoch;
	out->build_time_nsec = sb->build_time_nsec;
	out->feature_compat = sb->feature_compat;
	out->feature_incompat = sb->feature_incompat;
	out->compr_algs = img->r.available_compr_algs;
	out->extra_devices = img->r.nr_devs;
	memcpy(out->uuid, sb->uuid, sizeof(out->uuid));
	memcpy(out->volume_name, sb->volume_name, sizeof(sb->volume_name));
	return 0;
}

int eforge_needs_linux(struct eforge_image *img, struct eforge_linux *out)
{
	struct erofs_kneeds needs;
	struct erofs_kversion v;

	erofs_kneeds_from_super(&img->r.sb, img->r.available_compr_algs, &needs);
	v = erofs_kneeds_version(&needs);
	out->major = v.major;
	out->minor = v.minor;
	erofs_kneeds_describe(&needs, out->why, sizeof(out->why));
	return 0;
}

int eforge_lookup(struct eforge_image *img, const char *path, uint64_t *nid)
{
	char shown[512];
	uint64_t parent;
	int err;

	if (!path)
		return erofs_reader_fail(&img->r, -EINVAL, "eforge_lookup: no path");
	err = erofs_lookup_path(&img->r, path, nid, &parent);
	/* the reader names what it found wrong; a path that is not there is ours to say */
	if (err == -ENOENT || err == -ENOTDIR)
		return erofs_reader_fail(&img->r, err, "%s: %s",
					 erofs_escape(shown, sizeof(shown), path, strlen(path)),
					 err == -ENOENT ? "no such file or directory" : "not a directory");
	return err;
}

int eforge_stat(struct eforge_image *img, uint64_t nid, struct eforge_stat *st)
{
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(&img->r, nid, &vi);

	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->nid = nid;
	st->mode = vi.di.mode;
	st->uid = vi.di.uid;
	st->gid = vi.di.gid;
	st->nlink = vi.di.nlink;
	st->size = vi.size;
	st->mtime = vi.mtime;
	st->mtime_nsec = vi.mtime_nsec;
	st->layout = vi.layout;
	if (S_ISCHR(vi.di.mode) || S_ISBLK(vi.di.mode))
		erofs_decode_rdev(vi.di.u, &st->rdev_major, &st->rdev_minor);
	return 0;
}

struct dir_walk {
	eforge_dirent_fn fn;
	void *arg;
};

static int one_dirent(void *arg, const struct erofs_rd_dentry *de)
{
	static const unsigned char dtype[EROFS_FT_MAX] = {
		[EROFS_FT_UNKNOWN] = DT_UNKNOWN, [EROFS_FT_REG_FILE] = DT_REG,
		[EROFS_FT_DIR] = DT_DIR, [EROFS_FT_CHRDEV] = DT_CHR, [EROFS_FT_BLKDEV] = DT_BLK,
		[EROFS_FT_FIFO] = DT_FIFO, [EROFS_FT_SOCK] = DT_SOCK, [EROFS_FT_SYMLINK] = DT_LNK,
	};
	const struct dir_walk *w = arg;
	struct eforge_dirent e = {
		.nid = de->nid, .name = de->name, .name_len = de->namelen,
		.type = de->file_type < EROFS_FT_MAX ? dtype[de->file_type] : DT_UNKNOWN,
	};

	return w->fn(w->arg, &e);
}

int eforge_readdir(struct eforge_image *img, uint64_t nid, eforge_dirent_fn fn, void *arg)
{
	struct dir_walk w = { fn, arg };
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(&img->r, nid, &vi);

	if (err)
		return err;
	if (!S_ISDIR(vi.di.mode))
		return erofs_reader_fail(&img->r, -ENOTDIR, "nid %" PRIu64 ": not a directory", nid);
	return erofs_dir_iterate(&img->r, &vi, EROFS_NID_UNKNOWN, one_dirent, &w);
}

ssize_t eforge_read(struct eforge_image *img, uint64_t nid, void *buf, size_t len, uint64_t off)
{
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(&img->r, nid, &vi);

	if (err)
		return err;
	if (!S_ISREG(vi.di.mode) && !S_ISLNK(vi.di.mode) && !S_ISDIR(vi.di.mode))
		return erofs_reader_fail(&img->r, -EINVAL, "nid %" PRIu64 ": no data to read", nid);
	if (off >= vi.size)
		return 0;
	if (len > vi.size - off)
		len = (size_t)(vi.size - off);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	err = erofs_read_data(&img->r, &vi, buf, len, off);
	return err ? err : (ssize_t)len;
}

int eforge_readlink(struct eforge_image *img, uint64_t nid, char *buf, size_t bufsz)
{
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(&img->r, nid, &vi);

	return err ? err : erofs_read_symlink(&img->r, &vi, buf, bufsz);
}

struct xattr_walk {
	eforge_xattr_fn fn;
	void *arg;
};

static int one_xattr(void *arg, const struct erofs_rd_xattr *x)
{
	const struct xattr_walk *w = arg;
	const char *prefix = erofs_rd_xattr_prefix(x->index);
	char name[64 + EROFS_NAME_LEN + 1];
	struct eforge_xattr e = { .name = name, .value = x->value, .value_size = x->value_size };

	snprintf(name, sizeof(name), "%s%.*s", prefix ? prefix : "", (int)x->name_len, x->name);
	return w->fn(w->arg, &e);
}

int eforge_listxattr(struct eforge_image *img, uint64_t nid, eforge_xattr_fn fn, void *arg)
{
	struct xattr_walk w = { fn, arg };
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(&img->r, nid, &vi);

	return err ? err : erofs_xattr_iterate(&img->r, &vi, one_xattr, &w);
}

/* The reader's mapping flags and the public ones they become. */
static const struct {
	unsigned int map, api;
} extent_flags[] = {
	{ EROFS_MAP_MAPPED, EFORGE_EXTENT_MAPPED },
	{ EROFS_MAP_ENCODED, EFORGE_EXTENT_COMPRESSED },
	{ EROFS_MAP_META, EFORGE_EXTENT_INLINE },
	{ EROFS_MAP_FRAGMENT, EFORGE_EXTENT_FRAGMENT },
	{ EROFS_MAP_MBOX, EFORGE_EXTENT_METABOX },
	{ EROFS_MAP_PARTIAL, EFORGE_EXTENT_PARTIAL },
};

int eforge_extents(struct eforge_image *img, uint64_t nid, eforge_extent_fn fn, void *arg)
{
	struct erofs_rd_inode vi;
	uint64_t la = 0;
	int err = erofs_read_inode(&img->r, nid, &vi);

	if (err)
		return err;
	if (!S_ISREG(vi.di.mode) && !S_ISLNK(vi.di.mode) && !S_ISDIR(vi.di.mode))
		return erofs_reader_fail(&img->r, -EINVAL, "nid %" PRIu64 ": no data to map", nid);
	while (la < vi.size) {
		struct erofs_map map;
		struct eforge_extent e;

		err = erofs_map_blocks(&img->r, &vi, la, &map);
		if (err)
			return err;
		e = (struct eforge_extent){
			.logical = map.la, .length = map.llen, .physical = map.pa,
			.physical_length = map.plen, .device = map.device, .algorithm = map.alg,
		};
		for (size_t i = 0; i < sizeof(extent_flags) / sizeof(extent_flags[0]); i++)
			if (map.flags & extent_flags[i].map)
				e.flags |= extent_flags[i].api;
		if (!(map.flags & EROFS_MAP_MAPPED))
			e.physical = e.physical_length = 0;
		err = fn(arg, &e);
		if (err)
			return err;
		/* the mapping covers la and ends at or before i_size (erofs_map_blocks()) */
		la = map.la + map.llen;
	}
	return 0;
}

const char *eforge_algorithm_name(unsigned int alg)
{
	return alg <= EFORGE_ALG_ZSTD ? erofs_compr_alg_name(alg) : NULL;
}

const char *eforge_version(void)
{
	return PACKAGE_VERSION;
}
