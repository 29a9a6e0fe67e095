// SPDX-License-Identifier: MIT
/*
 * dump.erofs: show an EROFS image's superblock, statistics, or one inode
 * with its directory entries, extents and xattrs.  Options and output lines
 * are erofs-utils 1.9.4's, so that scripts written for its dump.erofs run
 * on ours; the work is in lib/dump*.c (include/erofs/dump.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/diag.h"
#include "erofs/dump.h"
#include "erofs/io.h"
#include "erofs/reader.h"

#define EXIT_OK		0
#define EXIT_CORRUPT	1
#define EXIT_USAGE	2

struct dump_opts {
	const char *image;
	bool superblock, statistics, extents, xattrs, ls, cat;
	bool have_nid;
	uint64_t nid;
	const char *path;
};

static void usage(FILE *out)
{
	fprintf(out,
"Usage: dump.erofs [OPTIONS] IMAGE\n"
"Dump erofs layout from IMAGE.\n"
"\n"
"General options:\n"
" -V, --version   print the version number of dump.erofs and exit\n"
" -h, --help      display this help and exit\n"
"\n"
" -S              show statistic information of the image\n"
" -e              show extent info (INODE required)\n"
" -s              show information about superblock\n"
" -x              show extended attributes (INODE required)\n"
" --ls            show directory contents (INODE required)\n"
" --cat           show file contents (INODE required)\n"
" --nid=#         show the target inode info of nid #\n"
" --path=X        show the target inode info of path X\n"
"\n"
"Without an option, the superblock is shown.  Exit status: 0 success,\n"
"1 the image is corrupt or unsupported, 2 usage or operational error.\n");
}

enum { OPT_NID = 256, OPT_PATH, OPT_LS, OPT_CAT, OPT_DEVICE, OPT_OFFSET };

static const struct option long_options[] = {
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ "nid", required_argument, NULL, OPT_NID },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "ls", no_argument, NULL, OPT_LS },
	{ "cat", no_argument, NULL, OPT_CAT },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":VhSesx", long_options, NULL)) != -1) {
		switch (c) {
		case 'V':
			printf("dump.erofs (erofs-forge) %s\n", PACKAGE_VERSION);
			exit(EXIT_OK);
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		case 'S':
			o->statistics = true;
			break;
		case 'e':
			o->extents = true;
			break;
		case 's':
			o->superblock = true;
			break;
		case 'x':
			o->xattrs = true;
			break;
		case OPT_LS:
			o->ls = true;
			break;
		case OPT_CAT:
			o->cat = true;
			break;
		case OPT_NID:
			errno = 0;
			o->nid = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				erofs_err("invalid NID %s", optarg);
				return -1;
			}
			o->have_nid = true;
			o->path = NULL;
			break;
		case OPT_PATH:
			o->path = optarg;
			o->have_nid = false;
			break;
		case OPT_DEVICE:
			erofs_err("--device: multi-device images are not supported");
			return -1;
		case OPT_OFFSET:
			erofs_err("--offset: images at an offset are not supported");
			return -1;
		case ':':
			erofs_err("option '%s' needs an argument", argv[optind - 1]);
			return -1;
		default:
			if (optopt)
				erofs_err("unknown option '-%c'", optopt);
			else
				erofs_err("unknown option '%s'", argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc) {
		erofs_err("missing argument: IMAGE");
		return -1;
	}
	if (optind + 1 < argc) {
		erofs_err("unexpected argument: %s", argv[optind + 1]);
		return -1;
	}
	o->image = argv[optind];
	if ((o->extents || o->xattrs || o->ls || o->cat) && !o->have_nid && !o->path) {
		erofs_err("-e, -x, --ls and --cat need an inode (--nid=# or --path=X)");
		return -1;
	}
	if (o->cat && (o->superblock || o->statistics || o->ls || o->extents || o->xattrs)) {
		erofs_err("--cat cannot be combined with -S, -e, -s, -x or --ls");
		return -1;
	}
	if (!o->superblock && !o->statistics && !o->have_nid && !o->path)
		o->superblock = true;
	return 0;
}

static int show_super(int fd, uint64_t size, const char *image)
{
	size_t len = size < EROFS_DUMP_SB_BYTES ? (size_t)size : EROFS_DUMP_SB_BYTES;
	uint8_t *head = malloc(EROFS_DUMP_SB_BYTES);
	char err[EROFS_DUMP_ERRLEN];
	int ret;

	if (!head) {
		erofs_err("out of memory");
		return EXIT_USAGE;
	}
	ret = erofs_pread_all(fd, head, len, 0);
	if (ret) {
		erofs_err("%s: cannot read the superblock: %s", image, strerror(-ret));
		free(head);
		return EXIT_USAGE;
	}
	ret = erofs_dump_super(stdout, head, len, err, sizeof(err));
	free(head);
	if (ret) {
		erofs_err("%s: %s", image, err);
		return EXIT_CORRUPT;
	}
	return EXIT_OK;
}

/* The inode asked for: its nid, the path to show, the directory holding it. */
static int show_inode(struct erofs_dump *d, const struct dump_opts *o)
{
	const struct erofs_super *sb = &d->r->sb;
	uint64_t nid = o->nid, parent = EROFS_DUMP_NO_PARENT;
	unsigned int what = 0;
	char *found = NULL;
	const char *shown;
	int ret = EXIT_OK, err;

	if (o->path && erofs_dump_lookup(d, o->path, &nid)) {
		erofs_err("%s: %s", o->image, d->err);
		return EXIT_CORRUPT;
	}
	if (o->cat) {
		if (erofs_dump_cat(d, nid)) {
			fflush(stdout);
			erofs_err("%s: %s", o->image, d->err);
			return EXIT_CORRUPT;
		}
		return EXIT_OK;
	}
	if ((sb->feature_incompat & EROFS_INCOMPAT_FRAGMENTS) && sb->packed_nid &&
	    nid == sb->packed_nid) {
		shown = "(packed file)";
	} else {
		err = erofs_dump_find_path(d, nid, &found, &parent);
		if (err) {
			/* the inode is still shown; the exit status tells */
			fflush(stdout);
			erofs_err("%s: looking for the path of nid %" PRIu64 ": %s", o->image, nid,
				  d->err);
			ret = EXIT_CORRUPT;
			parent = EROFS_DUMP_NO_PARENT;
		}
		shown = found ? found : "(not found)";
		if (!found)
			parent = EROFS_DUMP_NO_PARENT;
	}
	if (o->ls)
		what |= EROFS_DUMP_LS;
	if (o->extents)
		what |= EROFS_DUMP_EXTENTS;
	if (o->xattrs)
		what |= EROFS_DUMP_XATTRS;
	if (erofs_dump_inode(d, nid, shown, parent, what)) {
		fflush(stdout);
		erofs_err("%s: %s", o->image, d->err);
		ret = EXIT_CORRUPT;
	}
	free(found);
	return ret;
}

