/* SPDX-License-Identifier: MIT */
/*
 * zstd in two stages, so that the fixed-output search (lib/codec/codec_zstd.c)
 * pays for match finding once per pcluster instead of once per try:
 * libzstd's match finder runs once over an input window and its sequences
 * (literal run, match offset, match length) are kept; then any prefix of
 * that window is entropy-coded from those sequences alone, into a plain
 * zstd frame any decoder reads.  Uses libzstd's experimental API
 * (ZSTD_generateSequences() and a registered sequence producer, both in
 * 1.5.4), hence ZSTD_STATIC_LINKING_ONLY in lib/codec/zstd_seq.c.
 */
#ifndef EROFS_ZSTD_SEQ_H
#define EROFS_ZSTD_SEQ_H

#include <stddef.h>
#include <stdint.h>

struct erofs_zseq;

/* A two-stage encoder at level with a window of 1 << window_log bytes. */
int erofs_zseq_new(int level, unsigned int window_log, struct erofs_zseq **out);
void erofs_zseq_free(struct erofs_zseq *z);

/*
 * Picks the parameters of the next erofs_zseq_find() over a window of
 * window bytes: libzstd's for a source of prefix bytes (the input expected
 * to end up in the frame) where they choose another parser than for the
 * window, else libzstd's own for the window; prefix 0: the window's.
 * libzstd's parameter tables change at 16, 128 and 256 KiB: at level 15 a
 * 250 KiB source gets btopt with 3-byte matches, a 300 KiB one btlazy2
 * with 5-byte matches.  Compressing just the prefix, as erofs-utils and
 * mksquashfs do, gets the former.  A prefix that, less an eighth, falls in
 * a smaller row gets that row's parser too where it finds shorter matches
 * (levels 11-17).
 */
int erofs_zseq_expect(struct erofs_zseq *z, size_t prefix, size_t window);

/*
 * The parser erofs_zseq_expect() picks: libzstd's ZSTD_strategy and the
 * minimum match length (*min_match), or 0 for libzstd's own for the window.
 */
int erofs_zseq_parser(int level, size_t prefix, size_t window, int *min_match);

/*
 * Finds the sequences of src[0, len), the window that later prefixes are
 * taken from; src must stay unchanged while they are encoded.  0 or
 * -ENOMEM / -EIO.
 */
int erofs_zseq_find(struct erofs_zseq *z, const uint8_t *src, size_t len);

/*
 * Encodes the window's first len bytes as one zstd frame into out[0,
 * out_cap): the frame size, 0 when it does not fit out_cap, or -ENOMEM /
 * -EIO.  The bytes depend only on the window's sequences and len.
 */
int erofs_zseq_encode(struct erofs_zseq *z, size_t len, uint8_t *out, size_t out_cap);

/*
 * After erofs_zseq_encode() wrote frame[0, size): for each block, the
 * input up to its end (in[]) and the frame's bytes up to its end (out[]),
 * which are within a few header bytes of what a frame of just that prefix
 * takes.  Returns the count (at most max), 0 when the blocks cannot be
 * told apart (libzstd's block splitter cut one in parts).
 */
int erofs_zseq_block_points(const struct erofs_zseq *z, const uint8_t *frame, size_t size,
			    int *in, int *out, int max);

/*
 * One frame of all of src[0, len) the plain way, libzstd's match finder
 * feeding its entropy stage directly (no sequences kept): for input sure
 * to fit.  Returns as erofs_zseq_encode().
 */
int erofs_zseq_compress(struct erofs_zseq *z, const uint8_t *src, size_t len, uint8_t *out,
			size_t out_cap);

#endif
