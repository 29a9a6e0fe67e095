// SPDX-License-Identifier: MIT
/*
 * mkfs.erofs front end: parses the command line (spelled as erofs-utils'
 * mkfs.erofs spells it), then scans, plans and writes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "erofs/build/kneeds.h"
#include "erofs/build/incremental.h"
#include "erofs/build/mkfs.h"
#include "erofs/codec/codec.h"
#include "erofs/codec/version.h"
#include "erofs/common/build.h"
#include "erofs/common/cmdline.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/common/kernel.h"
#include "erofs/source/xattr.h"
#include "optvalues.h"
#include "opts48.h"
#include "timeopts.h"
#include "usage.h"
#include "rebuild.h"
#include "vmdk.h"

enum {
	OPT_ALL_ROOT = 256, OPT_FORCE_UID, OPT_FORCE_GID, OPT_UID_OFFSET, OPT_GID_OFFSET,
	OPT_EXCLUDE_PATH, OPT_EXCLUDE_REGEX, OPT_QUIET, OPT_HELP, OPT_IGNORE_MTIME,
	OPT_HARD_DEREF, OPT_MKFS_TIME, OPT_WORKERS, OPT_COMPRESS_HINTS, OPT_CHUNKSIZE,
	/* Android */
	OPT_MOUNT_POINT, OPT_PRODUCT_OUT, OPT_FS_CONFIG_FILE, OPT_FILE_CONTEXTS,
	OPT_BLOCK_LIST_FILE, OPT_XATTR_PREFIX,
	OPT_BLOBDEV,
	/* tar input */
	OPT_TAR, OPT_AUFS, OPT_OVLFS_STRIP, OPT_SORT, OPT_UNGZIP, OPT_UNXZ, OPT_UNZSTD,
	OPT_MAX_KERNEL,
	/* erofs-utils 1.9.4 spellings */
	OPT_ALL_TIME, OPT_PRESERVE_MTIME, OPT_ASYNC_QUEUE_LIMIT, OPT_NETWORK_SOURCE,
	OPT_FSALIGNBLKS, OPT_ZFEATURE_BITS, OPT_OFFSET, OPT_ROOT_XATTR_ISIZE, OPT_CLEAN, OPT_INCREMENTAL, OPT_DSUNIT, OPT_MAX_EXTENT_BYTES,
	OPT_GZINFO, OPT_VMDK_DESC, OPT_XATTR_INODE_DIGEST, OPT_ZD, OPT_MZ,
};

/* What the command line says beyond the build options themselves. */
struct mkfs_cmdline {
	const char *max_kernel;		/* --max-kernel=X.Y */
	bool build_time_only;		/* bare --mkfs-time: -T is the build time only */
	const char *compress_hints;	/* read once -b and -C are known */
	const char *vmdk_desc;		/* --vmdk-desc: written after the image */
	bool block_size_given;		/* -b: else rebuild mode takes the first layer's */
	bool uuid_given;		/* -U: else --incremental keeps the image's */
	const char *incremental;	/* --incremental=MODE; NULL: not given */
	const char *clean;		/* --clean=MODE as given; NULL: not given */
};

