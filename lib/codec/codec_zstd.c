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
 * (1/1024 of it rather than 1/512), not at 1/4096.  With pclusters of a
 * block (128 KiB) or more, the two stages are not needed either: one
 * streaming pass compresses the pcluster's whole blocks once and tries
 * only its last (lib/codec/zstd_stream.c).  -zzstd,3 -C131072
 * -Efragments,ztailpacking: 0.77 of the CPU on linux-6.1's fs/ and the
 * rootfs sample, images the same size; the tries re-compressed 0.55x the
 * input on fs/ (2.9 per pcluster), 1.04x on the rootfs sample, whose
 * ~2:1 pclusters hold under two blocks.  Most of that last block is now
 * fed as a shorter one first, leaving the tries the last few KiB: 0.17x
 * and 0.41x, for 0.95 and 0.87 of the CPU.
 *
 * Above those levels, input found past the cut is found again by the next
 * pcluster, so the first window should end just past where the cut will
 * be.  The previous pcluster's input is a fair guess of that (within 10%
 * either way on linux-6.1's fs/ at level 15); a fast yardstick makes it a
 * close one: the input it packs into as many bytes as it packed the
 * previous pcluster's in (lib/codec/zstd_guess.c).  Fast LZ4 was the
 * yardstick first, zstd -1 now, whose entropy stage tracks the higher
 * levels on binaries too.  Windows found per byte of input that fit
 * (-C131072 -Efragments,ztailpacking):
 *
 *                        LZ4    zstd -1
 *   fs/, level 15       1.146   1.105
 *   fs/, level 19       1.191   1.080
 *   rootfs, level 15    1.412   1.180
 *   rootfs, level 19    1.392   1.192
 *
 * for 0.85 of the CPU at rootfs level 19, 0.91 at 15, 0.96 and 1.00 on
 * fs/ (a file's first pcluster is guessed too now: first_budget()).  A
 * margin of 1/8 or 1/16 on the guess found more than 1/12: windows cut
 * short too often are found again wider.  The guess also picks the finder's
 * parser (erofs_zseq_expect()): libzstd's for the input the frame should
 * hold, as if only that were compressed.  With the window's, input that
 * compresses less than 2:1 at -C131072 was searched as a 300+ KiB source
 * at level 15 (btlazy2, 5-byte matches) where its ~250 KiB frame
 * compressed alone gets btopt with 3-byte matches: the rootfs sample's
 * -zzstd,15 image was 1.2% larger for it (fs/ and level 19 unchanged).
 * A guess that, less an eighth, falls in that row gets it too at levels
 * 11-17 (erofs_zseq_parser()): 0.78% smaller again at level 15.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "erofs/codec/codec_fit.h"
#include "erofs/codec/zstd_guess.h"
#include "erofs/codec/zstd_seq.h"
#include "erofs/codec/zstd_stream.h"

/* without the caller's guess, the first window is this many caps */
#define WINDOW_CAPS		5
#define FAST_LEVEL		4
/* at fast levels, input up to this many caps is expected to fit whole */
#define FAST_WHOLE_CAPS		2
/* windows after the first that may be tried before taking all input */
#define WIDER_WINDOWS		2
#define FIT_TRIES		14
/*
 * The streaming search's slack: its tries cover the last few KiB only
 * (zstd_stream.c), so it stops as close to the cap as the higher levels.
 */
#define STREAM_SLACK		4096
/* zstd -1's guess fell short by more than 1/12 for 1 pcluster in 22 (rootfs, -19) */
#define GUESS_MARGIN		12

struct zstd_state {
	struct erofs_zseq *seq;		/* plain frames; above FAST_LEVEL, the search */
	struct erofs_zstream *stream;	/* the search up to FAST_LEVEL */
	struct erofs_zguess *guess;	/* the first window above it, made on first use */
};

static struct zstd_state *zstate(const struct erofs_codec *c)
{
	return c->state;
}

static int zstd_init(struct erofs_codec *c)
{
	struct zstd_state *st = calloc(1, sizeof(*st));
	unsigned int wlog = 0;
	int err;

	c->state = st;
	if (!st)
		return -ENOMEM;
	while ((1u << (wlog + 1)) <= c->alg.dict_size)
		wlog++;
	if ((err = erofs_zseq_new(c->alg.level, wlog, &st->seq)))
		return err;
	return c->alg.level <= FAST_LEVEL ? erofs_zstream_new(c->alg.level, wlog, &st->stream) : 0;
}

static void zstd_exit(struct erofs_codec *c)
{
	struct zstd_state *st = zstate(c);

	if (!st)
		return;
	erofs_zseq_free(st->seq);
	erofs_zstream_free(st->stream);
	erofs_zguess_free(st->guess);
	free(st);
}

/* A frame of all of src[0, len), through libzstd's own match finder. */
static int zstd_whole(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *dst, int cap)
{
	return erofs_zseq_compress(zstate(c)->seq, src, (size_t)len, dst, (size_t)cap);
}

static int zstd_try(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
		    int out_cap)
{
	return erofs_zseq_encode(zstate(c)->seq, (size_t)len, out, (size_t)out_cap);
}

static int zstd_points(struct erofs_codec *c, const uint8_t *out, int out_len, int *in,
		       int *sizes, int max)
{
	return erofs_zseq_block_points(zstate(c)->seq, out, (size_t)out_len, in, sizes, max);
}

/*
 * The first window: the guess (first_guess()) with a twelfth more, else
 * the caller's with an eighth more (pclusters of one stream hold similar
 * amounts), else WINDOW_CAPS caps; all the input when that is at most a
 * quarter more (a twelfth after a guess).
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

/*
 * A file's first pcluster has no previous one to measure zstd -1 against:
 * it is guessed to take the input zstd -1 packs into this much.  zstd -1's
 * output per byte of the level's, the median over -C131072 pclusters:
 * linux-6.1's fs/ 1.25 at level 6, 1.30 at 12, 1.32 at 15, 1.39 at 16,
 * 1.42 at 19 and 22; the rootfs sample 0.05-0.15 less.  The larger is
 * taken, as a window cut short is found again whole.  Before, such a
 * window was five caps: on the rootfs sample at level 19, 2.3x the input
 * that fit, and 0.11x all of the input found for nothing.
 */
static int first_budget(const struct erofs_codec *c, int cap)
{
	const int permille = c->alg.level >= 16 ? 1420 : c->alg.level >= 13 ? 1330 : 1300;

	return (int)((int64_t)cap * permille / 1000);
}

/* Where the pcluster should be cut, or 0 (no guess: see first_window()). */
static int first_guess(struct erofs_codec *c, const uint8_t *src, int total, const uint8_t *prev,
		       int prev_len, int cap)
{
	struct zstd_state *st = zstate(c);

	/* at fast levels the guess's two passes cost more than the finding they save */
	if (c->alg.level <= FAST_LEVEL || (!st->guess && erofs_zguess_new(&st->guess)))
		return 0;
	return prev ? erofs_zguess_like(st->guess, prev, prev_len, src, total)
		    : erofs_zguess_budget(st->guess, src, total, first_budget(c, cap));
}

/* All of window fit in out bytes: a window that should overflow the cap by a tenth. */
static int64_t wider_window(int64_t window, int out, int cap)
{
	return window + window * ((int64_t)cap - out) / out + window * cap / out / 10 + 4096;
}

/* A search's slack: 1/parts of the cap, at least 8 bytes. */
static int slack_of(int cap, int parts)
{
	return cap / parts > 8 ? cap / parts : 8;
}

/* The slack of the two-stage search: fast levels stop sooner, as a try costs more there. */
static int fit_slack(const struct erofs_codec *c, int cap)
{
	return slack_of(cap, c->alg.level <= FAST_LEVEL ? 1024 : 4096);
}

/* The search over prefixes of windows whose sequences are found once each. */
static int two_stage_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
			  const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	struct erofs_zseq *z = zstate(c)->seq;
	const int total = *src_len;
	const int guess = first_guess(c, src, total, prev, expect, cap);
	int64_t window = first_window(total, cap, expect, guess);
	int err;

	for (int round = 0;; round++) {
		const size_t bound = ZSTD_compressBound((size_t)window);
		const struct erofs_fit_plan plan = {
			.try_prefix = zstd_try, .points = zstd_points, .first = (int)window,
			.slack = fit_slack(c, cap), .max_tries = FIT_TRIES,
			/* the whole window's size, to interpolate from */
			.out_cap = bound < (size_t)cap * 16 ? (int)bound : cap * 16,
		};
		int len = (int)window, n;

		/* a wider window is still searched as for the guess */
		if ((err = erofs_zseq_expect(z, guess > 0 ? (size_t)guess : 0, (size_t)window)) ||
		    (err = erofs_zseq_find(z, src, (size_t)window)))
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

static int stream_try(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
		      int out_cap)
{
	(void)src;	/* the stream's own input, after its head */
	return erofs_zstream_try(zstate(c)->stream, (size_t)len, out, (size_t)out_cap);
}

/*
 * The search in one streaming pass (lib/codec/zstd_stream.c): the frame's
 * whole blocks that fit are compressed once, and only the input after
 * them is tried, each try ending the frame.  0 when no try fits: the
 * two-stage search then does.
 */
static int stream_fill(struct erofs_codec *c, const uint8_t *src, int *src_len, int expect,
		       uint8_t *dst, int cap)
{
	struct erofs_zstream *zs = zstate(c)->stream;
	const int slack = slack_of(cap, STREAM_SLACK);
	const uint8_t *head;
	size_t taken, head_len;
	int room, len, n, err;

	if ((err = erofs_zstream_begin(zs, src, (size_t)*src_len, expect > 0 ? (size_t)expect : 0,
				       (size_t)cap, &taken, &head, &head_len)))
		return err;
	room = cap - (int)head_len;
	len = *src_len - (int)taken;
	{
		/* the rest is expected to compress as the head did, else as expect says */
		const int64_t want = room - slack / 2;
		const struct erofs_fit_plan plan = {
			.try_prefix = stream_try, .slack = slack, .max_tries = FIT_TRIES,
			.first = (int)(taken ? want * (int64_t)taken / (int64_t)head_len
					     : expect > 0 ? want * expect / cap : want * 2),
		};

		n = erofs_codec_fit(c, src + taken, &len, dst + head_len, room, &plan);
	}
	if (n <= 0)
		return n;
	memcpy(dst, head, head_len);
	*src_len = (int)taken + len;
	return (int)head_len + n;
}

static int zstd_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		     const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	const int total = *src_len;
	int n;

	/* input this short fits whatever it holds: one plain compression */
	if (ZSTD_compressBound((size_t)total) <= (size_t)cap)
		return zstd_whole(c, src, total, dst, cap);
	if (c->alg.level > FAST_LEVEL)
		return two_stage_fill(c, src, src_len, prev, expect, dst, cap);
	if (total <= cap * FAST_WHOLE_CAPS || total <= expect) {
		if ((n = zstd_whole(c, src, total, dst, cap)))
			return n;
	}
	/*
	 * Smaller pclusters hold no whole block: each streaming try would be
	 * a whole compression, where the two-stage search's are entropy
	 * coding only (-C65536: 1.3x the CPU and 0.2% larger images).
	 */
	if ((size_t)cap >= erofs_zstream_block(zstate(c)->stream) &&
	    (n = stream_fill(c, src, src_len, expect, dst, cap)))
		return n;
	return two_stage_fill(c, src, src_len, prev, expect, dst, cap);
}

const struct erofs_codec_ops erofs_codec_zstd_ops = {
	.init = zstd_init, .exit = zstd_exit, .fill = zstd_fill, .whole = zstd_whole,
};
