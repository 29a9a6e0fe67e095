// SPDX-License-Identifier: MIT
/*
 * Unit tests for the read layer (lib/read/): compressed files (LZ4
 * extents, full and compact indexes, the compression configs after the
 * superblock), fragments of the packed inode and interlaced plain
 * pclusters, in images crafted in memory with the on-disk codecs
 * (reader-img.h).  Every rejection is checked for its return code and for
 * the words of its message.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lz4.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "reader-img.h"
#include "unit.h"

/* ------------------------------------------------------------------ */
/* compressed files (tests/unit/test-zindex.c checks indexes in depth)  */

/* text that LZ4 shrinks a lot, but not to nothing */
static void fill_text(uint8_t *p, size_t n)
{
	static const char *const words[] = { "alpha ", "beta ", "gamma ", "delta\n", "lz4 " };
	uint32_t x = 12345;
	size_t i = 0;

	while (i < n && i < 1500) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = words[(x >> 16) % 5];
		while (*w && i < n)
			p[i++] = (uint8_t)*w++;
	}
	for (; i < n; i++)	/* then repeats, shifted a little each time */
		p[i] = p[i - 1499];
}

/* A file of 10000 bytes: one LZ4 extent right-aligned in block 5, full or
 * compact index.  Returns the compressed length. */
static int put_zfile(struct img *m, const uint8_t *data, bool compact)
{
	uint8_t *ino = m->b + 40 * 32, zbuf[BLK];
	int clen = LZ4_compress_default((const char *)data, (char *)zbuf, 10000, BLK);
	uint8_t *idx;

	put_inode(m, 40, S_IFREG | 0644, compact ? EROFS_LAYOUT_COMPRESSED_COMPACT :
		  EROFS_LAYOUT_COMPRESSED_FULL, 10000, 1, false);
	memset(ino + 32, 0, 64);
	memset(m->b + 5 * BLK, 0, BLK);
	memcpy(m->b + 6 * BLK - clen, zbuf, (size_t)clen);
	/* map header at 40 * 32 + 32 (8-aligned): all zero, LZ4 */
	if (!compact) {
		idx = ino + 32 + 16;
		put_le16(idx, EROFS_LCLUSTER_HEAD1);
		put_le32(idx + 4, 5);
		put_le16(idx + 8, EROFS_LCLUSTER_NONHEAD);
		put_le16(idx + 12, 1);
		put_le16(idx + 14, 2);
		put_le16(idx + 16, EROFS_LCLUSTER_NONHEAD);
		put_le16(idx + 20, 2);
		put_le16(idx + 22, 1);
	} else {
		/* ebase 1320: 4-byte packs (2 entries of 16 bits, then the base) */
		idx = ino + 32 + 8;
		put_le16(idx, EROFS_LCLUSTER_HEAD1 << 12);
		put_le16(idx + 2, EROFS_LCLUSTER_NONHEAD << 12 | 2);	/* last: delta[1] */
		put_le32(idx + 4, 4);				/* block 5 = 4 + 1 */
		put_le16(idx + 8, EROFS_LCLUSTER_NONHEAD << 12 | 2);
		put_le32(idx + 12, 5);
	}
	return clen;
}

