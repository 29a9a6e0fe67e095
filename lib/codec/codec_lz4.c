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

/*
 * LZ4HC's destination-size mode looks at the output only when it ends a
 * sequence: on input without matches (compressed files) it reads to the
 * end of src before it finds the output full, so each pcluster of such a
 * file cost a pass over the rest of its extent (20 MB of random bytes:
 * 7.9 s at -zlz4hc, 1.2 s now, 0.33 s at -zlz4; quadratic in the
 * file's size).  Where the previous pcluster of the stream took expect
 * bytes, this one is first given twice that and a margin; its output is
 * kept when it filled the cap a margin before that input ran out, as no
 * match then reached the end of it, else all of src is given.  Images
 * are byte-identical to giving all of src (linux-6.1, the rootfs sample,
 * levels 9 and 12, -C 4 to 128 KiB, fragments, dedupe, -b 512 and 2048).
 */
#define HC_MARGIN	16384

static int lz4hc_init(struct erofs_codec *c)
{
	c->state = LZ4_createStreamHC();
	return c->state ? 0 : -ENOMEM;
}

static void lz4hc_exit(struct erofs_codec *c)
{
	LZ4_freeStreamHC(c->state);
}

/*
 * Every pcluster is an independent stream.  The one-shot
 * LZ4_compress_HC_destSize() clears 256 KiB of match tables per call; a
 * fast reset starts a new stream without that, with the same output.
 */
static int lz4hc_prefix(struct erofs_codec *c, const uint8_t *src, int *src_len, uint8_t *dst,
			int cap)
{
	LZ4_resetStreamHC_fast(c->state, c->alg.level);
	return LZ4_compress_HC_continue_destSize(c->state, (const char *)src, (char *)dst, src_len,
						 cap);
}

static int lz4hc_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		      const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	const int64_t first = 2 * (int64_t)expect + HC_MARGIN;

	if (expect > 0 && *src_len > first) {
		int len = (int)first, n = lz4hc_prefix(c, src, &len, dst, cap);

		if (n > 0 && len + HC_MARGIN <= first) {
			*src_len = len;
			return n;
		}
	}
	return lz4hc_prefix(c, src, src_len, dst, cap);
}

const struct erofs_codec_ops erofs_codec_lz4hc_ops = {
	.init = lz4hc_init, .exit = lz4hc_exit, .fill = lz4hc_fill,
};
