// SPDX-License-Identifier: MIT
/*
 * Raw DEFLATE through libdeflate (see include/erofs/codec/codec.h), which
 * compresses faster and smaller than zlib at the same level; its window is
 * always 32 KiB, the superblock's windowbits 15.
 *
 * libdeflate has no destination-size mode.  Instead of searching for the
 * prefix that fills the pcluster, compressing prefix after prefix (3.25
 * compressions of every byte on the rootfs sample), one compression of a
 * little more input than fits is cut at the cap (lib/codec/deflate_cut.c):
 * its last block ends after the last symbol that leaves room for the
 * end-of-block code.  How much input: fast LZ4's guess
 * (erofs_codec_guess_alone()), with a margin so that the first try mostly
 * overflows; a try that fits leaves room, and the next one grows in
 * proportion.
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec_fit.h"
#include "erofs/codec/deflate_cut.h"

/*
 * The first try takes the guess and 1/MARGIN more; a try that fit grows
 * in proportion and by as much more.  With no pcluster before, fast LZ4's
 * input for LZ4_BUDGET/64 caps is the guess.  On the rootfs sample
 * (-zdeflate,6 -C131072 -Efragments,ztailpacking) fast LZ4's guess is
 * within -6%..+9% of what fits for 80% of the pclusters, and a margin of
 * 1/10 to 1/20 compresses 1.20-1.23x the input taken (1/32, four caps
 * with no pcluster before: 1.31x; a budget of 1.5 caps 1.23x, 2 caps
 * 1.22x).  The margin costs size too: the cut block's code was built for
 * the input past the cut as well.
 * Against the old search (bytes, --workers=1 -T0), at 1/10, 1/20 and
 * 1/40: -zdeflate,9 -C16384 +12,288, -4,096, 0; -C16384 -Eall-fragments
 * +12,288, +8,192, -8,192 (fs/: +4,096, 0, -4,096); -C65536 -8,192,
 * -8,192, -12,288; the rows of 128 KiB -20,480, -20,480, -16,384; 1/40
 * took 1.15x the CPU of 1/10 at -C16384.  The smaller the pcluster, the
 * more of it the cut block is: pclusters under 64 KiB take 1/40, and no
 * image of those settings is larger than the old search's.
 */
#define MARGIN		20
#define SMALL_MARGIN	40
#define SMALL_CAP	65536
#define LZ4_BUDGET	112
#define MAX_TRIES	4

struct deflate_state {
	struct libdeflate_compressor *compressor;
	struct erofs_deflate_cutter *cutter;
};

static void deflate_exit(struct erofs_codec *c)
{
	struct deflate_state *s = c->state;

	if (!s)
		return;
	if (s->compressor)
		libdeflate_free_compressor(s->compressor);
	erofs_deflate_cutter_free(s->cutter);
	free(s);
}

static int deflate_init(struct erofs_codec *c)
{
	struct deflate_state *s = calloc(1, sizeof(*s));

	c->state = s;
	if (!s)
		return -ENOMEM;
	s->compressor = libdeflate_alloc_compressor(c->alg.level);
	s->cutter = erofs_deflate_cutter_new();
	return s->compressor && s->cutter ? 0 : -ENOMEM;
}

static int deflate_whole(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
			 int out_cap)
{
	struct deflate_state *s = c->state;

	return (int)libdeflate_deflate_compress(s->compressor, src, (size_t)len, out,
						(size_t)out_cap);
}

/*
 * The fast LZ4 budget for this pcluster: the one the previous pcluster's
 * input maps to, carried by the caller, or found by compressing prev
 * again, which the carried one spares: farm-bench, 11 pairs,
 * -zdeflate,6 -C131072 -Efragments,ztailpacking, 0.94 of the CPU on the
 * rootfs sample and 0.93 on fs/, the same images.  Pclusters under 64 KiB
 * carry none: there a guess a little off moves the cut block's code
 * (SMALL_MARGIN), and with a carried budget -zdeflate,9 -C16384 grew by
 * 8 KiB.
 */
static int lz4_budget(struct erofs_codec *c, const uint8_t *prev, int expect, int carried)
{
	if (!prev || expect <= 0)
		return 0;
	if (carried > 0)
		return carried;
	return erofs_codec_lz4_size(c, prev, expect);
}

static int deflate_fill_next(struct erofs_codec *c, const uint8_t *src, int *src_len,
			     const uint8_t *prev, int expect, int *budget, uint8_t *dst, int cap)
{
	struct deflate_state *s = c->state;
	const int total = *src_len;
	int guess = 0, used, margin, best = 0, best_out = 0;
	int64_t m, next;

	/* input this short fits whatever it holds: one compression, no guess */
	if (libdeflate_deflate_compress_bound(s->compressor, (size_t)total) <= (size_t)cap) {
		*budget = 0;
		return deflate_whole(c, src, total, dst, cap);
	}
	used = lz4_budget(c, prev, expect, *budget);
	if (used > 0)
		guess = erofs_codec_guess_alone(c, src, total, used);
	if (!guess) {
		used = (int)((int64_t)cap * LZ4_BUDGET / 64);
		guess = erofs_codec_guess_alone(c, src, total, used);
	}
	margin = cap < SMALL_CAP ? SMALL_MARGIN : MARGIN;
	m = guess > 0 ? guess + guess / margin : (int64_t)cap * 4;
	for (int tries = 0; tries < MAX_TRIES; tries++) {
		struct erofs_deflate_cut cut;
		size_t bound;
		int out, in;

		if (m > total)
			m = total;
		bound = libdeflate_deflate_compress_bound(s->compressor, (size_t)m);
		if (c->scratch_cap < (int64_t)bound) {
			uint8_t *bigger = realloc(c->scratch, bound);

			if (!bigger)
				return -ENOMEM;
			c->scratch = bigger;
			c->scratch_cap = (int)bound;
		}
		out = deflate_whole(c, src, (int)m, c->scratch, (int)bound);
		if (out <= 0)
			break;
		if (out <= cap) {
			memcpy(dst, c->scratch, (size_t)out);
			best = (int)m;
			best_out = out;
			if (m == total || cap - out <= cap / 768)
				break;
			m += m * (cap - out) / out + m / margin;
			continue;
		}
		in = erofs_deflate_find_cut(s->cutter, c->scratch, out, cap, &cut);
		if (in > best) {
			best_out = erofs_deflate_write_cut(c->scratch, &cut, dst);
			best = in;
		}
		break;
	}
	/*
	 * The budget whose input is what this pcluster took, in proportion
	 * (the guess took all of used): LZ4's ratio barely moves within a
	 * pcluster.  At most four caps, whatever the guess.
	 */
	next = guess > 0 && best > 0 && cap >= SMALL_CAP ? (int64_t)used * best / guess : 0;
	*budget = (int)(next < 4 * (int64_t)cap ? next : 4 * (int64_t)cap);
	*src_len = best;
	return best_out;
}

static int deflate_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
			const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	int budget = 0;		/* unknown: prev is compressed again */

	return deflate_fill_next(c, src, src_len, prev, expect, &budget, dst, cap);
}

const struct erofs_codec_ops erofs_codec_deflate_ops = {
	.init = deflate_init, .exit = deflate_exit, .fill = deflate_fill,
	.fill_next = deflate_fill_next, .whole = deflate_whole,
};