static void test_compressed(void)
{
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	static uint8_t data[10000], out[10000];
	const uint8_t *dec;
	struct img m;
	int clen;

	fill_text(data, sizeof(data));
	for (int compact = 0; compact < 2; compact++) {
		img_init(&m, 8);
		m.sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING;
		clen = put_zfile(&m, data, compact);
		CHECK(clen > 0 && clen < (int)BLK);
		CHECK(img_open(&m, &r) == 0);
		CHECK(r.available_compr_algs == 1 && r.lz4_max_pclusterblks == 1);
		CHECK(erofs_read_inode(&r, 40, &vi) == 0);
		CHECK(erofs_map_blocks(&r, &vi, 9999, &map) == 0);
		CHECK(map.la == 0 && map.llen == 10000 && map.pa == 5 * BLK && map.plen == BLK &&
		      map.flags == (EROFS_MAP_MAPPED | EROFS_MAP_ENCODED) && map.alg == 0);
		memset(out, 0, sizeof(out));
		CHECK(erofs_read_data(&r, &vi, out, 10000, 0) == 0 && !memcmp(out, data, 10000));
		CHECK(erofs_read_data(&r, &vi, out, 100, 5000) == 0 && !memcmp(out, data + 5000, 100));
		CHECK(erofs_decode_extent(&r, &vi, &map, &dec) == 0 && !memcmp(dec, data, 10000));

		/* a stream that decodes to more than the extent */
		put_le32(m.b + 40 * 32 + 8, 9999);
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		EXPECT_ERR(erofs_read_data(&r, &vi, out, 10, 0), -EUCLEAN,
			   "pcluster at block 5: corrupt LZ4 data", &r);
		/* ... or to less */
		put_le32(m.b + 40 * 32 + 8, 10001);
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		EXPECT_ERR(erofs_read_data(&r, &vi, out, 10, 0), -EUCLEAN,
			   "LZ4 data decodes to 10000 bytes for the 10001-byte extent at byte 0", &r);
		put_le32(m.b + 40 * 32 + 8, 10000);
		/* garbage in the stream */
		m.b[6 * BLK - clen + clen / 2] ^= 0xff;
		m.b[6 * BLK - clen + clen / 2 + 1] ^= 0x5a;
		m.b[6 * BLK - 3] = 0xff;
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		checks++;
		if (!erofs_read_data(&r, &vi, out, 10000, 0) && memcmp(out, data, 10000)) {
			failures++;	/* LZ4 has no checksum, but this must not pass */
			fprintf(stderr, "%s:%d: damaged stream decoded\n", __FILE__, __LINE__);
		}
		/* an all-zero pcluster */
		memset(m.b + 5 * BLK, 0, BLK);
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		EXPECT_ERR(erofs_read_data(&r, &vi, out, 10, 0), -EUCLEAN,
			   "pcluster at block 5: its first block is all zeros", &r);
		erofs_reader_close(&r);
		free(m.b);
	}

	/* compressed data with 2 KiB blocks (Linux 6.8+): 2 KiB lclusters */
	img_init(&m, 8);
	m.sb.blkszbits = 11;
	m.sb.blocks = 16;
	m.sb.root_nid = 64;
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 10000, 1, false);
	CHECK(img_open(&m, &r) == 0);
	CHECK(erofs_read_inode(&r, 40, &vi) == 0 && vi.z_lclusterbits == 11);
	erofs_reader_close(&r);
	free(m.b);

	/* compression configs after the superblock */
	img_init(&m, 8);
	m.sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS;
	m.sb.u1 = 1;
	put_le16(m.b + 1152, 14);
	put_le16(m.b + 1156, 16);
	CHECK(img_open(&m, &r) == 0 && r.lz4_max_pclusterblks == 16 && r.sb_end == 1152 + 16);
	put_le16(m.b + 1156, 0);
	CHECK(img_open(&m, &r) == 0 && r.lz4_max_pclusterblks == 1);
	put_le16(m.b + 1156, 257);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "LZ4 pclusters of 257 blocks (at most 256)", &r);
	put_le16(m.b + 1152, 13);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "LZ4 config of 13 bytes (want 14)", &r);
	put_le16(m.b + 1152, 0);	/* 0 means 65536 bytes */
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "compression config of algorithm 0 (65536 bytes) beyond the end", &r);
	/* the other algorithms' records, 4-byte aligned, checked as the kernel checks them */
	m.sb.u1 = 0xf;
	put_le16(m.b + 1152, 14);
	put_le16(m.b + 1156, 4);
	put_le16(m.b + 1168, 14);		/* lzma: dict_size, format */
	put_le32(m.b + 1170, 65536);
	put_le16(m.b + 1184, 6);		/* deflate: windowbits */
	m.b[1186] = 15;
	put_le16(m.b + 1192, 6);		/* zstd: format, windowlog - 10 */
	m.b[1195] = 10;
	CHECK(img_open(&m, &r) == 0 && r.lzma_dict_size == 65536 && r.deflate_windowbits == 15 &&
	      r.zstd_window_log == 20 && r.available_compr_algs == 0xf && r.sb_end == 1200);
	put_le32(m.b + 1170, (8u << 20) + 1);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "MicroLZMA dictionary of 8388609 bytes (4096 to 8388608)", &r);
	put_le32(m.b + 1170, 65536);
	put_le16(m.b + 1174, 1);
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "unknown MicroLZMA format 1", &r);
	put_le16(m.b + 1174, 0);
	m.b[1186] = 16;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "DEFLATE window of 2^16 bytes (at most 2^15)", &r);
	m.b[1186] = 15;
	m.b[1195] = 11;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "zstd window of 2^21 bytes (at most 1048576)", &r);
	m.b[1195] = 255;	/* 2^265: checked without shifting by it (fuzz-fsck found it) */
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "zstd window of 2^265 bytes (at most 1048576)", &r);
	m.b[1195] = 10;
	m.b[1194] = 1;
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "unknown zstd format 1", &r);
	m.b[1194] = 0;
	put_le16(m.b + 1192, 5);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "zstd config of 5 bytes (want 6)", &r);
	/* algorithms no Linux knows: refused whole */
	m.sb.u1 = 0x8009;
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "unsupported compression algorithms: unknown bits 0x8000", &r);
	m.sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING;
	m.sb.u1 = 4096;	/* now lz4_max_distance */
	CHECK(img_open(&m, &r) == 0 && r.lz4_max_distance == 4096 && r.available_compr_algs == 1 &&
	      r.sb_end == 1152);
	free(m.b);
}

