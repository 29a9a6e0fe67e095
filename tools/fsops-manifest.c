// SPDX-License-Identifier: MIT
/*
 * erofs-fsops-manifest: erofs-manifest's output for the tree inside an
 * image, read through erofsfuse's operations (lib/fsops/fsops.c) instead of a
 * mount, so that the host can compare what erofsfuse would show with the
 * source tree without mounting anything.
 *
 *   erofs-fsops-manifest [--cache=BYTES] [--batch=N] [--offset=BYTES] [--device=PATH...]
 *                        [erofs-manifest options] IMAGE
 *
 * tools/manifest.c is compiled in unchanged, with the calls it makes on
 * the filesystem (lstat, open, read, readlink, xattrs, directories, chdir)
 * redirected to the operations: its walk, hashing, escaping and sorting
 * are the very ones the QEMU suite and the tests use on real trees.
 * Directories are read in batches of N entries (default 5), each batch
 * resumed from the cookie of the last one, as the kernel does with a full
 * buffer.  --offset and --device open the image as erofsfuse does
 * (lib/read/rdopen.c).  Any failure is fatal (exit 1), with the operations'
 * reason.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "erofs/fsops/fsops.h"
#include "erofs/read/rdopen.h"

#define FD_BASE		1000

struct shim_dirent {
	char name[EROFS_NAME_LEN + 1];
	uint64_t ino;
	mode_t type;
};

struct shim_file {
	bool used;
	uint64_t ino;
	uint64_t off;
	/* directories, after fdopendir: the entries read so far */
	struct shim_dirent *ents;
	size_t nents, next;
	bool dir_open;
	struct dirent de;
};

static struct {
	struct erofs_fs fs;
	const char *root_arg;
	uint64_t cwd;
	struct shim_file *files;
	size_t nfiles;
	unsigned int batch;
} shim;

static int shim_err(int err)
{
	if (err == -EIO)
		fprintf(stderr, "erofs-fsops-manifest: %s\n", erofs_fs_error(&shim.fs));
	errno = -err;
	return -1;
}

static struct shim_file *shim_fd(int fd)
{
	if (fd < FD_BASE || (size_t)(fd - FD_BASE) >= shim.nfiles || !shim.files[fd - FD_BASE].used)
		return NULL;
	return &shim.files[fd - FD_BASE];
}

/* name relative to the current directory -> inode number */
static int shim_resolve(const char *name, uint64_t *ino, struct stat *st)
{
	if (name == shim.root_arg) {
		*ino = EROFS_FS_ROOT_INO;
		return erofs_fs_getattr(&shim.fs, *ino, st);
	}
	if (!strcmp(name, ".")) {
		*ino = shim.cwd;
		return erofs_fs_getattr(&shim.fs, *ino, st);
	}
	return erofs_fs_lookup(&shim.fs, shim.cwd, name, strlen(name), ino, st);
}

static int shim_lstat(const char *name, struct stat *st)
{
	uint64_t ino;
	int err = shim_resolve(name, &ino, st);

	if (err)
		return shim_err(err);
	st->st_dev = 1;
	return 0;
}

static int shim_chdir(const char *name)
{
	struct stat st;
	uint64_t ino;
	int err = shim_resolve(name, &ino, &st);

	if (err)
		return shim_err(err);
	if (!S_ISDIR(st.st_mode))
		return shim_err(-ENOTDIR);
	shim.cwd = ino;
	return 0;
}

