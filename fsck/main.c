// SPDX-License-Identifier: MIT
/*
 * fsck.erofs: check an EROFS image, optionally extracting its tree.  The
 * check itself is lib/check/check.c (include/erofs/check/check.h); this is its front
 * end: options, opening the image, the extraction target, the summary.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs-forge/erofs-forge.h"
#include "erofs/check/check.h"
#include "erofs/codec/version.h"
#include "erofs/common/cmdline.h"
#include "erofs/common/diag.h"
#include "erofs/dump/dump.h"
#include "erofs/check/extract.h"

#define EXIT_CLEAN	0
#define EXIT_CORRUPT	1
#define EXIT_USAGE	2

struct fsck_opts {
	const char *image;
	const char *extract_dir;	/* --extract=DIR */
	bool extract;			/* --extract given at all */
	bool stats;
	int debug;
	int preserve_owner;		/* -1: default (root) */
	int preserve_perms;
	bool force, overwrite;
	uint64_t offset;		/* --offset */
	const char **devices;		/* --device, in order */
	unsigned int nr_devices;
	int xattrs;			/* -1: default (restore them) */
	unsigned int workers;		/* 0: one per CPU */
	bool no_devices;		/* --no-devices */
	bool has_nid;
	uint64_t nid;			/* --nid */
	const char *path;		/* --path */
};

struct fsck {
	struct fsck_opts o;
	struct eforge_image *img;
	struct erofs_extractor x;
	bool extracting;
	struct erofs_check_result res;
};

/* ------------------------------------------------------------------ */
/* command line                                                        */

static void usage(FILE *out)
{
	fprintf(out,
"Usage: fsck.erofs [OPTIONS] IMAGE\n"
"Check the integrity of the EROFS image IMAGE; optionally extract it.\n"
"\n"
"Options:\n"
"  -V, --version          print the version number and exit\n"
"  -h, --help             display this help and exit\n"
"  -d N                   set the message level to N (0..9, default 2)\n"
"  -p                     print statistics (files, directories, bytes, image size,\n"
"                         compression ratio, the oldest Linux that mounts it)\n"
"  -a, -A, -y, -n         accepted for compatibility and ignored\n"
"  --extract[=DIR]        read every byte of every file; with DIR, also\n"
"                         recreate the tree below DIR\n"
"  --device=PATH          an extra device of a multi-device image (--blobdev,\n"
"                         --tar=i), once per device, in order\n"
"  --no-devices           without the extra devices: check everything but the\n"
"                         file data on them (counted as not verified); with\n"
"                         --extract=DIR, such files are not created\n"
"  --offset=BYTES         the image starts BYTES into the file\n"
"  --nid=NID              check or extract only the tree of inode NID\n"
"  --path=PATH            check or extract only the tree at PATH in the image\n"
"  --workers=N            read and decode file data on N threads (default: the\n"
"                         number of CPUs); the output is the same for any N\n"
"  --[no-]xattrs          restore extended attributes when extracting\n"
"                         (default: restore them)\n"
"\n"
"Extraction options (with --extract=DIR):\n"
"  --force                extract into a non-empty DIR, or into /\n"
"  --overwrite            replace entries that already exist below DIR\n"
"  --preserve             keep owner and permissions (default for root)\n"
"  --preserve-owner       set the owner and group of the image\n"
"  --preserve-perms       keep permissions exactly, including setuid,\n"
"                         setgid and sticky bits\n"
"  --no-preserve          extract as yourself, applying your umask\n"
"                         (default for other users)\n"
"  --no-preserve-owner    do not change owners\n"
"  --no-preserve-perms    apply your umask to permissions\n"
"\n"
"Exit status: 0 no errors, 1 the image is corrupted or extraction failed\n"
"(also: files not extracted under --no-devices), 2 usage or operational error\n"
"(bad option, IMAGE cannot be opened, an extra device not given, no such\n"
"--path or --nid).\n");
}

