// SPDX-License-Identifier: MIT
/*
 * zstd's one-pass search at the fast levels (lib/codec/zstd_stream.c).
 *
 * The encoder's own contract: a try ends the frame its head began, in any
 * order, each from the saved state, so the same length gives the same
 * bytes every time and head + try decodes to exactly that input; the head
 * ends in a shorter block that leaves the tries the last few KiB, fed
 * again shorter when the first guess of it runs into noise.  Then
 * through erofs_codec_fill(), on input built to take each way out of the
 * head's loop: seven blocks of text that compresses about 5:1 (a block's
 * output, E, is about 24 KiB), then random bytes, over every cap from 128
 * to 256 KiB in steps of 512 bytes.  The first random block is not fed
 * where the text's blocks leave no room for it, fed saved (and undone)
 * where they leave between 9/8 and 5/4 E, and unsaved (the frame then
 * compressed again up to it) where they leave more.  Every output fits
 * its cap, decodes to the input it claims, holds all of the text when a
 * frame of the text alone fits with a KiB to spare, and does not depend
 * on what the encoder compressed before.
 */
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec.h"
#include "erofs/codec/zdecode.h"
#include "erofs/codec/zstd_stream.h"
#include "erofs/common/format.h"
#include "unit.h"

#define BLOCK		131072u
#define TEXT		(7 * BLOCK)	/* then random bytes */
#define STREAM		(9 * BLOCK)

/* Words of a small vocabulary in random order (about 6:1 at level 3), then noise. */
static void make_stream(uint8_t *buf)
{
	static const char *const words[16] = {
		"erofs", "inode", "block", "extent", "cluster", "offset", "dirent", "xattr",
		"fragment", "header", "index", "packed", "tail", "chunk", "device", "super",
	};
	unsigned int seed = 7;
	size_t pos = 0;

	while (pos < TEXT) {
		const char *w = words[unit_xorshift(&seed) % 16];
		const size_t n = strlen(w);

		for (size_t i = 0; i <= n && pos < TEXT; i++)
			buf[pos++] = i < n ? (uint8_t)w[i] : (unit_xorshift(&seed) % 8 ? ' ' : '\n');
	}
	for (; pos < STREAM; pos++)
		buf[pos] = (uint8_t)unit_xorshift(&seed);
}

static bool decodes_to(struct erofs_zdecoder **dec, const uint8_t *frame, size_t size,
		       const uint8_t *want, size_t len)
{
	static uint8_t back[STREAM];
	struct erofs_zdecode_req req = {
		.alg = EROFS_COMPR_ZSTD, .src = frame, .insize = size, .dst = back, .llen = len,
		.dict_size = 1u << 20, .window_log = 20,
	};
	char why[96];

	return erofs_zdecode(dec, &req, why, sizeof(why)) == 0 && !memcmp(back, want, len);
}

/* The encoder alone: tries in any order, from the same saved state. */
static void check_tries(const uint8_t *text, struct erofs_zdecoder **dec)
{
	static const size_t lens[] = { 60000, 5000, 90000, 5000, 1, 60000 };
	static uint8_t frame[2 * BLOCK], first[2][2 * BLOCK];
	struct erofs_zstream *zs;
	const uint8_t *head;
	size_t taken = 0, head_len = 0, first_len[2] = { 0, 0 };

	CHECK(erofs_zstream_new(3, 20, &zs) == 0);
	CHECK(erofs_zstream_block(zs) == BLOCK);
	/* hint: eight times the cap, as the text compresses */
	CHECK(erofs_zstream_begin(zs, text, TEXT, 8 * 65536, 65536, &taken, &head, &head_len) == 0);
	/*
	 * Whole blocks, then the rest that should fit but for its last 3/16
	 * as one shorter block (16 KiB or more): input is left for the
	 * tries, and they need fill only the last few KiB of the cap.
	 */
	CHECK(taken < TEXT && head_len <= 65536);
	CHECK(taken > BLOCK && taken % BLOCK >= 16384);
	CHECK(65536 - head_len <= 65536 / 8);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		int n;

		memcpy(frame, head, head_len);
		n = erofs_zstream_try(zs, lens[i], frame + head_len, sizeof(frame) - head_len);
		CHECK(n > 0);
		if (n <= 0)
			continue;
		CHECK(decodes_to(dec, frame, head_len + (size_t)n, text, taken + lens[i]));
		/* the same length again: the same bytes */
		if (lens[i] == 5000 || lens[i] == 60000) {
			const int k = lens[i] == 5000;

			if (!first_len[k]) {
				memcpy(first[k], frame + head_len, (size_t)n);
				first_len[k] = (size_t)n;
			} else {
				CHECK(first_len[k] == (size_t)n &&
				      !memcmp(first[k], frame + head_len, (size_t)n));
			}
		}
	}
	/* an end that does not fit out_cap: 0, and the next try is whole again */
	CHECK(erofs_zstream_try(zs, 90000, frame, 16) == 0);
	CHECK(erofs_zstream_try(zs, 5000, frame + head_len, sizeof(frame) - head_len) ==
	      (int)first_len[1]);
	erofs_zstream_free(zs);
}