/* ------------------------------------------------------------------ */
/* fragments and interlaced plain pclusters (6.1's zmap.c semantics)    */

#define PACKED	40u	/* the packed inode: put_zfile's LZ4 file of 10000 bytes */
#define FA	48u	/* whole-file fragment, compact: 3000 bytes at 1234 */
#define FB	56u	/* full index: a raw block, then a tail fragment at 5000 */
#define FC	64u	/* full index: LZ4 [0,5000), interlaced plain [5000,9000) */
#define FD	72u	/* full index: its only head (lcluster 0) is the tail */
#define FE	80u	/* compact index: a raw block, then a tail fragment at 7000 */

static uint8_t *zhdr(struct img *m, uint64_t nid)
{
	return m->b + nid * 32 + 32;	/* no xattrs: 8-aligned right after the core */
}

static void put_full_entry(struct img *m, uint64_t nid, unsigned int lcn, unsigned int type,
			   unsigned int clusterofs, uint32_t blkaddr)
{
	uint8_t *e = zhdr(m, nid) + 16 + lcn * 8;

	put_le16(e, (uint16_t)type);
	put_le16(e + 2, (uint16_t)clusterofs);
	put_le32(e + 4, blkaddr);
}

static void frag_image(struct img *m, const uint8_t *packed, const uint8_t *cdata, bool interlaced)
{
	uint8_t zbuf[BLK], *h;
	int clen;

	img_init(m, 12);
	m->sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_FRAGMENTS;
	m->sb.packed_nid = PACKED;
	CHECK(put_zfile(m, packed, false) > 0);

	put_inode(m, FA, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT, 3000, 0, false);
	put_le64(zhdr(m, FA), 1234 | 1ull << 63);

	put_inode(m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 6000, 1, false);
	h = zhdr(m, FB);
	put_le32(h, 5000);
	put_le16(h + 4, EROFS_ZADVISE_FRAGMENT);
	put_full_entry(m, FB, 0, EROFS_LCLUSTER_PLAIN, 0, 6);
	put_full_entry(m, FB, 1, EROFS_LCLUSTER_HEAD1, 0, 0);	/* high half of the offset */
	for (unsigned int i = 0; i < BLK; i++)
		m->b[6 * BLK + i] = (uint8_t)(i * 7 + 3);

	put_inode(m, FC, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 9000, 2, false);
	put_le16(zhdr(m, FC) + 4, interlaced ? EROFS_ZADVISE_INTERLACED : 0);
	put_full_entry(m, FC, 0, EROFS_LCLUSTER_HEAD1, 0, 8);
	put_full_entry(m, FC, 1, EROFS_LCLUSTER_PLAIN, 5000 - BLK, 7);
	put_full_entry(m, FC, 2, EROFS_LCLUSTER_PLAIN, 9000 - 2 * BLK, 0);	/* EOF */
	clen = LZ4_compress_default((const char *)cdata, (char *)zbuf, 5000, BLK);
	CHECK(clen > 0 && clen < (int)BLK);
	memcpy(m->b + 9 * BLK - clen, zbuf, (size_t)clen);
	for (unsigned int k = 0; k < 4000; k++) {
		unsigned int at = interlaced ? (5000 + k) % BLK : k;

		m->b[7 * BLK + at] = cdata[5000 + k];
	}

	put_inode(m, FD, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 3000, 0, false);
	put_le32(zhdr(m, FD), 100);
	put_le16(zhdr(m, FD) + 4, EROFS_ZADVISE_FRAGMENT);
	put_full_entry(m, FD, 0, EROFS_LCLUSTER_HEAD1, 0, 0);

	/* compact: ebase 2600, 4-byte packs: PLAIN then HEAD1, base 5 (block 6 = 5 + 1) */
	put_inode(m, FE, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT, 6000, 1, false);
	h = zhdr(m, FE);
	put_le32(h, 7000);
	put_le16(h + 4, EROFS_ZADVISE_FRAGMENT | EROFS_ZADVISE_COMPACTED_2B);
	put_le16(h + 8, EROFS_LCLUSTER_PLAIN << 12);
	put_le16(h + 10, EROFS_LCLUSTER_HEAD1 << 12);
	put_le32(h + 12, 5);
}

