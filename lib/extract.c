// SPDX-License-Identifier: MIT
/*
 * fsck.erofs --extract: recreate an image's tree below a target directory.
 * See include/erofs/extract.h for the safety contract.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "erofs/diag.h"
#include "erofs/extract.h"

#define COPY_BUFSZ	(1u << 20)
#define SPARSE_UNIT	4096u
#define MSGPATH		512

static const char *show(char *buf, const struct erofs_xpath *path)
{
	buf[0] = '\0';
	path->show(path, buf, MSGPATH);
	return buf;
}

static void show_str(const struct erofs_xpath *self, char *buf, size_t len)
{
	const char *path = ((const struct erofs_xpath_str *)self)->path;

	erofs_escape(buf, len, path, strlen(path));
}

const struct erofs_xpath *erofs_xpath_str(struct erofs_xpath_str *p, const char *path)
{
	p->base.show = show_str;
	p->path = path;
	return &p->base;
}

static int xerr(struct erofs_extractor *x, const struct erofs_xpath *path, int err,
		const char *what)
{
	char p[MSGPATH];

	erofs_err("%s: %s: %s", show(p, path), what, strerror(-err));
	x->errors++;
	return err;
}

static void xwarn(struct erofs_extractor *x, const struct erofs_xpath *path, int err,
		  const char *what)
{
	char p[MSGPATH];

	erofs_warn("%s: %s: %s", show(p, path), what, strerror(-err));
	x->warnings++;
}

static int rerr(struct erofs_extractor *x, const struct erofs_xpath *path,
		const struct erofs_rd_inode *vi, int err)
{
	char p[MSGPATH];

	erofs_err("%s (nid %" PRIu64 "): %s", show(p, path), vi->nid,
		  erofs_reader_error(x->r));
	x->errors++;
	return err;
}

static bool valid_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int erofs_extract_open(struct erofs_extractor *x, struct erofs_reader *r,
		       const char *dir, const struct erofs_extract_opts *o)
{
	struct stat st, rootst;
	mode_t mask;
	DIR *d;
	int fd, dupfd;

	memset(x, 0, sizeof(*x));
	x->r = r;
	x->o = *o;
	x->rootfd = -1;
	mask = umask(0);
	umask(mask);
	x->umask = mask;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		erofs_err("cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		erofs_err("cannot open %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || stat("/", &rootst)) {
		erofs_err("cannot stat %s: %s", dir, strerror(errno));
		close(fd);
		return -EIO;
	}
	if (st.st_dev == rootst.st_dev && st.st_ino == rootst.st_ino && !o->force) {
		erofs_err("refusing to extract into / without --force");
		close(fd);
		return -EPERM;
	}
	if (!o->force && !o->overwrite) {
		struct dirent *de;
		bool empty = true;

		dupfd = dup(fd);
		d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
		if (!d) {
			erofs_err("cannot read %s: %s", dir, strerror(errno));
			if (dupfd >= 0)
				close(dupfd);
			close(fd);
			return -EIO;
		}
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				empty = false;
				break;
			}
		}
		closedir(d);
		if (!empty) {
			erofs_err("%s is not empty: use --overwrite to replace existing files or --force to extract into it anyway",
				  dir);
			close(fd);
			return -ENOTEMPTY;
		}
	}
	x->buf = malloc(COPY_BUFSZ);
	if (!x->buf) {
		close(fd);
		return -ENOMEM;
	}
	x->bufsz = COPY_BUFSZ;
	x->rootfd = fd;
	return 0;
}

void erofs_extract_close(struct erofs_extractor *x)
{
	if (x->rootfd >= 0)
		close(x->rootfd);
	x->rootfd = -1;
	free(x->buf);
	x->buf = NULL;
}

int erofs_extract_root(struct erofs_extractor *x)
{
	int fd = fcntl(x->rootfd, F_DUPFD_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

/* Removes an existing entry that is in the way (overwrite mode only). */
static int make_room(struct erofs_extractor *x, int parentfd, const char *name,
		     const struct erofs_xpath *path)
{
	struct stat st;

	if (!x->o.overwrite)
		return xerr(x, path, -EEXIST, "already exists (use --overwrite to replace it)");
	if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return xerr(x, path, -errno, "cannot stat the existing entry");
	if (unlinkat(parentfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0))
		return xerr(x, path, -errno, "cannot remove the existing entry");
	return 0;
}

