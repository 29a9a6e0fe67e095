/* SPDX-License-Identifier: MIT */
/*
 * Where a zstd pcluster will be cut, guessed before its matches are found
 * (lib/codec/codec_zstd.c sizes its first window by it): zstd -1 is the
 * yardstick, flushed every 16 KiB of input so that its output after each
 * chunk is known.
 */
#ifndef EROFS_ZSTD_GUESS_H
#define EROFS_ZSTD_GUESS_H

#include <stdint.h>

struct erofs_zguess;

int erofs_zguess_new(struct erofs_zguess **out);
void erofs_zguess_free(struct erofs_zguess *g);

/*
 * The prefix of src[0, total) that zstd -1 packs into as many bytes as it
 * packs prev[0, prev_len) in: the previous pcluster's input filled the
 * cap, and the ratio of two levels drifts much less from one pcluster to
 * the next than the data's compressibility does.  0 when it cannot tell.
 */
int erofs_zguess_like(struct erofs_zguess *g, const uint8_t *prev, int prev_len,
		      const uint8_t *src, int total);
/* The prefix of src[0, total) zstd -1 packs into budget bytes (0: cannot tell). */
int erofs_zguess_budget(struct erofs_zguess *g, const uint8_t *src, int total, int budget);

#endif
