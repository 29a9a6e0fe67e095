// SPDX-License-Identifier: MIT
/*
 * fsck.erofs --extract: recreate an image's tree below a target directory.
 * See include/erofs/check/extract.h for the safety contract.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/check/extract.h"

#define COPY_BUFSZ	(1u << 20)
#define SPARSE_UNIT	4096u
#define MSGPATH		512

/*
 * One call's context: the reader and buffer it uses and where its
 * messages go.  Without a log they are printed at once, prefixed with the
 * entry's path (after the extractor's before_print hook); with one (a
 * worker thread) they are kept, without the path, for erofs_xlog_flush().
 */
struct xrun {
	const struct erofs_extractor *x;
	struct erofs_reader *r;
	uint8_t *buf;
	size_t bufsz;
	const struct erofs_xpath *path;
	struct erofs_xlog *log;
	unsigned long *errors, *warnings;
};

enum { LVL_ERR = 'E', LVL_WARN = 'W', LVL_NOTE = 'N' };

static void print_line(int level, const char *path, const char *rest)
{
	if (level == LVL_ERR)
		erofs_err("%s%s", path, rest);
	else if (level == LVL_WARN)
		erofs_warn("%s%s", path, rest);
	else
		erofs_note("%s%s", path, rest);
}

static void log_add(struct erofs_xlog *log, int level, const char *rest)
{
	size_t n = strlen(rest) + 2;

	if (log->cap - log->len < n) {
		size_t cap = log->cap ? log->cap * 2 : 256;
		char *p;

		while (cap - log->len < n)
			cap *= 2;
		p = realloc(log->buf, cap);
		if (!p)
			return;		/* the message is lost, its count is not */
		log->buf = p;
		log->cap = cap;
	}
	log->buf[log->len++] = (char)level;
	memcpy(log->buf + log->len, rest, n - 1);
	log->len += n - 1;
}

static void say(struct xrun *c, int level, const char *fmt, ...) EROFS_PRINTF(3, 4);

/* A message about the entry: fmt continues its path (": ...", " (nid ...)"). */
static void say(struct xrun *c, int level, const char *fmt, ...)
{
	char rest[2048], p[MSGPATH];
	va_list ap;

	if (level == LVL_ERR)
		(*c->errors)++;
	else if (level == LVL_WARN)
		(*c->warnings)++;
	va_start(ap, fmt);
	vsnprintf(rest, sizeof(rest), fmt, ap);
	va_end(ap);
	if (c->log) {
		log_add(c->log, level, rest);
		return;
	}
	if (c->x->before_print)
		c->x->before_print(c->x->before_print_arg);
	p[0] = '\0';
	c->path->show(c->path, p, MSGPATH);
	print_line(level, p, rest);
}

static struct xrun direct(struct erofs_extractor *x, const struct erofs_xpath *path)
{
	struct xrun c = { x, x->r, x->buf, x->bufsz, path, NULL, &x->errors, &x->warnings };

	return c;
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

static int xerr(struct xrun *c, int err, const char *what)
{
	say(c, LVL_ERR, ": %s: %s", what, strerror(-err));
	return err;
}

static void xwarn(struct xrun *c, int err, const char *what)
{
	say(c, LVL_WARN, ": %s: %s", what, strerror(-err));
}

static int rerr(struct xrun *c, const struct erofs_rd_inode *vi, int err)
{
	say(c, LVL_ERR, " (nid %" PRIu64 "): %s", vi->nid, erofs_reader_error(c->r));
	return err;
}

void erofs_xlog_flush(struct erofs_extractor *x, struct erofs_xlog *log,
		      const struct erofs_xpath *path)
{
	char p[MSGPATH];
	size_t pos = 0;

	x->errors += log->errors;
	x->warnings += log->warnings;
	if (log->len) {
		p[0] = '\0';
		path->show(path, p, MSGPATH);
	}
	while (pos < log->len) {
		const char *rest = log->buf + pos + 1;

		print_line(log->buf[pos], p, rest);
		pos += strlen(rest) + 2;
	}
	free(log->buf);
	memset(log, 0, sizeof(*log));
}

int erofs_xworker_init(struct erofs_xworker *w, struct erofs_reader *r)
{
	w->r = r;
	w->bufsz = COPY_BUFSZ;
	w->buf = malloc(COPY_BUFSZ);
	return w->buf ? 0 : -ENOMEM;
}

void erofs_xworker_fini(struct erofs_xworker *w)
{
	free(w->buf);
	w->buf = NULL;
}

static bool valid_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/* The extractor's target descriptor is fd (closed on failure). */
static int adopt_root(struct erofs_extractor *x, int fd)
{
	x->buf = malloc(COPY_BUFSZ);
	if (!x->buf) {
		close(fd);
		return -ENOMEM;
	}
	x->bufsz = COPY_BUFSZ;
	x->rootfd = fd;
	return 0;
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
		x->euid = geteuid();
		x->egid = getegid();
		x->fresh = !(st.st_mode & S_ISGID) && st.st_gid == x->egid &&
			   fgetxattr(fd, "system.posix_acl_default", NULL, 0) < 0 &&
			   (errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP);
	}
	return adopt_root(x, fd);
}

