// SPDX-License-Identifier: MIT
/* Unit tests of kernel targeting (lib/common/kernel.c): versions, reasons, --max-kernel. */
#include <stdio.h>
#include <string.h>

#include "erofs/build/kneeds.h"
#include "erofs/common/kernel.h"

static int failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                            \
			failures++;                                          \
		}                                                            \
	} while (0)

#define CHECK_TEXT(needs, want)                                              \
	do {                                                                 \
		char _t[320];                                                \
		erofs_kneeds_describe(needs, _t, sizeof(_t));                \
		if (strcmp(_t, want)) {                                      \
			fprintf(stderr, "%s:%d: got '%s', want '%s'\n",      \
				__FILE__, __LINE__, _t, want);               \
			failures++;                                          \
		}                                                            \
	} while (0)

static struct erofs_super super_of(uint32_t incompat, unsigned int blkszbits, uint64_t packed)
{
	return (struct erofs_super){
		.magic = EROFS_MAGIC, .blkszbits = (uint8_t)blkszbits,
		.feature_incompat = incompat, .packed_nid = packed,
	};
}

static void test_parse(void)
{
	struct erofs_kversion v;

	CHECK(!erofs_kversion_parse("6.1", &v) && v.major == 6 && v.minor == 1);
	CHECK(!erofs_kversion_parse("6.10", &v) && v.major == 6 && v.minor == 10);
	CHECK(!erofs_kversion_parse("5.15.0", &v) && v.major == 5 && v.minor == 15);
	CHECK(erofs_kversion_parse("6", &v));
	CHECK(erofs_kversion_parse("6.", &v));
	CHECK(erofs_kversion_parse("6.1.", &v));
	CHECK(erofs_kversion_parse("x6.1", &v));
	CHECK(erofs_kversion_parse("6.1-rc1", &v));
	CHECK(erofs_kversion_parse("", &v));
	CHECK(erofs_kversion_parse("0.9", &v));
	/* 6.10 is newer than 6.9: numbers, not strings */
	CHECK(erofs_kversion_older((struct erofs_kversion){ 6, 9 }, (struct erofs_kversion){ 6, 10 }));
	CHECK(!erofs_kversion_older((struct erofs_kversion){ 6, 10 }, (struct erofs_kversion){ 6, 9 }));
	CHECK(!erofs_kversion_older((struct erofs_kversion){ 6, 1 }, (struct erofs_kversion){ 6, 1 }));
}

