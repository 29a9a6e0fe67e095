// SPDX-License-Identifier: MIT
/*
 * zstd -1 as the yardstick of the fixed-output search's first window
 * (include/erofs/codec/zstd_guess.h).  Fast LZ4 was the yardstick before
 * (include/erofs/codec/codec_fit.h, which DEFLATE still uses); it has no entropy
 * stage, and on binaries its ratio to zstd's higher levels drifts as much
 * as the data's.  At -zzstd,19 -C131072 on the rootfs sample, its guesses
 * were within -23% to +31% of the input that fit from the 5th to the 95th
 * percentile, zstd -1's within -8% to +7%.  For DEFLATE, whose tries
 * cost not much more than zstd -1, it took 6% more CPU for the same
 * images (-zdeflate,6, the rootfs sample).
 */
#include <errno.h>
#include <stdlib.h>
#include <zstd.h>

#include "erofs/codec/zstd_guess.h"

#define GUESS_CHUNK	16384

struct erofs_zguess {
	ZSTD_CCtx *cctx;
	uint8_t *out;
	size_t out_cap;
};

int erofs_zguess_new(struct erofs_zguess **out)
{
	struct erofs_zguess *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return -ENOMEM;
	g->out_cap = ZSTD_compressBound(GUESS_CHUNK);
	g->cctx = ZSTD_createCCtx();
	g->out = malloc(g->out_cap);
	if (!g->cctx || !g->out ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(g->cctx, ZSTD_c_compressionLevel, 1))) {
		erofs_zguess_free(g);
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

void erofs_zguess_free(struct erofs_zguess *g)
{
	if (!g)
		return;
	ZSTD_freeCCtx(g->cctx);
	free(g->out);
	free(g);
}

/*
 * How much of src[0, len) the yardstick packs into budget bytes (budget
 * 0: all of it, and *packed says into how many), interpolated inside the
 * chunk that crosses it; negative on a library error.
 */
static int64_t yardstick(struct erofs_zguess *g, const uint8_t *src, int len, int64_t budget,
			 int64_t *packed)
{
	int64_t done = 0, total = 0;

	ZSTD_CCtx_reset(g->cctx, ZSTD_reset_session_only);
	while (done < len) {
		const int64_t n = len - done < GUESS_CHUNK ? len - done : GUESS_CHUNK;
		ZSTD_inBuffer in = { src + done, (size_t)n, 0 };
		ZSTD_outBuffer out = { g->out, g->out_cap, 0 };
		/* a chunk and its flush fit the buffer: one call takes them */
		const size_t left = ZSTD_compressStream2(g->cctx, &out, &in, ZSTD_e_flush);

		if (ZSTD_isError(left) || left)
			return -1;
		if (budget > 0 && total + (int64_t)out.pos >= budget)
			return done + n * (budget - total) / (int64_t)out.pos;
		total += (int64_t)out.pos;
		done += n;
	}
	*packed = total;
	return done;
}

int erofs_zguess_budget(struct erofs_zguess *g, const uint8_t *src, int total, int budget)
{
	int64_t packed, len;

	if (budget <= 0)
		return 0;
	len = yardstick(g, src, total, budget, &packed);
	return len > 0 ? (int)len : 0;
}

int erofs_zguess_like(struct erofs_zguess *g, const uint8_t *prev, int prev_len,
		      const uint8_t *src, int total)
{
	int64_t packed;

	if (!prev || prev_len <= 0 || yardstick(g, prev, prev_len, 0, &packed) < 0 ||
	    packed > INT32_MAX)
		return 0;
	return erofs_zguess_budget(g, src, total, (int)packed);
}
