// SPDX-License-Identifier: MIT
/*
 * dump.erofs: show an EROFS image's superblock, statistics, or one inode
 * with its directory entries, extents and xattrs.  Options and output lines
 * are erofs-utils 1.9.4's, so that scripts written for its dump.erofs run
 * on ours; the work is in lib/dump*.c (include/erofs/dump/dump.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs-forge/erofs-forge.h"
#include "erofs/codec/version.h"
#include "erofs/common/cmdline.h"
#include "erofs/common/diag.h"
#include "erofs/dump/dump.h"

#define EXIT_OK		0
#define EXIT_CORRUPT	1
#define EXIT_USAGE	2

struct dump_opts {
	const char *image;
	bool superblock, statistics, extents, xattrs, ls, cat;
	bool have_nid;
	uint64_t nid;
	const char *path;
	uint64_t offset;		/* --offset */
	const char **devices;		/* --device, in order */
	unsigned int nr_devices;
	bool no_devices;		/* --no-devices */
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
" --device=X      specify an extra device to be used together\n"
"                 (once per extra device, in the device table's order)\n"
" --no-devices    leave the extra devices out: everything is shown, but\n"
"                 --cat refuses a file whose data is on them (the default\n"
"                 without --device, except that devices appended to IMAGE\n"
"                 are not read either)\n"
" --ls            show directory contents (INODE required)\n"
" --cat           show file contents (INODE required)\n"
" --nid=#         show the target inode info of nid #\n"
" --offset=#      skip # bytes at the beginning of IMAGE\n"
" --path=X        show the target inode info of path X\n"
"\n"
"Without an option, the superblock is shown.  Exit status: 0 success,\n"
"1 the image is corrupt or unsupported, 2 usage or operational error\n"
"(also: --cat of data on an extra device not given).\n");
}

enum { OPT_NID = 256, OPT_PATH, OPT_LS, OPT_CAT, OPT_DEVICE, OPT_OFFSET, OPT_NO_DEVICES };

static const struct option long_options[] = {
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ "nid", required_argument, NULL, OPT_NID },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "ls", no_argument, NULL, OPT_LS },
	{ "cat", no_argument, NULL, OPT_CAT },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "no-devices", no_argument, NULL, OPT_NO_DEVICES },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":VhSesx", long_options, NULL)) != -1) {
		switch (c) {
		case 'V':
			erofs_print_version("dump.erofs", NULL);
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
			if (!erofs_parse_u64("--nid", optarg, UINT64_MAX - 1, &o->nid))
				return -1;
			o->have_nid = true;
			o->path = NULL;
			break;
		case OPT_PATH:
			o->path = optarg;
			o->have_nid = false;
			break;
		case OPT_DEVICE:
			if (!erofs_add_device_arg(&o->devices, &o->nr_devices, optarg))
				return -1;
			break;
		case OPT_NO_DEVICES:
			o->no_devices = true;
			break;
		case OPT_OFFSET:
			if (!erofs_parse_u64("--offset", optarg, INT64_MAX, &o->offset))
				return -1;
			break;
		default:	/* ':' or '?' */
			erofs_getopt_error(c, argv);
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
	if (o->no_devices && o->nr_devices) {
		erofs_err("--device and --no-devices exclude each other");
		return -1;
	}
	if (!o->superblock && !o->statistics && !o->have_nid && !o->path)
		o->superblock = true;
	return 0;
}

/* -s from the superblock's own bytes, before (and whatever) the reader says */
static int show_super(const struct dump_opts *o)
{
	char err[EROFS_DUMP_ERRLEN + 4096];
	int ret = erofs_dump_super_file(stdout, o->image, o->offset, err, sizeof(err));

	if (ret)
		erofs_err("%s", err);
	return !ret ? EXIT_OK : ret == -EUCLEAN ? EXIT_CORRUPT : EXIT_USAGE;
}

/* The inode asked for: its nid, the path to show, the directory holding it. */
static int show_inode(struct erofs_dump *d, struct eforge_image *img, const struct dump_opts *o)
{
	struct eforge_super sb;
	uint64_t nid = o->nid, parent = EROFS_DUMP_PARENT_UNKNOWN;
	unsigned int what = 0;
	char *found = NULL;
	const char *shown;
	int ret = EXIT_OK, err;

	if (o->path && erofs_dump_lookup(d, o->path, &nid)) {
		erofs_err("%s: %s", o->image, d->err);
		return EXIT_CORRUPT;
	}
	if (o->cat) {
		err = erofs_dump_cat(d, nid);
		if (err) {
			fflush(stdout);
			erofs_err("%s: %s", o->image, d->err);
			/* a device not given: the command line's fault, not the image's */
			return err == -ENXIO ? EXIT_USAGE : EXIT_CORRUPT;
		}
		return EXIT_OK;
	}
	/* packed_nid is 0 without fragments */
	if (!eforge_super(img, &sb) && sb.packed_nid && nid == sb.packed_nid) {
		shown = "(packed file)";
	} else {
		err = erofs_dump_find_path(d, nid, &found, &parent);
		if (err) {
			/* the inode is still shown; the exit status tells */
			fflush(stdout);
			erofs_err("%s: looking for the path of nid %" PRIu64 ": %s", o->image, nid,
				  d->err);
			ret = EXIT_CORRUPT;
			parent = EROFS_DUMP_PARENT_UNKNOWN;
		}
		shown = found ? found : "(not found)";
		if (!found)
			parent = EROFS_DUMP_PARENT_UNKNOWN;
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

/* Shows -s and opens what the command line names; an exit status.  *img:
 * the image, open when there is more to show than the superblock. */
static int open_source(const struct dump_opts *o, struct eforge_image **img)
{
	const struct eforge_open_opts oo = {
		.offset = o->offset, .devices = o->devices, .nr_devices = o->nr_devices,
	};
	char err[8192];
	int ret;

	*img = NULL;
	if (o->superblock) {
		ret = show_super(o);
		/* with --device, the devices are checked against the table too */
		if (ret || (!o->statistics && !o->have_nid && !o->path && !o->nr_devices))
			return ret;
	}
	/* no --device at all is fine: what lies on a device is then unreadable */
	ret = eforge_open_flags(img, o->image, &oo, o->no_devices ? EFORGE_OPEN_NO_DEVICES : 0,
				err, sizeof(err));
	if (ret) {
		erofs_err("%s", err);
		/* the image's fault, or the command line's */
		return ret == -EUCLEAN || ret == -EOPNOTSUPP || ret == -EIO ? EXIT_CORRUPT : EXIT_USAGE;
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct dump_opts o;
	struct eforge_image *img;
	struct erofs_dump d;
	int ret;

	if (parse_args(argc, argv, &o)) {
		fprintf(stderr, "Try 'dump.erofs --help' for more information.\n");
		free(o.devices);
		return EXIT_USAGE;
	}
	ret = open_source(&o, &img);
	if (!img) {
		free(o.devices);
		return ret;
	}
	erofs_dump_init(&d, img, stdout);
	if (o.statistics && erofs_dump_statistics(&d)) {
		fflush(stdout);
		erofs_err("%s: %s", o.image, d.err);
		ret = EXIT_CORRUPT;
	}
	if (!ret && (o.have_nid || o.path))
		ret = show_inode(&d, img, &o);
	if (fflush(stdout) && !ret) {
		erofs_err("write error on standard output: %s", strerror(errno));
		ret = EXIT_USAGE;
	}
	eforge_close(img);
	free(o.devices);
	return ret;
}