static int fill(struct erofs_codec *c, const uint8_t *src, int *len, uint8_t *out, int cap)
{
	return erofs_codec_fill(c, src, len, NULL, 0, out, cap);
}

/*
 * The rest's last block running into noise: expected from the text, it
 * does not fit and is undone, and then fed as long as its own output
 * says, all of it text.
 */
static void check_tail_retry(const uint8_t *stream, struct erofs_zdecoder **dec)
{
	/* two blocks of text, then 40,000 bytes of it before the noise */
	const size_t start = TEXT - 2 * BLOCK - 40000;
	static uint8_t frame[2 * BLOCK];
	struct erofs_zstream *zs;
	const uint8_t *head;
	size_t taken = 0, head_len = 0;
	int n;

	CHECK(erofs_zstream_new(3, 20, &zs) == 0);
	CHECK(erofs_zstream_begin(zs, stream + start, STREAM - start, 8 * 65536, 65536, &taken,
				  &head, &head_len) == 0);
	CHECK(taken >= 2 * BLOCK + 16384 && taken < 2 * BLOCK + 40000);
	CHECK(head_len < 65536);
	memcpy(frame, head, head_len);
	n = erofs_zstream_try(zs, 1000, frame + head_len, sizeof(frame) - head_len);
	CHECK(n > 0 && decodes_to(dec, frame, head_len + (size_t)n, stream + start, taken + 1000));
	erofs_zstream_free(zs);
}

/* Through the codec: text, then noise that overflows the block after it. */
static void check_caps(const uint8_t *stream, struct erofs_zdecoder **dec)
{
	struct erofs_algorithm alg = { .kind = EROFS_COMPRESS_ZSTD, .level = 3 };
	static uint8_t out[1u << 18], again[1u << 18];
	struct erofs_codec *c, *fresh;
	int bad_fit = 0, bad_text = 0, bad_again = 0, text_size;

	erofs_codec_resolve(&alg, 1u << 18);
	CHECK(erofs_codec_new(&alg, &c) == 0);
	/* all of the text alone, in one frame */
	text_size = erofs_codec_whole(c, stream, TEXT, out, sizeof(out));
	CHECK(text_size > 131072 && text_size < 262144 - 16384);
	for (int cap = 131072; cap <= 262144; cap += 512) {
		int len = STREAM, again_len = STREAM, n, m;

		n = fill(c, stream, &len, out, cap);
		if (n <= 0 || n > cap || !decodes_to(dec, out, (size_t)n, stream, (size_t)len)) {
			bad_fit++;
			continue;
		}
		/* the noise after the text takes none of the room the text needs */
		if (cap >= text_size + 1024 && len < (int)TEXT)
			bad_text++;
		/* the same as an encoder that compressed nothing before */
		CHECK(erofs_codec_new(&alg, &fresh) == 0);
		m = fill(fresh, stream, &again_len, again, cap);
		erofs_codec_free(fresh);
		if (m != n || again_len != len || memcmp(out, again, (size_t)n))
			bad_again++;
	}
	CHECK(bad_fit == 0);
	CHECK(bad_text == 0);
	CHECK(bad_again == 0);
	erofs_codec_free(c);
}

int main(void)
{
	uint8_t *stream = malloc(STREAM);
	struct erofs_zdecoder *dec = NULL;

	if (!stream)
		return 99;
	make_stream(stream);
	check_tries(stream, &dec);
	check_tail_retry(stream, &dec);
	check_caps(stream, &dec);
	erofs_zdecoder_free(dec);
	free(stream);
	return unit_summary("test-zstd-stream");
}
