// SPDX-License-Identifier: MIT
/*
 * zstd in one streaming pass (see include/erofs/codec/zstd_stream.h).
 *
 * The compressor is a static context: libzstd places all of its state
 * (match tables, entropy statistics, repeat offsets, positions) in one
 * workspace of ours and never allocates besides (ZSTD_initStaticCCtx()).
 * Copying that workspace aside and back to the same address saves and
 * restores the compressor in mid-frame, which ZSTD_copyCCtx() does not
 * allow (only before the first block).  With a stable input buffer the
 * window is the caller's input itself, so the workspace holds no copy of
 * it: 1.4 MB at level 3 with a 1 MiB window, copied in about 60 us.
 *
 * Blocks are fed whole (libzstd's 128 KiB, so the frame is cut where a
 * one-shot compression cuts it) while the next is expected to fit with
 * an eighth to spare.  The state is saved before a block that may not
 * fit; one that does not is undone by restoring it.  A block expected to
 * fit with a quarter to spare is fed unsaved: should it overflow after
 * all, the frame is compressed again up to its start.
 *
 * Then the rest expected to fill the cap, but for its last 3/16, goes in
 * as one more, shorter block (feed_tail()), so that the tries compress
 * the last few KiB rather than most of a block.  Its boundary costs some
 * 20 bytes of output, which the search gets back by stopping within
 * 1/4096 of the cap instead of 1/1024 (codec_zstd.c); a part that does
 * not fit (text running into a binary) is undone and fed once more as
 * long as its own output says.  -zzstd,3 -C131072
 * -Efragments,ztailpacking: the tries went from 24.5 to 7.7 MB of input
 * on linux-6.1's fs/ (46 MB) and from 112 to 46 MB on the rootfs sample
 * (113 MB); 0.95 and 0.87 of the CPU, and no image larger (the rootfs
 * sample 28 KiB smaller).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY	/* static contexts, stable input, size hints */
#include <zstd.h>
#include <zstd_errors.h>

#include "erofs/codec/zstd_stream.h"

/* a block is fed when it should fit with 1/FIT_SPARE of its output to spare */
#define FIT_SPARE	8
/* and fed unsaved when it should fit with 1/SAFE_SPARE */
#define SAFE_SPARE	4
/* the input expected to fill the rest is fed but for its last (16 - TAIL_PART)/16 */
#define TAIL_PART	13
/* when that part is at least this much */
#define TAIL_MIN	16384
/* a part that overflowed is fed once more, as long as its own output says */
#define TAIL_ROUNDS	2

struct erofs_zstream {
	int level;
	unsigned int window_log;
	ZSTD_CCtx *cctx;		/* placed in work; NULL until first used */
	void *work, *saved;
	size_t work_size;
	size_t block;			/* libzstd's block: 128 KiB, or the window */
	ZSTD_inBuffer in;		/* the frame's input; pos: compressed so far */
	size_t saved_pos;		/* in.pos when saved */
	bool dirty;			/* the compressor moved since it was saved */
	uint8_t *head;			/* the frame up to the saved state */
	size_t head_len, head_cap;
};

static int zstd_error(size_t ret)
{
	return ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
}

static int set_params(ZSTD_CCtx_params *p, int level, unsigned int window_log, int hint)
{
	const struct {
		ZSTD_cParameter param;
		int value;
	} set[] = {
		{ ZSTD_c_compressionLevel, level }, { ZSTD_c_windowLog, (int)window_log },
		{ ZSTD_c_checksumFlag, 0 }, { ZSTD_c_enableLongDistanceMatching, ZSTD_ps_disable },
		{ ZSTD_c_stableInBuffer, 1 }, { ZSTD_c_srcSizeHint, hint },
	};

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (ZSTD_isError(ZSTD_CCtxParams_setParameter(p, set[i].param, set[i].value)))
			return -EINVAL;
	return 0;
}

/*
 * The workspace the level needs whatever the hint: libzstd's parameter
 * tables change rows at 16, 128 and 256 KiB of source.
 */
