// SPDX-License-Identifier: MIT
/* The codecs' common part: names, levels, dispatch (see include/erofs/codec/codec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec.h"
#include "erofs/common/format.h"

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

const struct erofs_codec_info *erofs_codec_at(size_t i)
{
	return i < sizeof(codecs) / sizeof(codecs[0]) ? &codecs[i] : NULL;
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
	free(c->guess);
	free(c);
}

int erofs_codec_whole(struct erofs_codec *c, const uint8_t *src, int len, uint8_t *dst, int cap)
{
	int ret, taken = len;

	if (c->ops->whole) {
		ret = c->ops->whole(c, src, len, dst, cap);
	} else {
		ret = c->ops->fill(c, src, &taken, NULL, len, dst, cap);
		if (taken != len)
			ret = 0;
	}
	if (ret == -ENOMEM)
		return ret;
	/* a leading zero would be taken for padding (see erofs_codec_fill()) */
	return ret > 0 && ret <= cap && dst[0] ? ret : 0;
}

int erofs_codec_fill_next(struct erofs_codec *c, const uint8_t *src, int *src_len,
			  const uint8_t *prev, int expect, int *budget, uint8_t *dst, int cap)
{
	int ret;

	if (c->ops->fill_next) {
		ret = c->ops->fill_next(c, src, src_len, prev, expect, budget, dst, cap);
	} else {
		*budget = 0;
		ret = c->ops->fill(c, src, src_len, prev, expect, dst, cap);
	}
	/* a leading zero would be taken for padding (see the header) */
	if (ret > 0 && !dst[0])
		ret = 0;
	if (ret <= 0) {
		*src_len = 0;
		*budget = 0;
	}
	return ret;
}

int erofs_codec_fill(struct erofs_codec *c, const uint8_t *src, int *src_len,
		     const uint8_t *prev, int expect, uint8_t *dst, int cap)
{
	int budget = 0;

	return erofs_codec_fill_next(c, src, src_len, prev, expect, &budget, dst, cap);
}
