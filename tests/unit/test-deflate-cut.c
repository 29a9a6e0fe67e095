// SPDX-License-Identifier: MIT
/*
 * Cutting a raw DEFLATE stream short (lib/codec/deflate_cut.c), which the
 * DEFLATE encoder fills each pcluster with.  libdeflate's streams of
 * three kinds of input (Huffman blocks, stored blocks, and the fixed code
 * of short input) at levels 1, 6 and 12, cut at caps from a few bytes to
 * more than the stream: every cut fits its cap, decodes (zlib, to its
 * final block's end) to exactly the input before the cut, takes no less
 * input than a smaller cap's, fills the cap to within a symbol but at a
 * block's header, and a cap the stream fits takes it whole.  Damaged and
 * random streams never make it read or write out of bounds (run it under
 * valgrind or ASan to see that), and a cut of them still fits its cap.
 */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "erofs/codec/deflate_cut.h"
#include "unit.h"

#define PART	(96 * 1024)
#define LEN	(3 * PART)

/* words, then bytes of a 4-letter alphabet, then noise */
static void make_input(uint8_t *buf)
{
	static const char *const words[6] = { "erofs ", "inode ", "block ", "extent ",
					      "cluster ", "dirent " };
	unsigned int seed = 3;
	size_t pos = 0;

	while (pos < PART) {
		const char *w = words[unit_xorshift(&seed) % 6];

		for (size_t i = 0; w[i] && pos < PART; i++)
			buf[pos++] = (uint8_t)w[i];
	}
	for (; pos < 2 * PART; pos++)
		buf[pos] = (uint8_t)("ACGT"[unit_xorshift(&seed) % 4]);
	for (; pos < LEN; pos++)
		buf[pos] = (uint8_t)unit_xorshift(&seed);
}

/* stream[0, len) is a whole stream of exactly src[0, want) */
static int decodes_to(const uint8_t *stream, int len, const uint8_t *src, int want)
{
	static uint8_t back[LEN + 1];
	z_stream zs = { .next_in = (Bytef *)stream, .avail_in = (uInt)len, .next_out = back,
			.avail_out = sizeof(back) };
	int ret, same;

	if (inflateInit2(&zs, -15) != Z_OK)
		return 0;
	ret = inflate(&zs, Z_FINISH);
	same = ret == Z_STREAM_END && zs.total_out == (uLong)want && zs.total_in == (uLong)len &&
	       !memcmp(back, src, (size_t)want);
	inflateEnd(&zs);
	return same;
}

struct sweep {
	int cuts, bad_fit, bad_decode, shrank, loose, whole_ok;
};

/* Cuts stream[0, len) of src[0, src_len) at every step-th cap up to past its end. */
static void sweep(struct erofs_deflate_cutter *r, const uint8_t *stream, int len,
		  const uint8_t *src, int src_len, int step, struct sweep *s)
{
	static uint8_t out[LEN + LEN / 8 + 64];
	int last_in = 0;

	for (int cap = 1; cap <= len + step; cap += step) {
		struct erofs_deflate_cut cut;
		const int in = erofs_deflate_find_cut(r, stream, len, cap, &cut);
		int n;

		if (in < last_in)
			s->shrank++;
		if (in <= 0)
			continue;
		last_in = in;
		n = erofs_deflate_write_cut(stream, &cut, out);
		s->cuts++;
		if (n <= 0 || n > cap)
			s->bad_fit++;
		if (!decodes_to(out, n, src, in))
			s->bad_decode++;
		/* within the longest symbol and an end-of-block code, but at a header */
		if (cap - n > 8 && cap < len)
			s->loose++;
		if (cap >= len)
			s->whole_ok += in == src_len && n == len && !memcmp(out, stream, (size_t)len);
	}
}

/*
 * block_type: the kind of block at least one level's stream starts with
 * (0 stored, 1 the fixed code, 2 a code of its own), so that each kind is cut
 */
