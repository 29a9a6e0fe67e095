// SPDX-License-Identifier: MIT
/* LZ4 and LZ4HC through liblz4's destination-size compressors (see include/erofs/codec/codec.h). */
#include <errno.h>
#include <lz4.h>
#include <lz4hc.h>

#include "erofs/codec/codec.h"

static int lz4_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		    const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	return LZ4_compress_destSize((const char *)src, (char *)dst, src_len, cap);
}

const struct erofs_codec_ops erofs_codec_lz4_ops = { .fill = lz4_fill };

static int lz4hc_init(struct erofs_codec *c)
{
	c->state = LZ4_createStreamHC();
	return c->state ? 0 : -ENOMEM;
}

static void lz4hc_exit(struct erofs_codec *c)
{
	LZ4_freeStreamHC(c->state);
}

static int lz4hc_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		      const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	/*
	 * Every pcluster is an independent stream.  The one-shot
	 * LZ4_compress_HC_destSize() clears 256 KiB of match tables per
	 * call; a fast reset starts a new stream without that, with the
	 * same output.
	 */
	LZ4_resetStreamHC_fast(c->state, c->alg.level);
	return LZ4_compress_HC_continue_destSize(c->state, (const char *)src, (char *)dst, src_len,
						 cap);
}

const struct erofs_codec_ops erofs_codec_lz4hc_ops = {
	.init = lz4hc_init, .exit = lz4hc_exit, .fill = lz4hc_fill,
};
