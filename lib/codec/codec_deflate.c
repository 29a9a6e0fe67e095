// SPDX-License-Identifier: MIT
/*
 * Raw DEFLATE through libdeflate (see include/erofs/codec/codec.h).  libdeflate
 * compresses faster and smaller than zlib at the same level and fails
 * early when the output does not fit, which the prefix search
 * (erofs_codec_fit()) relies on; its window is always 32 KiB, the
 * superblock's windowbits 15.
 *
 * libdeflate cannot entropy-code a parse it was given, so every try
 * compresses from scratch.  Starting from the caller's guess (the input
 * the stream's previous pcluster took) instead of four caps saved 2% of
 * the calls on linux-6.1's fs/ but filled some pclusters of the unit
 * test's samples a little less (test-codec-fit).  Fast LZ4's guess
 * (erofs_codec_guess_fit()) with 1% more is closer, and with the search
 * stopping within 1/768 of the cap rather than 1/512 it fills at least as
 * well as before on those samples: on fs/ (-C131072 -Efragments) the
 * tries went from 137 to 124 MB of input for 42 MB, and the images of
 * levels 3, 6 and 9 shrank by 4-8 KiB.  Without a guess the search starts
 * from four caps.
 *
 * A first try that misses the cap by more than 1/64 is read back for
 * where its blocks end (deflate_points()), which brackets the cut more
 * closely than one point does.  -zdeflate,6 -C131072
 * -Efragments,ztailpacking, instructions (cachegrind, --workers=1)
 * against no points: the rootfs sample 0.909 (8 KiB smaller), linux-6.1's
 * fs/ 0.964 (the same size).
 * Read back after every first try that missed, fs/ took 1.034 (the tries
 * it saved cost less than zlib's inflate of the output) and the rootfs
 * sample 0.898; at 1/32, 0.991 and 0.926.
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>

#include "erofs/codec/codec_fit.h"
#include "erofs/codec/deflate_blocks.h"

static int deflate_init(struct erofs_codec *c)
{
	c->state = libdeflate_alloc_compressor(c->alg.level);
	return c->state ? 0 : -ENOMEM;
}

static void deflate_exit(struct erofs_codec *c)
{
	if (c->state)
		libdeflate_free_compressor(c->state);
}

static int deflate_try(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
		       int out_cap)
{
	return (int)libdeflate_deflate_compress(c->state, src, (size_t)len, out, (size_t)out_cap);
}

/*
 * What the first try's output tells of shorter prefixes: where its blocks
 * end.  A prefix compressed alone ends about there (libdeflate may split
 * its blocks a little otherwise) and takes two bytes more, a final empty
 * block.
 */
static int deflate_points(struct erofs_codec *c, const uint8_t *out, int out_len, int *in,
			  int *sizes, int max)
{
	const int n = erofs_deflate_block_ends(out, out_len, in, sizes, max);

	(void)c;
	for (int i = 0; i < n; i++)
		sizes[i] += 2;
	return n;
}

static int deflate_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
			const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	/* input this short fits whatever it holds: one compression, no guess */
	const bool fits = libdeflate_deflate_compress_bound(c->state, (size_t)*src_len) <=
			  (size_t)cap;
	const int guess = fits ? 0 : erofs_codec_guess_fit(c, prev, expect, src, *src_len);
	const struct erofs_fit_plan plan = {
		.try_prefix = deflate_try, .points = deflate_points, .points_off = 64,
		.slack = cap / 768 > 8 ? cap / 768 : 8, .max_tries = 10,
		.first = guess > 0 ? guess + guess / 100 : 0,
	};

	if (fits)
		return deflate_try(c, src, *src_len, dst, cap);
	return erofs_codec_fit(c, src, src_len, dst, cap, &plan);
}

const struct erofs_codec_ops erofs_codec_deflate_ops = {
	.init = deflate_init, .exit = deflate_exit, .fill = deflate_fill, .whole = deflate_try,
};
