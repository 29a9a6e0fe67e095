// SPDX-License-Identifier: MIT
/*
 * The codecs' contract (include/erofs/codec/codec.h) for every algorithm, level
 * range and pcluster size: the output fits the cap and does not start with
 * a zero byte; it decodes (lib/codec/zdecode.c) to exactly the input it says it
 * consumed; the same call gives the same bytes whether the codec is fresh
 * or has compressed other data before (images must not depend on which
 * worker compressed what); DEFLATE and zstd fill the cap to within the
 * search's slack when there is input enough.  The decoders refuse a
 * truncated stream, a stream asked for more or fewer bytes than it holds,
 * and a zstd frame whose window is larger than the superblock allows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec.h"
#include "erofs/common/format.h"
#include "erofs/codec/zdecode.h"

static int failures, checks;
static char where[96];

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, where);	\
	}								\
} while (0)

static unsigned int seed = 4242;

static unsigned int next_random(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

/* kind 0 random, 1 text-like, 2 long runs */
static void fill(uint8_t *buf, size_t len, int kind)
{
	static const char words[] = "fixed output pcluster lcluster erofs kernel zstd deflate ";

	for (size_t i = 0; i < len; i++)
		buf[i] = kind == 0 ? (uint8_t)next_random()
		       : kind == 1 ? (uint8_t)words[(i * 7 + next_random() % 5) % (sizeof(words) - 1)]
				   : (uint8_t)(i / 3000);
}

#define INPUT	(3u << 20)

static void check_codec(enum erofs_compressor_kind kind, int level, const uint8_t *inputs[3],
			struct erofs_zdecoder **dec)
{
	struct erofs_algorithm alg = { kind, level, 0 };
	struct erofs_codec *c, *fresh;
	static uint8_t out[1u << 20], again[1u << 20], back[INPUT + 1];
	const int caps[] = { 4096, 16384, 65536, 1 << 20 };
	const unsigned int format = erofs_codec_format(kind);

	erofs_codec_resolve(&alg, 1u << 20);
	CHECK(erofs_codec_new(&alg, &c) == 0);
	for (int k = 0; k < 3; k++) {
		for (size_t ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++) {
			int cap = caps[ci], src_len = INPUT, again_len = INPUT, n, m;
			struct erofs_zdecode_req req;
			char why[96];

			snprintf(where, sizeof(where), "kind %d level %d input %d cap %d", kind, level,
				 k, cap);
			n = erofs_codec_fill(c, inputs[k], &src_len, NULL, 0, out, cap);
			CHECK(n >= 0 && n <= cap);
			if (n <= 0) {
				CHECK(k == 0 && src_len == 0);	/* only random data may not fit */
				continue;
			}
			CHECK(out[0] != 0);
			CHECK(src_len > 0 && src_len <= (int)INPUT);
			/* the search fills what it can (lz4 and lzma stop on their own) */
			if ((kind == EROFS_COMPRESS_ZSTD || kind == EROFS_COMPRESS_DEFLATE) &&
			    src_len < (int)INPUT && k == 1)
				CHECK(n >= cap - (cap / 512 > 8 ? cap / 512 : 8));
			req = (struct erofs_zdecode_req){
				.alg = format, .src = out, .insize = (size_t)n, .dst = back,
				.llen = (size_t)src_len, .dict_size = alg.dict_size,
				.window_log = 20,
			};
			CHECK(erofs_zdecode(dec, &req, why, sizeof(why)) == 0);
			CHECK(!memcmp(back, inputs[k], (size_t)src_len));
			/* asked for one byte more or less than the stream holds */
			req.llen = (size_t)src_len + 1;
			CHECK(erofs_zdecode(dec, &req, why, sizeof(why)) == -EUCLEAN);
			req.llen = (size_t)src_len - 1;
			if (src_len > 1)
				CHECK(erofs_zdecode(dec, &req, why, sizeof(why)) == -EUCLEAN);
			/* a prefix is fine when partial decoding is asked for */
			req.partial = true;
			if (src_len > 1)
				CHECK(erofs_zdecode(dec, &req, why, sizeof(why)) == 0 &&
				      !memcmp(back, inputs[k], (size_t)src_len - 1));
			/* truncated: the stream's last bytes cut off */
			req.partial = false;
			req.llen = (size_t)src_len;
			req.insize = (size_t)n / 2;
			CHECK(erofs_zdecode(dec, &req, why, sizeof(why)) == -EUCLEAN);
			/* a fresh codec gives the same bytes */
			CHECK(erofs_codec_new(&alg, &fresh) == 0);
			m = erofs_codec_fill(fresh, inputs[k], &again_len, NULL, 0, again, cap);
			CHECK(m == n && again_len == src_len && !memcmp(out, again, (size_t)n));
			erofs_codec_free(fresh);
		}
	}
	erofs_codec_free(c);
}

