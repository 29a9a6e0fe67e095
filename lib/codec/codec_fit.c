// SPDX-License-Identifier: MIT
/* Fixed-output compression for codecs without a destination-size mode
 * (include/erofs/codec/codec_fit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec_fit.h"

/*
 * The prefix search.  A try compresses into scratch of twice the cap, so
 * that an overflowing try still tells its size; the next length is
 * interpolated between the longest prefix known to fit and the shortest
 * known not to, and the search stops once the output fills the cap to
 * within FIT_SLACK (1/512 of it) or after FIT_TRIES tries.
 */
#define FIT_TRIES	10
#define FIT_SLACK(cap)	((cap) / 512 > 8 ? (cap) / 512 : 8)

int erofs_codec_fit(struct erofs_codec *c, const uint8_t *src, int *src_len, uint8_t *dst,
		    int cap, int (*try_prefix)(struct erofs_codec *c, const uint8_t *src, int len,
					       uint8_t *out, int out_cap))
{
	const int total = *src_len, out_cap = 2 * cap + 64;
	int64_t lo = 0, lo_out = 0, hi = (int64_t)total + 1, hi_out = 0;
	int64_t m = (int64_t)cap * 4;

	if (c->scratch_cap < out_cap) {
		uint8_t *bigger = realloc(c->scratch, (size_t)out_cap);

		if (!bigger)
			return -ENOMEM;
		c->scratch = bigger;
		c->scratch_cap = out_cap;
	}
	for (int tries = 0; tries < FIT_TRIES && hi > lo + 1; tries++) {
		const int64_t target = cap - FIT_SLACK(cap) / 2;
		int out;

		if (m >= hi)
			m = hi - 1;
		if (m <= lo)
			m = lo + 1;
		out = try_prefix(c, src, (int)m, c->scratch, out_cap);
		if (out < 0)
			return out;
		if (out > 0 && out <= cap) {
			memcpy(dst, c->scratch, (size_t)out);
			lo = m;
			lo_out = out;
			if (cap - out <= FIT_SLACK(cap))
				break;
		} else {
			hi = m;
			hi_out = out;	/* 0: beyond twice the cap */
		}
		if (hi_out > lo_out && hi <= total)	/* between the two */
			m = lo + (hi - lo) * (target - lo_out) / (hi_out - lo_out);
		else if (out > 0)		/* in proportion */
			m = m * target / out;
		else
			m = (lo + hi) / 2;
	}
	*src_len = (int)lo;
	return (int)lo_out;
}