static const struct option long_options[] = {
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
	{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
	{ "uid-offset", required_argument, NULL, OPT_UID_OFFSET },
	{ "gid-offset", required_argument, NULL, OPT_GID_OFFSET },
	{ "exclude-path", required_argument, NULL, OPT_EXCLUDE_PATH },
	{ "exclude-regex", required_argument, NULL, OPT_EXCLUDE_REGEX },
	{ "ignore-mtime", no_argument, NULL, OPT_IGNORE_MTIME },
	{ "hard-dereference", no_argument, NULL, OPT_HARD_DEREF },
	{ "mkfs-time", optional_argument, NULL, OPT_MKFS_TIME },
	{ "all-time", no_argument, NULL, OPT_ALL_TIME },
	{ "preserve-mtime", no_argument, NULL, OPT_PRESERVE_MTIME },
	{ "async-queue-limit", required_argument, NULL, OPT_ASYNC_QUEUE_LIMIT },
	{ "fsalignblks", required_argument, NULL, OPT_FSALIGNBLKS },
	{ "zfeature-bits", required_argument, NULL, OPT_ZFEATURE_BITS },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "root-xattr-isize", required_argument, NULL, OPT_ROOT_XATTR_ISIZE },
	{ "clean", optional_argument, NULL, OPT_CLEAN },
	{ "vmdk-desc", required_argument, NULL, OPT_VMDK_DESC },
	{ "unlzma", optional_argument, NULL, OPT_UNXZ },
	{ "zD", optional_argument, NULL, OPT_ZD },
	{ "MZ", optional_argument, NULL, OPT_MZ },
	/* erofs-utils 1.9.4 options not implemented here yet: refused by name,
	 * so a script learns why instead of reading "unrecognized" */
	{ "max-extent-bytes", required_argument, NULL, OPT_MAX_EXTENT_BYTES },
	{ "gzinfo", optional_argument, NULL, OPT_GZINFO },
	{ "dsunit", required_argument, NULL, OPT_DSUNIT },

	{ "incremental", optional_argument, NULL, OPT_INCREMENTAL },
	{ "s3", optional_argument, NULL, OPT_NETWORK_SOURCE },
	{ "oci", optional_argument, NULL, OPT_NETWORK_SOURCE },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "compress-hints", required_argument, NULL, OPT_COMPRESS_HINTS },
	{ "chunksize", required_argument, NULL, OPT_CHUNKSIZE },
	{ "blobdev", required_argument, NULL, OPT_BLOBDEV },
	{ "mount-point", required_argument, NULL, OPT_MOUNT_POINT },
	{ "product-out", required_argument, NULL, OPT_PRODUCT_OUT },
	{ "fs-config-file", required_argument, NULL, OPT_FS_CONFIG_FILE },
	{ "file-contexts", required_argument, NULL, OPT_FILE_CONTEXTS },
	{ "block-list-file", required_argument, NULL, OPT_BLOCK_LIST_FILE },
	{ "xattr-prefix", required_argument, NULL, OPT_XATTR_PREFIX },
	{ "xattr-inode-digest", optional_argument, NULL, OPT_XATTR_INODE_DIGEST },
	{ "tar", optional_argument, NULL, OPT_TAR },
	{ "aufs", no_argument, NULL, OPT_AUFS },
	{ "ovlfs-strip", optional_argument, NULL, OPT_OVLFS_STRIP },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "ungzip", optional_argument, NULL, OPT_UNGZIP },
	{ "gzip", no_argument, NULL, OPT_UNGZIP },
	{ "unxz", optional_argument, NULL, OPT_UNXZ },
	{ "unzstd", optional_argument, NULL, OPT_UNZSTD },
	{ "max-kernel", required_argument, NULL, OPT_MAX_KERNEL },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* --blobdev: chunks only (as in erofs-utils), somewhere else than the image. */
static int check_blobdev(const struct erofs_build_options *opts)
{
	if (!*opts->blobdev) {
		erofs_err("--blobdev= needs a file");
		return -EINVAL;
	}
	if (!opts->chunkbits) {
		erofs_err("--blobdev=%s needs --chunksize: the blob holds chunks", opts->blobdev);
		return -EINVAL;
	}
	if (!strcmp(opts->blobdev, opts->image)) {
		erofs_err("--blobdev=%s: the blob cannot be the image itself", opts->blobdev);
		return -EINVAL;
	}
	if (opts->block_list_file) {
		erofs_err("--blobdev cannot be used with --block-list-file: the blocks are not in the image");
		return -EINVAL;
	}
	return 0;
}

/*
 * --tar=i: the data stays in the tar, so nothing may transform it, and the
 * device form addresses it in the tar's own 512-byte blocks (forced, as
 * erofs-utils does).
 */
static int check_tar_index(struct erofs_build_options *opts, int nr_args)
{
	if (nr_args != 1 && nr_args != 2) {
		erofs_err("--tar=i: expected IMAGE and optionally TARBALL (else standard input)");
		return -EINVAL;
	}
	if (opts->compressor != EROFS_COMPRESS_NONE || opts->chunkbits || opts->blobdev ||
	    opts->fragments || opts->dedupe || opts->block_list_file ||
	    (opts->tar_decoder && !opts->tar_dump_file)) {
		erofs_err("--tar=i keeps file data in the tar as it is: no -z, --chunksize, "
			  "--blobdev, -E fragments or dedupe, --block-list-file, or --un* "
			  "without =FILE for the decoded tar");
		return -EINVAL;
	}
	if (!opts->tar_mapfile && opts->blkszbits != EROFS_MAX_BLKSZBITS &&
	    opts->blkszbits != EROFS_MIN_BLKSZBITS) {
		erofs_err("--tar=i: the tar is a device of 512-byte blocks; -b %u needs --tar=i,MAPFILE",
			  1u << opts->blkszbits);
		return -EINVAL;
	}
	if (!opts->tar_mapfile)
		opts->blkszbits = EROFS_MIN_BLKSZBITS;
	opts->share_identical_files = false;
	return 0;
}

