/* SPDX-License-Identifier: MIT */
/* The prefix search of lib/codec/codec_fit.c, used by codec_deflate.c and codec_zstd.c. */
#ifndef EROFS_CODEC_FIT_H
#define EROFS_CODEC_FIT_H

#include <stdint.h>

#include "erofs/codec/codec.h"

/*
 * For codecs without a destination-size mode (DEFLATE, zstd): finds a long
 * prefix whose output fits cap by compressing trial prefixes with
 * try_prefix(), which returns the output size or 0 when it exceeds the
 * buffer (cap + slack bytes).  The search only depends on its arguments.
 */
int erofs_codec_fit(struct erofs_codec *c, const uint8_t *src, int *src_len, uint8_t *dst,
		    int cap, int (*try_prefix)(struct erofs_codec *c, const uint8_t *src, int len,
					       uint8_t *out, int out_cap));

#endif
