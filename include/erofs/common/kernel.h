/* SPDX-License-Identifier: MIT */
/*
 * Kernel targeting: which Linux release is the oldest that mounts an image,
 * and why.  The features come either from mkfs options (before anything is
 * written, for --max-kernel) or from an image's superblock (fsck -p, the
 * mkfs summary, dump.erofs); lib/common/kernel.c holds the version table.
 */
#ifndef EROFS_KERNEL_H
#define EROFS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/format.h"

/* What an image uses that not every kernel reads, oldest first. */
enum erofs_kfeature {
	EROFS_KF_LZ4,			/* compressed files (LZ4, 0-padding) */
	EROFS_KF_BIG_PCLUSTER,		/* pclusters of more than one block */
	EROFS_KF_CHUNKS,		/* chunk-based files */
	EROFS_KF_DEVICES,		/* extra devices (device table) */
	EROFS_KF_LZMA,
	EROFS_KF_ZTAILPACKING,		/* compressed tails inline */
	EROFS_KF_SHARED_PCLUSTERS,	/* a pcluster used whole by extents at other offsets */
	EROFS_KF_FRAGMENTS,		/* the packed inode */
	EROFS_KF_DEDUPE,		/* partially referenced pclusters */
	EROFS_KF_SUBPAGE_BLOCKS,	/* blocks smaller than the 4 KiB page */
	EROFS_KF_XATTR_PREFIXES,	/* long xattr name prefixes */
	EROFS_KF_DEFLATE,
	EROFS_KF_SUBPAGE_COMPRESSED,	/* compressed files with sub-page blocks */
	EROFS_KF_ZSTD,
	EROFS_KF_48BIT,			/* 48-bit addresses, encoded extents */
	EROFS_KF_METABOX,		/* compressed metadata */
	EROFS_KF_PLAIN_XATTR_PREFIXES,	/* the prefix table outside an existing packed inode */
	EROFS_KF_BIG_BLOCKS,		/* blocks larger than the 4 KiB page */
	EROFS_KF_UNKNOWN,		/* incompat bits no release knows */
	EROFS_KF_COUNT
};

/* A Linux release X.Y; 0.0 stands for "no release" (on x86-64). */
struct erofs_kversion {
	unsigned int major, minor;
};

/* The features of one image (or one command line) and what asked for each. */
struct erofs_kneeds {
	uint32_t features;		/* bit (1 << enum erofs_kfeature) */
	char source[EROFS_KF_COUNT][40];	/* the option that asks for it, or "" */
	uint32_t unknown_incompat;	/* with EROFS_KF_UNKNOWN: the bits, */
	uint32_t unknown_algs;		/* or algorithm ids (bit per id) */
	unsigned int blksz;		/* with EROFS_KF_SUBPAGE_* and _BIG_BLOCKS */
};

/* "zstd", "sub-page blocks"... */
const char *erofs_kfeature_name(enum erofs_kfeature f);
/* The first release that reads the feature (0.0: none). */
struct erofs_kversion erofs_kfeature_version(enum erofs_kfeature f);

/*
 * The features of an image, from its decoded superblock and, when the
 * superblock has COMPR_CFGS, its algorithm bitmap (available_compr_algs).
 */
void erofs_kneeds_from_super(const struct erofs_super *sb, uint16_t compr_algs,
			     struct erofs_kneeds *needs);

/*
 * Add feature f, or an algorithm's feature by on-disk id, or the block
 * size's features, naming the option (source) that asked for it; the first
 * source of each feature is kept.  mkfs also adds what the superblock cannot
 * show (lib/build/kneeds.c: erofs_kneeds_from_options()).
 */
void erofs_kneeds_add(struct erofs_kneeds *needs, enum erofs_kfeature f, const char *source);
void erofs_kneeds_add_algorithm(struct erofs_kneeds *needs, unsigned int alg, const char *source);
void erofs_kneeds_add_block_size(struct erofs_kneeds *needs, unsigned int blkszbits, bool compressed,
				 const char *source, const char *zsource);

/* The oldest release that reads every feature; 0.0 when none does. */
struct erofs_kversion erofs_kneeds_version(const struct erofs_kneeds *needs);
/*
 * "needs Linux 6.10 (zstd)": the version and the features that set it;
 * "no Linux release mounts it on x86-64 (...)" when none does.
 */
void erofs_kneeds_describe(const struct erofs_kneeds *needs, char *buf, size_t len);

/* "6.1" -> 6.1; a third number ("6.1.0") is accepted and ignored.  -EINVAL. */
int erofs_kversion_parse(const char *text, struct erofs_kversion *v);
/* a < b */
bool erofs_kversion_older(struct erofs_kversion a, struct erofs_kversion b);

/*
 * --max-kernel: reports (erofs_err) every feature the options ask for that
 * needs a release newer than max, naming the option and the release.
 * Returns the number of such features.
 */
unsigned int erofs_kneeds_check_max(const struct erofs_kneeds *needs, struct erofs_kversion max);

#endif
