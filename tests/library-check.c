// SPDX-License-Identifier: MIT
/*
 * tests/library.sh's checker: liberofs-forge's public calls against the
 * source tree an image was made from, built against an installed copy.
 *
 *	library-check IMAGE SOURCE_DIR [--offset=N]
 *	library-check --devices IMAGE DEVICE PATH
 *
 * For every path of the source tree (walked here, not through the image):
 * eforge_lookup() finds it; eforge_stat() gives its type, size and mode;
 * a regular file's bytes read by eforge_read() in uneven pieces (and past
 * the end) equal the source's; its extents (eforge_extents()) cover
 * [0, size) in order, and the bytes of each plain extent stored on the
 * image equal the file's; symlink targets match; every xattr of the source
 * is listed with its value.  Prints one line per problem and the counts;
 * exit status 1 on any problem.
 *
 * --devices: IMAGE has one extra device, DEVICE, holding the data of the
 * file at PATH: eforge_open_flags() with EFORGE_OPEN_ALL_DEVICES refuses
 * the image without it (-ENXIO, naming the slot) and reads PATH with it;
 * with EFORGE_OPEN_NO_DEVICES it refuses DEVICE (-EINVAL), and without it
 * stats PATH but reads its data as -ENXIO; an unknown flag, both flags
 * and a missing file are refused.
 */
#define _GNU_SOURCE
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
#include <unistd.h>

#include <erofs-forge/erofs-forge.h>

static struct eforge_image *img;
static int image_fd;
static uint64_t image_offset;
static unsigned long checked, problems, extents_checked;

#define PROBLEM(...) do { problems++; printf("problem: " __VA_ARGS__); printf("\n"); } while (0)

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	uint8_t *buf;

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size + 1);
	*len = 0;
	while (buf && *len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + *len, st.st_size - *len);

		if (n <= 0)
			break;
		*len += n;
	}
	close(fd);
	return buf;
}

struct ext_state {
	const char *path;
	const uint8_t *data;
	uint64_t next, size;
};

static int one_extent(void *arg, const struct eforge_extent *e)
{
	struct ext_state *s = arg;

	if (e->logical != s->next || !e->length || e->logical + e->length > s->size) {
		PROBLEM("%s: extent [%" PRIu64 ", +%" PRIu64 ") after %" PRIu64, s->path,
			e->logical, e->length, s->next);
		return -1;
	}
	s->next = e->logical + e->length;
	if ((e->flags & EFORGE_EXTENT_MAPPED) && !(e->flags & (EFORGE_EXTENT_COMPRESSED |
	    EFORGE_EXTENT_FRAGMENT | EFORGE_EXTENT_METABOX)) && e->device == 0) {
		uint8_t *buf = malloc(e->length);

		if (pread(image_fd, buf, e->length, image_offset + e->physical) != (ssize_t)e->length ||
		    memcmp(buf, s->data + e->logical, e->length))
			PROBLEM("%s: extent at %" PRIu64 " does not hold the file's bytes", s->path,
				e->logical);
		extents_checked++;
		free(buf);
	} else if (!(e->flags & EFORGE_EXTENT_MAPPED)) {
		for (uint64_t i = 0; i < e->length; i++)
			if (s->data[e->logical + i]) {
				PROBLEM("%s: a hole at %" PRIu64 " over non-zero bytes", s->path, e->logical);
				break;
			}
	} else if ((e->flags & EFORGE_EXTENT_COMPRESSED) && !eforge_algorithm_name(e->algorithm)) {
		PROBLEM("%s: compressed extent with algorithm %u", s->path, e->algorithm);
	}
	return 0;
}

struct xattr_seen {
	const char *name;
	const void *value;
	size_t size;
	int found;
};

static int one_xattr(void *arg, const struct eforge_xattr *x)
{
	struct xattr_seen *want = arg;

	if (!strcmp(x->name, want->name)) {
		want->found = x->value_size == want->size && !memcmp(x->value, want->value, want->size);
		return 1;
	}
	return 0;
}