/* Reads the whole file, then every range of a few sizes, against want. */
static void check_file(struct erofs_reader *r, uint64_t nid, const uint8_t *want, size_t size)
{
	static uint8_t out[16384];
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(r, nid, &vi);

	CHECK(err == 0);
	if (err) {
		fprintf(stderr, "nid %llu: %s\n", (unsigned long long)nid, erofs_reader_error(r));
		return;
	}
	CHECK(vi.size == size && size <= sizeof(out));
	memset(out, 0xAA, sizeof(out));
	err = erofs_read_data(r, &vi, out, size, 0);
	CHECK(err == 0 && !memcmp(out, want, size));
	if (err)
		fprintf(stderr, "nid %llu: %s\n", (unsigned long long)nid, erofs_reader_error(r));
	for (size_t at = 0; at < size; at += 997) {
		size_t n = size - at < 1500 ? size - at : 1500;

		CHECK(erofs_read_data(r, &vi, out, n, at) == 0 && !memcmp(out, want + at, n));
	}
}

static void test_fragments(void)
{
	static uint8_t packed[10000], cdata[9000], want[16384];
	const struct erofs_rd_inode *pk;
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	uint8_t buf[64];
	struct img m;

	fill_text(packed, sizeof(packed));
	for (unsigned int i = 0; i < sizeof(cdata); i++)	/* text, then bytes that vary */
		cdata[i] = i < 5000 ? packed[i] : (uint8_t)(i * 13 + i / 251);

	for (int interlaced = 0; interlaced < 2; interlaced++) {
		frag_image(&m, packed, cdata, interlaced);
		CHECK(img_open(&m, &r) == 0);
		CHECK(erofs_packed_inode(&r, &pk) == 1 && pk->nid == PACKED && pk->size == 10000);
		check_file(&r, FA, packed + 1234, 3000);
		memcpy(want, m.b + 6 * BLK, BLK);
		memcpy(want + BLK, packed + 5000, 6000 - BLK);
		check_file(&r, FB, want, 6000);
		check_file(&r, FC, cdata, 9000);
		check_file(&r, FD, packed + 100, 3000);
		memcpy(want + BLK, packed + 7000, 6000 - BLK);
		check_file(&r, FE, want, 6000);

		/* the maps themselves */
		CHECK(erofs_read_inode(&r, FA, &vi) == 0 && vi.z_whole_fragment &&
		      vi.meta_end == FA * 32 + 40);
		CHECK(erofs_map_blocks(&r, &vi, 2999, &map) == 0 && map.la == 0 && map.llen == 3000 &&
		      map.pa == 1234 && map.flags == (EROFS_MAP_MAPPED | EROFS_MAP_FRAGMENT));
		CHECK(erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 1 && vi.z_frag_la == BLK);
		CHECK(erofs_map_blocks(&r, &vi, 5000, &map) == 0 && map.la == BLK &&
		      map.llen == 6000 - BLK && map.pa == 5000 && (map.flags & EROFS_MAP_FRAGMENT));
		CHECK(erofs_map_blocks(&r, &vi, 10, &map) == 0 && map.la == 0 && map.llen == BLK &&
		      map.flags == EROFS_MAP_MAPPED);
		CHECK(erofs_read_inode(&r, FC, &vi) == 0);
		CHECK(erofs_map_blocks(&r, &vi, 8999, &map) == 0 && map.la == 5000 && map.llen == 4000 &&
		      map.pa == 7 * BLK && map.plen == BLK &&
		      map.flags == (EROFS_MAP_MAPPED | (interlaced ? EROFS_MAP_INTERLACED : 0)));
		CHECK(erofs_read_mapped(&r, &map, buf, 8, 8190) == 0 && !memcmp(buf, cdata + 8190, 8));
		EXPECT_ERR(erofs_read_mapped(&r, &map, buf, 8, 8995), -EINVAL, "outside its extent", &r);
		CHECK(erofs_read_inode(&r, FD, &vi) == 0 && vi.z_tail_lcn == 0 && vi.z_frag_la == 0);
		CHECK(erofs_read_packed(&r, buf, 10, 9990) == 0 && !memcmp(buf, packed + 9990, 10));
		EXPECT_ERR(erofs_read_packed(&r, buf, 11, 9990), -EUCLEAN,
			   "read of 11 bytes at 9990 beyond the end of the packed inode (10000 bytes)", &r);
		erofs_reader_close(&r);
		free(m.b);
	}

	/* the packed inode decoded on demand: a damaged pcluster names it */
	frag_image(&m, packed, cdata, false);
	m.b[6 * BLK - 40] ^= 0xff;
	m.b[6 * BLK - 41] ^= 0x5a;
	m.b[6 * BLK - 3] = 0xff;
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FA, &vi) == 0);
	checks++;
	{
		static uint8_t out[3000];
		int err = erofs_read_data(&r, &vi, out, 3000, 0);

		if (!err ? !memcmp(out, packed + 1234, 3000) :
		    !strstr(erofs_reader_error(&r), "packed inode (nid 40): pcluster at block 5")) {
			failures++;
			fprintf(stderr, "%s:%d: damaged packed pcluster: %d %s\n", __FILE__, __LINE__,
				err, erofs_reader_error(&r));
		}
	}
	erofs_reader_close(&r);
	free(m.b);

	/* hostile images */
	struct fcase {
		const char *what;
		uint64_t nid;
		void (*edit)(struct img *m);
		int err;
		const char *words;
	};
	static const struct fcase cases[] = {
		{ "no packed inode", FA, NULL, -EUCLEAN,
		  "fragment of 3000 bytes, but the superblock names no packed inode (packed_nid 0)" },
		{ "packed_nid out of range", FB, NULL, -EUCLEAN,
		  "unusable packed inode (nid 1099511627776): nid 1099511627776 out of range" },
		{ "packed inode a directory", FE, NULL, -EUCLEAN,
		  "unusable packed inode (nid 36): not a regular file (mode 040755)" },
		{ "packed inode a fragment itself", FA, NULL, -EUCLEAN,
		  "the whole file is a fragment, but this is the packed inode itself" },
		{ "... and a file reading it", FB, NULL, -EUCLEAN,
		  "unusable packed inode (nid 48): the whole file is a fragment, but this is the packed inode itself" },
		{ "fragment past the packed inode", FA, NULL, -EUCLEAN,
		  "fragment of 3000 bytes at offset 9000 beyond the end of the packed inode (nid 40, 10000 bytes)" },
		{ "fragment offset that wraps", FA, NULL, -EUCLEAN,
		  "fragment of 3000 bytes at offset 9223372036854775807 beyond the end" },
		{ "huge i_size", FA, NULL, -EUCLEAN,
		  "fragment of 4611686018427387904 bytes at offset 1234 beyond the end" },
		{ "no sb feature", FA, NULL, -EUCLEAN,
		  "the whole file is a fragment of the packed inode, but the superblock lacks the fragments feature" },
		{ "tail with a PLAIN head", FB, NULL, -EUCLEAN,
		  "lcluster 1: the tail extent is a fragment, but its head is uncompressed" },
		{ "tail with an inline pcluster", FB, NULL, -EUCLEAN,
		  "both an inline tail pcluster and a tail fragment" },
		{ "tail offset's high half", FB, NULL, -EUCLEAN,
		  "fragment of 1904 bytes at offset 4294972296 beyond the end" },
		{ "tail HEAD2 not in the sb", FB, NULL, -EUCLEAN,
		  "lcluster 1: HEAD2 tail extent with algorithm 1, which the superblock does not list" },
	};
	static const struct ent dots[] = {
		{ ROOT, ".", EROFS_FT_DIR }, { ROOT, "..", EROFS_FT_DIR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fcase *c = &cases[i];
		int err;

		frag_image(&m, packed, cdata, false);
		switch (i) {
		case 0: m.sb.packed_nid = 0; break;
		case 1: m.sb.packed_nid = 1ull << 40; break;
		case 2: m.sb.packed_nid = ROOT; put_root(&m, dots, 2); break;
		case 3: case 4: m.sb.packed_nid = FA; break;
		case 5: put_le64(zhdr(&m, FA), 9000 | 1ull << 63); break;
		case 6: put_le64(zhdr(&m, FA), UINT64_MAX); break;
		case 7: put_inode(&m, FA, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT,
				  1ull << 62, 0, true);
			put_le64(zhdr(&m, FA) + 32, 1234 | 1ull << 63); break;
		case 8: m.sb.feature_incompat &= ~EROFS_INCOMPAT_FRAGMENTS; break;
		case 9: put_full_entry(&m, FB, 1, EROFS_LCLUSTER_PLAIN, 0, 0); break;
		case 10: put_le16(zhdr(&m, FB) + 4, EROFS_ZADVISE_FRAGMENT | EROFS_ZADVISE_INLINE_PCLUSTER); break;
		case 11: put_full_entry(&m, FB, 1, EROFS_LCLUSTER_HEAD1, 0, 1); break;
		case 12: put_full_entry(&m, FB, 1, EROFS_LCLUSTER_HEAD2, 0, 0);
			zhdr(&m, FB)[6] = 0x10; break;
		}
		CHECK(img_open(&m, &r) == 0);
		err = erofs_read_inode(&r, c->nid, &vi);
		check_refusal(c->what, err, erofs_reader_error(&r), c->err, c->words);
		erofs_reader_close(&r);
		free(m.b);
	}

	/* an extent head after the tail extent: refused, not read from the
	 * fragment (lcluster 2's NONHEAD leads back over lcluster 1's head) */
	frag_image(&m, packed, cdata, false);
	put_inode(&m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 10000, 1, false);
	put_full_entry(&m, FB, 0, EROFS_LCLUSTER_HEAD1, 0, 0);
	put_full_entry(&m, FB, 1, EROFS_LCLUSTER_PLAIN, 0, 6);
	put_le16(zhdr(&m, FB) + 16 + 16, EROFS_LCLUSTER_NONHEAD);
	put_le16(zhdr(&m, FB) + 16 + 20, 2);
	put_le16(zhdr(&m, FB) + 16 + 22, 1);
	put_le32(zhdr(&m, FB), 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 0);
	/* the tail head is lcluster 0: as in 6.1, the whole file is the fragment */
	CHECK(erofs_map_blocks(&r, &vi, 5000, &map) == 0 && map.la == 0 && map.llen == 10000 &&
	      (map.flags & EROFS_MAP_FRAGMENT) && map.pa == 0);
	erofs_reader_close(&r);
	put_full_entry(&m, FB, 0, EROFS_LCLUSTER_PLAIN, 0, 6);
	put_full_entry(&m, FB, 1, EROFS_LCLUSTER_HEAD1, 0, 0);
	put_full_entry(&m, FB, 2, EROFS_LCLUSTER_HEAD1, 0, 0);
	put_inode(&m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 3 * BLK + 100, 1, false);
	put_le16(zhdr(&m, FB) + 16 + 24, EROFS_LCLUSTER_NONHEAD);
	put_le16(zhdr(&m, FB) + 16 + 28, 2);	/* back over lcluster 2's head */
	put_le16(zhdr(&m, FB) + 16 + 30, 1);
	put_le32(zhdr(&m, FB), 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 1);
	EXPECT_ERR(erofs_map_blocks(&r, &vi, BLK + 5, &map), -EUCLEAN,
		   "lcluster 2: an extent starts after the tail extent (a fragment) at lcluster 1", &r);
	erofs_reader_close(&r);
	free(m.b);

	/* erofs-utils' form: the tail fragment (head at lcluster 1) ends inside
	 * lcluster 3, whose entry is a PLAIN head at exactly i_size; 6.1 never
	 * maps it, and neither may we refuse the file for it */
	frag_image(&m, packed, cdata, false);
	put_inode(&m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 3 * BLK + 100, 1, false);
	put_le32(zhdr(&m, FB), 1000);
	put_le16(zhdr(&m, FB) + 16 + 16, EROFS_LCLUSTER_NONHEAD);
	put_le16(zhdr(&m, FB) + 16 + 20, 1);
	put_le16(zhdr(&m, FB) + 16 + 22, 1);
	put_full_entry(&m, FB, 3, EROFS_LCLUSTER_PLAIN, 100, 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 1 &&
	      vi.z_frag_la == BLK);
	CHECK(erofs_map_blocks(&r, &vi, 3 * BLK + 99, &map) == 0 && map.la == BLK &&
	      map.llen == 2 * BLK + 100 && map.pa == 1000 && (map.flags & EROFS_MAP_FRAGMENT));
	memcpy(want, m.b + 6 * BLK, BLK);
	memcpy(want + BLK, packed + 1000, 2 * BLK + 100);
	check_file(&r, FB, want, 3 * BLK + 100);
	erofs_reader_close(&r);
	/* ... but a head that starts before i_size is the tail's own head (and
	 * uncompressed), and one past i_size is refused as in any file */
	put_full_entry(&m, FB, 3, EROFS_LCLUSTER_PLAIN, 99, 0);
	CHECK(img_open(&m, &r) == 0);
	EXPECT_ERR(erofs_read_inode(&r, FB, &vi), -EUCLEAN,
		   "lcluster 3: the tail extent is a fragment, but its head is uncompressed", &r);
	erofs_reader_close(&r);
	put_full_entry(&m, FB, 3, EROFS_LCLUSTER_PLAIN, 101, 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0);
	EXPECT_ERR(erofs_map_blocks(&r, &vi, 2 * BLK, &map), -EUCLEAN,
		   "lcluster 3: an extent starts at byte 12389, beyond i_size 12388", &r);
	erofs_reader_close(&r);
	free(m.b);
}

int main(void)
{
	test_compressed();
	test_fragments();
	return unit_summary("test-reader-compressed");
}
