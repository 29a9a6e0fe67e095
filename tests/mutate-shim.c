// SPDX-License-Identifier: MIT
/*
 * mutate-shim.so: an LD_PRELOAD library for tests/mkfs-bad-source.sh that
 * changes a source file at the moment mkfs.erofs opens it for its data, that
 * is between the scan and the read, so every race is hit every time.
 *
 *   SHIM_NAME    the last path component to act on
 *   SHIM_ACTION  grow | shrink | delete | dir | symlink | fifo
 *   SHIM_NTH     act on the Nth open of that name (default 1); opens of
 *                directories (O_DIRECTORY) are not counted
 *   SHIM_WHEN    open (default) | read: with read, act instead just before
 *                the Nth read (pread, copy_file_range) of the file through
 *                a descriptor opened by that name, that is between two
 *                reads of one open file
 *
 * delete, dir, symlink and fifo replace the entry before the open runs;
 * grow and shrink change the file just after it, before the first read.
 * Built by the test: cc -shared -fPIC -o mutate-shim.so mutate-shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*openat_fn)(int, const char *, int, ...);

static int counter;
/* SHIM_WHEN=read: the file being watched, and the reads of it so far */
static int watched_fd = -1, watched_dirfd = -1, reads;
static char watched_name[4096];

static const char *last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Whether this open is the one to act on. */
static int chosen(const char *path, int flags)
{
	const char *name = getenv("SHIM_NAME"), *nth = getenv("SHIM_NTH");

	if (!name || (flags & O_DIRECTORY) || strcmp(last_component(path), name))
		return 0;
	return __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST) == (nth ? atoi(nth) : 1);
}

static void fill(int fd, off_t at, off_t len)
{
	char buf[4096];

	memset(buf, 'G', sizeof(buf));
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf), at);

		if (n <= 0)
			abort();
		at += n;
		len -= n;
	}
}

static void before(openat_fn real, int dirfd, const char *path, const char *action)
{
	if (!strcmp(action, "grow") || !strcmp(action, "shrink"))
		return;
	if (unlinkat(dirfd, path, 0))
		abort();
	if (!strcmp(action, "dir") && mkdirat(dirfd, path, 0755))
		abort();
	if (!strcmp(action, "symlink") && symlinkat("elsewhere", dirfd, path))
		abort();
	if (!strcmp(action, "fifo") && mkfifoat(dirfd, path, 0644))
		abort();
	(void)real;
}

static void after(openat_fn real, int dirfd, const char *path, const char *action)
{
	struct stat st;
	int fd;

	if (strcmp(action, "grow") && strcmp(action, "shrink"))
		return;
	fd = real(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st))
		abort();
	if (!strcmp(action, "grow"))
		fill(fd, st.st_size, 5000);
	else if (ftruncate(fd, st.st_size / 2))
		abort();
	close(fd);
}

static int when_read(void)
{
	const char *when = getenv("SHIM_WHEN");

	return when && !strcmp(when, "read");
}

/* Remembers a descriptor of the watched name, and how to reach the name again. */
static void watch(int fd, int dirfd, const char *path, int flags)
{
	const char *name = getenv("SHIM_NAME");

	if (fd < 0 || !name || (flags & O_DIRECTORY) || strcmp(last_component(path), name) ||
	    strlen(path) >= sizeof(watched_name))
		return;
	if (watched_dirfd >= 0)
		close(watched_dirfd);
	watched_dirfd = dirfd == AT_FDCWD ? AT_FDCWD : dup(dirfd);
	strcpy(watched_name, path);
	__atomic_store_n(&watched_fd, fd, __ATOMIC_SEQ_CST);
}

/* Before a read of fd: acts when it is the Nth read of the watched file. */
static void reading(int fd)
{
	const char *action = getenv("SHIM_ACTION"), *nth = getenv("SHIM_NTH");
	openat_fn real;

	if (!action || fd != __atomic_load_n(&watched_fd, __ATOMIC_SEQ_CST) ||
	    __atomic_add_fetch(&reads, 1, __ATOMIC_SEQ_CST) != (nth ? atoi(nth) : 1))
		return;
	real = (openat_fn)dlsym(RTLD_NEXT, "openat");
	if (!strcmp(action, "grow") || !strcmp(action, "shrink"))
		after(real, watched_dirfd, watched_name, action);
	else
		before(real, watched_dirfd, watched_name, action);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	ssize_t (*real)(int, void *, size_t, off_t) = dlsym(RTLD_NEXT, "pread");

	reading(fd);
	return real(fd, buf, count, offset);
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
	ssize_t (*real)(int, void *, size_t, off_t) = dlsym(RTLD_NEXT, "pread64");

	reading(fd);
	return real(fd, buf, count, offset);
}

ssize_t copy_file_range(int in, loff_t *in_off, int out, loff_t *out_off, size_t len,
			unsigned int flags)
{
	ssize_t (*real)(int, loff_t *, int, loff_t *, size_t, unsigned int) =
		dlsym(RTLD_NEXT, "copy_file_range");

	reading(in);
	return real(in, in_off, out, out_off, len, flags);
}

static int shim_openat(const char *symbol, int dirfd, const char *path, int flags, mode_t mode)
{
	openat_fn real = (openat_fn)dlsym(RTLD_NEXT, symbol);
	const char *action = getenv("SHIM_ACTION");
	int fd, act;

	if (when_read()) {
		fd = real(dirfd, path, flags, mode);
		watch(fd, dirfd, path, flags);
		return fd;
	}
	act = action && chosen(path, flags);

	if (act)
		before(real, dirfd, path, action);
	fd = real(dirfd, path, flags, mode);
	if (act && fd >= 0)
		after(real, dirfd, path, action);
	return fd;
}

#define MODE_ARG(flags, mode)                                           \
	do {                                                            \
		va_list ap;                                             \
		va_start(ap, flags);                                    \
		mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0; \
		va_end(ap);                                             \
	} while (0)

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_openat("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_openat("openat64", dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_openat("openat", AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return shim_openat("openat64", AT_FDCWD, path, flags, mode);
}

/* what _FORTIFY_SOURCE builds call */
int __openat_2(int dirfd, const char *path, int flags)
{
	return shim_openat("openat", dirfd, path, flags, 0);
}

int __open_2(const char *path, int flags)
{
	return shim_openat("openat", AT_FDCWD, path, flags, 0);
}