static void check_xattrs(const char *src, uint64_t nid, const char *path)
{
	char names[65536], value[65536];
	ssize_t n = llistxattr(src, names, sizeof(names));

	for (ssize_t i = 0; n > 0 && i < n; i += strlen(names + i) + 1) {
		ssize_t vs = lgetxattr(src, names + i, value, sizeof(value));
		struct xattr_seen want = { names + i, value, vs < 0 ? 0 : (size_t)vs, 0 };

		if (vs < 0)
			continue;
		if (eforge_listxattr(img, nid, one_xattr, &want) < 0)
			PROBLEM("%s: listxattr: %s", path, eforge_error(img));
		else if (!want.found)
			PROBLEM("%s: xattr %s missing or different", path, names + i);
	}
}

static void check_file(const char *src, const char *path, uint64_t nid, const struct stat *sst)
{
	size_t len = 0, got = 0, step = 1;
	uint8_t *want = slurp(src, &len), *buf = malloc(len + 4097);
	struct ext_state es = { path, want, 0, len };

	while (want && got < len) {
		ssize_t n = eforge_read(img, nid, buf + got, step, got);

		if (n <= 0) {
			PROBLEM("%s: read at %zu: %s", path, got, n < 0 ? eforge_error(img) : "end of file");
			break;
		}
		got += n;
		step = step * 3 + 1;	/* 1, 4, 13, ... uneven against every block */
	}
	if (want && got == len && memcmp(buf, want, len))
		PROBLEM("%s: bytes differ", path);
	if (eforge_read(img, nid, buf, 4096, len) != 0)
		PROBLEM("%s: a read past the end is not 0", path);
	if (len && eforge_extents(img, nid, one_extent, &es) < 0)
		PROBLEM("%s: extents: %s", path, eforge_error(img));
	else if (es.next != len)
		PROBLEM("%s: extents end at %" PRIu64 ", the file at %zu", path, es.next, len);
	(void)sst;
	free(want);
	free(buf);
}

static void check(const char *src, const char *path)
{
	struct eforge_stat st;
	struct stat sst;
	uint64_t nid;

	if (lstat(src, &sst))
		return;
	checked++;
	if (eforge_lookup(img, path, &nid) < 0 || eforge_stat(img, nid, &st) < 0) {
		PROBLEM("%s: %s", path, eforge_error(img));
		return;
	}
	if ((st.mode & S_IFMT) != (sst.st_mode & S_IFMT) || (st.mode & 07777) != (sst.st_mode & 07777))
		PROBLEM("%s: mode 0%o, source 0%o", path, st.mode, (unsigned int)sst.st_mode);
	if (st.uid != sst.st_uid || st.gid != sst.st_gid)
		PROBLEM("%s: owner %u:%u, source %u:%u", path, st.uid, st.gid, sst.st_uid, sst.st_gid);
	if (!S_ISDIR(sst.st_mode) && st.size != (uint64_t)sst.st_size)
		PROBLEM("%s: size %" PRIu64 ", source %jd", path, st.size, (intmax_t)sst.st_size);
	if (S_ISREG(sst.st_mode))
		check_file(src, path, nid, &sst);
	if (S_ISLNK(sst.st_mode)) {
		char want[4096], got[4096];
		ssize_t n = readlink(src, want, sizeof(want) - 1);

		want[n < 0 ? 0 : n] = '\0';
		if (eforge_readlink(img, nid, got, sizeof(got)) < 0 || strcmp(got, want))
			PROBLEM("%s: symlink target", path);
	}
	if ((S_ISCHR(sst.st_mode) || S_ISBLK(sst.st_mode)) &&
	    (st.rdev_major != major(sst.st_rdev) || st.rdev_minor != minor(sst.st_rdev)))
		PROBLEM("%s: device number", path);
	check_xattrs(src, nid, path);
	if (S_ISDIR(sst.st_mode)) {
		DIR *d = opendir(src);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char s2[8192], p2[8192];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(s2, sizeof(s2), "%s/%s", src, de->d_name);
			snprintf(p2, sizeof(p2), "%s/%s", strcmp(path, "/") ? path : "", de->d_name);
			check(s2, p2);
		}
		if (d)
			closedir(d);
	}
}

