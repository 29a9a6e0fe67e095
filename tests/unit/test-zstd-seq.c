// SPDX-License-Identifier: MIT
/*
 * The parser the two-stage zstd encoder picks for a window
 * (erofs_zseq_expect() in lib/codec/zstd_seq.c): libzstd's for the input
 * the frame should hold where that is another parser, and, up to an eighth
 * past a smaller row's end, that row's where it finds shorter matches.
 * Then on input made of 3-byte tokens: the frame found with the shorter
 * matches is smaller, and both decode to their input.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "erofs/codec/zstd_seq.h"
#include "unit.h"

#define KIB		1024u
#define WINDOW		(320 * KIB)
/* about 2:1, as the binaries the rule is for */
#define TOKENS		4096

static void check_rule(void)
{
	int mm = -1;

	/* the input a frame should hold picks another parser: taken (3772ead) */
	CHECK(erofs_zseq_parser(15, 200 * KIB, WINDOW, &mm) == ZSTD_btopt && mm == 3);
	CHECK(erofs_zseq_parser(18, 200 * KIB, WINDOW, &mm) == ZSTD_btultra2 && mm == 3);
	/* an eighth past 256 KiB: the smaller row's shorter matches */
	CHECK(erofs_zseq_parser(15, 280 * KIB, WINDOW, &mm) == ZSTD_btopt && mm == 3);
	CHECK(erofs_zseq_parser(16, 290 * KIB, WINDOW, &mm) == ZSTD_btultra && mm == 3);
	CHECK(erofs_zseq_parser(11, 280 * KIB, WINDOW, &mm) == ZSTD_btlazy2 && mm == 4);
	/* further past, or no shorter matches there: libzstd's own (0) */
	CHECK(erofs_zseq_parser(15, 300 * KIB, WINDOW, &mm) == 0 && mm == 0);
	CHECK(erofs_zseq_parser(18, 280 * KIB, WINDOW, &mm) == 0);
	CHECK(erofs_zseq_parser(19, 200 * KIB, WINDOW, &mm) == 0);
	CHECK(erofs_zseq_parser(6, 280 * KIB, WINDOW, &mm) == 0);
	/* nothing expected, or the whole window */
	CHECK(erofs_zseq_parser(15, 0, WINDOW, &mm) == 0);
	CHECK(erofs_zseq_parser(15, WINDOW, WINDOW, &mm) == 0);
}

/* Random picks of TOKENS 3-byte tokens: matches of 3 bytes, few longer. */
static void make_tokens(uint8_t *buf, size_t len)
{
	static uint8_t vocab[TOKENS][3];
	unsigned int seed = 7;

	for (int i = 0; i < TOKENS * 3; i++) {
		seed = seed * 1103515245u + 12345u;
		vocab[i / 3][i % 3] = (uint8_t)(seed >> 16);
	}
	for (size_t pos = 0; pos < len; pos += 3) {
		seed = seed * 1103515245u + 12345u;
		memcpy(buf + pos, vocab[(seed >> 16) % TOKENS], len - pos < 3 ? len - pos : 3);
	}
}

/* One frame of the whole window found with prefix's parser: its size, or <= 0. */
static int frame_of(struct erofs_zseq *z, const uint8_t *src, size_t prefix, uint8_t *out,
		    size_t cap, uint8_t *back)
{
	int n;

	if (erofs_zseq_expect(z, prefix, WINDOW) || erofs_zseq_find(z, src, WINDOW))
		return -1;
	n = erofs_zseq_encode(z, WINDOW, out, cap);
	CHECK(n > 0 && ZSTD_decompress(back, WINDOW, out, (size_t)n) == WINDOW &&
	      !memcmp(back, src, WINDOW));
	return n;
}

static void check_frames(void)
{
	const size_t cap = ZSTD_compressBound(WINDOW);
	uint8_t *src = malloc(WINDOW), *out = malloc(cap), *back = malloc(WINDOW);
	struct erofs_zseq *z = NULL;
	int plain, shorter;

	CHECK(src && out && back && erofs_zseq_new(15, 19, &z) == 0);
	if (src && out && back && z) {
		make_tokens(src, WINDOW);
		plain = frame_of(z, src, 0, out, cap, back);
		shorter = frame_of(z, src, 280 * KIB, out, cap, back);
		printf("window %u: %d bytes with the window's parser, %d with 3-byte matches\n",
		       WINDOW, plain, shorter);
		CHECK(plain > 0 && shorter > 0 && shorter < plain - plain / 50);
	}
	erofs_zseq_free(z);
	free(src);
	free(out);
	free(back);
}

int main(void)
{
	check_rule();
	check_frames();
	return unit_summary("test-zstd-seq");
}
