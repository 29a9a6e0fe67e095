/* SPDX-License-Identifier: MIT */
/*
 * The prefix search of lib/codec/codec_fit.c, used by codec_zstd.c, and
 * the fast LZ4 guesses of the input that fills a pcluster, which
 * codec_deflate.c sizes its one compression by.
 */
#ifndef EROFS_CODEC_FIT_H
#define EROFS_CODEC_FIT_H

#include <stdint.h>

#include "erofs/codec/codec.h"

/*
 * For a codec without a destination-size mode (zstd): finds a long
 * prefix of src[0, *src_len) whose output fits cap by trying prefixes,
 * starting from plan->first, each try_prefix() returning the output size
 * or 0 when it exceeds out_cap.  It stops once an output is within slack
 * bytes of the cap, or after max_tries.  The search only depends on its
 * arguments.
 */
struct erofs_fit_plan {
	int (*try_prefix)(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *out,
			  int out_cap);
	/*
	 * Optional: what the first try's output out[0, out_len) tells of
	 * shorter prefixes, as (prefix length in[i], about sizes[i] bytes of
	 * output) pairs, at most max; returns their count.
	 */
	int (*points)(struct erofs_codec *c, const uint8_t *out, int out_len, int *in,
		      int *sizes, int max);
	/* points() only when the first try misses the cap by more than
	 * cap / points_off (0: always): for points that cost to read */
	int points_off;
	int first;			/* the first prefix to try, 0: four caps */
	int slack;			/* good enough this close to the cap */
	int max_tries;
	int out_cap;			/* a try's room, at least twice the cap */
};
int erofs_codec_fit(struct erofs_codec *c, const uint8_t *src, int *src_len, uint8_t *dst,
		    int cap, const struct erofs_fit_plan *plan);

/*
 * Guesses of the prefix of src[0, total) that fills a pcluster: the input
 * fast LZ4 packs into budget bytes (0 when it cannot tell), budget being
 * what fast LZ4 packs the previous pcluster's input prev[0, prev_len) into
 * (erofs_codec_lz4_size(); 0 when it cannot tell), as the ratio of two
 * codecs drifts much less from one pcluster to the next than the data's
 * compressibility does (zstd -15 on linux-6.1's fs/: within 4% for 29
 * pclusters in 30, where prev_len alone is within 10%).
 */
int erofs_codec_lz4_size(struct erofs_codec *c, const uint8_t *prev, int prev_len);
int erofs_codec_guess_alone(struct erofs_codec *c, const uint8_t *src, int total, int budget);

#endif