/*
 * LZ4HC given the stream's previous pcluster (expect) first tries a
 * bounded part of src; what it keeps must be what all of src gives, on
 * runs that fill the cap only from far past that bound too.
 */
static void check_lz4hc_expect(const uint8_t *inputs[3])
{
	struct erofs_algorithm alg = { EROFS_COMPRESS_LZ4HC, 9, 0 };
	static uint8_t out[1u << 16], again[1u << 16];
	const int expects[] = { 100, 4096, 60000, 1 << 20 };
	struct erofs_codec *c;

	erofs_codec_resolve(&alg, 1u << 16);
	CHECK(erofs_codec_new(&alg, &c) == 0);
	for (int k = 0; k < 3; k++)
		for (int cap = 4096; cap <= 65536; cap *= 4)
			for (size_t e = 0; e < sizeof(expects) / sizeof(expects[0]); e++) {
				int len = INPUT, whole_len = INPUT, n, m;

				snprintf(where, sizeof(where), "lz4hc input %d cap %d expect %d", k,
					 cap, expects[e]);
				n = erofs_codec_fill(c, inputs[k], &len, inputs[k], expects[e], out,
						     cap);
				m = erofs_codec_fill(c, inputs[k], &whole_len, NULL, 0, again, cap);
				CHECK(n == m && len == whole_len && !memcmp(out, again, (size_t)n));
			}
	erofs_codec_free(c);
}

int main(void)
{
	static const struct { enum erofs_compressor_kind kind; int level; } cases[] = {
		{ EROFS_COMPRESS_LZ4, 0 }, { EROFS_COMPRESS_LZ4HC, 9 },
		{ EROFS_COMPRESS_LZMA, 0 }, { EROFS_COMPRESS_LZMA, 6 },
		{ EROFS_COMPRESS_DEFLATE, 1 }, { EROFS_COMPRESS_DEFLATE, 9 },
		{ EROFS_COMPRESS_ZSTD, 3 }, { EROFS_COMPRESS_ZSTD, 19 },
	};
	struct erofs_zdecoder *dec = NULL;
	const uint8_t *inputs[3];
	uint8_t *buf[3];

	for (int k = 0; k < 3; k++) {
		buf[k] = malloc(INPUT);
		if (!buf[k])
			return 99;
		fill(buf[k], INPUT, k);
		inputs[k] = buf[k];
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_codec(cases[i].kind, cases[i].level, inputs, &dec);
	check_lz4hc_expect(inputs);

	/* zstd: a frame wanting a 1 MiB window, the superblock allowing 64 KiB */
	{
		struct erofs_algorithm alg = { EROFS_COMPRESS_ZSTD, 3, 1u << 20 };
		struct erofs_codec *c;
		static uint8_t out[1u << 16], back[INPUT];
		int src_len = INPUT, n;
		char why[96];

		CHECK(erofs_codec_new(&alg, &c) == 0);
		n = erofs_codec_fill(c, inputs[2], &src_len, NULL, 0, out, sizeof(out));
		CHECK(n > 0 && src_len > (1 << 20));
		struct erofs_zdecode_req req = {
			.alg = EROFS_COMPR_ZSTD, .src = out, .insize = (size_t)n, .dst = back,
			.llen = (size_t)src_len, .window_log = 16,
		};
		CHECK(erofs_zdecode(&dec, &req, why, sizeof(why)) == -EUCLEAN);
		req.window_log = 20;
		CHECK(erofs_zdecode(&dec, &req, why, sizeof(why)) == 0);
		erofs_codec_free(c);
	}
	/* garbage is corrupt data for every algorithm, never a crash */
	for (unsigned int alg = 0; alg < EROFS_COMPR_MAX; alg++) {
		static uint8_t back[65536];
		const struct erofs_zdecode_req req = {
			.alg = alg, .src = inputs[0], .insize = 4096, .dst = back,
			.llen = sizeof(back), .dict_size = 65536, .window_log = 20,
		};
		char why[96];

		int err = erofs_zdecode(&dec, &req, why, sizeof(why));

		snprintf(where, sizeof(where), "garbage, algorithm %u: %d %s", alg, err, why);
		CHECK(err == -EUCLEAN);
	}
	erofs_zdecoder_free(dec);
	for (int k = 0; k < 3; k++)
		free(buf[k]);
	printf("test-codec: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
