// SPDX-License-Identifier: MIT
/* Fixed-output compression for codecs without a destination-size mode
 * (include/erofs/codec/codec_fit.h). */
#include <errno.h>
#include <lz4.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec_fit.h"

/*
 * The prefix search.  A try compresses into scratch of plan->out_cap (at
 * least twice the cap), so that an overflowing try still tells its size.
 * Every size learnt is a point (prefix length, output size): the tries,
 * and what plan->points() reads from the first try's output.  The next
 * length is interpolated between the longest point known to fit and the
 * shortest known not to; dst keeps the longest try that fit.
 */
#define FIT_POINTS	96

struct fit_points {
	int64_t len[FIT_POINTS], out[FIT_POINTS];	/* out 0: beyond out_cap */
	bool tried[FIT_POINTS];
	int n;
};

static void add_point(struct fit_points *p, int64_t len, int64_t out, bool tried)
{
	if (p->n < FIT_POINTS) {
		p->len[p->n] = len;
		p->out[p->n] = out;
		p->tried[p->n++] = tried;
	}
}

/* The shortest point over the cap (hi) and the longest under it before hi (lo). */
static void bracket(const struct fit_points *p, int cap, int64_t total, int *lo, int *hi)
{
	*hi = -1;
	for (int i = 1; i < p->n; i++)
		if ((!p->out[i] || p->out[i] > cap) && (*hi < 0 || p->len[i] < p->len[*hi]))
			*hi = i;
	*lo = 0;			/* the point (0, 0) */
	for (int i = 1; i < p->n; i++)
		if (p->out[i] && p->out[i] <= cap && p->len[i] > p->len[*lo] &&
		    (*hi < 0 || p->len[i] < p->len[*hi]) && p->len[i] <= total)
			*lo = i;
}

int erofs_codec_fit(struct erofs_codec *c, const uint8_t *src, int *src_len, uint8_t *dst,
		    int cap, const struct erofs_fit_plan *plan)
{
	const int total = *src_len;
	const int out_cap = plan->out_cap > 2 * cap + 64 ? plan->out_cap : 2 * cap + 64;
	const int64_t target = cap - plan->slack / 2;
	int64_t best = 0, best_out = 0, m = plan->first ? plan->first : (int64_t)cap * 4;
	struct fit_points p = { .n = 0 };

	if (c->scratch_cap < out_cap) {
		uint8_t *bigger = realloc(c->scratch, (size_t)out_cap);

		if (!bigger)
			return -ENOMEM;
		c->scratch = bigger;
		c->scratch_cap = out_cap;
	}
	add_point(&p, 0, 0, true);
	for (int tries = 0; tries < plan->max_tries; tries++) {
		int lo, hi, out;

		if (tries) {
			bracket(&p, cap, total, &lo, &hi);
			if (hi >= 0 && p.len[hi] <= p.len[lo] + 1) {
				if (p.tried[lo])
					break;
				m = p.len[lo];		/* only known from another try's output */
			} else if (hi >= 0 && p.out[hi]) {	/* between the two */
				m = p.len[lo] + (p.len[hi] - p.len[lo]) * (target - p.out[lo]) /
							(p.out[hi] - p.out[lo]);
				if (m <= p.len[lo])
					m = p.len[lo] + 1;
				if (m >= p.len[hi])
					m = p.len[hi] - 1;
			} else if (hi < 0) {		/* all fit so far: in proportion */
				if (p.len[lo] >= total)
					break;
				m = p.out[lo] ? p.len[lo] * target / p.out[lo] : total;
				if (m <= p.len[lo])
					m = p.len[lo] + 1;
			} else {			/* the bigger one's size is unknown */
				m = (p.len[lo] + p.len[hi]) / 2;
			}
		}
		if (m > total)
			m = total;
		if (m < 1)
			m = 1;
		out = plan->try_prefix(c, src, (int)m, c->scratch, out_cap);
		if (out < 0)
			return out;
		add_point(&p, m, out, true);
		if (out > 0 && out <= cap && m > best) {
			memcpy(dst, c->scratch, (size_t)out);
			best = m;
			best_out = out;
			if (cap - out <= plan->slack || m == total)
				break;
		}
		if (!tries && out > 0 && plan->points &&
		    (!plan->points_off || abs(out - cap) > cap / plan->points_off)) {
			int in[FIT_POINTS / 2], sizes[FIT_POINTS / 2];
			int n = plan->points(c, c->scratch, out, in, sizes, FIT_POINTS / 2);

			for (int i = 0; i < n; i++)
				if (in[i] < m)
					add_point(&p, in[i], sizes[i], false);
		}
	}
	*src_len = (int)best;
	return (int)best_out;
}

/* c->guess of at least n bytes; false when out of memory (only a guess is lost) */
static bool guess_room(struct erofs_codec *c, int n)
{
	char *bigger;

	if (c->guess_cap >= n)
		return true;
	bigger = realloc(c->guess, (size_t)n);
	if (!bigger)
		return false;
	c->guess = bigger;
	c->guess_cap = n;
	return true;
}

int erofs_codec_lz4_size(struct erofs_codec *c, const uint8_t *prev, int prev_len)
{
	const int bound = prev && prev_len > 0 ? LZ4_compressBound(prev_len) : 0;
	int packed;

	if (bound <= 0 || !guess_room(c, bound))
		return 0;
	packed = LZ4_compress_default((const char *)prev, c->guess, prev_len, bound);
	return packed > 0 ? packed : 0;
}

int erofs_codec_guess_alone(struct erofs_codec *c, const uint8_t *src, int total, int budget)
{
	int len = total;

	if (budget <= 0 || !guess_room(c, budget) ||
	    LZ4_compress_destSize((const char *)src, c->guess, &len, budget) <= 0)
		return 0;
	return len;
}
