// SPDX-License-Identifier: MIT
/*
 * Kernel targeting: the oldest Linux release that mounts an image.
 *
 * The table below gives, per feature, the first mainline release whose
 * fs/erofs reads it, with the commit (subject, and id where known) that
 * brought it; researched in the kernel history for erofs-forge.  Compat
 * bits (the superblock checksum, the xattr name filter...) never raise the
 * version: older kernels ignore them.  Uncompressed images with 4 KiB blocks
 * need nothing newer than 5.4, the first release with EROFS out of staging.
 *
 * Note on sub-page blocks: mainline reads block sizes below PAGE_SIZE from
 * 6.4 (uncompressed) and 6.8 (compressed); the 6.1 LTS series got the
 * uncompressed part in 6.1.113 (both commits are in its ChangeLog-6.1.113),
 * so Debian's 6.1 kernels mount such images: --max-kernel=6.1 then only
 * warns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/diag.h"
#include "erofs/common/kernel.h"

#define EROFS_BASE_MAJOR	5
#define EROFS_BASE_MINOR	4	/* fs/erofs left staging in 5.4 */
#define EROFS_PAGE_BITS		12	/* x86-64 */

/* on-disk algorithm ids (available_compr_algs bits) */
enum { ALG_LZ4, ALG_LZMA, ALG_DEFLATE, ALG_ZSTD };

/* incompat bits newer than those format.h defines */
#define INCOMPAT_48BIT		0x00000080u
#define INCOMPAT_METABOX	0x00000100u
#define INCOMPAT_KNOWN		0x000001FFu

static const struct {
	const char *name;
	struct erofs_kversion since;
	struct erofs_kversion lts;	/* an older LTS series that backported it */
	unsigned int lts_patch;		/* from this stable release on */
} kfeatures[EROFS_KF_COUNT] = {
	/* "staging: erofs: introduce LZ4 zero padding" (5.3); fs/erofs 5.4 */
	[EROFS_KF_LZ4] = { "lz4", { 5, 4 } },
	/* "erofs: support decompress big pcluster for lz4 backend" */
	[EROFS_KF_BIG_PCLUSTER] = { "big pclusters", { 5, 13 } },
	/* "erofs: support reading chunk-based uncompressed files" */
	[EROFS_KF_CHUNKS] = { "chunk-based files", { 5, 15 } },
	/* "erofs: support adding extra devices" */
	[EROFS_KF_DEVICES] = { "extra devices", { 5, 16 } },
	/* "erofs: lzma compression support" (MicroLZMA) */
	[EROFS_KF_LZMA] = { "lzma", { 5, 16 } },
	/* "erofs: support inline data decompression" */
	[EROFS_KF_ZTAILPACKING] = { "ztailpacking", { 5, 17 } },
	/* 267f2492c8f7 "erofs: introduce multi-reference pclusters (fully-referenced)";
	 * before it, a pcluster met at another in-page offset was "corrupted" */
	[EROFS_KF_SHARED_PCLUSTERS] = { "shared pclusters", { 6, 0 } },
	/* b15b2e307c3a "erofs: support on-disk compressed fragments data"; also
	 * --zD's directories (compressed inodes of any type go through z_erofs
	 * aops; 6.1's erofs_fill_inode already sets them for directories) */
	[EROFS_KF_FRAGMENTS] = { "fragments", { 6, 1 } },
	/* "erofs: introduce partial-referenced pclusters" */
	[EROFS_KF_DEDUPE] = { "dedupe", { 6, 1 } },
	/* "erofs: set block size to the on-disk block size" (2023-03) */
	[EROFS_KF_SUBPAGE_BLOCKS] = { "sub-page blocks", { 6, 4 }, { 6, 1 }, 113 },
	/* "erofs: introduce on-disk format for long xattr name prefixes" */
	[EROFS_KF_XATTR_PREFIXES] = { "long xattr name prefixes", { 6, 4 } },
	/* ffa09b3bd024 "erofs: DEFLATE compression support" */
	[EROFS_KF_DEFLATE] = { "deflate", { 6, 6 } },
	/* 0ee3a0d59e00 "erofs: enable sub-page compressed block support" */
	[EROFS_KF_SUBPAGE_COMPRESSED] = { "compression with sub-page blocks", { 6, 8 } },
	/* 7c35de4df105 "erofs: Zstandard compression support" */
	[EROFS_KF_ZSTD] = { "zstd", { 6, 10 } },
	/* 61ba89b57905 "erofs: add 48-bit block addressing on-disk support" */
	[EROFS_KF_48BIT] = { "48-bit layout", { 6, 15 } },
	/* 414091322c63 "erofs: implement metadata compression" */
	[EROFS_KF_METABOX] = { "metadata compression", { 6, 17 } },
	/* COMPAT_PLAIN_XATTR_PFX came with metadata compression: an older
	 * kernel ignores the compat bit and reads the prefixes from the packed
	 * inode's data, which then holds fragments (wrong names, no error) */
	[EROFS_KF_PLAIN_XATTR_PREFIXES] = { "long xattr prefixes outside the packed inode",
					    { 6, 17 } },
	[EROFS_KF_BIG_BLOCKS] = { "blocks larger than the 4 KiB page", { 0, 0 } },
	[EROFS_KF_UNKNOWN] = { "unknown incompatible features", { 0, 0 } },
};