int erofs_extract_open_leaf(struct erofs_extractor *x, struct erofs_reader *r,
			    const char *path, const struct erofs_extract_opts *o)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	memset(x, 0, sizeof(*x));
	x->r = r;
	x->o = *o;
	x->rootfd = -1;
	x->umask = umask(0);
	umask(x->umask);
	/* the parent as given ("a/b" -> "a", "/b" -> "/", "b" -> ".") */
	if (!slash)
		dir = strdup(".");
	else
		dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	snprintf(x->leaf, sizeof(x->leaf), "%s", slash ? slash + 1 : path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		erofs_err("cannot open %s: %s", dir, strerror(-err));
		free(dir);
		return err;
	}
	free(dir);
	if (!valid_name(x->leaf)) {
		erofs_err("%s: not a name to extract a file to", path);
		close(fd);
		return -EINVAL;
	}
	return adopt_root(x, fd);
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
static int make_room(struct xrun *c, int parentfd, const char *name)
{
	struct stat st;

	if (!c->x->o.overwrite)
		return xerr(c, -EEXIST, "already exists (use --overwrite to replace it)");
	if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return xerr(c, -errno, "cannot stat the existing entry");
	if (unlinkat(parentfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0))
		return xerr(c, -errno, "cannot remove the existing entry");
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
	struct xrun *c;
	int fd;			/* >= 0: set through the descriptor */
	int parentfd;		/* otherwise: lsetxattr on parentfd/name */
	const char *name;
	int err;
	bool acl;		/* an access ACL was set: it sets the mode too */
};

