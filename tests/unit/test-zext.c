// SPDX-License-Identifier: MIT
/*
 * The encoded extent record decoder of 48-bit images (lib/read/zextread.c) on
 * hand-built record tables, no image needed: every record size (4 with its
 * base address, 8 with one record per lcluster, 16 and 32 with lstart),
 * holes, raw and partial extents, fragment tails; then hostile tables:
 * reserved plen bits, lengths past the pcluster limit, unknown or unlisted
 * algorithms, pstart past the image or the 48-bit space, lstart that does
 * not start at 0, falls or stays put, record counts that do not match.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/zextread.h"

#include "unit.h"

#define MAXREC	16
#define LZ4	(1u << 28)	/* format: algorithm 0 + 1 */
#define LZMA	(2u << 28)
#define ZSTD	(4u << 28)
#define PARTIAL	(1u << 27)

struct rec { uint32_t plen; uint64_t pstart, lstart; };

struct table {
	uint8_t raw[MAXREC][32];
	uint64_t gets;
};

static int get(void *arg, uint64_t i, uint8_t *out)
{
	struct table *t = arg;

	t->gets++;
	if (i >= MAXREC)
		return -EIO;
	memcpy(out, t->raw[i], 32);
	return 0;
}

/* A table of n records of recsz bytes, as a mkfs would lay them out. */
static void build(struct erofs_zext_table *zt, struct table *t, unsigned int recsz,
		  const struct rec *r, unsigned int n, uint64_t isize)
{
	memset(zt, 0, sizeof(*zt));
	memset(t, 0, sizeof(*t));
	for (unsigned int i = 0; i < n; i++) {
		put_le32(t->raw[i], r[i].plen);
		put_le32(t->raw[i] + 4, (uint32_t)r[i].pstart);
		put_le32(t->raw[i] + 8, (uint32_t)(r[i].pstart >> 32));
		put_le32(t->raw[i] + 12, (uint32_t)r[i].lstart);
		put_le32(t->raw[i] + 16, (uint32_t)(r[i].lstart >> 32));
	}
	zt->recsz = recsz;
	zt->nrecs = n;
	zt->isize = isize;
	zt->blkszbits = 12;
	zt->lclusterbits = 12;
	zt->algs = 0x0b;	/* lz4, lzma, zstd: not deflate */
	zt->phys_limit = 1ull << 40;
	zt->get = get;
	zt->arg = t;
}

static int map(struct erofs_zext_table *zt, uint64_t la, struct erofs_map *m, char *err)
{
	err[0] = '\0';
	return erofs_zext_map(zt, la, m, err, 200);
}

static bool has(const char *err, const char *word)
{
	if (strstr(err, word))
		return true;
	fprintf(stderr, "message '%s' lacks '%s'\n", err, word);
	return false;
}