static void check_kind(struct erofs_deflate_cutter *r, const char *what, const uint8_t *src,
		       int src_len, int step, int loose_max_pct, int block_type)
{
	static const int levels[3] = { 1, 6, 12 };
	static uint8_t stream[LEN + LEN / 8 + 64];
	int typed = 0;

	for (int i = 0; i < 3; i++) {
		struct libdeflate_compressor *comp = libdeflate_alloc_compressor(levels[i]);
		struct sweep s = { 0 };
		int len;

		CHECK(comp != NULL);
		if (!comp)
			continue;
		len = (int)libdeflate_deflate_compress(comp, src, (size_t)src_len, stream,
						       sizeof(stream));
		CHECK(len > 0);
		typed += ((stream[0] >> 1) & 3) == block_type;
		sweep(r, stream, len, src, src_len, step, &s);
		printf("  %s, level %d: %d bytes in %d, %d cuts, %d looser than 8 bytes\n", what,
		       levels[i], src_len, len, s.cuts, s.loose);
		CHECK(s.cuts > 0);
		CHECK(!s.bad_fit);
		CHECK(!s.bad_decode);
		CHECK(!s.shrank);
		CHECK(s.whole_ok >= 1);
		CHECK(s.loose * 100 <= s.cuts * loose_max_pct);
		libdeflate_free_compressor(comp);
	}
	CHECK(typed > 0);
}

/* Damaged and random streams: any cut fits its cap; nothing else is asked. */
static void check_hostile(struct erofs_deflate_cutter *r, const uint8_t *src)
{
	static uint8_t stream[LEN + LEN / 8 + 64], bad[4096], out[4096 + 64];
	struct libdeflate_compressor *comp = libdeflate_alloc_compressor(6);
	unsigned int seed = 9;
	int len, over = 0;

	if (!comp)
		return;
	len = (int)libdeflate_deflate_compress(comp, src, PART, stream, sizeof(stream));
	for (int round = 0; round < 4000; round++) {
		const int n = 1 + (int)(unit_xorshift(&seed) % sizeof(bad));
		const int cap = 1 + (int)(unit_xorshift(&seed) % sizeof(bad));
		struct erofs_deflate_cut cut;

		if (round & 1) {
			/* a valid stream's start with a few bytes changed */
			memcpy(bad, stream, (size_t)(n < len ? n : len));
			for (int k = 0; k < 4; k++)
				bad[unit_xorshift(&seed) % (unsigned int)n] ^=
					(uint8_t)(1u << (unit_xorshift(&seed) & 7));
		} else {
			for (int k = 0; k < n; k++)
				bad[k] = (uint8_t)unit_xorshift(&seed);
		}
		if (erofs_deflate_find_cut(r, bad, n, cap, &cut) > 0 &&
		    erofs_deflate_write_cut(bad, &cut, out) > cap)
			over++;
	}
	CHECK(!over);
	libdeflate_free_compressor(comp);
}

int main(void)
{
	static uint8_t src[LEN];
	static const uint8_t short_text[] = "erofs erofs erofs erofs erofs erofs erofs erofs";
	struct erofs_deflate_cutter *r = erofs_deflate_cutter_new();
	struct erofs_deflate_cut cut;

	CHECK(r != NULL);
	if (!r)
		return unit_summary("test-deflate-cut");
	make_input(src);
	/* words: Huffman blocks; a header that does not fit leaves its size free */
	check_kind(r, "words", src, PART, 97, 5, 2);
	check_kind(r, "ACGT", src + PART, PART, 89, 5, 2);
	/* noise: stored blocks, filled to the byte */
	check_kind(r, "noise", src + 2 * PART, PART, 4099, 0, 0);
	check_kind(r, "all three", src, LEN, 1031, 5, 2);
	check_kind(r, "fixed code", short_text, (int)sizeof(short_text) - 1, 1, 40, 1);
	check_hostile(r, src);
	/* nothing to cut */
	CHECK(erofs_deflate_find_cut(r, NULL, 0, 100, &cut) == 0);
	CHECK(erofs_deflate_find_cut(r, src, 0, 100, &cut) == 0);
	CHECK(erofs_deflate_find_cut(r, src, 10, 0, &cut) == 0);
	erofs_deflate_cutter_free(r);
	return unit_summary("test-deflate-cut");
}
