// SPDX-License-Identifier: MIT
/*
 * erofsfuse: mounts an EROFS image read-only through FUSE (libfuse3's
 * low-level API), for machines where the kernel module cannot be loaded.
 *
 *   erofsfuse [OPTIONS] IMAGE MOUNTPOINT
 *
 * Options are spelled as in erofs-utils' erofsfuse: --offset=#,
 * --dbglevel=#, --device=PATH (an extra device of a multi-device image,
 * once per slot of its device table, in order), -h/--help, -V/--version,
 * and libfuse's own (-o opt,[opt...], -f, -d, -s).  Everything the kernel asks is answered by lib/fsops/fsops.c; a
 * request the image cannot answer (corrupt, or a feature this reader does
 * not decode) gets EIO, and the reason is printed at --dbglevel 2 and up.
 * Requests are served by one thread: the reader is not thread-safe, and
 * the page cache does most of the work anyway (-s is accepted, and is
 * what happens without it too).
 */
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <fuse_lowlevel.h>
#include <fuse_opt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs-forge/erofs-forge.h"
#include "erofs/fsops/fsops.h"

/* the image never changes under us: the kernel may cache for good */
#define FOREVER		DBL_MAX

struct config {
	const char *image;
	unsigned long offset;
	unsigned int dbglevel;
	const char **devices;		/* --device=PATH, in order */
	unsigned int nr_devices;
	const char *bad_device;		/* why a --device= was refused */
	int help, version;
};

struct mount_ctx {
	struct erofs_fs fs;
	unsigned int dbglevel;
};