enum {
	OPT_EXTRACT = 256, OPT_FORCE, OPT_OVERWRITE, OPT_PRESERVE, OPT_NO_PRESERVE,
	OPT_PRESERVE_OWNER, OPT_PRESERVE_PERMS, OPT_NO_PRESERVE_OWNER,
	OPT_NO_PRESERVE_PERMS, OPT_DEVICE, OPT_XATTRS, OPT_NO_XATTRS, OPT_WORKERS, OPT_OFFSET,
	OPT_NID, OPT_PATH, OPT_NO_DEVICES,
};

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "extract", optional_argument, NULL, OPT_EXTRACT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "preserve", no_argument, NULL, OPT_PRESERVE },
	{ "no-preserve", no_argument, NULL, OPT_NO_PRESERVE },
	{ "preserve-owner", no_argument, NULL, OPT_PRESERVE_OWNER },
	{ "preserve-perms", no_argument, NULL, OPT_PRESERVE_PERMS },
	{ "no-preserve-owner", no_argument, NULL, OPT_NO_PRESERVE_OWNER },
	{ "no-preserve-perms", no_argument, NULL, OPT_NO_PRESERVE_PERMS },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "no-devices", no_argument, NULL, OPT_NO_DEVICES },
	{ "xattrs", no_argument, NULL, OPT_XATTRS },
	{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "nid", required_argument, NULL, OPT_NID },
	{ "path", required_argument, NULL, OPT_PATH },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct fsck_opts *o)
{
	bool extract_only_opts = false;
	uint64_t u;
	int c;

	memset(o, 0, sizeof(*o));
	o->debug = 2;
	o->preserve_owner = o->preserve_perms = o->xattrs = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Vhd:paAyn", long_options, NULL)) != -1) {
		switch (c) {
		case 'V':
			erofs_print_version("fsck.erofs", "available decompressors");
			exit(EXIT_CLEAN);
		case 'h':
			usage(stdout);
			exit(EXIT_CLEAN);
		case 'd':
			if (!erofs_parse_u64("debug level", optarg, 9, &u))
				return -1;
			o->debug = (int)u;
			break;
		case 'p':
			o->stats = true;
			break;
		case 'a': case 'A': case 'y': case 'n':
			break;
		case OPT_XATTRS:
			o->xattrs = 1;
			break;
		case OPT_NO_XATTRS:
			o->xattrs = 0;
			break;
		case OPT_WORKERS:
			u = 1;
			if (!erofs_parse_u64("--workers", optarg, 1024, &u) || !u) {
				if (!u)
					erofs_err("--workers needs at least 1");
				return -1;
			}
			o->workers = (unsigned int)u;
			break;
		case OPT_OFFSET:
			if (!erofs_parse_u64("--offset", optarg, INT64_MAX, &o->offset))
				return -1;
			break;
		case OPT_NID:
			if (!erofs_parse_u64("--nid", optarg, UINT64_MAX - 1, &o->nid))
				return -1;
			o->has_nid = true;
			break;
		case OPT_PATH:
			if (!*optarg) {
				erofs_err("--path needs a path");
				return -1;
			}
			o->path = optarg;
			break;
		case OPT_EXTRACT:
			o->extract = true;
			if (optarg) {
				if (!*optarg) {
					erofs_err("--extract= needs a directory");
					return -1;
				}
				o->extract_dir = optarg;
			}
			break;
		case OPT_FORCE:
			o->force = extract_only_opts = true;
			break;
		case OPT_OVERWRITE:
			o->overwrite = extract_only_opts = true;
			break;
		case OPT_PRESERVE:
			o->preserve_owner = o->preserve_perms = 1;
			extract_only_opts = true;
			break;
		case OPT_NO_PRESERVE:
			o->preserve_owner = o->preserve_perms = 0;
			extract_only_opts = true;
			break;
		case OPT_PRESERVE_OWNER:
			o->preserve_owner = 1;
			extract_only_opts = true;
			break;
		case OPT_PRESERVE_PERMS:
			o->preserve_perms = 1;
			extract_only_opts = true;
			break;
		case OPT_NO_PRESERVE_OWNER:
			o->preserve_owner = 0;
			extract_only_opts = true;
			break;
		case OPT_NO_PRESERVE_PERMS:
			o->preserve_perms = 0;
			extract_only_opts = true;
			break;
		case OPT_NO_DEVICES:
			o->no_devices = true;
			break;
		case OPT_DEVICE:
			if (!erofs_add_device_arg(&o->devices, &o->nr_devices, optarg))
				return -1;
			break;
		default:	/* ':' or '?' */
			erofs_getopt_error(c, argv);
			return -1;
		}
	}
	if (optind >= argc) {
		erofs_err("missing IMAGE");
		return -1;
	}
	if (optind + 1 < argc) {
		erofs_err("unexpected argument '%s' (only one IMAGE; use --extract=DIR)",
			  argv[optind + 1]);
		return -1;
	}
	o->image = argv[optind];
	if (extract_only_opts && !o->extract_dir)
		erofs_warn("extraction options are ignored without --extract=DIR");
	if (o->no_devices && o->nr_devices) {
		erofs_err("--device and --no-devices exclude each other");
		return -1;
	}
	return 0;
}