static int workspace_size(int level, unsigned int window_log, size_t *size)
{
	static const int hints[] = { 0, 16 * 1024 + 1, 128 * 1024 + 1, 256 * 1024 + 1 };
	ZSTD_CCtx_params *p = ZSTD_createCCtxParams();
	int err = p ? 0 : -ENOMEM;

	*size = 0;
	for (size_t i = 0; !err && i < sizeof(hints) / sizeof(hints[0]); i++) {
		size_t need;

		if ((err = set_params(p, level, window_log, hints[i])))
			break;
		need = ZSTD_estimateCStreamSize_usingCCtxParams(p);
		if (ZSTD_isError(need))
			err = -EINVAL;
		else if (need > *size)
			*size = need;
	}
	ZSTD_freeCCtxParams(p);
	return err;
}

int erofs_zstream_new(int level, unsigned int window_log, struct erofs_zstream **out)
{
	struct erofs_zstream *zs = calloc(1, sizeof(*zs));

	*out = zs;
	if (!zs)
		return -ENOMEM;
	zs->level = level;
	zs->window_log = window_log;
	zs->block = window_log < 17 ? (size_t)1 << window_log : ZSTD_BLOCKSIZE_MAX;
	return 0;
}

/* The compressor and its copy, made on first use: 2.8 MB a worker at level 3. */
static int make_compressor(struct erofs_zstream *zs)
{
	ZSTD_CCtx_params *p;
	ZSTD_CCtx *cctx;
	int err;

	if ((err = workspace_size(zs->level, zs->window_log, &zs->work_size)))
		return err;
	/* libzstd wants the workspace 8-byte aligned */
	if (!zs->work)
		zs->work = aligned_alloc(64, (zs->work_size + 63) / 64 * 64);
	if (!zs->saved)
		zs->saved = malloc(zs->work_size);
	cctx = zs->work ? ZSTD_initStaticCCtx(zs->work, zs->work_size) : NULL;
	p = ZSTD_createCCtxParams();
	err = zs->saved && cctx && p ? set_params(p, zs->level, zs->window_log, 0) : -ENOMEM;
	if (!err && ZSTD_isError(ZSTD_CCtx_setParametersUsingCCtxParams(cctx, p)))
		err = -EINVAL;
	ZSTD_freeCCtxParams(p);
	if (!err)
		zs->cctx = cctx;	/* only a whole compressor counts as made */
	return err;
}

void erofs_zstream_free(struct erofs_zstream *zs)
{
	if (!zs)
		return;
	free(zs->work);
	free(zs->saved);
	free(zs->head);
	free(zs);
}

size_t erofs_zstream_block(const struct erofs_zstream *zs)
{
	return zs->block;
}

static void save(struct erofs_zstream *zs)
{
	memcpy(zs->saved, zs->work, zs->work_size);
	zs->saved_pos = zs->in.pos;
	zs->dirty = false;
}

/* The compressor as saved; the input it expects back where it was. */
static void restore(struct erofs_zstream *zs)
{
	memcpy(zs->work, zs->saved, zs->work_size);
	zs->in.pos = zs->in.size = zs->saved_pos;
	zs->dirty = false;
}

/* Compresses the input up to in.size with op into out: 0, -ENOSPC when out fills first. */
static int run(struct erofs_zstream *zs, ZSTD_outBuffer *out, ZSTD_EndDirective op)
{
	for (;;) {
		const size_t left = ZSTD_compressStream2(zs->cctx, out, &zs->in, op);

		if (ZSTD_isError(left))
			return zstd_error(left);
		if (!left && zs->in.pos == zs->in.size)
			return 0;
		if (out->pos == out->size)
			return -ENOSPC;
	}
}