const char *erofs_kfeature_name(enum erofs_kfeature f)
{
	return f < EROFS_KF_COUNT ? kfeatures[f].name : "?";
}

struct erofs_kversion erofs_kfeature_version(enum erofs_kfeature f)
{
	return f < EROFS_KF_COUNT ? kfeatures[f].since : (struct erofs_kversion){ 0, 0 };
}

static bool no_release(struct erofs_kversion v)
{
	return !v.major;
}

bool erofs_kversion_older(struct erofs_kversion a, struct erofs_kversion b)
{
	return a.major < b.major || (a.major == b.major && a.minor < b.minor);
}

static void need(struct erofs_kneeds *needs, enum erofs_kfeature f, const char *source)
{
	if (needs->features & (1u << f))
		return;		/* the first option that asked for it is named */
	needs->features |= 1u << f;
	snprintf(needs->source[f], sizeof(needs->source[f]), "%s", source ? source : "");
}

void erofs_kneeds_add_algorithm(struct erofs_kneeds *needs, unsigned int alg, const char *source)
{
	static const enum erofs_kfeature by_id[] = {
		[ALG_LZ4] = EROFS_KF_LZ4, [ALG_LZMA] = EROFS_KF_LZMA,
		[ALG_DEFLATE] = EROFS_KF_DEFLATE, [ALG_ZSTD] = EROFS_KF_ZSTD,
	};

	if (alg < sizeof(by_id) / sizeof(by_id[0])) {
		need(needs, by_id[alg], source);
	} else {
		need(needs, EROFS_KF_UNKNOWN, source);
		needs->unknown_algs |= 1u << alg;
	}
}

/* The block-size features: sub-page (with compression: more), or too big. */
void erofs_kneeds_add_block_size(struct erofs_kneeds *needs, unsigned int blkszbits, bool compressed,
				 const char *source, const char *zsource)
{
	needs->blksz = 1u << blkszbits;
	if (blkszbits > EROFS_PAGE_BITS)
		need(needs, EROFS_KF_BIG_BLOCKS, source);
	else if (blkszbits < EROFS_PAGE_BITS) {
		need(needs, EROFS_KF_SUBPAGE_BLOCKS, source);
		if (compressed)
			need(needs, EROFS_KF_SUBPAGE_COMPRESSED, zsource);
	}
}

void erofs_kneeds_from_super(const struct erofs_super *sb, uint16_t compr_algs,
			     struct erofs_kneeds *needs)
{
	const uint32_t incompat = sb->feature_incompat;
	/* (fragments: --zD without -z compresses directories alone) */
	bool compressed = incompat & (EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS |
				      EROFS_INCOMPAT_FRAGMENTS);

