// SPDX-License-Identifier: MIT
/* -m BYTES[:X], spelled as in erofs-utils 1.9 (see mkfs/opts48.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "optvalues.h"
#include "opts48.h"

int mkfs_parse_metabox(const char *arg, struct erofs_build_options *opts)
{
	const char *colon = strchr(arg, ':');
	char *end;
	unsigned long long bytes = strtoull(arg, &end, 0);

	if (end == arg || (colon ? end != colon : *end) || !bytes ||
	    bytes > EROFS_PCLUSTER_MAX_SIZE) {
		erofs_err("-m %s: want the metabox pcluster size in bytes (at most %u), "
			  "then optionally :ALGORITHM or :INDEX", arg, EROFS_PCLUSTER_MAX_SIZE);
		return -EINVAL;
	}
	opts->metabox = true;
	opts->layout_48bit = true;	/* as erofs-utils: a metabox root nid needs 64 bits */
	opts->metabox_pcluster_size = (uint32_t)bytes;
	opts->metabox_alg = 0;		/* the first -z entry, if any (checked later) */
	if (!colon)
		return 0;
	if (colon[1] >= '0' && colon[1] <= '9') {
		unsigned long index = strtoul(colon + 1, &end, 10);

		if (*end || index >= EROFS_MAX_ALGORITHMS) {
			erofs_err("-m %s: algorithm index %s is not 0-%u", arg, colon + 1,
				  EROFS_MAX_ALGORITHMS - 1);
			return -EINVAL;
		}
		opts->metabox_alg = (int)index + 1000;	/* an index: resolved by the check */
		return 0;
	}
	/* a name: an algorithm of its own, after the -z list (parsed later) */
	if (opts->nr_algorithms >= EROFS_MAX_ALGORITHMS) {
		erofs_err("-m %s: at most %u algorithms", arg, EROFS_MAX_ALGORITHMS);
		return -EINVAL;
	}
	opts->metabox_alg = -2;
	return mkfs_parse_algorithm(colon + 1, strlen(colon + 1),
				    &opts->algorithms[EROFS_MAX_ALGORITHMS - 1]);
}

int mkfs_check_metabox(struct erofs_build_options *opts)
{
	const uint32_t blksz = 1u << opts->blkszbits;

	if (!opts->metabox)
		return 0;
	if (opts->metabox_pcluster_size % blksz) {
		erofs_err("-m %u: the metabox pcluster size must be a multiple of the block size %u",
			  opts->metabox_pcluster_size, blksz);
		return -EINVAL;
	}
	if (opts->metabox_alg >= 1000) {
		unsigned int index = (unsigned int)opts->metabox_alg - 1000;

		if (index >= opts->nr_algorithms) {
			erofs_err("-m: algorithm index %u, but -z lists %u algorithm%s", index,
				  opts->nr_algorithms, opts->nr_algorithms == 1 ? "" : "s");
			return -EINVAL;
		}
		opts->metabox_alg = (int)index;
	} else if (opts->metabox_alg == -2) {
		/* the named algorithm joins the list (it needs a config record too) */
		if (opts->nr_algorithms >= EROFS_MAX_ALGORITHMS - 1 &&
		    opts->nr_algorithms != 0) {
			erofs_err("-m: at most %u algorithms with -z", EROFS_MAX_ALGORITHMS - 1);
			return -EINVAL;
		}
		opts->algorithms[opts->nr_algorithms] = opts->algorithms[EROFS_MAX_ALGORITHMS - 1];
		opts->metabox_alg = (int)opts->nr_algorithms++;
	} else if (!opts->nr_algorithms || opts->compressor == EROFS_COMPRESS_NONE) {
		opts->metabox_alg = -1;	/* no -z: stored plain, as erofs-utils does */
	}
	if (opts->metabox_pcluster_size > opts->pcluster_size && opts->metabox_alg >= 0 &&
	    opts->compressor != EROFS_COMPRESS_NONE) {
		erofs_err("-m %u: the metabox pcluster size exceeds -C %u", opts->metabox_pcluster_size,
			  opts->pcluster_size);
		return -EINVAL;
	}
	return 0;
}

int mkfs_parse_zd(const char *arg, struct erofs_build_options *opts)
{
	/* as documented by erofs-utils 1.9.4 ("0=disable, 1=enable"); its
	 * parser reads an explicit value the other way round */
	if (!arg || !strcmp(arg, "1")) {
		opts->compress_dirs = true;
	} else if (!strcmp(arg, "0")) {
		opts->compress_dirs = false;
	} else {
		erofs_err("--zD=%s: want 0 (directories stored plain) or 1 (compressed)", arg);
		return -EINVAL;
	}
	return 0;
}

int mkfs_parse_mz(const char *arg, struct erofs_build_options *opts)
{
	bool inodes = false, dirdata = false;

	if (!arg) {
		inodes = dirdata = true;
	} else if (strcmp(arg, "0")) {
		for (const char *c = arg; *c; c++) {
			if (*c == 'i') {
				inodes = true;
			} else if (*c == 'd') {
				dirdata = true;
			} else {
				erofs_err("--MZ=%s: want 0, i (inode metadata) or id (and directory "
					  "data) in the metadata zone", arg);
				return -EINVAL;
			}
		}
		if (dirdata && !inodes) {
			erofs_err("--MZ=%s: directory data goes into the metadata zone only with "
				  "the inode metadata (--MZ=id)", arg);
			return -EINVAL;
		}
	}
	opts->mz_inodes = inodes;
	opts->mz_dirdata = dirdata;
	return 0;
}
