// SPDX-License-Identifier: MIT
/*
 * zstd through libzstd (see include/erofs/codec.h): one frame per
 * pcluster, found by the prefix search (erofs_codec_fit()).  The window is
 * the superblock's (windowLog); no checksum, as the kernel ignores it.
 */
#include <errno.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "erofs/codec.h"

static int zstd_init(struct erofs_codec *c)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	int wlog = 0;

	if (!cctx)
		return -ENOMEM;
	c->state = cctx;
	while ((1u << (wlog + 1)) <= c->alg.dict_size)
		wlog++;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, c->alg.level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, wlog)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0)))
		return -EINVAL;
	return 0;
}

static void zstd_exit(struct erofs_codec *c)
{
	ZSTD_freeCCtx(c->state);
}

static int zstd_try(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
		    int out_cap)
{
	size_t n = ZSTD_compress2(c->state, out, (size_t)out_cap, src, (size_t)len);

	if (!ZSTD_isError(n))
		return (int)n;
	if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
		return 0;
	if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
		return -ENOMEM;
	return -EIO;
}

static int zstd_fill(struct erofs_codec *c, const uint8_t *src, int *src_len, int expect,
		     uint8_t *dst, int cap)
{
	const struct erofs_fit_plan plan = {
		.try_prefix = zstd_try, .slack = cap / 512 > 8 ? cap / 512 : 8, .max_tries = 10,
	};

	return erofs_codec_fit(c, src, src_len, dst, cap, &plan);
}

const struct erofs_codec_ops erofs_codec_zstd_ops = {
	.init = zstd_init, .exit = zstd_exit, .fill = zstd_fill,
};
