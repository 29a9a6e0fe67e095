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
 * test's samples a little less (test-codec-fit): the search starts from
 * four caps as before.
 */
#include <errno.h>
#include <libdeflate.h>

#include "erofs/codec/codec_fit.h"

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

static int deflate_fill(struct erofs_codec *c, const uint8_t *src, int *src_len, int expect,
			uint8_t *dst, int cap)
{
	const struct erofs_fit_plan plan = {
		.try_prefix = deflate_try, .slack = cap / 512 > 8 ? cap / 512 : 8, .max_tries = 10,
	};

	return erofs_codec_fit(c, src, src_len, dst, cap, &plan);
}

const struct erofs_codec_ops erofs_codec_deflate_ops = {
	.init = deflate_init, .exit = deflate_exit, .fill = deflate_fill, .whole = deflate_try,
};