static mode_t final_mode(const struct erofs_extractor *x, const struct erofs_rd_inode *vi)
{
	if (x->o.preserve_perms)
		return vi->di.mode & 07777;
	return vi->di.mode & 0777 & ~x->umask;
}

static void fill_times(const struct erofs_rd_inode *vi, struct timespec ts[2])
{
	ts[0].tv_sec = (time_t)vi->mtime;
	ts[0].tv_nsec = vi->mtime_nsec;
	ts[1] = ts[0];
}

/* ---- xattrs ---- */

struct xattr_ctx {
	struct erofs_extractor *x;
	const struct erofs_xpath *path;
	int fd;			/* >= 0: set through the descriptor */
	int parentfd;		/* otherwise: lsetxattr on parentfd/name */
	const char *name;
	int err;
};

static int set_one_xattr(void *arg, const struct erofs_rd_xattr *xa)
{
	struct xattr_ctx *c = arg;
	const char *prefix = erofs_rd_xattr_prefix(xa->index);
	char key[XATTR_NAME_MAX + 64], what[XATTR_NAME_MAX + 128], p[MSGPATH];
	size_t plen = strlen(prefix);
	bool must;
	int ret;

	if (xa->index == EROFS_XATTR_INDEX_LUSTRE) {
		erofs_warn("%s: lustre xattr not restored", show(p, c->path));
		c->x->warnings++;
		return 0;
	}
	memcpy(key, prefix, plen);
	memcpy(key + plen, xa->name, xa->name_len);
	key[plen + xa->name_len] = '\0';

	if (c->fd >= 0) {
		ret = fsetxattr(c->fd, key, xa->value, xa->value_size, 0);
	} else {
		char proc[64 + 256];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d/%s", c->parentfd, c->name);
		ret = lsetxattr(proc, key, xa->value, xa->value_size, 0);
	}
	if (!ret)
		return 0;
	ret = -errno;
	erofs_escape(what, sizeof(what), key, strlen(key));
	snprintf(what + strlen(what), sizeof(what) - strlen(what), ": cannot set xattr");
	/* user. and trusted. must come back; labels and ACLs depend on the host */
	must = xa->index == EROFS_XATTR_INDEX_USER || xa->index == EROFS_XATTR_INDEX_TRUSTED ||
	       ((xa->index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
		 xa->index == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT) && ret != -EOPNOTSUPP);
	if (must) {
		xerr(c->x, c->path, ret, what);
		c->err = ret;
	} else {
		xwarn(c->x, c->path, ret, what);
	}
	return 0;
}

static int apply_xattrs(struct erofs_extractor *x, const struct erofs_xpath *path,
			const struct erofs_rd_inode *vi, int fd, int parentfd,
			const char *name)
{
	struct xattr_ctx c = { x, path, fd, parentfd, name, 0 };
	int err = erofs_xattr_iterate(x->r, vi, set_one_xattr, &c);

	if (err)
		return rerr(x, path, vi, err);
	return c.err;
}

/* Owner, xattrs, mode, times: on fd if >= 0, else on parentfd/name (no follow). */
static int apply_meta(struct erofs_extractor *x, const struct erofs_xpath *path,
		      const struct erofs_rd_inode *vi, int fd, int parentfd,
		      const char *name)
{
	struct timespec ts[2];
	int err = 0, ret;
	bool lnk = S_ISLNK(vi->di.mode);

	if (x->o.preserve_owner) {
		ret = fd >= 0 ? fchown(fd, vi->di.uid, vi->di.gid) :
			fchownat(parentfd, name, vi->di.uid, vi->di.gid, AT_SYMLINK_NOFOLLOW);
		if (ret)
			err = xerr(x, path, -errno, "cannot set owner");
	}
	ret = apply_xattrs(x, path, vi, fd, parentfd, name);
	if (ret && !err)
		err = ret;
	if (!lnk) {
		mode_t m = final_mode(x, vi);

		if (fd >= 0) {
			ret = fchmod(fd, m);
		} else {
			ret = fchmodat(parentfd, name, m, AT_SYMLINK_NOFOLLOW);
			if (ret && (errno == ENOTSUP || errno == EOPNOTSUPP))
				ret = fchmodat(parentfd, name, m, 0);
		}
		if (ret)
			err = xerr(x, path, -errno, "cannot set mode");
	}
	fill_times(vi, ts);
	ret = fd >= 0 ? futimens(fd, ts) :
		utimensat(parentfd, name, ts, AT_SYMLINK_NOFOLLOW);
	if (ret)
		err = xerr(x, path, -errno, "cannot set modification time");
	return err;
}

