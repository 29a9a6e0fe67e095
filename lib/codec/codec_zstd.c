// SPDX-License-Identifier: MIT
/*
 * zstd through libzstd (see include/erofs/codec/codec.h): one frame per
 * pcluster.  The window is the superblock's (windowLog); no checksum, as
 * the kernel ignores it.
 *
 * libzstd has no "as much input as fits in N bytes" mode, so the prefix
 * search (erofs_codec_fit()) tries prefixes until one fills the pcluster.
 * Compressing every try from scratch repeats the match finding, which is
 * nearly all the time at high levels; instead the matches are found once
 * over a window of the input a little longer than what should fit, and
 * each try only entropy-codes a prefix of them (lib/codec/zstd_seq.c).  When
 * the whole window fits with room to spare and more input is left, the
 * matches are found again over a longer window.
 *
 * At levels up to FAST_LEVEL the match finders are so quick that the
 * entropy stage costs about half as much as finding (measured on kernel
 * source: 1.1 against 2.8 ms for 700 KB at level 3, against 1.2 and 100
 * ms at level 15): there, input that should fit whole is compressed the
 * plain way first, and the search stops closer to the cap than before
 * (1/1024 of it rather than 1/512), not at 1/4096.
 *
 * Above those levels, input found past the cut is found again by the next
 * pcluster, so the first window should end just past where the cut will
 * be.  The previous pcluster's input is a fair guess of that (within 10%
 * either way on linux-6.1's fs/ at level 15); fast LZ4 makes it a close
 * one (erofs_codec_guess_fit(): within 4%, at 1-2% of the level's cost).
 * With it, level 15 found matches in 49 MB of windows for 42 MB of input,
 * not 53 MB (a margin of 1/8 or 1/16 found more: windows cut short too
 * often are found again wider).  The guess also picks the finder's
 * parser (erofs_zseq_expect()): libzstd's for the input the frame should
 * hold, as if only that were compressed.  With the window's, input that
 * compresses less than 2:1 at -C131072 was searched as a 300+ KiB source
 * at level 15 (btlazy2, 5-byte matches) where its ~250 KiB frame
 * compressed alone gets btopt with 3-byte matches: the rootfs sample's
 * -zzstd,15 image was 1.2% larger for it (fs/ and level 19 unchanged).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <zstd.h>

#include "erofs/codec/codec_fit.h"
#include "erofs/codec/zstd_seq.h"

/* without the caller's guess, the first window is this many caps */
#define WINDOW_CAPS		5
#define FAST_LEVEL		4
/* at fast levels, input up to this many caps is expected to fit whole */
#define FAST_WHOLE_CAPS		2
/* windows after the first that may be tried before taking all input */
#define WIDER_WINDOWS		2
#define FIT_TRIES		14
/* LZ4's guess was off by more than 1/12 for 1 pcluster in 30 (fs/, -15) */
#define GUESS_MARGIN		12

static int zstd_init(struct erofs_codec *c)
{
	unsigned int wlog = 0;

	while ((1u << (wlog + 1)) <= c->alg.dict_size)
		wlog++;
	return erofs_zseq_new(c->alg.level, wlog, (struct erofs_zseq **)&c->state);
}

static void zstd_exit(struct erofs_codec *c)
{
	erofs_zseq_free(c->state);
}

/* A frame of all of src[0, len), through libzstd's own match finder. */
static int zstd_whole(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *dst, int cap)
{
	return erofs_zseq_compress(c->state, src, (size_t)len, dst, (size_t)cap);
}

static int zstd_try(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
		    int out_cap)
{
	return erofs_zseq_encode(c->state, (size_t)len, out, (size_t)out_cap);
}

static int zstd_points(struct erofs_codec *c, const uint8_t *out, int out_len, int *in,
		       int *sizes, int max)
{
	return erofs_zseq_block_points(c->state, out, (size_t)out_len, in, sizes, max);
}

/*
 * The first window: LZ4's guess (erofs_codec_guess_fit()) with a twelfth
 * more, else the caller's with an eighth more (pclusters of one stream
 * hold similar amounts), else WINDOW_CAPS caps; all the input when that
 * is at most a quarter more (a twelfth after LZ4's guess).
 */
static int64_t first_window(int total, int cap, int expect, int guess)
{
	int64_t w;

	if (guess > 0)
		w = (int64_t)guess + guess / GUESS_MARGIN + 4096;
	else if (expect > 0)
		w = (int64_t)expect + expect / 8 + 4096;
	else
		w = (int64_t)cap * WINDOW_CAPS;
	return total <= w + (guess > 0 ? w / GUESS_MARGIN : w / 4) ? total : w;
}

/* All of window fit in out bytes: a window that should overflow the cap by a tenth. */
static int64_t wider_window(int64_t window, int out, int cap)
{
	return window + window * ((int64_t)cap - out) / out + window * cap / out / 10 + 4096;
}

static int zstd_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		     const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	const int total = *src_len;
	const bool fast = c->alg.level <= FAST_LEVEL;
	int64_t window;
	int guess, err;

	/* input this short fits whatever it holds: one plain compression */
	if (ZSTD_compressBound((size_t)total) <= (size_t)cap)
		return zstd_whole(c, src, total, dst, cap);
	if (fast && (total <= cap * FAST_WHOLE_CAPS || total <= expect)) {
		int n = zstd_whole(c, src, total, dst, cap);

		if (n)
			return n;
	}
	/* at fast levels LZ4's two passes cost more than the finding they save */
	guess = fast ? 0 : erofs_codec_guess_fit(c, prev, expect, src, total);
	window = first_window(total, cap, expect, guess);
	for (int round = 0;; round++) {
		const size_t bound = ZSTD_compressBound((size_t)window);
		const struct erofs_fit_plan plan = {
			.try_prefix = zstd_try, .points = zstd_points, .first = (int)window,
			.slack = fast ? (cap / 1024 > 8 ? cap / 1024 : 8)
				      : (cap / 4096 > 8 ? cap / 4096 : 8),
			.max_tries = FIT_TRIES,
			/* the whole window's size, to interpolate from */
			.out_cap = bound < (size_t)cap * 16 ? (int)bound : cap * 16,
		};
		int len = (int)window, n;

		/* a wider window is still searched as for the guess */
		if ((err = erofs_zseq_expect(c->state, guess > 0 ? (size_t)guess : 0,
					     (size_t)window)) ||
		    (err = erofs_zseq_find(c->state, src, (size_t)window)))
			return err;
		n = erofs_codec_fit(c, src, &len, dst, cap, &plan);
		if (n <= 0 || len < window || window == total) {
			*src_len = len;
			return n;
		}
		window = round < WIDER_WINDOWS ? wider_window(window, n, cap) : total;
		if (window > total)
			window = total;
	}
}

const struct erofs_codec_ops erofs_codec_zstd_ops = {
	.init = zstd_init, .exit = zstd_exit, .fill = zstd_fill, .whole = zstd_whole,
};
