// SPDX-License-Identifier: MIT
/*
 * erofs-ls: lists an EROFS image's tree with sizes, through liberofs-forge.
 * An example of the library's API (include/erofs-forge/erofs-forge.h),
 * built and run by `make check` (tests/library.sh) against an installed
 * copy, as a program outside the project would use it:
 *
 *	cc -o erofs-ls erofs-ls.c $(pkg-config --cflags --libs erofs-forge)
 *	erofs-ls [--offset=BYTES] [--device=PATH]... IMAGE [PATH]
 *
 * One line per inode, depth first in the image's name order:
 *	TYPE SIZE MODE UID:GID PATH [-> TARGET]
 * TYPE is d, -, l, c, b, p or s, as ls(1) shows it.  Exit status 0, or 1
 * with a message naming the path when the image is damaged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <erofs-forge/erofs-forge.h>

struct walk {
	struct eforge_image *img;
	char path[8192];
	size_t len;
	int failed;
};

static char type_char(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	default: return '-';
	}
}

static void list(struct walk *w, uint64_t nid);

static int entry(void *arg, const struct eforge_dirent *de)
{
	struct walk *w = arg;
	size_t keep = w->len;

	if (w->len + 1 + de->name_len >= sizeof(w->path)) {
		fprintf(stderr, "erofs-ls: %s/...: path too long\n", w->path);
		w->failed = 1;
		return 0;
	}
	if (w->len == 0 || w->path[w->len - 1] != '/')
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, de->name, de->name_len);
	w->len += de->name_len;
	w->path[w->len] = '\0';
	list(w, de->nid);
	w->len = keep;
	w->path[w->len] = '\0';
	return 0;
}

static void list(struct walk *w, uint64_t nid)
{
	struct eforge_stat st;
	char target[4096];
	int err = eforge_stat(w->img, nid, &st);

	if (err) {
		fprintf(stderr, "erofs-ls: %s: %s\n", w->path, eforge_error(w->img));
		w->failed = 1;
		return;
	}
	printf("%c %" PRIu64 " %04o %u:%u %s", type_char(st.mode), st.size,
	       (unsigned int)(st.mode & 07777), st.uid, st.gid, w->path);
	if (S_ISLNK(st.mode)) {
		if (eforge_readlink(w->img, nid, target, sizeof(target)) < 0) {
			printf("\n");
			fprintf(stderr, "erofs-ls: %s: %s\n", w->path, eforge_error(w->img));
			w->failed = 1;
			return;
		}
		printf(" -> %s", target);
	}
	printf("\n");
	if (S_ISDIR(st.mode) && eforge_readdir(w->img, nid, entry, w) < 0) {
		fprintf(stderr, "erofs-ls: %s: %s\n", w->path, eforge_error(w->img));
		w->failed = 1;
	}
}

int main(int argc, char **argv)
{
	const char *devices[64];
	struct eforge_open_opts opts = { .devices = devices };
	struct walk w = { .len = 0 };
	const char *image = NULL, *start = "/";
	char err[512];
	uint64_t nid;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--offset=", 9)) {
			opts.offset = strtoull(argv[i] + 9, NULL, 0);
		} else if (!strncmp(argv[i], "--device=", 9) && opts.nr_devices < 64) {
			devices[opts.nr_devices++] = argv[i] + 9;
		} else if (!image) {
			image = argv[i];
		} else {
			start = argv[i];
		}
	}
	if (!image) {
		fprintf(stderr, "usage: erofs-ls [--offset=BYTES] [--device=PATH]... IMAGE [PATH]\n");
		return 2;
	}
	if (eforge_open(&w.img, image, &opts, err, sizeof(err)) < 0) {
		fprintf(stderr, "erofs-ls: %s\n", err);
		return 1;
	}
	if (eforge_lookup(w.img, start, &nid) < 0) {
		/* the message names the path, or what is wrong on the way to it */
		fprintf(stderr, "erofs-ls: %s\n", eforge_error(w.img));
		eforge_close(w.img);
		return 1;
	}
	snprintf(w.path, sizeof(w.path), "%s", start);
	w.len = strlen(w.path);
	list(&w, nid);
	eforge_close(w.img);
	return w.failed;
}