/*
 * What identical data may share, unless -E dedupe or --chunksize asks:
 * - -E fragments shares identical pclusters between files too, as
 *   erofs-utils 1.9 does (a file that begins as an earlier one did shares
 *   its pclusters): /usr/share/doc of Debian 12 with -zlz4hc -E fragments
 *   was 16% bigger without.  Only whole pclusters that compress alike:
 *   dedupe's extra cut points cost 0.2-1% on big pclusters.  Not after
 *   -E ^dedupe.
 * - identical files share their data.
 * Neither with --block-list-file, whose readers refuse a block listed twice,
 * nor in an Android build (--mount-point with --product-out or
 * --fs-config-file): AOSP builds the same tree without a block list at `m`
 * time and with one at the dist step, and both must give the same bytes
 * (a partition of fixed size that fits at `m` time must fit at dist).
 */
static void decide_sharing(struct erofs_build_options *opts)
{
	bool android_build = opts->mount_point && (opts->product_out || opts->fs_config_file);
	bool blocks_apart = opts->block_list_file || android_build;

	opts->share_pclusters = opts->compressor != EROFS_COMPRESS_NONE &&
		(opts->dedupe || (opts->fragments && !blocks_apart && !opts->dedupe_declined));
	/* as erofs-utils does: without compression, -E dedupe shares identical
	 * blocks through chunks of one block */
	if (opts->dedupe && opts->compressor == EROFS_COMPRESS_NONE && !opts->chunkbits)
		opts->chunkbits = opts->blkszbits;
	opts->share_identical_files = !blocks_apart || opts->dedupe || opts->chunkbits;
}

static int parse_args(int argc, char **argv, struct erofs_build_options *opts,
		      struct mkfs_cmdline *cl)
{
	int64_t v;
	int c, rebuild;