/* One eforge_open_flags() that must fail with want, err containing words. */
static void open_fails(const char *what, const char *path, const struct eforge_open_opts *o,
		       unsigned int flags, int want, const char *words)
{
	struct eforge_image *h;
	char err[8192];
	int ret = eforge_open_flags(&h, path, o, flags, err, sizeof(err));

	if (ret != want || h || !strstr(err, words))
		PROBLEM("%s: %d (wanted %d), '%s' (wanted '%s')", what, ret, want, ret ? err : "",
			words);
	else
		printf("%s: %s\n", what, err);
	if (!ret)
		eforge_close(h);
}

static int devices(const char *image, const char *device, const char *path)
{
	const char *devs[1] = { device };
	const struct eforge_open_opts with = { .devices = devs, .nr_devices = 1 };
	struct eforge_image *h;
	struct eforge_stat st;
	uint64_t nid;
	char err[8192], buf[4096];
	ssize_t n;

	open_fails("all devices, none given", image, NULL, EFORGE_OPEN_ALL_DEVICES, -ENXIO,
		   "missing: device 1 (");
	open_fails("no devices, one given", image, &with, EFORGE_OPEN_NO_DEVICES, -EINVAL,
		   "--device and --no-devices exclude each other");
	open_fails("both flags", image, NULL, EFORGE_OPEN_ALL_DEVICES | EFORGE_OPEN_NO_DEVICES,
		   -EINVAL, "contradictory");
	open_fails("an unknown flag", image, NULL, 0x100, -EINVAL, "unknown");
	open_fails("no such file", "/nonexistent/image.erofs", NULL, 0, -ENOENT,
		   "/nonexistent/image.erofs");

	if (eforge_open_flags(&h, image, NULL, EFORGE_OPEN_NO_DEVICES, err, sizeof(err)) < 0) {
		PROBLEM("no devices: open: %s", err);
	} else {
		if (eforge_lookup(h, path, &nid) < 0 || eforge_stat(h, nid, &st) < 0 || !st.size)
			PROBLEM("no devices: %s: %s", path, eforge_error(h));
		else if ((n = eforge_read(h, nid, buf, sizeof(buf), 0)) != -ENXIO ||
			 !strstr(eforge_error(h), "which was not given"))
			PROBLEM("no devices: reading %s gave %zd: %s", path, n, eforge_error(h));
		else
			printf("no devices: %s stat'ed (%" PRIu64 " bytes), its data: %s\n", path,
			       st.size, eforge_error(h));
		eforge_close(h);
	}
	if (eforge_open_flags(&h, image, &with, EFORGE_OPEN_ALL_DEVICES, err, sizeof(err)) < 0) {
		PROBLEM("all devices: open: %s", err);
	} else {
		if (eforge_lookup(h, path, &nid) < 0 ||
		    eforge_read(h, nid, buf, sizeof(buf), 0) <= 0)
			PROBLEM("all devices: reading %s: %s", path, eforge_error(h));
		else
			printf("all devices: %s read\n", path);
		eforge_close(h);
	}
	printf("%lu problems\n", problems);
	return problems ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct eforge_open_opts opts = { 0 };
	struct eforge_super sb;
	struct eforge_linux lx;
	char err[512];

	if (argc == 5 && !strcmp(argv[1], "--devices"))
		return devices(argv[2], argv[3], argv[4]);
	if (argc < 3)
		return 2;
	if (argc > 3 && !strncmp(argv[3], "--offset=", 9))
		opts.offset = image_offset = strtoull(argv[3] + 9, NULL, 0);
	image_fd = open(argv[1], O_RDONLY);
	if (eforge_open(&img, argv[1], &opts, err, sizeof(err)) < 0) {
		printf("problem: open: %s\n", err);
		return 1;
	}
	if (eforge_super(img, &sb) < 0 || !sb.block_size || eforge_needs_linux(img, &lx) < 0 ||
	    lx.major < 5)
		PROBLEM("superblock facts: block size %u, needs Linux %u.%u", sb.block_size,
			lx.major, lx.minor);
	printf("block size %u, %" PRIu64 " inodes, needs Linux %u.%u%s%s\n", sb.block_size,
	       sb.inodes, lx.major, lx.minor, lx.why[0] ? " " : "", lx.why);
	check(argv[2], "/");
	printf("%lu paths checked, %lu plain extents compared, %lu problems\n", checked,
	       extents_checked, problems);
	eforge_close(img);
	return problems ? 1 : 0;
}