int main(int argc, char **argv)
{
	struct dump_opts o;
	struct erofs_reader r;
	struct erofs_dump d = { .r = &r, .out = stdout };
	uint64_t size;
	int fd, err, ret = EXIT_OK;

	if (parse_args(argc, argv, &o)) {
		fprintf(stderr, "Try 'dump.erofs --help' for more information.\n");
		return EXIT_USAGE;
	}
	fd = erofs_image_open_ro(o.image, &size);
	if (fd < 0) {
		erofs_err("cannot open %s: %s", o.image,
			  fd == -EINVAL ? "neither a regular file nor a block device" : strerror(-fd));
		return EXIT_USAGE;
	}
	if (o.superblock) {
		ret = show_super(fd, size, o.image);
		if (ret || (!o.statistics && !o.have_nid && !o.path)) {
			close(fd);
			return ret;
		}
	}
	err = erofs_reader_open_fd_flags(&r, fd, size, EROFS_READER_MAP_ANY_ALGORITHM);
	if (err) {
		erofs_err("%s: %s", o.image, erofs_reader_error(&r));
		erofs_reader_close(&r);
		close(fd);
		return EXIT_CORRUPT;
	}
	if (o.statistics && erofs_dump_statistics(&d)) {
		fflush(stdout);
		erofs_err("%s: %s", o.image, d.err);
		ret = EXIT_CORRUPT;
	}
	if (!ret && (o.have_nid || o.path))
		ret = show_inode(&d, &o);
	if (fflush(stdout) && !ret) {
		erofs_err("write error on standard output: %s", strerror(errno));
		ret = EXIT_USAGE;
	}
	erofs_reader_close(&r);
	close(fd);
	return ret;
}
