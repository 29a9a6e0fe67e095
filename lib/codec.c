// SPDX-License-Identifier: MIT
/* The codecs' common part: names, levels, dispatch, the prefix search (see include/erofs/codec.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec.h"
#include "erofs/format.h"

/* Level ranges and defaults as erofs-utils 1.9.4's mkfs.erofs --help lists them. */
static const struct erofs_codec_info codecs[] = {
	{ "lz4", EROFS_COMPRESS_LZ4, 0, 0, 0, false, 0 },
	{ "lz4hc", EROFS_COMPRESS_LZ4HC, 0, 12, 9, false, 0 },
	{ "lzma", EROFS_COMPRESS_LZMA, 0, 109, 6, true, EROFS_LZMA_MAX_DICT_SIZE },
	{ "deflate", EROFS_COMPRESS_DEFLATE, 0, 9, 1, true, 1u << 15 },
	{ "zstd", EROFS_COMPRESS_ZSTD, 0, 22, 3, true, EROFS_ZSTD_MAX_DICT_SIZE },
};

const struct erofs_codec_info *erofs_codec_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (strlen(codecs[i].name) == len && !strncmp(codecs[i].name, name, len))
			return &codecs[i];
	return NULL;
}

bool erofs_codec_level_ok(const struct erofs_codec_info *info, int64_t level)
{
	/* lzma: 0-9 normal, 100-109 extreme */
	if (info->kind == EROFS_COMPRESS_LZMA)
		return (level >= 0 && level <= 9) || (level >= 100 && level <= 109);
	return level >= info->level_min && level <= info->level_max;
}

unsigned int erofs_codec_format(enum erofs_compressor_kind kind)
{
	switch (kind) {
	case EROFS_COMPRESS_LZMA: return EROFS_COMPR_LZMA;
	case EROFS_COMPRESS_DEFLATE: return EROFS_COMPR_DEFLATE;
	case EROFS_COMPRESS_ZSTD: return EROFS_COMPR_ZSTD;
	default: return EROFS_COMPR_LZ4;
	}
}

static uint32_t pow2_floor(uint32_t v)
{
	uint32_t p = 1;

	while (p <= v / 2)
		p <<= 1;
	return p;
}

void erofs_codec_resolve(struct erofs_algorithm *alg, uint32_t pcluster_max)
{
	uint32_t d;

	if (alg->dict_size)
		return;
	switch (alg->kind) {
	case EROFS_COMPRESS_LZMA:
		/* four pclusters of history, 32 KiB .. 8 MiB */
		d = pcluster_max > EROFS_LZMA_MAX_DICT_SIZE / 4 ? EROFS_LZMA_MAX_DICT_SIZE
								: pcluster_max * 4;
		alg->dict_size = d < 32768 ? 32768 : d;
		break;
	case EROFS_COMPRESS_DEFLATE:
		alg->dict_size = 1u << 15;
		break;
	case EROFS_COMPRESS_ZSTD:
		/* eight pclusters of window, a power of two up to 1 MiB */
		d = pcluster_max > EROFS_ZSTD_MAX_DICT_SIZE / 8 ? EROFS_ZSTD_MAX_DICT_SIZE
								: pcluster_max * 8;
		alg->dict_size = pow2_floor(d);
		break;
	default:
		break;
	}
}

static const struct erofs_codec_ops *ops_of(enum erofs_compressor_kind kind)
{
	switch (kind) {
	case EROFS_COMPRESS_LZ4HC: return &erofs_codec_lz4hc_ops;
	case EROFS_COMPRESS_LZMA: return &erofs_codec_lzma_ops;
	case EROFS_COMPRESS_DEFLATE: return &erofs_codec_deflate_ops;
	case EROFS_COMPRESS_ZSTD: return &erofs_codec_zstd_ops;
	default: return &erofs_codec_lz4_ops;
	}
}

int erofs_codec_new(const struct erofs_algorithm *alg, struct erofs_codec **out)
{
	struct erofs_codec *c = calloc(1, sizeof(*c));
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->ops = ops_of(alg->kind);
	c->alg = *alg;
	err = c->ops->init ? c->ops->init(c) : 0;
	if (err) {
		erofs_codec_free(c);
		return err;
	}
	*out = c;
	return 0;
}

void erofs_codec_free(struct erofs_codec *c)
{
	if (!c)
		return;
	if (c->ops->exit)
		c->ops->exit(c);
	free(c->scratch);
	free(c);
}

int erofs_codec_fill(struct erofs_codec *c, const uint8_t *src, int *src_len, int expect,
		     uint8_t *dst, int cap)
{
	int ret = c->ops->fill(c, src, src_len, expect, dst, cap);

	/* a leading zero would be taken for padding (see the header) */
	if (ret > 0 && !dst[0])
		ret = 0;
	if (ret <= 0)
		*src_len = 0;
	return ret;
}

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
		if (!tries && out > 0 && plan->points) {
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