static int set_one_xattr(void *arg, const struct erofs_rd_xattr *xa)
{
	struct xattr_ctx *c = arg;
	const char *prefix = erofs_rd_xattr_prefix(xa->index);
	char key[XATTR_NAME_MAX + 64], what[XATTR_NAME_MAX + 128];
	size_t plen = strlen(prefix);
	bool must;
	int ret;

	if (xa->index == EROFS_XATTR_INDEX_LUSTRE) {
		say(c->c, LVL_WARN, ": lustre xattr not restored");
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
	if (!ret) {
		c->acl |= xa->index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS;
		return 0;
	}
	ret = -errno;
	erofs_escape(what, sizeof(what), key, strlen(key));
	snprintf(what + strlen(what), sizeof(what) - strlen(what), ": cannot set xattr");
	/* user. and trusted. must come back; labels and ACLs depend on the host */
	must = xa->index == EROFS_XATTR_INDEX_USER || xa->index == EROFS_XATTR_INDEX_TRUSTED ||
	       ((xa->index == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
		 xa->index == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT) && ret != -EOPNOTSUPP);
	if (must) {
		xerr(c->c, ret, what);
		c->err = ret;
	} else {
		xwarn(c->c, ret, what);
	}
	return 0;
}

static int apply_xattrs(struct xrun *c, const struct erofs_rd_inode *vi, int fd, int parentfd,
			const char *name, bool *acl)
{
	struct xattr_ctx xc = { c, fd, parentfd, name, 0, false };
	int err;

	if (!c->x->o.xattrs)
		return 0;
	err = erofs_xattr_iterate(c->r, vi, set_one_xattr, &xc);
	*acl = xc.acl;
	if (err)
		return rerr(c, vi, err);
	return xc.err;
}

/*
 * Whether a regular file created now with mode m already has the owner
 * and mode it must end with, so that neither fchown() nor fchmod() is
 * needed (two of the few system calls per file).  Never for set-ID or
 * sticky bits: chown() clears them, so they are set after it.
 */
static bool born_right(const struct erofs_extractor *x, const struct erofs_rd_inode *vi,
		       mode_t m)
{
	if (!x->fresh || (m & 07000) || (m & x->umask))
		return false;
	return !x->o.preserve_owner || (vi->di.uid == x->euid && vi->di.gid == x->egid);
}

/*
 * Owner, xattrs, mode, times: on fd if >= 0, else on parentfd/name (no
 * follow).  Owner and mode are left alone when the file was born with them.
 */
static int apply_meta(struct xrun *c, const struct erofs_rd_inode *vi, int fd, int parentfd,
		      const char *name, bool born)
{
	const struct erofs_extractor *x = c->x;
	struct timespec ts[2];
	int err = 0, ret;
	bool lnk = S_ISLNK(vi->di.mode), acl = false;

	if (x->o.preserve_owner && !born) {
		ret = fd >= 0 ? fchown(fd, vi->di.uid, vi->di.gid) :
			fchownat(parentfd, name, vi->di.uid, vi->di.gid, AT_SYMLINK_NOFOLLOW);
		if (ret)
			err = xerr(c, -errno, "cannot set owner");
	}
	ret = apply_xattrs(c, vi, fd, parentfd, name, &acl);
	if (ret && !err)
		err = ret;
	/* after an access ACL too, whose mask would otherwise decide the mode */
	if (!lnk && (!born || acl)) {
		mode_t m = final_mode(x, vi);

		if (fd >= 0) {
			ret = fchmod(fd, m);
		} else {
			ret = fchmodat(parentfd, name, m, AT_SYMLINK_NOFOLLOW);
			if (ret && (errno == ENOTSUP || errno == EOPNOTSUPP))
				ret = fchmodat(parentfd, name, m, 0);
		}
		if (ret)
			err = xerr(c, -errno, "cannot set mode");
	}
	fill_times(vi, ts);
	ret = fd >= 0 ? futimens(fd, ts) :
		utimensat(parentfd, name, ts, AT_SYMLINK_NOFOLLOW);
	if (ret)
		err = xerr(c, -errno, "cannot set modification time");
	return err;
}

/* ---- directories ---- */

int erofs_extract_dir_begin(struct erofs_extractor *x, int parentfd,
			    const char *name, const struct erofs_xpath *path)
{
	struct xrun run = direct(x, path), *c = &run;
	int fd;

	if (!valid_name(name))
		return xerr(c, -EINVAL, "refusing unsafe name");
	if (mkdirat(parentfd, name, 0700)) {
		if (errno != EEXIST)
			return xerr(c, -errno, "cannot create directory");
		fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			return fd;	/* an existing real directory: merge into it */
		if (errno != ENOTDIR && errno != ELOOP)
			return xerr(c, -errno, "cannot open existing directory");
		if (make_room(c, parentfd, name))
			return -EEXIST;
		if (mkdirat(parentfd, name, 0700))
			return xerr(c, -errno, "cannot create directory");
	}
	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return xerr(c, -errno, "cannot open new directory");
	return fd;
}

int erofs_extract_dir_end(struct erofs_extractor *x, int dirfd, const struct erofs_xpath *path,
			  const struct erofs_rd_inode *vi)
{
	struct xrun run = direct(x, path);
	int err = apply_meta(&run, vi, dirfd, -1, NULL, false);

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

/*
 * Writes buf at file offset off, leaving all-zero aligned units as holes;
 * *written becomes the end of the last write, if any.
 */
static int write_sparse(int fd, const uint8_t *buf, size_t len, uint64_t off, uint64_t *written)
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
		*written = off + pos;
	}
	return 0;
}

static int copy_data(struct xrun *c, int fd, const struct erofs_rd_inode *vi)
{
	uint64_t off = 0, written = 0;	/* the end of the last write */
	int err;

	while (off < vi->size) {
		struct erofs_map map;
		uint64_t end;

		err = erofs_map_blocks(c->r, vi, off, &map);
		if (err)
			return rerr(c, vi, err);
		end = map.la + map.llen;
		if (!(map.flags & EROFS_MAP_MAPPED)) {
			off = end;	/* a hole: leave it unwritten */
			continue;
		}
		if (map.flags & EROFS_MAP_ENCODED) {
			/* a compressed extent (at most 12 MiB) is decoded whole */
			const uint8_t *dec;

			err = erofs_decode_extent(c->r, vi, &map, &dec);
			if (err)
				return rerr(c, vi, err);
			err = write_sparse(fd, dec + (off - map.la), (size_t)(end - off), off,
					   &written);
			if (err)
				return xerr(c, err, "write failed");
			off = end;
			continue;
		}
		while (off < end) {
			size_t n = end - off < c->bufsz ? (size_t)(end - off) : c->bufsz;

			err = erofs_read_mapped(c->r, &map, c->buf, n, off);
			if (err)
				return rerr(c, vi, err);
			err = write_sparse(fd, c->buf, n, off, &written);
			if (err)
				return xerr(c, err, "write failed");
			off += n;
		}
	}
	/* a new file: only a hole at its end needs the size set */
	if (written != vi->size && ftruncate(fd, (off_t)vi->size))
		return xerr(c, -errno, "cannot set the file size");
	return 0;
}