static void test_decode_sizes(void)
{
	uint8_t raw[32];
	struct erofs_zext_rec r;

	for (unsigned int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(0x10 + i);
	erofs_zext_decode(raw, 4, &r);
	CHECK(r.plen == 0x13121110u && !r.pstart && !r.lstart);
	erofs_zext_decode(raw, 8, &r);
	CHECK(r.pstart == 0x17161514u && !r.lstart);
	erofs_zext_decode(raw, 16, &r);
	CHECK(r.pstart == 0x1b1a191817161514ull && r.lstart == 0x1f1e1d1cu);
	erofs_zext_decode(raw, 32, &r);
	CHECK(r.lstart == 0x232221201f1e1d1cull);
}

/* 16 and 32-byte records: lstart given, pstart byte-addressed and 48-bit */
static void test_recsz16_32(void)
{
	const struct rec r[] = {
		{ LZ4 | 3000, 0x123456789aull, 0 },
		{ 0, 0, 10000 },				/* a hole */
		{ 10000, 8192, 20000 },				/* raw */
		{ ZSTD | PARTIAL | 100, 1ull << 32 | 5, 30000 },
	};
	struct erofs_zext_table zt;
	struct table t;
	struct erofs_map m;
	char err[200];

	for (unsigned int recsz = 16; recsz <= 32; recsz *= 2) {
		build(&zt, &t, recsz, r, 4, 30500);
		CHECK(erofs_zext_check(&zt, err, sizeof(err)) == 0);
		CHECK(map(&zt, 0, &m, err) == 0 && m.la == 0 && m.llen == 10000 &&
		      m.pa == 0x123456789aull && m.plen == 3000 && m.alg == 0 &&
		      m.flags == (EROFS_MAP_MAPPED | EROFS_MAP_ENCODED));
		CHECK(map(&zt, 9999, &m, err) == 0 && m.la == 0);
		CHECK(map(&zt, 15000, &m, err) == 0 && m.la == 10000 && m.llen == 10000 &&
		      !(m.flags & EROFS_MAP_MAPPED));
		CHECK(map(&zt, 29999, &m, err) == 0 && m.la == 20000 && m.llen == 10000 &&
		      m.pa == 8192 && m.plen == 10000 && m.flags == EROFS_MAP_MAPPED);
		CHECK(map(&zt, 30499, &m, err) == 0 && m.la == 30000 && m.llen == 500 &&
		      m.alg == 3 && m.pa == (1ull << 32 | 5) &&
		      m.flags == (EROFS_MAP_MAPPED | EROFS_MAP_ENCODED | EROFS_MAP_PARTIAL));
		CHECK(map(&zt, 30500, &m, err) == -EUCLEAN && has(err, "beyond i_size"));
	}
	/* lstart_hi: only 32-byte records carry it (a file over 4 GiB) */
	{
		const struct rec big[] = { { LZ4 | 4096, 0, 0 }, { LZ4 | 4096, 4096, 5ull << 32 } };

		build(&zt, &t, 32, big, 2, (5ull << 32) + 100);
		CHECK(erofs_zext_check(&zt, err, sizeof(err)) == 0);
		CHECK(map(&zt, 5, &m, err) == -EUCLEAN);	/* 12 MiB at most */
		CHECK(has(err, "at most"));
		CHECK(map(&zt, (5ull << 32) + 50, &m, err) == 0 && m.la == 5ull << 32 && m.llen == 100);
		build(&zt, &t, 16, big, 2, (5ull << 32) + 100);	/* the same bytes cut to 16 */
		CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "not after"));
	}
}

/* 8-byte records: one per lcluster, pstart 32-bit; 4-byte: contiguous from a base */
static void test_recsz4_8(void)
{
	const struct rec r[] = {
		{ LZ4 | 1000, 40000, 0 }, { 4096, 50000, 0 }, { 0, 0, 0 }, { LZMA | 77, 60000, 0 },
	};
	struct erofs_zext_table zt;
	struct table t;
	struct erofs_map m;
	char err[200];

	build(&zt, &t, 8, r, 4, 3 * 4096 + 10);
	zt.algs |= 1u << 1;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == 0);
	CHECK(map(&zt, 5, &m, err) == 0 && m.la == 0 && m.llen == 4096 && m.pa == 40000 &&
	      m.plen == 1000 && (m.flags & EROFS_MAP_ENCODED));
	CHECK(map(&zt, 4096, &m, err) == 0 && m.la == 4096 && m.pa == 50000 &&
	      m.flags == EROFS_MAP_MAPPED);
	CHECK(map(&zt, 9000, &m, err) == 0 && !(m.flags & EROFS_MAP_MAPPED));
	CHECK(map(&zt, 12297, &m, err) == 0 && m.la == 12288 && m.llen == 10 && m.alg == 1);
	/* the count must match the lclusters of i_size */
	zt.nrecs = 3;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "lclusters"));

	/* 4-byte: each extent right after the one before, from the base */
	build(&zt, &t, 4, r, 4, 3 * 4096 + 10);
	zt.algs |= 1u << 1;
	zt.base = 1000000;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == 0);
	CHECK(map(&zt, 12290, &m, err) == 0 && m.pa == 1000000 + 1000 + 4096 && m.plen == 77);
	t.gets = 0;
	CHECK(map(&zt, 12291, &m, err) == 0 && m.pa == 1000000 + 1000 + 4096);
	CHECK(t.gets == 1);	/* sequential maps do not sum the table again */
	CHECK(map(&zt, 0, &m, err) == 0 && m.pa == 1000000);
	CHECK(map(&zt, 4096, &m, err) == 0 && m.pa == 1001000);
	/* lclusters larger than extents may be */
	zt.lclusterbits = 24;
	zt.nrecs = 1;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "lclusters"));
}