/* ---- directories ---- */

int erofs_extract_dir_begin(struct erofs_extractor *x, int parentfd,
			    const char *name, const struct erofs_xpath *path)
{
	int fd;

	if (!valid_name(name))
		return xerr(x, path, -EINVAL, "refusing unsafe name");
	if (mkdirat(parentfd, name, 0700)) {
		if (errno != EEXIST)
			return xerr(x, path, -errno, "cannot create directory");
		fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			return fd;	/* an existing real directory: merge into it */
		if (errno != ENOTDIR && errno != ELOOP)
			return xerr(x, path, -errno, "cannot open existing directory");
		if (make_room(x, parentfd, name, path))
			return -EEXIST;
		if (mkdirat(parentfd, name, 0700))
			return xerr(x, path, -errno, "cannot create directory");
	}
	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return xerr(x, path, -errno, "cannot open new directory");
	return fd;
}

int erofs_extract_dir_end(struct erofs_extractor *x, int dirfd, const struct erofs_xpath *path,
			  const struct erofs_rd_inode *vi)
{
	int err = apply_meta(x, path, vi, dirfd, -1, NULL);

	close(dirfd);
	return err;
}

/* ---- regular files ---- */

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Writes buf at file offset off, leaving all-zero aligned units as holes. */
static int write_sparse(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	size_t pos = 0;

	while (pos < len) {
		size_t unit = SPARSE_UNIT - (size_t)((off + pos) % SPARSE_UNIT);
		size_t start;

		if (unit > len - pos)
			unit = len - pos;
		if (all_zero(buf + pos, unit)) {
			pos += unit;
			continue;
		}
		/* gather the run of non-zero units */
		start = pos;
		pos += unit;
		while (pos < len) {
			unit = SPARSE_UNIT - (size_t)((off + pos) % SPARSE_UNIT);
			if (unit > len - pos)
				unit = len - pos;
			if (all_zero(buf + pos, unit))
				break;
			pos += unit;
		}
		while (start < pos) {
			ssize_t n = pwrite(fd, buf + start, pos - start, (off_t)(off + start));

			if (n < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			start += (size_t)n;
		}
	}
	return 0;
}

static int copy_data(struct erofs_extractor *x, int fd, const struct erofs_xpath *path,
		     const struct erofs_rd_inode *vi)
{
	uint64_t off = 0;
	int err;

	while (off < vi->size) {
		struct erofs_map map;
		uint64_t end;

		err = erofs_map_blocks(x->r, vi, off, &map);
		if (err)
			return rerr(x, path, vi, err);
		end = map.la + map.llen;
		if (!(map.flags & EROFS_MAP_MAPPED)) {
			off = end;	/* a hole: leave it unwritten */
			continue;
		}
		if (map.flags & EROFS_MAP_ENCODED) {
			/* a compressed extent (at most 12 MiB) is decoded whole */
			const uint8_t *dec;

			err = erofs_decode_extent(x->r, vi, &map, &dec);
			if (err)
				return rerr(x, path, vi, err);
			err = write_sparse(fd, dec + (off - map.la), (size_t)(end - off), off);
			if (err)
				return xerr(x, path, err, "write failed");
			off = end;
			continue;
		}
		while (off < end) {
			size_t n = end - off < x->bufsz ? (size_t)(end - off) : x->bufsz;

			err = erofs_read_mapped(x->r, &map, x->buf, n, off);
			if (err)
				return rerr(x, path, vi, err);
			err = write_sparse(fd, x->buf, n, off);
			if (err)
				return xerr(x, path, err, "write failed");
			off += n;
		}
	}
	if (ftruncate(fd, (off_t)vi->size))
		return xerr(x, path, -errno, "cannot set the file size");
	return 0;
}

static int extract_file(struct erofs_extractor *x, int parentfd, const char *name,
			const struct erofs_xpath *path, const struct erofs_rd_inode *vi)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	char p[MSGPATH];
	int fd, err, err2;

	fd = openat(parentfd, name, flags, 0600);
	if (fd < 0 && errno == EEXIST) {
		if (make_room(x, parentfd, name, path))
			return -EEXIST;
		fd = openat(parentfd, name, flags, 0600);
	}
	if (fd < 0)
		return xerr(x, path, -errno, "cannot create file");
	err = copy_data(x, fd, path, vi);
	if (err) {
		/* no empty or cut-short copy is left behind to pass for the file */
		close(fd);
		if (unlinkat(parentfd, name, 0))
			return xerr(x, path, -errno, "cannot remove the partly extracted file");
		erofs_note("%s: not extracted (the partial file was removed)", show(p, path));
		return err;
	}
	err2 = apply_meta(x, path, vi, fd, -1, NULL);
	if (close(fd) && !err)
		err = xerr(x, path, -errno, "close failed");
	return err ? err : err2;
}

