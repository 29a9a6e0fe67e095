// SPDX-License-Identifier: MIT
/*
 * Raw DEFLATE through libdeflate (see include/erofs/codec/codec.h).  libdeflate
 * compresses faster and smaller than zlib at the same level and fails
 * early when the output does not fit, which the prefix search
 * (erofs_codec_fit()) relies on; its window is always 32 KiB, the
 * superblock's windowbits 15.
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

static int deflate_fill(struct erofs_codec *c, const uint8_t *src, int *src_len, uint8_t *dst,
			int cap)
{
	return erofs_codec_fit(c, src, src_len, dst, cap, deflate_try);
}

const struct erofs_codec_ops erofs_codec_deflate_ops = {
	.init = deflate_init, .exit = deflate_exit, .fill = deflate_fill,
};
