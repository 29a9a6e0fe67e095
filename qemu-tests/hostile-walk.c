/* SPDX-License-Identifier: MIT */
/*
 * hostile-walk: exercise every entry of a mounted (possibly hostile) EROFS
 * image and report what the kernel answered, without ever giving up on an
 * error.  Used by qemu-tests/run.sh for the hostile= images (crafted by
 * craft.c) inside the QEMU guest.
 *
 *   hostile-walk [-c CAP] [-t SECONDS] [-q] [-f] [-S SEED] ROOT
 *
 * For every entry: lstat; directories are read with getdents and descended
 * into; symlinks are readlink()ed; every entry's xattrs are listed and each
 * value fetched.  Regular files are read with three probes, most dangerous
 * first so a kernel bug shows before any slow part: a 4 KiB pread at the
 * page holding the last byte, a 4 KiB pread at offset 0, then a sequential
 * read from 0 of at most CAP bytes (default 64 MiB), stopping at the first
 * error.  The whole walk stops after -t SECONDS (default 30).
 *
 * -f adds what the kernel fuzz campaign (fuzz.sh) wants exercised too:
 * statfs; lookups of names that are not there (a suffix and a prefix of
 * every name, to drive the directory binary search); FIEMAP on files and
 * directories; for regular files 8 reads of 1..8192 bytes at pseudo-random
 * offsets in [0, size + 8 KiB) with POSIX_FADV_RANDOM (-S SEED), and an
 * mmap of the first 1 MiB touching every page (a SIGBUS counts as an EIO
 * error of op "mmap").  -q prints only the error lines and the summary.
 *
 * Output, one line each (paths relative to ROOT, bytes outside printable
 * ASCII as %XX):
 *   entry PATH type=reg|dir|lnk|... size=N
 *   xattrs PATH NAME,NAME...        (entries with xattrs)
 *   error OP PATH ERRNO-NAME
 *   summary entries=N errors=N EUCLEAN=N EOPNOTSUPP=N EIO=N other=N
 *           bytes=N cached_kb=BEFORE->AFTER seconds=S slowest_file=S deadline=0|1
 * Exit status 0 unless the walker itself failed (bad usage, no memory).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef EUCLEAN
#define EUCLEAN 117
#endif

static long long cap = 64ll << 20;
static double limit = 30;
static double t_start, slowest;
static long entries, errors, n_euclean, n_eopnotsupp, n_eio, n_other;
static long long bytes;
static int deadline;
static int quiet, extras;
static unsigned long long rnd = 1;
static char buf[1 << 20];

/* printf unless -q */
#define out(...) do { if (!quiet) printf(__VA_ARGS__); } while (0)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *errname(int e)
{
	switch (e) {
	case EUCLEAN: return "EUCLEAN";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EIO: return "EIO";
	case ENOENT: return "ENOENT";
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case ENODATA: return "ENODATA";
	case ERANGE: return "ERANGE";
	case EFBIG: return "EFBIG";
	case EOVERFLOW: return "EOVERFLOW";
	case EINTR: return "EINTR";
	case ENOTDIR: return "ENOTDIR";
	case ELOOP: return "ELOOP";
	default: return "other";
	}
}

static void put_path(const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= ' ' || c >= 127 || c == '%')
			out("%%%02X", c);
		else
			out("%c", c);
	}
}

static void fail(const char *op, const char *path, int e)
{
	errors++;
	if (e == EUCLEAN)
		n_euclean++;
	else if (e == EOPNOTSUPP)
		n_eopnotsupp++;
	else if (e == EIO)
		n_eio++;
	else
		n_other++;
	printf("error %s ", op);
	if (quiet)
		printf("-");	/* paths of fuzzed images are noise */
	else
		put_path(*path ? path : ".");
	printf(" %s", errname(e));
	if (!strcmp(errname(e), "other"))
		printf("(%d)", e);
	putchar('\n');
	fflush(stdout);
}