/* ---- the rest ---- */

static int extract_symlink(struct erofs_extractor *x, int parentfd, const char *name,
			   const struct erofs_xpath *path, const struct erofs_rd_inode *vi)
{
	char target[EROFS_SYMLINK_MAXLEN + 1];
	int err = erofs_read_symlink(x->r, vi, target, sizeof(target));

	if (err)
		return rerr(x, path, vi, err);
	if (symlinkat(target, parentfd, name)) {
		if (errno != EEXIST)
			return xerr(x, path, -errno, "cannot create symlink");
		if (make_room(x, parentfd, name, path))
			return -EEXIST;
		if (symlinkat(target, parentfd, name))
			return xerr(x, path, -errno, "cannot create symlink");
	}
	return apply_meta(x, path, vi, -1, parentfd, name);
}

static int extract_special(struct erofs_extractor *x, int parentfd, const char *name,
			   const struct erofs_xpath *path, const struct erofs_rd_inode *vi)
{
	mode_t type = vi->di.mode & S_IFMT;
	dev_t dev = 0;

	if (S_ISCHR(vi->di.mode) || S_ISBLK(vi->di.mode)) {
		uint32_t major, minor;

		erofs_decode_rdev(vi->di.u, &major, &minor);
		dev = makedev(major, minor);
	}
	if (mknodat(parentfd, name, type | 0600, dev)) {
		if (errno == EEXIST) {
			if (make_room(x, parentfd, name, path))
				return -EEXIST;
			if (!mknodat(parentfd, name, type | 0600, dev))
				goto made;
		}
		if (errno == EPERM && (S_ISCHR(vi->di.mode) || S_ISBLK(vi->di.mode)) &&
		    geteuid() != 0) {
			xwarn(x, path, -EPERM, "device node not created");
			return 0;
		}
		return xerr(x, path, -errno, "cannot create special file");
	}
made:
	return apply_meta(x, path, vi, -1, parentfd, name);
}

int erofs_extract_node(struct erofs_extractor *x, int parentfd, const char *name,
		       const struct erofs_xpath *path, const struct erofs_rd_inode *vi)
{
	if (!valid_name(name))
		return xerr(x, path, -EINVAL, "refusing unsafe name");
	if (S_ISREG(vi->di.mode))
		return extract_file(x, parentfd, name, path, vi);
	if (S_ISLNK(vi->di.mode))
		return extract_symlink(x, parentfd, name, path, vi);
	if (S_ISDIR(vi->di.mode))
		return xerr(x, path, -EISDIR, "internal error: directory as a node");
	return extract_special(x, parentfd, name, path, vi);
}

int erofs_extract_reopen_dir(struct erofs_extractor *x, int dirfd, const char *name)
{
	int fd;

	if (!valid_name(name))
		return -EINVAL;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int erofs_extract_reopen_parent(struct erofs_extractor *x, int dirfd, uint64_t dev, uint64_t ino)
{
	struct stat st;
	int fd = openat(dirfd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_dev != dev || st.st_ino != ino) {
		close(fd);
		return -ESTALE;	/* moved under us: not the directory we made */
	}
	return fd;
}

int erofs_extract_hardlink(struct erofs_extractor *x, int parentfd, const char *name,
			   const struct erofs_xpath *path, int tdirfd, const char *tname)
{
	if (!valid_name(name) || !valid_name(tname))
		return xerr(x, path, -EINVAL, "refusing unsafe name");
	if (!linkat(tdirfd, tname, parentfd, name, 0))
		return 0;
	if (errno != EEXIST)
		return xerr(x, path, -errno, "cannot create hard link");
	if (make_room(x, parentfd, name, path))
		return -EEXIST;
	if (linkat(tdirfd, tname, parentfd, name, 0))
		return xerr(x, path, -errno, "cannot create hard link");
	return 0;
}
