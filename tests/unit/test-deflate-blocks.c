// SPDX-License-Identifier: MIT
/*
 * Block ends of a raw DEFLATE stream (lib/codec/deflate_blocks.c), which
 * the DEFLATE prefix search takes as points.  Input of three kinds, which
 * libdeflate codes in separate blocks: every end found lies inside the
 * input and the stream, both increase, and the stream cut there decodes
 * to exactly the input before the end.  Damaged or empty streams give
 * the ends before the damage, or none.
 */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "erofs/codec/deflate_blocks.h"
#include "unit.h"

#define PART	(96 * 1024)
#define LEN	(3 * PART)
#define MAX	48

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

/* stream[0, len) decodes to exactly src[0, want) */
static int decodes_to(const uint8_t *stream, int len, const uint8_t *src, int want)
{
	static uint8_t back[LEN];
	z_stream zs = { .next_in = (Bytef *)stream, .avail_in = (uInt)len, .next_out = back,
			.avail_out = sizeof(back) };
	int ret, same;

	if (inflateInit2(&zs, -15) != Z_OK)
		return 0;
	ret = inflate(&zs, Z_SYNC_FLUSH);
	same = (ret == Z_OK || ret == Z_BUF_ERROR) && zs.total_out == (uLong)want &&
	       !memcmp(back, src, (size_t)want);
	inflateEnd(&zs);
	return same;
}

int main(void)
{
	static uint8_t src[LEN], stream[LEN + LEN / 8];
	struct libdeflate_compressor *comp = libdeflate_alloc_compressor(6);
	int in[MAX], out[MAX], n, len, ordered = 1, inside = 1, cut_ok = 1;

	CHECK(comp != NULL);
	if (!comp)
		return unit_summary("test-deflate-blocks");
	make_input(src);
	len = (int)libdeflate_deflate_compress(comp, src, LEN, stream, sizeof(stream));
	CHECK(len > 0);
	n = erofs_deflate_block_ends(stream, len, in, out, MAX);
	printf("%d bytes of input in %d bytes of DEFLATE: %d block ends before the last\n", LEN,
	       len, n);
	/* one block per kind at least */
	CHECK(n >= 2);
	for (int i = 0; i < n; i++) {
		if (i && (in[i] <= in[i - 1] || out[i] < out[i - 1]))
			ordered = 0;
		if (in[i] <= 0 || in[i] >= LEN || out[i] <= 0 || out[i] > len)
			inside = 0;
		if (!decodes_to(stream, out[i], src, in[i]))
			cut_ok = 0;
	}
	CHECK(ordered);
	CHECK(inside);
	CHECK(cut_ok);
	/* the words end near their part's end, where the kind changes */
	for (int i = 0; i < n; i++)
		if (in[i] > PART / 2 && in[i] < PART + PART / 2) {
			CHECK(in[i] > PART - PART / 8 && in[i] < PART + PART / 8);
			break;
		}
	/* at most max ends; a stream cut short: only the ends before the cut */
	CHECK(erofs_deflate_block_ends(stream, len, in, out, 1) == 1);
	if (n >= 2) {
		const int first_out = out[0], first_in = in[0];
		int m = erofs_deflate_block_ends(stream, first_out + 1, in, out, MAX);

		CHECK(m == 1 && in[0] == first_in);
	}
	/* damage and nothing */
	memset(stream + 1, 0xff, 64);
	CHECK(erofs_deflate_block_ends(stream, len, in, out, MAX) == 0);
	CHECK(erofs_deflate_block_ends(stream, 0, in, out, MAX) == 0);
	CHECK(erofs_deflate_block_ends(NULL, 0, in, out, MAX) == 0);
	libdeflate_free_compressor(comp);
	return unit_summary("test-deflate-blocks");
}