static int shim_open(const char *name, int flags, ...)
{
	struct shim_file *f = NULL;
	struct stat st;
	uint64_t ino;
	size_t i;
	int err = shim_resolve(name, &ino, &st);

	if (err)
		return shim_err(err);
	if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode))
		return shim_err(-ENOTDIR);
	if (!(flags & O_DIRECTORY) && S_ISREG(st.st_mode)) {
		err = erofs_fs_open(&shim.fs, ino);
		if (err)
			return shim_err(err);
	}
	for (i = 0; i < shim.nfiles; i++)
		if (!shim.files[i].used) {
			f = &shim.files[i];
			break;
		}
	if (!f) {
		size_t n = shim.nfiles ? 2 * shim.nfiles : 64;
		struct shim_file *v = realloc(shim.files, n * sizeof(*v));

		if (!v)
			return shim_err(-ENOMEM);
		memset(v + shim.nfiles, 0, (n - shim.nfiles) * sizeof(*v));
		shim.files = v;
		f = &v[shim.nfiles];
		i = shim.nfiles;
		shim.nfiles = n;
	}
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->ino = ino;
	return FD_BASE + (int)i;
}

static int shim_close(int fd)
{
	struct shim_file *f = shim_fd(fd);

	if (!f)
		return shim_err(-EBADF);
	free(f->ents);
	memset(f, 0, sizeof(*f));
	return 0;
}

static ssize_t shim_read(int fd, void *buf, size_t len)
{
	struct shim_file *f = shim_fd(fd);
	ssize_t n;

	if (!f)
		return shim_err(-EBADF);
	n = erofs_fs_read(&shim.fs, f->ino, buf, len, f->off);
	if (n < 0)
		return shim_err((int)n);
	f->off += (uint64_t)n;
	return n;
}

static ssize_t shim_readlink(const char *name, char *buf, size_t size)
{
	char target[EROFS_SYMLINK_MAXLEN];
	struct stat st;
	uint64_t ino;
	ssize_t n;
	int err = shim_resolve(name, &ino, &st);

	if (err)
		return shim_err(err);
	n = erofs_fs_readlink(&shim.fs, ino, target, sizeof(target));
	if (n < 0)
		return shim_err((int)n);
	if ((size_t)n > size)
		n = (ssize_t)size;
	memcpy(buf, target, (size_t)n);
	return n;
}

/* An answer of the operations on a name: -1 and errno when negative. */
static ssize_t shim_answer(ssize_t n)
{
	return n < 0 ? shim_err((int)n) : n;
}

static ssize_t shim_llistxattr(const char *name, char *list, size_t size)
{
	struct stat st;
	uint64_t ino;
	int err = shim_resolve(name, &ino, &st);

	return shim_answer(err ? err : erofs_fs_listxattr(&shim.fs, ino, list, size));
}

static ssize_t shim_lgetxattr(const char *name, const char *xname, void *value, size_t size)
{
	struct stat st;
	uint64_t ino;
	int err = shim_resolve(name, &ino, &st);

	return shim_answer(err ? err : erofs_fs_getxattr(&shim.fs, ino, xname, value, size));
}

static int shim_fchdir(int fd)
{
	struct shim_file *f = shim_fd(fd);

	if (!f)
		return shim_err(-EBADF);
	shim.cwd = f->ino;
	return 0;
}

struct batch_ctx {
	struct shim_file *f;
	unsigned int left;
	uint64_t cookie;
	int err;
};

static int take_entry(void *arg, const char *name, size_t namelen, uint64_t ino, mode_t type,
		      uint64_t next_cookie)
{
	struct batch_ctx *c = arg;
	struct shim_file *f = c->f;
	struct shim_dirent *v;

	if (!c->left)
		return 1;	/* "buffer full": the next call resumes here */
	v = realloc(f->ents, (f->nents + 1) * sizeof(*v));
	if (!v) {
		c->err = -ENOMEM;
		return 1;
	}
	f->ents = v;
	memcpy(v[f->nents].name, name, namelen);
	v[f->nents].name[namelen] = '\0';
	v[f->nents].ino = ino;
	v[f->nents].type = type;
	f->nents++;
	c->left--;
	c->cookie = next_cookie;
	return 0;
}