/* The oldest Linux that mounts the image, from its superblock. */
static void print_kernel_needs(const struct fsck *f, const struct eforge_super *sb)
{
	struct eforge_linux lx;

	eforge_needs_linux(f->img, &lx);
	printf("  features:           ");
	erofs_dump_feature_names(stdout, sb->feature_compat, sb->feature_incompat);
	printf("\n  kernel:             %s\n", lx.why);
}

static void print_stats(const struct fsck *f)
{
	const struct erofs_check_stats *st = &f->res.st;
	struct eforge_super sb;
	uint64_t bytes, blocks;

	eforge_super(f->img, &sb);
	erofs_check_image_size(f->img, &bytes, &blocks);
	printf("Statistics for %s:\n", f->o.image);
	printf("  directories:        %" PRIu64 "\n", st->ndirs);
	printf("  regular files:      %" PRIu64 "\n", st->nfiles);
	printf("  symlinks:           %" PRIu64 "\n", st->nsymlinks);
	printf("  special files:      %" PRIu64 "\n", st->nspecial);
	printf("  extra hard links:   %" PRIu64 "\n", st->nlinks_extra);
	printf("  file data bytes:    %" PRIu64 "\n", st->data_bytes);
	if (st->nzfiles)
		printf("  compressed files:   %" PRIu64 ", %" PRIu64 " bytes stored in %" PRIu64
		       " bytes (%.2f%%)\n", st->nzfiles, st->zlogical, st->zphysical,
		       st->zlogical ? 100.0 * (double)st->zphysical / (double)st->zlogical : 0.0);
	else
		printf("  compressed files:   0\n");
	if (st->has_packed || st->nfragfiles)
		printf("  fragments:          %" PRIu64 " files, %" PRIu64 " bytes in a packed inode of %"
		       PRIu64 " bytes stored in %" PRIu64 " bytes\n", st->nfragfiles, st->fragbytes,
		       st->packed_size, st->packed_physical);
	printf("  image size:         %" PRIu64 " bytes (%" PRIu64 " blocks)\n", bytes, blocks);
	if (f->o.no_devices && sb.extra_devices)
		printf("  not verified:       %" PRIu64 " files, %" PRIu64 " bytes of data on %u extra device%s not given (--no-devices)\n",
		       st->nunverified, st->unverified_bytes, sb.extra_devices,
		       sb.extra_devices == 1 ? "" : "s");
	print_kernel_needs(f, &sb);
}

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (unsigned int)(n < 1024 ? n : 1024) : 1;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The image, with its extra devices: each one, as Linux wants -o device=
 * (a missing one is named, with the way out), or, with --no-devices,
 * none.  0, or the exit status.
 */