static int over_time(void)
{
	if (!deadline && now() - t_start > limit)
		deadline = 1;
	return deadline;
}

static long cached_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Cached: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static unsigned long long rand64(void)	/* xorshift64* */
{
	rnd ^= rnd >> 12;
	rnd ^= rnd << 25;
	rnd ^= rnd >> 27;
	return rnd * 2685821657736338717ull;
}

static void do_fiemap(int fd, const char *path)
{
	union {
		struct fiemap fm;
		char space[sizeof(struct fiemap) + 16 * sizeof(struct fiemap_extent)];
	} u;

	memset(&u, 0, sizeof(u));
	u.fm.fm_length = FIEMAP_MAX_OFFSET;
	u.fm.fm_extent_count = 16;
	if (ioctl(fd, FS_IOC_FIEMAP, &u.fm) < 0 && errno != EOPNOTSUPP && errno != ENOTTY)
		fail("fiemap", path, errno);
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* -f: random-offset reads, FIEMAP and an mmap of the first MiB */
static void file_extras(int fd, const char *path, off_t size)
{
	size_t maplen = size > (1 << 20) ? (1 << 20) : (size_t)size;
	volatile unsigned char *map;
	volatile unsigned int sum = 0;
	int i;

	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (i = 0; i < 8 && !over_time(); i++) {
		unsigned long long span = (unsigned long long)(size > 0 ? size : 0) + 8192;
		off_t at = (off_t)(rand64() % span);
		size_t len = 1 + (size_t)(rand64() % 8192);

		if (pread(fd, buf, len, at) < 0)
			fail("read-random", path, errno);
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	do_fiemap(fd, path);
	if (!maplen)
		return;
	map = mmap(NULL, maplen, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		fail("mmap", path, errno);
		return;
	}
	if (sigsetjmp(bus_jmp, 1) == 0) {
		for (size_t o = 0; o < maplen; o += 4096)
			sum += map[o];
	} else {
		fail("mmap", path, EIO);	/* SIGBUS: the kernel could not read a page */
	}
	munmap((void *)map, maplen);
}

/* -f: names that are not in directory DFD, near NAME in sort order */
static void lookup_missing(int dfd, const char *name, const char *path)
{
	char probe[300];
	struct stat st;
	size_t n = strlen(name);

	snprintf(probe, sizeof(probe), "%s~", name);
	if (fstatat(dfd, probe, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT &&
	    errno != ENAMETOOLONG)
		fail("lookup-missing", path, errno);
	if (n > 1) {
		snprintf(probe, sizeof(probe), "%.*s", (int)(n / 2), name);
		if (fstatat(dfd, probe, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
			fail("lookup-missing", path, errno);
	}
}

static void read_file(int dfd, const char *name, const char *path, off_t size)
{
	double t0 = now();
	long long done = 0;
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW);

	if (fd < 0) {
		fail("open", path, errno);
		return;
	}
	if (size > 0 && pread(fd, buf, 4096, (size - 1) & ~(off_t)4095) < 0)
		fail("read-last", path, errno);
	if (pread(fd, buf, 4096, 0) < 0)
		fail("read-first", path, errno);
	if (extras)
		file_extras(fd, path, size);
	while (done < cap && !over_time()) {
		size_t want = sizeof(buf);

		if ((long long)want > cap - done)
			want = (size_t)(cap - done);
		n = pread(fd, buf, want, done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("read", path, errno);
			break;
		}
		if (!n)
			break;
		done += n;
	}
	bytes += done;
	close(fd);
	if (now() - t0 > slowest)
		slowest = now() - t0;
}

static void xattrs(const char *path, const char *name, int dfd)
{
	char list[65536], val[65536];
	ssize_t n, i;

	/* single names relative to the entry's directory: any name works */
	if (fchdir(dfd) < 0) {
		fail("fchdir", path, errno);
		return;
	}
	n = llistxattr(name, list, sizeof(list));
	if (n < 0) {
		if (errno != ENOTSUP)
			fail("listxattr", path, errno);
		return;
	}
	if (n) {
		out("xattrs ");
		put_path(*path ? path : ".");
		out(" ");
		for (i = 0; i < n; i += strlen(list + i) + 1) {
			out("%s", i ? "," : "");
			put_path(list + i);
		}
		out("\n");
		fflush(stdout);
	}
	for (i = 0; i < n; i += strlen(list + i) + 1)
		if (lgetxattr(name, list + i, val, sizeof(val)) < 0)
			fail("getxattr", path, errno);
}

static void walk(int dfd, const char *path, int depth);

static void visit(int dfd, const char *name, const char *path, int depth)
{
	struct stat st;
	const char *type = "other";

	entries++;
	if (extras && depth)
		lookup_missing(dfd, name, path);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		fail("lstat", path, errno);
		return;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFREG: type = "reg"; break;
	case S_IFDIR: type = "dir"; break;
	case S_IFLNK: type = "lnk"; break;
	case S_IFCHR: type = "chr"; break;
	case S_IFBLK: type = "blk"; break;
	case S_IFIFO: type = "fifo"; break;
	case S_IFSOCK: type = "sock"; break;
	}
	out("entry ");
	put_path(*path ? path : ".");
	out(" type=%s size=%lld\n", type, (long long)st.st_size);
	fflush(stdout);
	xattrs(path, name, dfd);
	if (S_ISREG(st.st_mode)) {
		read_file(dfd, name, path, st.st_size);
	} else if (S_ISLNK(st.st_mode)) {
		if (readlinkat(dfd, name, buf, sizeof(buf)) < 0)
			fail("readlink", path, errno);
	} else if (S_ISDIR(st.st_mode) && depth < 64) {
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

		if (fd < 0) {
			fail("opendir", path, errno);
		} else {
			if (extras)
				do_fiemap(fd, path);
			walk(fd, path, depth + 1);	/* closes fd */
		}
	}
}

static void walk(int fd, const char *path, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;

	if (!d) {
		fail("opendir", path, errno);
		close(fd);
		return;
	}
	for (;;) {
		char *sub;

		if (over_time())
			break;
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				fail("readdir", path, errno);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&sub, "%s%s%s", path, *path ? "/" : "", de->d_name) < 0)
			exit(2);
		visit(dirfd(d), de->d_name, sub, depth);
		free(sub);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	long before, after;
	int opt, fd;

	while ((opt = getopt(argc, argv, "c:t:qfS:")) != -1) {
		if (opt == 'c')
			cap = atoll(optarg);
		else if (opt == 't')
			limit = atof(optarg);
		else if (opt == 'q')
			quiet = 1;
		else if (opt == 'f')
			extras = 1;
		else if (opt == 'S')
			rnd = strtoull(optarg, NULL, 0) | 1;
		else
			return 2;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: hostile-walk [-c CAP] [-t SECONDS] [-q] [-f] [-S SEED] ROOT\n");
		return 2;
	}
	if (extras) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigbus;
		sigaction(SIGBUS, &sa, NULL);
	}
	before = cached_kb();
	t_start = now();
	fd = open(argv[optind], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		fail("open", "", errno);
	} else {
		struct statfs sfs;

		if (extras && fstatfs(fd, &sfs) < 0)
			fail("statfs", "", errno);
		visit(fd, ".", "", 0);
		close(fd);
	}
	after = cached_kb();
	printf("summary entries=%ld errors=%ld EUCLEAN=%ld EOPNOTSUPP=%ld EIO=%ld other=%ld"
	       " bytes=%lld cached_kb=%ld->%ld seconds=%.2f slowest_file=%.2f deadline=%d\n",
	       entries, errors, n_euclean, n_eopnotsupp, n_eio, n_other, bytes,
	       before, after, now() - t_start, slowest, deadline);
	return 0;
}