/* A new frame of zs->in.src, nothing compressed yet. */
static int restart(struct erofs_zstream *zs, size_t hint)
{
	if (ZSTD_isError(ZSTD_CCtx_reset(zs->cctx, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(zs->cctx, ZSTD_c_srcSizeHint,
						(int)(hint < ZSTD_SRCSIZEHINT_MAX ? hint
										  : ZSTD_SRCSIZEHINT_MAX))))
		return -EINVAL;
	zs->in.pos = zs->in.size = 0;
	zs->head_len = 0;
	zs->dirty = true;
	return 0;
}

/*
 * n more bytes of input into the head as one more block (or more, past
 * 128 KiB); -ENOSPC when the head would pass cap.  *took: the block's
 * output, also when it did not fit.
 */
static int feed_part(struct erofs_zstream *zs, size_t cap, size_t n, size_t *took)
{
	ZSTD_outBuffer out = { zs->head, zs->head_cap, zs->head_len };
	int err;

	zs->in.size = zs->in.pos + n;
	zs->dirty = true;
	err = run(zs, &out, ZSTD_e_flush);
	*took = out.pos - zs->head_len;
	if (!err && out.pos > cap)
		err = -ENOSPC;
	if (!err)
		zs->head_len = out.pos;
	return err;
}

/* One more whole block into the head; -ENOSPC when the head would pass cap. */
static int feed_block(struct erofs_zstream *zs, size_t cap)
{
	size_t took;

	return feed_part(zs, cap, zs->block, &took);
}

/* The output the next block is expected to take: as the blocks so far, else as hint says. */
static uint64_t expected_out(const struct erofs_zstream *zs, size_t hint, size_t cap)
{
	if (zs->in.pos)
		return (uint64_t)zs->block * zs->head_len / zs->in.pos;
	return hint ? (uint64_t)zs->block * cap / hint : zs->block / 2;
}

/*
 * The input expected to fill the rest of cap, less its last
 * 16 - TAIL_PART sixteenths, as one more block, so that the tries that
 * follow compress only the last few KiB.  A part that does not fit is
 * undone and tried once more as long as its own output says.
 */
static int feed_tail(struct erofs_zstream *zs, size_t len, size_t hint, size_t cap)
{
	uint64_t in = zs->block, out = expected_out(zs, hint, cap);

	for (int round = 0; round < TAIL_ROUNDS && out && zs->head_len + 64 < cap; round++) {
		uint64_t part = (cap - zs->head_len - 64) * in / out * TAIL_PART / 16;
		size_t took;
		int err;

		if (part > zs->block)
			part = zs->block;
		if (part < TAIL_MIN || zs->in.pos + part >= len)
			break;
		if (zs->dirty)
			save(zs);
		err = feed_part(zs, cap, (size_t)part, &took);
		if (err != -ENOSPC)
			return err;
		restore(zs);
		in = part;
		out = took;
	}
	return 0;
}

int erofs_zstream_begin(struct erofs_zstream *zs, const uint8_t *src, size_t len, size_t hint,
			size_t cap, size_t *taken, const uint8_t **head, size_t *head_len)
{
	/* the head holds at most cap bytes, and a block that passed them */
	const size_t head_cap = cap + ZSTD_compressBound(zs->block) + 64;
	int err;

	if (zs->head_cap < head_cap) {
		uint8_t *bigger = realloc(zs->head, head_cap);

		if (!bigger)
			return -ENOMEM;
		zs->head = bigger;
		zs->head_cap = head_cap;
	}
	if (!zs->cctx && (err = make_compressor(zs)))
		return err;
	zs->in.src = src;
	if ((err = restart(zs, hint)))
		return err;
	/* a try needs some input left */
	while (len - zs->in.pos > zs->block) {
		const uint64_t expect = expected_out(zs, hint, cap);
		const size_t pos = zs->in.pos;
		bool saved = false;

		if (zs->head_len + expect + expect / FIT_SPARE + 64 > cap)
			break;
		if (pos && zs->head_len + expect + expect / SAFE_SPARE + 64 > cap) {
			save(zs);
			saved = true;
		}
		err = feed_block(zs, cap);
		if (err != -ENOSPC) {
			if (err)
				return err;
			continue;
		}
		if (saved) {
			restore(zs);
			break;
		}
		/* again up to the block's start */
		if ((err = restart(zs, hint)))
			return err;
		while (zs->in.pos < pos)
			if ((err = feed_block(zs, cap)))
				return err == -ENOSPC ? -EIO : err;
		break;
	}
	if ((err = feed_tail(zs, len, hint, cap)))
		return err;
	if (zs->dirty)
		save(zs);
	*taken = zs->in.pos;
	*head = zs->head;
	*head_len = zs->head_len;
	return 0;
}

int erofs_zstream_try(struct erofs_zstream *zs, size_t len, uint8_t *out, size_t out_cap)
{
	ZSTD_outBuffer frame_end = { out, out_cap, 0 };
	int err;

	if (zs->dirty)
		restore(zs);
	zs->dirty = true;
	zs->in.size = zs->saved_pos + len;
	err = run(zs, &frame_end, ZSTD_e_end);
	if (err == -ENOSPC)
		return 0;
	return err ? err : (int)frame_end.pos;
}