static int open_image(struct fsck *f)
{
	const struct eforge_open_opts oo = {
		.offset = f->o.offset, .devices = f->o.devices, .nr_devices = f->o.nr_devices,
	};
	char err[8192];
	int ret = eforge_open_flags(&f->img, f->o.image, &oo,
				    f->o.no_devices ? EFORGE_OPEN_NO_DEVICES : EFORGE_OPEN_ALL_DEVICES,
				    err, sizeof(err));

	if (!ret)
		return 0;
	if (ret == -ENXIO)	/* fewer devices than the table has */
		erofs_err("%s; or check all but their data with --no-devices", err);
	else
		erofs_err("%s", err);
	/* the image's fault, or the command line's */
	return ret == -EUCLEAN || ret == -EOPNOTSUPP || ret == -EIO ? EXIT_CORRUPT : EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct fsck f;
	struct erofs_check_opts co;
	unsigned long errors;
	int err, ret;

	memset(&f, 0, sizeof(f));
	if (parse_args(argc, argv, &f.o)) {
		usage(stderr);
		free(f.o.devices);
		return EXIT_USAGE;
	}
	ret = open_image(&f);
	if (ret) {
		free(f.o.devices);
		return ret;
	}
	if (f.o.debug >= 3)
		erofs_check_print_super(stdout, f.img);
	memset(&co, 0, sizeof(co));
	if (f.o.path) {
		err = erofs_check_start_path(f.img, f.o.path, &co);
		if (err) {
			erofs_err("%s: --path %s: %s", f.o.image, f.o.path,
				  err == -ENOENT ? "no such file or directory" : eforge_error(f.img));
			ret = err == -ENOENT || err == -ENOTDIR ? EXIT_USAGE : EXIT_CORRUPT;
			goto out;
		}
	} else if (f.o.has_nid) {
		erofs_check_start_nid(f.img, f.o.nid, &co);
	}

	if (f.o.extract_dir) {
		struct erofs_extract_opts xo;
		bool root = geteuid() == 0;

		xo.force = f.o.force;
		xo.overwrite = f.o.overwrite;
		xo.preserve_owner = f.o.preserve_owner < 0 ? root : f.o.preserve_owner;
		xo.preserve_perms = f.o.preserve_perms < 0 ? root : f.o.preserve_perms;
		xo.xattrs = f.o.xattrs != 0;
		raise_nofile();
		if (erofs_check_extract_open(&f.x, f.img, &co, f.o.extract_dir, &xo)) {
			ret = EXIT_USAGE;
			goto out;
		}
		f.extracting = true;
	}

	co.debug = f.o.debug;
	co.no_devices = f.o.no_devices;
	co.x = f.extracting ? &f.x : NULL;
	co.workers = f.o.workers ? f.o.workers : online_cpus();
	if (erofs_check_image_handle(f.img, &co, &f.res)) {
		erofs_err("out of memory");
		ret = EXIT_USAGE;
		goto out;
	}
	errors = f.res.errors;
	if (f.extracting) {
		errors += f.x.errors;
		erofs_extract_close(&f.x);
		f.extracting = false;
	}
	if (f.o.stats)
		print_stats(&f);
	if (f.res.st.nunverified && f.o.debug >= 2)
		printf("%s: the data of %" PRIu64 " file%s (%" PRIu64 " bytes) is on extra devices not given: not %s (--no-devices)\n",
		       f.o.image, f.res.st.nunverified, f.res.st.nunverified == 1 ? "" : "s",
		       f.res.st.unverified_bytes, f.o.extract_dir ?
		       "verified nor extracted" : "verified");
	if (errors) {
		erofs_err("%s: %lu error%s found", f.o.image, errors, errors == 1 ? "" : "s");
		ret = EXIT_CORRUPT;
	} else if (f.res.st.nnot_extracted) {
		/* the image is sound as far as it was checked, but DIR is not its tree */
		erofs_err("%s: no errors found, but %" PRIu64 " entr%s not extracted: %s data is on extra devices not given (--no-devices)",
			  f.o.image, f.res.st.nnot_extracted,
			  f.res.st.nnot_extracted == 1 ? "y" : "ies",
			  f.res.st.nnot_extracted == 1 ? "its" : "their");
		ret = EXIT_CORRUPT;
	} else {
		if (f.o.debug >= 2)
			printf("%s: no errors found\n", f.o.image);
		ret = EXIT_CLEAN;
	}
out:
	if (f.extracting)
		erofs_extract_close(&f.x);
	eforge_close(f.img);
	free(f.o.devices);
	return ret;
}