static void test_fragment(void)
{
	const struct rec r[] = { { ZSTD | 500, 9000, 0 }, { 0x89abcdefu, 0x12, 8192 } };
	struct erofs_zext_table zt;
	struct table t;
	struct erofs_map m;
	char err[200];

	build(&zt, &t, 16, r, 2, 10000);
	zt.fragment = true;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == 0);
	CHECK(map(&zt, 9000, &m, err) == 0 && m.la == 8192 && m.llen == 1808 &&
	      m.pa == (0x12ull << 32 | 0x89abcdefu) &&
	      m.flags == (EROFS_MAP_MAPPED | EROFS_MAP_FRAGMENT));
	CHECK(map(&zt, 0, &m, err) == 0 && (m.flags & EROFS_MAP_ENCODED));
	/* 4-byte records: the offset is plen alone */
	build(&zt, &t, 4, r, 2, 4096 + 100);
	zt.fragment = true;
	CHECK(map(&zt, 4100, &m, err) == 0 && m.pa == 0x89abcdefu && m.la == 4096);
}

static void test_hostile(void)
{
	struct erofs_zext_table zt;
	struct table t;
	struct erofs_map m;
	char err[200];
	struct rec r[3];

#define ONE(plen_, pstart_) do {						\
		memset(r, 0, sizeof(r));					\
		r[0] = (struct rec){ (plen_), (pstart_), 0 };			\
		build(&zt, &t, 16, r, 1, 4096);					\
	} while (0)
	ONE(LZ4 | (1u << 21) | 10, 0);		/* a reserved bit */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "reserved"));
	ONE(LZ4 | ((1u << 20) + 1), 0);		/* over 1 MiB compressed */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "at most"));
	ONE(3u << 28 | 10, 0);			/* deflate, not listed */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "does not list"));
	ONE(9u << 28 | 10, 0);			/* algorithm 8: none such */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "algorithm 8"));
	ONE(LZ4 | 100, (1ull << 40) - 50);	/* past the image */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "beyond the end"));
	ONE(LZ4 | 100, UINT64_MAX - 10);	/* would wrap */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "beyond the end"));
	ONE(100, 0);				/* raw: shorter than its extent */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "uncompressed"));
	ONE(PARTIAL, 0);			/* a hole with flags */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "hole"));
	ONE(PARTIAL | 4096, 0);			/* raw and partial */
	CHECK(map(&zt, 0, &m, err) == -EUCLEAN && has(err, "partial"));

	/* lstart: from 0, strictly rising, below i_size */
	r[0] = (struct rec){ LZ4 | 10, 0, 100 };
	build(&zt, &t, 16, r, 1, 4096);
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "not 0"));
	r[0] = (struct rec){ LZ4 | 10, 0, 0 };
	r[1] = (struct rec){ LZ4 | 10, 0, 3000 };
	r[2] = (struct rec){ LZ4 | 10, 0, 2000 };	/* decreasing */
	build(&zt, &t, 16, r, 3, 4096);
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "not after"));
	r[2].lstart = 3000;				/* the same start twice */
	build(&zt, &t, 16, r, 3, 4096);
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "not after"));
	r[2].lstart = 4096;				/* at i_size */
	build(&zt, &t, 16, r, 3, 4096);
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "i_size"));
	build(&zt, &t, 16, r, 0, 4096);			/* no record at all */
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "no extent"));
	build(&zt, &t, 12, r, 1, 4096);			/* no such record size */
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN);
	/* a read error of the table comes back as is */
	build(&zt, &t, 16, r, MAXREC + 1, 1ull << 40);
	CHECK(map(&zt, (1ull << 40) - 1, &m, err) == -EIO || map(&zt, 0, &m, err) == 0);
	/* 4-byte records: the base near the top of the space */
	r[0] = (struct rec){ LZ4 | 4000, 0, 0 };
	r[1] = (struct rec){ LZ4 | 4000, 0, 0 };
	build(&zt, &t, 4, r, 2, 8192);
	zt.base = (1ull << 60) - 1;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == 0);
	CHECK(map(&zt, 4096, &m, err) == -EUCLEAN && has(err, "2^60"));
	zt.base = 1ull << 60;
	CHECK(erofs_zext_check(&zt, err, sizeof(err)) == -EUCLEAN && has(err, "base"));
#undef ONE
}

int main(void)
{
	test_decode_sizes();
	test_recsz16_32();
	test_recsz4_8();
	test_fragment();
	test_hostile();
	return unit_summary("test-zext");
}
