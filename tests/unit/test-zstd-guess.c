// SPDX-License-Identifier: MIT
/*
 * The first window's guess for zstd above its fast levels
 * (lib/codec/zstd_guess.c): zstd -1 as a yardstick, flushed every 16 KiB.
 *
 * Input the yardstick has seen is measured the same again: a source that
 * begins with the previous pcluster's input is guessed to take exactly
 * that much.  Text after it and random bytes after it are told apart (the
 * random bytes pack about 1:1, so far less of them fits), a larger budget
 * never guesses less, input that all fits is guessed whole, and what
 * cannot be told is 0.  Then through the codec (see check_codec()).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec.h"
#include "erofs/codec/zdecode.h"
#include "erofs/codec/zstd_guess.h"
#include "erofs/common/format.h"
#include "unit.h"

#define CHUNK		16384
#define PREV		(8 * CHUNK)
#define LEN		(40 * CHUNK)

/* Words of a small vocabulary in random order: about 4:1 at zstd -1. */
static void make_text(uint8_t *buf, size_t len, unsigned int seed)
{
	static const char *const words[8] = {
		"erofs", "inode", "block", "extent", "cluster", "offset", "dirent", "xattr",
	};
	size_t pos = 0;

	while (pos < len) {
		const char *w = words[unit_xorshift(&seed) % 8];
		const size_t n = strlen(w);

		for (size_t i = 0; i <= n && pos < len; i++)
			buf[pos++] = i < n ? (uint8_t)w[i] : ' ';
	}
}

static void make_noise(uint8_t *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)unit_xorshift(&seed);
}

static void check_guesses(struct erofs_zguess *g)
{
	static uint8_t text[LEN], mixed[LEN];
	int small, large;

	make_text(text, LEN, 11);
	memcpy(mixed, text, PREV);
	make_noise(mixed + PREV, LEN - PREV, 5);

	/* the same input, measured the same: exactly the previous length */
	CHECK(erofs_zguess_like(g, text, PREV, text, LEN) == PREV);
	CHECK(erofs_zguess_like(g, text, PREV, mixed, LEN) == PREV);
	/* twice the text's packed size: about twice the input of text, far
	 * less when what follows the text is noise */
	small = erofs_zguess_like(g, text, 2 * PREV, mixed, LEN);
	large = erofs_zguess_like(g, text, 2 * PREV, text, LEN);
	CHECK(large >= 2 * PREV - CHUNK && large <= 2 * PREV + CHUNK);
	CHECK(small > PREV && small < PREV + PREV / 2);
	/* monotonic in the budget, whole when all fits */
	CHECK(erofs_zguess_budget(g, mixed, LEN, 1000) <= erofs_zguess_budget(g, mixed, LEN, 2000));
	CHECK(erofs_zguess_budget(g, mixed, LEN, 2000) <= erofs_zguess_budget(g, mixed, LEN, 90000));
	CHECK(erofs_zguess_budget(g, text, LEN, 10 * LEN) == LEN);
	/* what cannot be told */
	CHECK(erofs_zguess_like(g, NULL, PREV, text, LEN) == 0);
	CHECK(erofs_zguess_like(g, text, 0, text, LEN) == 0);
	CHECK(erofs_zguess_budget(g, text, LEN, 0) == 0);
}

static bool decodes_to(const uint8_t *frame, int size, const uint8_t *want, int len)
{
	static uint8_t back[LEN];
	struct erofs_zdecoder *dec = NULL;
	struct erofs_zdecode_req req = {
		.alg = EROFS_COMPR_ZSTD, .src = frame, .insize = (size_t)size, .dst = back,
		.llen = (size_t)len, .dict_size = 1u << 17, .window_log = 17,
	};
	char why[96];
	bool same = erofs_zdecode(&dec, &req, why, sizeof(why)) == 0 && !memcmp(back, want, len);

	erofs_zdecoder_free(dec);
	return same;
}

/*
 * Through the codec at level 15: text, then noise that packs 1:1.  The
 * first pcluster (no previous one) and the next fill their 64 KiB within
 * the search's slack (16 bytes) and decode to the input they claim.
 */
static void check_codec(void)
{
	static uint8_t src[LEN], dst[65536];
	const struct erofs_algorithm alg = { .kind = EROFS_COMPRESS_ZSTD, .level = 15,
					     .dict_size = 1u << 17 };
	struct erofs_codec *c;
	int first = LEN, next, n;

	make_text(src, LEN / 2, 3);
	make_noise(src + LEN / 2, LEN / 2, 9);
	CHECK(erofs_codec_new(&alg, &c) == 0);
	if (!c)
		return;
	n = erofs_codec_fill(c, src, &first, NULL, 0, dst, sizeof(dst));
	CHECK(n > (int)sizeof(dst) - 16 && n <= (int)sizeof(dst) && first < LEN);
	CHECK(decodes_to(dst, n, src, first));
	next = LEN - first;
	n = erofs_codec_fill(c, src + first, &next, src, first, dst, sizeof(dst));
	CHECK(n > (int)sizeof(dst) - 16 && n <= (int)sizeof(dst) && next < LEN - first);
	CHECK(decodes_to(dst, n, src + first, next));
	erofs_codec_free(c);
}

int main(void)
{
	struct erofs_zguess *g;

	CHECK(erofs_zguess_new(&g) == 0);
	if (g) {
		check_guesses(g);
		erofs_zguess_free(g);
	}
	check_codec();
	return unit_summary("test-zstd-guess");
}