static struct mount_ctx *ctx_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* errno for FUSE; the reason on stderr when asked for */
static void reply_error(fuse_req_t req, int err, const char *op, fuse_ino_t ino)
{
	struct mount_ctx *m = ctx_of(req);

	if (err == -EIO && m->dbglevel >= 2)
		fprintf(stderr, "erofsfuse: %s of inode %" PRIu64 ": %s\n", op, (uint64_t)ino,
			erofs_fs_error(&m->fs));
	fuse_reply_err(req, -err);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* ACL xattrs are handed over as stored; the kernel applies them */
	if (conn->capable & FUSE_CAP_POSIX_ACL)
		conn->want |= FUSE_CAP_POSIX_ACL;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	uint64_t ino;
	int err;

	memset(&e, 0, sizeof(e));
	err = erofs_fs_lookup(&ctx_of(req)->fs, parent, name, strlen(name), &ino, &e.attr);
	if (err) {
		reply_error(req, err, "lookup", parent);
		return;
	}
	e.ino = ino;
	e.attr_timeout = FOREVER;
	e.entry_timeout = FOREVER;
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err = erofs_fs_getattr(&ctx_of(req)->fs, ino, &st);

	if (err)
		reply_error(req, err, "getattr", ino);
	else
		fuse_reply_attr(req, &st, FOREVER);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char target[EROFS_SYMLINK_MAXLEN];
	ssize_t n = erofs_fs_readlink(&ctx_of(req)->fs, ino, target, sizeof(target));

	if (n < 0)
		reply_error(req, (int)n, "readlink", ino);
	else
		fuse_reply_readlink(req, target);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int err;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	err = erofs_fs_open(&ctx_of(req)->fs, ino);
	if (err) {
		reply_error(req, err, "open", ino);
		return;
	}
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	void *buf;
	ssize_t n;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = erofs_fs_read(&ctx_of(req)->fs, ino, buf, size, (uint64_t)off);
	if (n < 0)
		reply_error(req, (int)n, "read", ino);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err = erofs_fs_getattr(&ctx_of(req)->fs, ino, &st);

	if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (err) {
		reply_error(req, err, "opendir", ino);
		return;
	}
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

struct dir_buf {
	fuse_req_t req;
	char *buf;
	size_t size, used;
};

static int add_entry(void *arg, const char *name, size_t namelen, uint64_t ino, mode_t type,
		     uint64_t next_cookie)
{
	struct dir_buf *d = arg;
	char cname[EROFS_NAME_LEN + 1];
	struct stat st;
	size_t need;

	memcpy(cname, name, namelen);
	cname[namelen] = '\0';
	memset(&st, 0, sizeof(st));
	st.st_ino = ino;
	st.st_mode = type;
	need = fuse_add_direntry(d->req, d->buf + d->used, d->size - d->used, cname, &st,
				 (off_t)next_cookie);
	if (need > d->size - d->used)
		return 1;	/* full: the kernel asks again from the last cookie */
	d->used += need;
	return 0;
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dir_buf d = { .req = req, .size = size };
	int err;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	d.buf = malloc(size ? size : 1);
	if (!d.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	err = erofs_fs_readdir(&ctx_of(req)->fs, ino, (uint64_t)off, add_entry, &d);
	if (err)
		reply_error(req, err, "readdir", ino);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;

	erofs_fs_statfs(&ctx_of(req)->fs, &st);
	fuse_reply_statfs(req, &st);
}

/* size 0: the size needed (fuse_reply_xattr); else the bytes */
static void reply_xattr_bytes(fuse_req_t req, ssize_t n, const void *buf, size_t size,
			      const char *op, fuse_ino_t ino)
{
	if (n < 0)
		reply_error(req, (int)n, op, ino);
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	void *buf = malloc(size ? size : 1);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = erofs_fs_getxattr(&ctx_of(req)->fs, ino, name, buf, size);
	reply_xattr_bytes(req, n, buf, size, "getxattr", ino);
	free(buf);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = malloc(size ? size : 1);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = erofs_fs_listxattr(&ctx_of(req)->fs, ino, buf, size);
	reply_xattr_bytes(req, n, buf, size, "listxattr", ino);
	free(buf);
}

static const struct fuse_lowlevel_ops erofs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.open = op_open,
	.read = op_read,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
};

/* ------------------------------------------------------------------ */
/* options                                                             */

enum { KEY_DEVICE = 1, KEY_HELP, KEY_VERSION };

#define CFG(t, p) { t, offsetof(struct config, p), 1 }
static const struct fuse_opt option_spec[] = {
	CFG("--offset=%lu", offset),
	CFG("--dbglevel=%u", dbglevel),
	FUSE_OPT_KEY("--device=", KEY_DEVICE),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct config *cfg = data;

	switch (key) {
	case KEY_DEVICE: {
		const char **v;

		arg += strlen("--device=");
		if (!*arg) {
			cfg->bad_device = "--device= needs a path";
			return 0;
		}
		v = realloc(cfg->devices, (cfg->nr_devices + 1) * sizeof(*v));
		if (!v) {
			cfg->bad_device = "out of memory";
			return 0;
		}
		v[cfg->nr_devices++] = arg;	/* argv's: lives as long as we do */
		cfg->devices = v;
		return 0;
	}
	case KEY_HELP:
		cfg->help = 1;
		return 0;
	case KEY_VERSION:
		cfg->version = 1;
		return 0;
	case FUSE_OPT_KEY_NONOPT:
		if (!cfg->image) {
			cfg->image = arg;
			return 0;
		}
		return 1;	/* the mount point, for fuse_parse_cmdline() */
	default:
		return 1;
	}
}

static void usage(const char *prog)
{
	printf("usage: %s [options] IMAGE MOUNTPOINT\n\n"
	       "Options:\n"
	       "    --offset=#             skip # bytes at the beginning of IMAGE\n"
	       "    --dbglevel=#           message level (0..9, default 2: reasons of EIO)\n"
	       "    --device=#             specify an extra device to be used together\n"
	       "                           (once per extra device, in the device table's order)\n"
	       "    -h, --help             display this help and exit\n"
	       "    -V, --version          display the version and exit\n\n", prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

/*
 * The image from --offset on, and every extra device of its table: a
 * mount missing a device would fail every read of its data, so all of
 * them, or the image is refused before anything is mounted.
 */
static struct eforge_image *open_image(const struct config *cfg)
{
	const struct eforge_open_opts o = {
		.offset = cfg->offset, .devices = cfg->devices, .nr_devices = cfg->nr_devices,
	};
	struct eforge_image *img;
	char err[8192];

	if (eforge_open_flags(&img, cfg->image, &o, EFORGE_OPEN_ALL_DEVICES, err, sizeof(err))) {
		fprintf(stderr, "erofsfuse: %s\n", err);
		return NULL;
	}
	return img;
}

/*
 * As the kernel at mount: an image whose root inode cannot be read, or is
 * not a directory, is refused before anything is mounted (a mount would
 * answer every access with EIO).
 */
static bool root_usable(struct erofs_fs *fs, const char *image)
{
	struct stat st;
	int err = erofs_fs_getattr(fs, EROFS_FS_ROOT_INO, &st);

	if (err == -EIO) {
		fprintf(stderr, "erofsfuse: %s: the root directory cannot be read: %s\n", image,
			erofs_fs_error(fs));
		return false;
	}
	if (err) {
		fprintf(stderr, "erofsfuse: %s: the root directory cannot be read: %s\n", image,
			strerror(-err));
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "erofsfuse: %s: the root inode (nid %" PRIu64 ") is not a directory (mode 0%o)\n",
			image, fs->r->root_nid, (unsigned int)st.st_mode);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	struct config cfg = { .dbglevel = 2 };
	struct mount_ctx m;
	struct eforge_image *img = NULL;
	struct fuse_session *se;
	int ret = 1;

	/* as erofs-utils' erofsfuse: the image is opened (and refused, if it
	 * must be) before the mount point is looked at */
	if (fuse_opt_parse(&args, &cfg, option_spec, opt_proc)) {
		fprintf(stderr, "erofsfuse: bad options (see --help)\n");
		goto out_args;
	}
	if (cfg.help) {
		usage(argv[0]);
		ret = 0;
		goto out_args;
	}
	if (cfg.version) {
		printf("erofsfuse (erofs-forge) %s\n", PACKAGE_VERSION);
		fuse_lowlevel_version();
		ret = 0;
		goto out_args;
	}
	if (cfg.bad_device) {
		fprintf(stderr, "erofsfuse: %s\n", cfg.bad_device);
		goto out_args;
	}
	if (!cfg.image) {
		fprintf(stderr, "erofsfuse: need an IMAGE and a MOUNTPOINT (see --help)\n");
		goto out_args;
	}
	img = open_image(&cfg);
	if (!img)
		goto out_args;
	if (erofs_fs_init_image(&m.fs, img, 0)) {
		fprintf(stderr, "erofsfuse: out of memory\n");
		goto out_reader;
	}
	if (!root_usable(&m.fs, cfg.image))
		goto out_fs;
	if (fuse_parse_cmdline(&args, &opts))
		goto out_fs;
	if (!opts.mountpoint) {
		fprintf(stderr, "erofsfuse: need an IMAGE and a MOUNTPOINT (see --help)\n");
		goto out_fs;
	}
	if (opts.debug && cfg.dbglevel < 7)
		cfg.dbglevel = 7;
	m.dbglevel = cfg.dbglevel;
	/* read-only, named after the image, kernel checks of modes and ACLs */
	if (fuse_opt_add_arg(&args, "-oro,default_permissions,subtype=erofs") ||
	    fuse_opt_add_arg(&args, "-ofsname=erofsfuse"))
		goto out_fs;
	se = fuse_session_new(&args, &erofs_ops, sizeof(erofs_ops), &m);
	if (!se)
		goto out_fs;
	if (fuse_set_signal_handlers(se))
		goto out_session;
	if (fuse_session_mount(se, opts.mountpoint))
		goto out_signals;
	if (fuse_daemonize(opts.foreground))
		goto out_unmount;
	ret = fuse_session_loop(se) ? 1 : 0;
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_fs:
	erofs_fs_close(&m.fs);
out_reader:
	eforge_close(img);
out_args:
	free(cfg.devices);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