static int extract_file(struct xrun *c, int parentfd, const char *name,
			const struct erofs_rd_inode *vi)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	mode_t m = final_mode(c->x, vi);
	bool born = born_right(c->x, vi, m);
	int fd, err, err2;

	/* else 0600 until the data is in and the owner set */
	fd = openat(parentfd, name, flags, born ? m : 0600);
	if (fd < 0 && errno == EEXIST) {
		if (make_room(c, parentfd, name))
			return -EEXIST;
		fd = openat(parentfd, name, flags, born ? m : 0600);
	}
	if (fd < 0)
		return xerr(c, -errno, "cannot create file");
	err = copy_data(c, fd, vi);
	if (err) {
		/* no empty or cut-short copy is left behind to pass for the file */
		close(fd);
		if (unlinkat(parentfd, name, 0))
			return xerr(c, -errno, "cannot remove the partly extracted file");
		say(c, LVL_NOTE, ": not extracted (the partial file was removed)");
		return err;
	}
	err2 = apply_meta(c, vi, fd, -1, NULL, born);
	if (close(fd) && !err)
		err = xerr(c, -errno, "close failed");
	return err ? err : err2;
}

/* ---- the rest ---- */

static int extract_symlink(struct xrun *c, int parentfd, const char *name,
			   const struct erofs_rd_inode *vi)
{
	char target[EROFS_SYMLINK_MAXLEN + 1];
	int err = erofs_read_symlink(c->r, vi, target, sizeof(target));

	if (err)
		return rerr(c, vi, err);
	if (symlinkat(target, parentfd, name)) {
		if (errno != EEXIST)
			return xerr(c, -errno, "cannot create symlink");
		if (make_room(c, parentfd, name))
			return -EEXIST;
		if (symlinkat(target, parentfd, name))
			return xerr(c, -errno, "cannot create symlink");
	}
	return apply_meta(c, vi, -1, parentfd, name, false);
}

static int extract_special(struct xrun *c, int parentfd, const char *name,
			   const struct erofs_rd_inode *vi)
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
			if (make_room(c, parentfd, name))
				return -EEXIST;
			if (!mknodat(parentfd, name, type | 0600, dev))
				goto made;
		}
		if (errno == EPERM && (S_ISCHR(vi->di.mode) || S_ISBLK(vi->di.mode)) &&
		    geteuid() != 0) {
			xwarn(c, -EPERM, "device node not created");
			return 0;
		}
		return xerr(c, -errno, "cannot create special file");
	}
made:
	return apply_meta(c, vi, -1, parentfd, name, false);
}

int erofs_extract_node(struct erofs_extractor *x, int parentfd, const char *name,
		       const struct erofs_xpath *path, const struct erofs_rd_inode *vi)
{
	struct xrun run = direct(x, path), *c = &run;

	if (!valid_name(name))
		return xerr(c, -EINVAL, "refusing unsafe name");
	if (S_ISREG(vi->di.mode))
		return extract_file(c, parentfd, name, vi);
	if (S_ISLNK(vi->di.mode))
		return extract_symlink(c, parentfd, name, vi);
	if (S_ISDIR(vi->di.mode))
		return xerr(c, -EISDIR, "internal error: directory as a node");
	return extract_special(c, parentfd, name, vi);
}

int erofs_extract_file_logged(const struct erofs_extractor *x, struct erofs_xworker *w,
			      int parentfd, const char *name, const struct erofs_rd_inode *vi,
			      struct erofs_xlog *log)
{
	struct xrun c = { x, w->r, w->buf, w->bufsz, NULL, log, &log->errors, &log->warnings };

	if (!valid_name(name))
		return xerr(&c, -EINVAL, "refusing unsafe name");
	return extract_file(&c, parentfd, name, vi);
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
	struct xrun run = direct(x, path), *c = &run;

	if (!valid_name(name) || !valid_name(tname))
		return xerr(c, -EINVAL, "refusing unsafe name");
	if (!linkat(tdirfd, tname, parentfd, name, 0))
		return 0;
	if (errno != EEXIST)
		return xerr(c, -errno, "cannot create hard link");
	if (make_room(c, parentfd, name))
		return -EEXIST;
	if (linkat(tdirfd, tname, parentfd, name, 0))
		return xerr(c, -errno, "cannot create hard link");
	return 0;
}