static void test_from_super(void)
{
	struct erofs_kneeds n;
	struct erofs_super sb;
	struct erofs_kversion v;

	sb = super_of(0, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	v = erofs_kneeds_version(&n);
	CHECK(v.major == 5 && v.minor == 4);
	CHECK_TEXT(&n, "needs Linux 5.4 (uncompressed, 4 KiB blocks)");

	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 5.4 (lz4)");

	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS, 12, 0);
	erofs_kneeds_from_super(&sb, 1u << 0, &n);
	CHECK_TEXT(&n, "needs Linux 5.13 (big pclusters)");
	erofs_kneeds_from_super(&sb, 1u << 1, &n);
	CHECK_TEXT(&n, "needs Linux 5.16 (lzma)");
	erofs_kneeds_from_super(&sb, 1u << 0 | 1u << 2, &n);
	CHECK_TEXT(&n, "needs Linux 6.6 (deflate)");
	erofs_kneeds_from_super(&sb, 1u << 3 | 1u << 1, &n);
	CHECK_TEXT(&n, "needs Linux 6.10 (zstd)");
	erofs_kneeds_from_super(&sb, 1u << 7, &n);
	CHECK_TEXT(&n, "no Linux release mounts it on x86-64 (compression algorithms 0x80)");

	sb = super_of(EROFS_INCOMPAT_CHUNKED_FILE, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 5.15 (chunk-based files)");
	sb = super_of(EROFS_INCOMPAT_DEVICE_TABLE | EROFS_INCOMPAT_CHUNKED_FILE, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 5.16 (extra devices)");
	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_ZTAILPACKING, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 5.17 (ztailpacking)");
	/* one bit, two features: the packed inode tells them apart */
	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_FRAGMENTS, 12, 40);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.1 (fragments)");
	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_FRAGMENTS, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.1 (dedupe)");
	sb = super_of(0x40, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.4 (long xattr name prefixes)");
	sb = super_of(0x80 | EROFS_INCOMPAT_ZTAILPACKING, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.15 (48-bit layout)");
	sb = super_of(0x100 | 0x80, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.17 (metadata compression)");
	sb = super_of(0x200 | EROFS_INCOMPAT_ZTAILPACKING, 12, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "no Linux release mounts it on x86-64 (incompat bits 0x200)");

	/* block sizes: sub-page alone 6.4, with compression 6.8, above a page never */
	sb = super_of(0, 9, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.4 (sub-page blocks (512-byte blocks); 6.1.113 and later 6.1 too)");
	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING, 10, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	CHECK_TEXT(&n, "needs Linux 6.8 (compression with sub-page blocks (1024-byte blocks))");
	sb = super_of(0, 14, 0);
	erofs_kneeds_from_super(&sb, 0, &n);
	v = erofs_kneeds_version(&n);
	CHECK(v.major == 0);
	CHECK_TEXT(&n, "no Linux release mounts it on x86-64 (blocks larger than the 4 KiB page "
		   "(16384-byte blocks))");
	/* several features at the top version are all named */
	sb = super_of(EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS |
		      EROFS_INCOMPAT_DEVICE_TABLE, 12, 0);
	erofs_kneeds_from_super(&sb, 1u << 1, &n);
	CHECK_TEXT(&n, "needs Linux 5.16 (extra devices, lzma)");
}

static struct erofs_build_options default_options(void)
{
	return (struct erofs_build_options){
		.blkszbits = 12, .pcluster_size = 4096, .inline_data = true,
	};
}

static void test_from_options(void)
{
	struct erofs_build_options o = default_options();
	struct erofs_kneeds n;
	struct erofs_compress_hint hint = { .pcluster_size = 65536 };

	erofs_kneeds_from_options(&o, &n);
	CHECK(n.features == 0);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 5, 4 }) == 0);

	o.compressor = EROFS_COMPRESS_LZ4HC;
	o.ztailpacking = true;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 5.17 (ztailpacking)");
	CHECK(!strcmp(n.source[EROFS_KF_ZTAILPACKING], "-E ztailpacking"));
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 5, 17 }) == 0);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 5, 16 }) == 1);

	o.fragments = o.all_fragments = true;
	o.dedupe = o.share_pclusters = true;
	o.pcluster_size = 65536;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 6.1 (fragments)");
	CHECK(!strcmp(n.source[EROFS_KF_SHARED_PCLUSTERS], "-E dedupe"));
	o.dedupe = false;	/* shared as -E fragments implies */
	erofs_kneeds_from_options(&o, &n);
	CHECK(!strcmp(n.source[EROFS_KF_SHARED_PCLUSTERS], "-E fragments"));
	o.dedupe = true;
	CHECK(!(n.features & (1u << EROFS_KF_DEDUPE)));	/* no partial references */
	o.fragments = o.all_fragments = false;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 6.0 (shared pclusters)");
	o.fragments = o.all_fragments = true;
	erofs_kneeds_from_options(&o, &n);
	CHECK(!strcmp(n.source[EROFS_KF_FRAGMENTS], "-E all-fragments"));
	CHECK(!strcmp(n.source[EROFS_KF_BIG_PCLUSTER], "-C"));
	/* 5.15: big pclusters pass; ztailpacking, fragments and shared pclusters do not */
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 5, 15 }) == 3);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 5, 10 }) == 4);

	o = default_options();
	o.compressor = EROFS_COMPRESS_LZ4;
	o.hints = &hint;
	o.nr_hints = 1;
	erofs_kneeds_from_options(&o, &n);
	CHECK(!strcmp(n.source[EROFS_KF_BIG_PCLUSTER], "--compress-hints"));

	/* without -z, -E dedupe means one-block chunks */
	o = default_options();
	o.dedupe = true;
	o.chunkbits = 12;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 5.15 (chunk-based files)");
	CHECK(!strcmp(n.source[EROFS_KF_CHUNKS], "-E dedupe"));
	CHECK(!(n.features & (1u << EROFS_KF_DEDUPE)));
	o.dedupe = false;
	erofs_kneeds_from_options(&o, &n);
	CHECK(!strcmp(n.source[EROFS_KF_CHUNKS], "--chunksize"));

	o = default_options();
	o.blkszbits = 9;
	erofs_kneeds_from_options(&o, &n);
	CHECK(!strcmp(n.source[EROFS_KF_SUBPAGE_BLOCKS], "-b 512"));
	/* the 6.1 LTS series backported it: a warning there, an error on 6.2 and 5.15 */
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 1 }) == 0);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 2 }) == 1);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 5, 15 }) == 1);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 4 }) == 0);
	o.compressor = EROFS_COMPRESS_LZ4;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 6.8 (compression with sub-page blocks (512-byte blocks))");
	CHECK(!strcmp(n.source[EROFS_KF_SUBPAGE_COMPRESSED], "-z with -b 512"));

	/* -E48bit: 6.15; -m: 6.17, with 48bit, and its own algorithm without -z */
	o = default_options();
	o.layout_48bit = true;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 6.15 (48-bit layout)");
	CHECK(!strcmp(n.source[EROFS_KF_48BIT], "-E48bit"));
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 12 }) == 1);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 15 }) == 0);
	o.dot_omitted = true;
	erofs_kneeds_from_options(&o, &n);
	CHECK(!strcmp(n.source[EROFS_KF_48BIT], "-E dot-omitted"));
	o.metabox = true;
	o.metabox_alg = 0;
	o.nr_algorithms = 1;
	o.algorithms[0].kind = EROFS_COMPRESS_LZMA;
	erofs_kneeds_from_options(&o, &n);
	CHECK_TEXT(&n, "needs Linux 6.17 (metadata compression)");
	CHECK(!strcmp(n.source[EROFS_KF_METABOX], "-m") && !strcmp(n.source[EROFS_KF_LZMA], "-m"));
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 15 }) == 1);
	CHECK(erofs_kneeds_check_max(&n, (struct erofs_kversion){ 6, 12 }) == 2);
}

static void test_table_is_ordered(void)
{
	/* oldest first, so the enum order documents the history */
	for (unsigned int f = 1; f < EROFS_KF_BIG_BLOCKS; f++)
		CHECK(!erofs_kversion_older(erofs_kfeature_version(f), erofs_kfeature_version(f - 1)));
	for (unsigned int f = 0; f < EROFS_KF_COUNT; f++)
		CHECK(erofs_kfeature_name(f)[0] != '\0');
}

int main(void)
{
	test_parse();
	test_from_super();
	test_from_options();
	test_table_is_ordered();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