/* Reads the whole directory, batch by batch, resuming from cookies. */
static DIR *shim_fdopendir(int fd)
{
	struct shim_file *f = shim_fd(fd);
	struct batch_ctx c = { 0 };

	if (!f) {
		shim_err(-EBADF);
		return NULL;
	}
	c.f = f;
	for (;;) {
		size_t before = f->nents;
		int err;

		c.left = shim.batch;
		err = erofs_fs_readdir(&shim.fs, f->ino, c.cookie, take_entry, &c);
		if (!err)
			err = c.err;
		if (err) {
			shim_err(err);
			return NULL;
		}
		if (f->nents - before < shim.batch)
			break;
	}
	f->dir_open = true;
	return (DIR *)f;
}

static struct dirent *shim_readdir(DIR *d)
{
	struct shim_file *f = (struct shim_file *)d;
	const struct shim_dirent *e;

	if (f->next >= f->nents)
		return NULL;
	e = &f->ents[f->next++];
	memset(&f->de, 0, sizeof(f->de));
	f->de.d_ino = e->ino;
	snprintf(f->de.d_name, sizeof(f->de.d_name), "%s", e->name);
	return &f->de;
}

static int shim_closedir(DIR *d)
{
	struct shim_file *f = (struct shim_file *)d;

	return shim_close(FD_BASE + (int)(f - shim.files));
}

#define lstat		shim_lstat
#define chdir		shim_chdir
#define open		shim_open
#define close		shim_close
#define read		shim_read
#define readlink	shim_readlink
#define llistxattr	shim_llistxattr
#define lgetxattr	shim_lgetxattr
#define fchdir		shim_fchdir
#define fdopendir	shim_fdopendir
#define readdir		shim_readdir
#define closedir	shim_closedir
#define main		manifest_main
#include "../tools/manifest.c"
#undef main

int main(int argc, char **argv)
{
	struct erofs_rd_source src;
	struct erofs_reader r;
	size_t cache = 0;
	char **margv;
	int margc = 0, i, err;

	shim.batch = 5;
	margv = calloc((size_t)argc + 1, sizeof(*margv));
	if (!margv)
		return 1;
	margv[margc++] = argv[0];
	erofs_rd_source_init(&src, NULL);
	src.flags = EROFS_RD_ALL_DEVICES;	/* as erofsfuse */
	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--offset=", 9))
			src.offset = strtoull(argv[i] + 9, NULL, 0);
		else if (!strncmp(argv[i], "--device=", 9)) {
			if (erofs_rd_source_add_device(&src, argv[i] + 9))
				return 1;
		} else if (!strncmp(argv[i], "--cache=", 8))
			cache = strtoull(argv[i] + 8, NULL, 0);
		else if (!strncmp(argv[i], "--batch=", 8))
			shim.batch = (unsigned int)strtoul(argv[i] + 8, NULL, 0);
		else
			margv[margc++] = argv[i];
	}
	if (!shim.batch || margc < 2 || argv[argc - 1][0] == '-') {
		fprintf(stderr, "usage: erofs-fsops-manifest [--cache=BYTES] [--batch=N] [--offset=BYTES] [--device=PATH...] [--no-xattrs] IMAGE\n");
		return 2;
	}
	shim.root_arg = margv[margc - 1];
	src.image = shim.root_arg;
	if (erofs_rd_source_open(&src, &r)) {
		fprintf(stderr, "erofs-fsops-manifest: %s\n", src.err);
		return 1;
	}
	if (erofs_fs_init(&shim.fs, &r, cache))
		return 1;
	shim.cwd = EROFS_FS_ROOT_INO;
	err = manifest_main(margc, margv);
	if (getenv("FSOPS_STATS"))
		fprintf(stderr, "erofs-fsops-manifest: cache %llu hits, %llu misses, %zu bytes kept\n",
			(unsigned long long)shim.fs.hits, (unsigned long long)shim.fs.misses,
			shim.fs.cache_used);
	erofs_fs_close(&shim.fs);
	erofs_reader_close(&r);
	erofs_rd_source_close(&src);
	return err;
}
