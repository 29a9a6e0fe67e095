// SPDX-License-Identifier: MIT
/*
 * MicroLZMA through liblzma (see include/erofs/codec/codec.h): its encoder
 * stops by itself when the output is full, so a pcluster is filled in one
 * pass.  MicroLZMA is an LZMA1 stream whose first byte (always 0 in LZMA)
 * holds the inverted properties byte, with no header or end marker.
 */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>

#include "erofs/codec/codec.h"

struct lzma_state {
	lzma_options_lzma opt;
	lzma_stream strm;
};

static int lzma_init(struct erofs_codec *c)
{
	struct lzma_state *s = calloc(1, sizeof(*s));
	/* levels 100..109 are 0..9 with the "extreme" flag, as in xz -e */
	uint32_t preset = c->alg.level >= 100 ? (uint32_t)(c->alg.level - 100) | LZMA_PRESET_EXTREME
					      : (uint32_t)c->alg.level;

	if (!s)
		return -ENOMEM;
	c->state = s;
	s->strm = (lzma_stream)LZMA_STREAM_INIT;
	if (lzma_lzma_preset(&s->opt, preset))
		return -EINVAL;
	s->opt.dict_size = c->alg.dict_size;
	if (c->alg.lzma_bits_given & EROFS_LZMA_LC)
		s->opt.lc = c->alg.lzma_lc;
	if (c->alg.lzma_bits_given & EROFS_LZMA_LP)
		s->opt.lp = c->alg.lzma_lp;
	if (c->alg.lzma_bits_given & EROFS_LZMA_PB)
		s->opt.pb = c->alg.lzma_pb;
	return 0;
}

static void lzma_exit(struct erofs_codec *c)
{
	struct lzma_state *s = c->state;

	if (!s)
		return;
	lzma_end(&s->strm);
	free(s);
}

static int lzma_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		     const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	struct lzma_state *s = c->state;
	lzma_ret ret = lzma_microlzma_encoder(&s->strm, &s->opt);

	if (ret == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (ret != LZMA_OK)
		return -EINVAL;
	s->strm.next_in = src;
	s->strm.avail_in = (size_t)*src_len;
	s->strm.next_out = dst;
	s->strm.avail_out = (size_t)cap;
	ret = lzma_code(&s->strm, LZMA_FINISH);
	if (ret == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (ret != LZMA_STREAM_END || !s->strm.total_in)
		return 0;
	*src_len = (int)s->strm.total_in;
	return (int)s->strm.total_out;
}

const struct erofs_codec_ops erofs_codec_lzma_ops = {
	.init = lzma_init, .exit = lzma_exit, .fill = lzma_fill,
};