	memset(needs, 0, sizeof(*needs));
	if (incompat & EROFS_INCOMPAT_COMPR_CFGS) {
		/* the bit doubles as BIG_PCLUSTER: 5.13 reads it either way */
		need(needs, EROFS_KF_BIG_PCLUSTER, NULL);
		for (unsigned int alg = 0; alg < 16; alg++)
			if (compr_algs & (1u << alg))
				erofs_kneeds_add_algorithm(needs, alg, NULL);
	} else if (incompat & EROFS_INCOMPAT_ZERO_PADDING) {
		need(needs, EROFS_KF_LZ4, NULL);
	}
	if (incompat & EROFS_INCOMPAT_CHUNKED_FILE)
		need(needs, EROFS_KF_CHUNKS, NULL);
	if (incompat & EROFS_INCOMPAT_DEVICE_TABLE)
		need(needs, EROFS_KF_DEVICES, NULL);
	if (incompat & EROFS_INCOMPAT_ZTAILPACKING)
		need(needs, EROFS_KF_ZTAILPACKING, NULL);
	/* one bit for both: a packed inode tells fragments from dedupe */
	if (incompat & EROFS_INCOMPAT_FRAGMENTS)
		need(needs, sb->packed_nid ? EROFS_KF_FRAGMENTS : EROFS_KF_DEDUPE, NULL);
	if (incompat & EROFS_INCOMPAT_XATTR_PREFIXES)
		need(needs, EROFS_KF_XATTR_PREFIXES, NULL);
	if (incompat & INCOMPAT_48BIT)
		need(needs, EROFS_KF_48BIT, NULL);
	if (incompat & INCOMPAT_METABOX)
		need(needs, EROFS_KF_METABOX, NULL);
	if ((sb->feature_compat & EROFS_COMPAT_PLAIN_XATTR_PFX) && sb->packed_nid &&
	    (incompat & EROFS_INCOMPAT_XATTR_PREFIXES))
		need(needs, EROFS_KF_PLAIN_XATTR_PREFIXES, NULL);
	if (incompat & ~INCOMPAT_KNOWN) {
		need(needs, EROFS_KF_UNKNOWN, NULL);
		needs->unknown_incompat = incompat & ~INCOMPAT_KNOWN;
	}
	erofs_kneeds_add_block_size(needs, sb->blkszbits, compressed, NULL, NULL);
}

void erofs_kneeds_add(struct erofs_kneeds *needs, enum erofs_kfeature f, const char *source)
{
	if (f < EROFS_KF_COUNT)
		need(needs, f, source);
}

struct erofs_kversion erofs_kneeds_version(const struct erofs_kneeds *needs)
{
	struct erofs_kversion v = { EROFS_BASE_MAJOR, EROFS_BASE_MINOR };

	for (unsigned int f = 0; f < EROFS_KF_COUNT; f++) {
		if (!(needs->features & (1u << f)))
			continue;
		if (no_release(kfeatures[f].since))
			return kfeatures[f].since;
		if (erofs_kversion_older(v, kfeatures[f].since))
			v = kfeatures[f].since;
	}
	return v;
}

/* appends the feature's name (with its block size or bits) to buf at *pos */
static void append_feature(const struct erofs_kneeds *needs, unsigned int f, char *buf,
			   size_t len, size_t *pos)
{
	int n;

	if (*pos >= len)
		return;
	if (f == EROFS_KF_UNKNOWN && needs->unknown_incompat)
		n = snprintf(buf + *pos, len - *pos, "%sincompat bits 0x%x%s", *pos ? ", " : "",
			     needs->unknown_incompat, needs->unknown_algs ? " and algorithms" : "");
	else if (f == EROFS_KF_UNKNOWN)
		n = snprintf(buf + *pos, len - *pos, "%scompression algorithms 0x%x",
			     *pos ? ", " : "", needs->unknown_algs);
	else if (f == EROFS_KF_SUBPAGE_BLOCKS || f == EROFS_KF_BIG_BLOCKS ||
		 f == EROFS_KF_SUBPAGE_COMPRESSED)
		n = snprintf(buf + *pos, len - *pos, "%s%s (%u-byte blocks)", *pos ? ", " : "",
			     kfeatures[f].name, needs->blksz);
	else
		n = snprintf(buf + *pos, len - *pos, "%s%s", *pos ? ", " : "", kfeatures[f].name);
	if (n > 0)
		*pos += (size_t)n;
}