	while ((c = getopt_long(argc, argv, "b:d:E:L:T:U:Vhx:z:C:m:", long_options, NULL)) != -1) {
		int err = 0;

		switch (c) {
		case 'b':
			err = mkfs_parse_block_size(optarg, opts);
			cl->block_size_given = true;
			break;
		case 'd':
			err = mkfs_parse_int64(optarg, "debug level", 0, 9, &v);
			opts->debug_level = (int)v;
			break;
		case 'E': err = mkfs_parse_extended(optarg, opts); break;
		case 'L':
			if (strlen(optarg) > EROFS_MAX_LABEL_LEN) {
				erofs_err("volume label '%s' is longer than %u bytes", optarg,
					  EROFS_MAX_LABEL_LEN);
				err = -EINVAL;
			}
			strncpy(opts->label, optarg, sizeof(opts->label) - 1);
			break;
		case 'T':
			err = mkfs_parse_int64(optarg, "timestamp", INT64_MIN, INT64_MAX, &opts->fixed_time);
			opts->time_policy = EROFS_TIME_FIXED;
			break;
		case 'U':
			err = mkfs_parse_uuid(optarg, opts);
			cl->uuid_given = true;
			break;
		case 'x':
			err = mkfs_parse_int64(optarg, "xattr tolerance", INT32_MIN, INT32_MAX, &v);
			opts->xattr_tolerance = (int)v;
			break;
		case 'z': err = mkfs_parse_compressor(optarg, opts); break;
		case 'm': err = mkfs_parse_metabox(optarg, opts); break;
		case 'C':
			err = mkfs_parse_int64(optarg, "pcluster size", 1, EROFS_PCLUSTER_MAX_SIZE, &v);
			opts->pcluster_size = (uint32_t)v;
			break;
		case OPT_COMPRESS_HINTS: cl->compress_hints = optarg; break;
		case OPT_CHUNKSIZE:
			err = mkfs_parse_int64(optarg, "chunk size", 512, (int64_t)1 << 40, &v);
			if (!err && (v & (v - 1))) {
				erofs_err("--chunksize=%s: not a power of two", optarg);
				err = -EINVAL;
			}
			for (opts->chunkbits = 0; !err && (1ll << opts->chunkbits) < v; )
				opts->chunkbits++;
			break;
		case OPT_WORKERS:
			/* 0, as in erofs-utils: one per online CPU (main() counts them) */
			err = mkfs_parse_int64(optarg, "worker count", 0, 1024, &v);
			opts->workers = (unsigned int)v;
			break;
		case 'V':
			erofs_print_version("mkfs.erofs", "available compressors");
			exit(0);
		case 'h':
		case OPT_HELP:
			mkfs_usage(stdout);
			exit(0);
		case OPT_ALL_ROOT: opts->all_root = true; break;
		case OPT_FORCE_UID:
			err = mkfs_parse_int64(optarg, "uid", 0, UINT32_MAX, &opts->force_uid);
			break;
		case OPT_FORCE_GID:
			err = mkfs_parse_int64(optarg, "gid", 0, UINT32_MAX, &opts->force_gid);
			break;
		case OPT_UID_OFFSET:
			err = mkfs_parse_int64(optarg, "uid offset", 0, UINT32_MAX, &v);
			opts->uid_offset = (uint32_t)v;
			break;
		case OPT_GID_OFFSET:
			err = mkfs_parse_int64(optarg, "gid offset", 0, UINT32_MAX, &v);
			opts->gid_offset = (uint32_t)v;
			break;
		case OPT_EXCLUDE_PATH: err = mkfs_add_exclude(opts, optarg, false); break;
		case OPT_EXCLUDE_REGEX: err = mkfs_add_exclude(opts, optarg, true); break;
		case OPT_IGNORE_MTIME: opts->ignore_mtime = true; break;
		case OPT_HARD_DEREF: opts->hard_dereference = true; break;
		case OPT_MKFS_TIME:
			/* bare, as erofs-utils spells it: -T's time is the build time only */
			if (!optarg) {
				cl->build_time_only = true;
				break;
			}
			err = mkfs_parse_int64(optarg, "mkfs time", INT64_MIN, INT64_MAX, &opts->mkfs_time);
			opts->mkfs_time_set = true;
			break;
		case OPT_ALL_TIME: cl->build_time_only = false; break;
		case OPT_PRESERVE_MTIME: opts->ignore_mtime = false; break;
		case OPT_ASYNC_QUEUE_LIMIT:
			/* erofs-utils bounds its job ring with it; ours is bounded by --workers */
			err = mkfs_parse_int64(optarg, "async queue limit", 0, INT32_MAX, &v);
			break;
		case OPT_XATTR_PREFIX: err = mkfs_add_xattr_prefix(opts, optarg); break;
		case OPT_XATTR_INODE_DIGEST: err = mkfs_set_inode_digest(opts, optarg); break;
		case OPT_QUIET: opts->quiet = true; break;
		case OPT_MOUNT_POINT: opts->mount_point = optarg; break;
		case OPT_PRODUCT_OUT: opts->product_out = optarg; break;
		case OPT_FS_CONFIG_FILE: opts->fs_config_file = optarg; break;
		case OPT_FILE_CONTEXTS: opts->file_contexts = optarg; break;
		case OPT_BLOCK_LIST_FILE: opts->block_list_file = optarg; break;
		case OPT_BLOBDEV: opts->blobdev = optarg; break;
		case OPT_TAR:
			if (!optarg || !strcmp(optarg, "f")) {	/* bare --tar: erofs-utils' f */
				opts->tar = true;
			} else if (!strcmp(optarg, "i") || !strncmp(optarg, "i,", 2)) {
				opts->tar = opts->tar_index = true;
				if (optarg[1] && !*(opts->tar_mapfile = optarg + 2)) {
					erofs_err("--tar=i,: the map file name is empty");
					err = -EINVAL;
				}
			} else if (!strcmp(optarg, "headerball")) {
				opts->tar = opts->tar_headerball = true;
			} else {
				erofs_err("--tar=%s: expected f (a full image), i (an index of the tar, "
					  "its extra device), i,MAPFILE or headerball", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_AUFS: opts->aufs = true; break;
		case OPT_OVLFS_STRIP:
			opts->ovlfs_strip = !optarg || !strcmp(optarg, "1");
			if (optarg && strcmp(optarg, "0") && strcmp(optarg, "1")) {
				erofs_err("--ovlfs-strip=%s: expected 0 or 1", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_SORT:
			opts->tar_sort_none = !strcmp(optarg, "none");
			if (strcmp(optarg, "none") && strcmp(optarg, "path")) {
				erofs_err("--sort=%s: expected path or none", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_UNGZIP: case OPT_UNXZ: case OPT_UNZSTD:
			opts->tar_decoder = c == OPT_UNGZIP ? EROFS_TAR_GZIP :
					    c == OPT_UNXZ ? EROFS_TAR_XZ : EROFS_TAR_ZSTD;
			/* =FILE: the decoded tar kept there too (with --tar=i, the
			 * extra device the index points into) */
			opts->tar_dump_file = optarg;
			break;
		case OPT_MAX_KERNEL: cl->max_kernel = optarg; break;
		case OPT_MAX_EXTENT_BYTES:
			err = mkfs_parse_int64(optarg, "--max-extent-bytes", INT32_MIN, INT32_MAX, &v);
			/* negative: erofs-utils' fixed-input unaligned extents of -E48bit */
			opts->fixed_extents = v < 0;
			opts->max_extent_bytes = (uint32_t)(v > 0 ? v : -v);
			break;
		case OPT_DSUNIT:
			err = mkfs_parse_int64(optarg, "--dsunit block count", 0, INT32_MAX, &v);
			opts->dsunit = (uint32_t)v;
			break;
		case OPT_FSALIGNBLKS:
			err = mkfs_parse_int64(optarg, "--fsalignblks block count", 1, INT32_MAX, &v);
			opts->fsalign_blocks = (uint32_t)v;
			break;
		case OPT_ZFEATURE_BITS: err = mkfs_parse_zfeature_bits(optarg, opts); break;
		case OPT_ROOT_XATTR_ISIZE:
			/* the header and 0xFFFE four-byte units at most (h_icount) */
			err = mkfs_parse_int64(optarg, "--root-xattr-isize bytes", 0,
					       EROFS_XATTR_IBODY_HEADER_SIZE + 4 * 0xFFFE, &v);
			opts->root_xattr_isize = (uint32_t)v;
			break;
		case OPT_OFFSET:
			err = mkfs_parse_int64(optarg, "--offset bytes", 0, INT64_MAX / 2, &v);
			opts->image_offset = (uint64_t)v;
			break;
		case OPT_CLEAN: cl->clean = optarg ? optarg : "data"; break;
		case OPT_INCREMENTAL: cl->incremental = optarg ? optarg : "data"; break;
		case OPT_VMDK_DESC: cl->vmdk_desc = optarg; break;
		case OPT_ZD: err = mkfs_parse_zd(optarg, opts); break;
		case OPT_MZ: err = mkfs_parse_mz(optarg, opts); break;
		case OPT_GZINFO:
			/* an index of gzip access points in AWS SOCI's zinfo form: no
			 * public reader of it here to check what would be written */
			erofs_err("%s: gzip random-access indexes (SOCI zinfo) are not "
				  "supported; nothing written", argv[optind - 1]);
			return -EOPNOTSUPP;
		case OPT_NETWORK_SOURCE:
			/* as an erofs-utils build without libcurl/S3 or OCI support */
			erofs_err("%s: sources fetched over the network are not supported: "
				  "fetch them first and give a directory or a tar", argv[optind - 1]);
			return -EOPNOTSUPP;
		default:	/* getopt named the option */
			fputs("Try 'mkfs.erofs --help' for the options.\n", stderr);
			return -EINVAL;
		}
		if (err)
			return err;
	}
	if (cl->clean && cl->incremental) {
		erofs_err("--clean and --incremental: a new image or one added to, not both");
		return -EINVAL;
	}
	if ((rebuild = mkfs_rebuild_detect(argc, argv, optind, opts, cl->block_size_given)) < 0 ||
	    mkfs_rebuild_clean(cl->clean, opts) ||
	    mkfs_incremental_setup(argc, argv, optind, opts, cl->incremental,
				   cl->block_size_given, cl->uuid_given))
		return -EINVAL;
	if (opts->inode_digest && (opts->incremental || opts->nr_layers)) {
		/* their kept files are not read again, so nothing to hash */
		erofs_err("--xattr-inode-digest: not with %s; build from a directory or a tar",
			  opts->incremental ? "--incremental" : "image sources (rebuild mode)");
		return -EINVAL;
	}
	if (opts->inode_digest && opts->nr_xattr_prefixes >= EROFS_XATTR_LONG_PREFIX_MAX) {
		erofs_err("--xattr-inode-digest: its long prefix would be number %u, at most %u",
			  opts->nr_xattr_prefixes + 1, EROFS_XATTR_LONG_PREFIX_MAX);
		return -EINVAL;
	}
	if (!opts->pcluster_size)
		opts->pcluster_size = 1u << opts->blkszbits;
	if (opts->pcluster_size % (1u << opts->blkszbits)) {
		erofs_err("-C %u: the pcluster size must be a multiple of the block size %u",
			  opts->pcluster_size, 1u << opts->blkszbits);
		return -EINVAL;
	}
	if (opts->packed_pcluster_size % (1u << opts->blkszbits)) {
		erofs_err("-E fragments=%u: the pcluster size must be a multiple of the block size %u",
			  opts->packed_pcluster_size, 1u << opts->blkszbits);
		return -EINVAL;
	}
	if (opts->max_extent_bytes && !opts->fixed_extents &&
	    opts->max_extent_bytes < 1u << opts->blkszbits) {
		/* one extent may start per lcluster: none shorter than a block */
		erofs_err("--max-extent-bytes=%u: at least the block size, %u", opts->max_extent_bytes,
			  1u << opts->blkszbits);
		return -EINVAL;
	}
	if (opts->fixed_extents && mkfs_check_fixed_extents(opts))
		return -EINVAL;
	if (opts->fragments && opts->compressor == EROFS_COMPRESS_NONE) {
		erofs_err("-E %s needs -z: fragments are compressed together",
			  opts->all_fragments ? "all-fragments" : "fragments");
		return -EINVAL;
	}
	if (cl->compress_hints && mkfs_read_compress_hints(cl->compress_hints, opts))
		return -EINVAL;
	if (opts->chunkbits && (opts->chunkbits < opts->blkszbits ||
				opts->chunkbits > opts->blkszbits + 31)) {
		erofs_err("--chunksize: %llu is not between the block size and 2^31 blocks",
			  1ull << opts->chunkbits);
		return -EINVAL;
	}
	if (opts->chunkbits && opts->compressor != EROFS_COMPRESS_NONE) {
		erofs_err("--chunksize applies to uncompressed images: use it without -z");
		return -EINVAL;
	}
	if (opts->nr_hints && opts->compressor == EROFS_COMPRESS_NONE) {
		erofs_err("--compress-hints needs -z");
		return -EINVAL;
	}
	for (size_t i = 0; i < opts->nr_hints; i++)
		if (opts->hints[i].algorithm >= opts->nr_algorithms) {
			erofs_err("--compress-hints: algorithm index %u, but -z lists %u algorithm%s",
				  opts->hints[i].algorithm, opts->nr_algorithms,
				  opts->nr_algorithms == 1 ? "" : "s");
			return -EINVAL;
		}
	decide_sharing(opts);
	if (opts->tar && (opts->mount_point || opts->product_out || opts->fs_config_file ||
			  opts->file_contexts || opts->nr_excludes)) {
		erofs_err("--tar=f: the Android options and --exclude-* apply to directories only");
		return -EINVAL;
	}
	if (mkfs_rebuild_check(opts))
		return -EINVAL;
	if (opts->chunk_form == EROFS_CHUNKS_BLOCKMAP && erofs_opts_extra_device(opts)) {
		/* a block map names no device: erofs-utils refuses this too */
		erofs_err("-E force-inode-blockmap: %s puts chunks on an extra device, which "
			  "only 8-byte chunk indexes can name", opts->blobdev ? "--blobdev" : "--tar=i");
		return -EINVAL;
	}
	if (opts->tar_index && check_tar_index(opts, argc - optind))
		return -EINVAL;
	if (opts->tar && argc - optind == 1) {	/* the tar from standard input */
		opts->image = argv[optind];
		return 0;
	}
	if (mkfs_check_metabox(opts))
		return -EINVAL;
	/* dictionaries default to a multiple of the largest pcluster */
	for (unsigned int i = 0; i < opts->nr_algorithms; i++) {
		uint32_t largest = opts->pcluster_size > opts->packed_pcluster_size
					   ? opts->pcluster_size : opts->packed_pcluster_size;

		for (size_t h = 0; h < opts->nr_hints; h++)
			if (opts->hints[h].pcluster_size > largest)
				largest = opts->hints[h].pcluster_size;
		erofs_codec_resolve(&opts->algorithms[i], largest);
	}
	if (rebuild)
		return opts->blobdev ? check_blobdev(opts) : 0;
	if (argc - optind != 2) {
		erofs_err(opts->tar ? "expected IMAGE and optionally TARBALL (see --help)"
				    : "expected IMAGE and SOURCE_DIRECTORY (see --help)");
		return -EINVAL;
	}
	if (!opts->tar && (opts->aufs || opts->ovlfs_strip || opts->tar_decoder)) {
		erofs_err("--aufs, --ovlfs-strip, --ungzip, --unxz and --unzstd need --tar=f "
			  "(--ovlfs-strip also applies to rebuild mode)");
		return -EINVAL;
	}
	opts->image = argv[optind];
	opts->source = argv[optind + 1];
	return opts->blobdev ? check_blobdev(opts) : 0;
}

/* --max-kernel=X.Y: every option needing a newer release is an error. */
static int check_max_kernel(const struct erofs_build_options *opts, const char *max_kernel)
{
	struct erofs_kneeds needs;
	struct erofs_kversion max;
	unsigned int refused;

	if (!max_kernel)
		return 0;
	if (erofs_kversion_parse(max_kernel, &max)) {
		erofs_err("--max-kernel=%s: expected a Linux release X.Y, such as 6.1", max_kernel);
		return -EINVAL;
	}
	erofs_kneeds_from_options(opts, &needs);
	refused = erofs_kneeds_check_max(&needs, max);
	if (refused)
		erofs_err("%u option%s need%s a newer kernel than --max-kernel=%s; nothing written",
			  refused, refused == 1 ? "" : "s", refused == 1 ? "s" : "", max_kernel);
	return refused ? -EOPNOTSUPP : 0;
}

/* The oldest Linux that mounts the image written, from its superblock fields. */
static void print_kernel_needs(const struct erofs_build_options *opts,
			       const struct erofs_tree *tree, const struct erofs_build_result *res)
{
	const struct erofs_plan *plan = &res->plan;
	struct erofs_super sb = {
		.blkszbits = (uint8_t)plan->blkszbits,
		.feature_incompat = plan->feature_incompat,
		.packed_nid = tree->packed ? 1 : 0,
	};
	struct erofs_kneeds needs;
	char text[320];

	erofs_kneeds_from_super(&sb, plan->sb_u1, &needs);
	/* no superblock bit says that -E dedupe shared pclusters */
	if (res->stats.zdedupe_blocks)
		erofs_kneeds_add(&needs, EROFS_KF_SHARED_PCLUSTERS, "-E dedupe");
	if (plan->prefix_pos && tree->packed)
		erofs_kneeds_add(&needs, EROFS_KF_PLAIN_XATTR_PREFIXES, "-E plain-xattr-prefixes");
	erofs_kneeds_describe(&needs, text, sizeof(text));
	printf("%s: %s\n", opts->image, text);
}

/* An image written inside its own source would be scanned into itself. */
static int check_outside_source(const struct erofs_build_options *opts, const char *out,
				const char *what)
{
	char *src = realpath(opts->source, NULL), *dir, *slash, *img_dir;
	int err = 0;

	if (!src) {
		err = errno;
		erofs_err("%s: cannot use as source: %s", opts->source, strerror(err));
		return -err;
	}
	dir = strdup(out);
	if (!dir) {
		free(src);
		return -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	img_dir = realpath(slash ? dir : ".", NULL);
	if (!img_dir) {
		err = errno;
		erofs_err("%s: cannot create the %s: %s", out, what, strerror(err));
	} else {
		size_t n = strlen(src);

		if (!strncmp(img_dir, src, n) &&
		    (img_dir[n] == '\0' || img_dir[n] == '/' || n == 1)) {
			erofs_err("%s: the %s would be inside the source directory %s",
				  out, what, opts->source);
			err = EINVAL;
		}
	}
	free(img_dir);
	free(dir);
	free(src);
	return -err;
}

static int check_image_outside_source(const struct erofs_build_options *opts)
{
	int err = check_outside_source(opts, opts->image, "image");

	return !err && opts->blobdev ? check_outside_source(opts, opts->blobdev, "blob") : err;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* scanning keeps one directory open per level of nesting */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Every segment's input and output are buffers of up to 8 MiB, allocated
 * by one thread and freed by another.  glibc maps such buffers afresh or
 * hands the top of its heap back to the kernel when they are freed, and
 * every page is faulted in again for the next segment: a tenth of the CPU
 * of a -zlz4 build.  Keeping them in the heap costs 5-15 MB more peak
 * memory; -zzstd,3 -C131072 -Efragments,ztailpacking on the rootfs
 * sample took 0.92 of the CPU, -zlz4 0.90, -zlz4hc 0.93, -zdeflate,6 0.98
 * (farm-bench, paired runs).
 */
static void keep_buffers_in_heap(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Says what the build made, and only what each feature really saved. */
static void print_summary(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			  const struct erofs_build_result *res, const struct timespec *start)
{
	const struct erofs_plan *plan = &res->plan;
	const struct erofs_build_stats *st = &res->stats;
	uint64_t image_bytes = (uint64_t)plan->nr_blocks << plan->blkszbits;
	uint64_t zdedupe_bytes = (uint64_t)st->zdedupe_blocks << plan->blkszbits;

	printf("%s: %" PRIu32 " inodes (%" PRIu64 " files, %" PRIu64 " directories), "
	       "%" PRIu32 " extended\n",
	       opts->image, tree->nr_inodes, tree->nr_files, tree->nr_dirs, plan->nr_extended);
	printf("%s: input %" PRIu64 " bytes, image %" PRIu64 " bytes (%" PRIu32 " blocks of %u), "
	       "%.1f%% of input, %.2f s\n",
	       opts->image, tree->data_bytes, image_bytes, plan->nr_blocks,
	       1u << plan->blkszbits,
	       tree->data_bytes ? 100.0 * (double)image_bytes / (double)tree->data_bytes : 0.0,
	       seconds_since(start));
	if (st->dedup_files && st->dedup_bytes)
		printf("%s: %" PRIu32 " duplicate files share their data: %" PRIu64 " bytes saved "
		       "(%.1f%% of the image)\n", opts->image, st->dedup_files, st->dedup_bytes,
		       100.0 * (double)st->dedup_bytes / (double)(image_bytes + st->dedup_bytes));
	if (st->nr_compressed)
		printf("%s: %" PRIu32 " files compressed (%" PRIu64 " bytes of input)\n",
		       opts->image, st->nr_compressed, st->compressed_input);
	if (st->zdedupe_blocks)
		printf("%s: -E dedupe: %" PRIu32 " pcluster blocks used again instead of stored: "
		       "%" PRIu64 " bytes saved (%.1f%% of the image)\n", opts->image,
		       st->zdedupe_blocks, zdedupe_bytes,
		       100.0 * (double)zdedupe_bytes / (double)(image_bytes + zdedupe_bytes));
	if (tree->packed) {
		/* --zD: each directory is a fragment too */
		uint64_t nr_fragments = st->nr_fragments + (opts->compress_dirs ? tree->nr_dirs : 0);

		printf("%s: %" PRIu64 " fragments in the packed inode (%" PRIu64 " bytes, %" PRIu32
		       " blocks %s)", opts->image, nr_fragments, tree->packed->size,
		       tree->packed->nr_blocks, tree->packed->z ? "compressed" : "stored plain");
		if (st->nr_shared_fragments)
			printf("; %" PRIu32 " identical ones stored once: %" PRIu64 " bytes saved",
			       st->nr_shared_fragments, st->shared_fragment_bytes);
		putchar('\n');
	}
	if (opts->chunkbits)
		printf("%s: %" PRIu64 " chunks: %" PRIu64 " stored once elsewhere, %" PRIu64
		       " holes; %" PRIu64 " bytes saved; %" PRIu64 " files sharing nothing "
		       "kept flat with inline tails\n", opts->image, st->chunks, st->shared_chunks,
		       st->null_chunks, st->chunk_saved_bytes, st->flat_chunk_files);
	if (opts->blobdev)
		printf("%s: chunk data in the blob %s: %" PRIu32 " blocks (%" PRIu64 " bytes), "
		       "extra device 1\n", opts->image, opts->blobdev, plan->blob_blocks,
		       (uint64_t)plan->blob_blocks << plan->blkszbits);
	print_kernel_needs(opts, tree, res);
}

int main(int argc, char **argv)
{
	struct erofs_build_options opts = {
		.blkszbits = EROFS_MAX_BLKSZBITS,
		.debug_level = 2,
		.force_uid = -1,
		.force_gid = -1,
		.inline_data = true,
		.xattr_name_filter = true,
		.sb_checksum = true,
		.xattr_tolerance = 2,
		.compact_2b = true,
		.share_identical_files = true,
	};
	struct erofs_tree tree = { .source_dirfd = -1 };
	struct erofs_build_result result;
	struct timespec start;
	struct mkfs_cmdline cl = { 0 };
	int err;

	clock_gettime(CLOCK_MONOTONIC, &start);
	uuid_generate(opts.uuid);
	if (parse_args(argc, argv, &opts, &cl) || check_max_kernel(&opts, cl.max_kernel) ||
	    mkfs_resolve_times(&opts, cl.build_time_only) ||
	    (!opts.tar && !opts.nr_layers && check_image_outside_source(&opts)))
		return 1;
	opts.show_progress = !opts.quiet && isatty(STDERR_FILENO);
	raise_fd_limit();
	keep_buffers_in_heap();

	opts.workers = opts.workers ? opts.workers : (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	err = opts.incremental ? erofs_mkfs_incremental(&opts, &tree, &result)
			       : erofs_mkfs(&opts, &tree, &result);
	if (!err && !opts.quiet)
		print_summary(&opts, &tree, &result, &start);
	if (!err && cl.vmdk_desc)
		err = mkfs_write_vmdk(cl.vmdk_desc, &opts, &result.plan);
	if (err == -ENOMEM)
		erofs_err("out of memory");
	erofs_plan_free(&result.plan);
	erofs_tree_free(&tree);
	return err ? 1 : 0;
}
