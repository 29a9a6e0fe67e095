/* SPDX-License-Identifier: MIT */
/*
 * The encoders of the EROFS compression algorithms behind one contract,
 * one file each (lib/codec/codec_lz4.c, codec_lzma.c, codec_deflate.c,
 * codec_zstd.c): fill at most cap bytes of output with one independent
 * stream of as much of the input as fits, and tell how much input that
 * was.  The result depends only on the input, the cap and the algorithm's
 * settings, never on earlier calls, so images do not depend on which
 * worker compressed what.
 */
#ifndef EROFS_CODEC_H
#define EROFS_CODEC_H

#include <stdint.h>

#include "erofs/common/build.h"

struct erofs_codec;

/* One thread's encoder for alg (whose dict_size is resolved). */
int erofs_codec_new(const struct erofs_algorithm *alg, struct erofs_codec **out);
void erofs_codec_free(struct erofs_codec *c);

/*
 * Compresses a prefix of src[0, *src_len) into dst[0, cap); *src_len
 * becomes the bytes consumed.  Returns the bytes written, 0 when nothing
 * useful fits (the caller stores the input raw), -ENOMEM on failure.  The
 * output never starts with a zero byte: readers find a pcluster's stream
 * by skipping the zeros before it.
 *
 * expect is the caller's guess of the input that will fit, 0 for none:
 * the input the previous pcluster of the same stream took, found at prev
 * (NULL when those bytes are not at hand).  DEFLATE and zstd size their
 * search by them, so their output depends on them too: they must come from
 * the stream's own bytes, never from which worker did what.  LZ4HC bounds
 * its first try by expect, with the same output.
 */
int erofs_codec_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		     const uint8_t *prev, int expect, uint8_t *dst, int cap);

/*
 * As erofs_codec_fill(), for the pclusters of one stream in order: *budget
 * carries from each call to the next the fast LZ4 budget (output bytes)
 * whose input is what this pcluster took, so that DEFLATE's guess of the
 * next cut need not compress prev again with fast LZ4.  Start a stream
 * with 0 (unknown), and set it back to 0 wherever prev is not this call's
 * input; it is a function of the stream's bytes like the rest, so images
 * stay the same for every worker count.
 */
int erofs_codec_fill_next(struct erofs_codec *c, const uint8_t *src, int *src_len,
			  const uint8_t *prev, int expect, int *budget, uint8_t *dst, int cap);

/*
 * Compresses all of src[0, len) as one stream into dst[0, cap): the bytes
 * written, or 0 when the whole input does not fit (or the output would
 * start with a zero byte): the caller stores it raw.  No search for the
 * input that fills cap (--max-extent-bytes=-N: fixed input per extent).
 */
int erofs_codec_whole(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *dst, int cap);

/* The on-disk algorithm id (EROFS_COMPR_*) a kind writes. */
unsigned int erofs_codec_format(enum erofs_compressor_kind kind);

/* Fills in alg->dict_size when not given, from the largest pcluster, as erofs-utils does. */
void erofs_codec_resolve(struct erofs_algorithm *alg, uint32_t pcluster_max);

/* Names, level ranges and defaults, for -z parsing and messages. */
struct erofs_codec_info {
	const char *name;
	enum erofs_compressor_kind kind;
	int level_min, level_max, level_default;
	bool has_dict;			/* takes dictsize= */
	uint32_t dict_max;
};
const struct erofs_codec_info *erofs_codec_lookup(const char *name, size_t len);
/* The i-th algorithm built in, in erofs-utils' order; NULL past the last. */
const struct erofs_codec_info *erofs_codec_at(size_t i);
bool erofs_codec_level_ok(const struct erofs_codec_info *info, int64_t level);

/* Internal: what each codec file provides. */
struct erofs_codec_ops {
	int (*init)(struct erofs_codec *c);
	void (*exit)(struct erofs_codec *c);
	/* as erofs_codec_fill(), may write a leading zero (checked after) */
	int (*fill)(struct erofs_codec *c, const uint8_t *src, int *src_len, const uint8_t *prev,
		    int expect, uint8_t *dst, int cap);
	/* optional: as erofs_codec_fill_next() (else fill(), and the budget is 0) */
	int (*fill_next)(struct erofs_codec *c, const uint8_t *src, int *src_len,
			 const uint8_t *prev, int expect, int *budget, uint8_t *dst, int cap);
	/* optional: all of src in at most cap bytes, else 0 (else fill() is asked) */
	int (*whole)(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *dst, int cap);
};

struct erofs_codec {
	const struct erofs_codec_ops *ops;
	struct erofs_algorithm alg;
	void *state;			/* the library's context */
	uint8_t *scratch;		/* codecs that try sizes: one try's output */
	int scratch_cap;
	char *guess;			/* the fast LZ4 guesses' output (codec_fit.h) */
	int guess_cap;
};

extern const struct erofs_codec_ops erofs_codec_lz4_ops, erofs_codec_lz4hc_ops,
	erofs_codec_lzma_ops, erofs_codec_deflate_ops, erofs_codec_zstd_ops;

#endif