static bool same_version(struct erofs_kversion a, struct erofs_kversion b)
{
	return a.major == b.major && a.minor == b.minor;
}

void erofs_kneeds_describe(const struct erofs_kneeds *needs, char *buf, size_t len)
{
	struct erofs_kversion v = erofs_kneeds_version(needs);
	char why[256] = "";
	size_t pos = 0;
	unsigned int top = 0, backported = 0, f;

	for (f = 0; f < EROFS_KF_COUNT; f++)
		if ((needs->features & (1u << f)) && same_version(kfeatures[f].since, v)) {
			append_feature(needs, f, why, sizeof(why), &pos);
			top++;
			backported += kfeatures[f].lts.major != 0;
		}
	/* all of the newest features also in an LTS series: say from which release */
	for (f = 0; backported && backported == top && f < EROFS_KF_COUNT && pos < sizeof(why); f++)
		if ((needs->features & (1u << f)) && same_version(kfeatures[f].since, v)) {
			int n = snprintf(why + pos, sizeof(why) - pos, "; %u.%u.%u and later %u.%u too",
					 kfeatures[f].lts.major, kfeatures[f].lts.minor,
					 kfeatures[f].lts_patch, kfeatures[f].lts.major,
					 kfeatures[f].lts.minor);
			if (n > 0)
				pos += (size_t)n;
			break;
		}
	if (no_release(v))
		snprintf(buf, len, "no Linux release mounts it on x86-64 (%s)", why);
	else if (!pos)
		snprintf(buf, len, "needs Linux %u.%u (uncompressed, 4 KiB blocks)", v.major, v.minor);
	else
		snprintf(buf, len, "needs Linux %u.%u (%s)", v.major, v.minor, why);
}

int erofs_kversion_parse(const char *text, struct erofs_kversion *v)
{
	unsigned long major, minor;
	char *end;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	major = strtoul(text, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	minor = strtoul(end + 1, &end, 10);
	if (*end == '.') {	/* X.Y.Z: the stable number does not matter */
		if (end[1] < '0' || end[1] > '9')
			return -EINVAL;
		strtoul(end + 1, &end, 10);
	}
	if (*end || !major || major > 99 || minor > 99)
		return -EINVAL;
	*v = (struct erofs_kversion){ (unsigned int)major, (unsigned int)minor };
	return 0;
}

unsigned int erofs_kneeds_check_max(const struct erofs_kneeds *needs, struct erofs_kversion max)
{
	unsigned int refused = 0;

	for (unsigned int f = 0; f < EROFS_KF_COUNT; f++) {
		struct erofs_kversion since = kfeatures[f].since;
		char what[128];
		size_t pos = 0;

		if (!(needs->features & (1u << f)) ||
		    (!no_release(since) && !erofs_kversion_older(max, since)))
			continue;
		append_feature(needs, f, what, sizeof(what), &pos);
		if (same_version(max, kfeatures[f].lts)) {
			erofs_warn("%s: %s needs Linux %u.%u, or %u.%u.%u and later of the %u.%u "
				   "series: older %u.%u releases refuse the image",
				   needs->source[f][0] ? needs->source[f] : "the image", what,
				   since.major, since.minor, max.major, max.minor,
				   kfeatures[f].lts_patch, max.major, max.minor, max.major, max.minor);
			continue;
		}
		if (no_release(since))
			erofs_err("%s: %s: no Linux release mounts it (--max-kernel=%u.%u)",
				  needs->source[f][0] ? needs->source[f] : "the image", what,
				  max.major, max.minor);
		else
			erofs_err("%s: %s needs Linux %u.%u, newer than --max-kernel=%u.%u",
				  needs->source[f][0] ? needs->source[f] : "the image", what,
				  since.major, since.minor, max.major, max.minor);
		refused++;
	}
	return refused;
}
