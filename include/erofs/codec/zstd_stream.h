/* SPDX-License-Identifier: MIT */
/*
 * zstd at its fast levels in one streaming pass, for the fixed-output
 * search (lib/codec/codec_zstd.c): the frame's whole blocks are compressed
 * once, as libzstd's streaming compressor cuts them anyway, then most of
 * the rest as one shorter block; only the input after that is tried at
 * several lengths, each try continuing the frame from a saved copy of
 * the compressor.  A plain zstd frame any decoder reads, with the blocks
 * a one-shot compression of the same input has but for one more cut.
 * Uses libzstd's experimental API (a static context, a stable input
 * buffer, a size hint; all in 1.5.4), hence ZSTD_STATIC_LINKING_ONLY in
 * lib/codec/zstd_stream.c.
 */
#ifndef EROFS_ZSTD_STREAM_H
#define EROFS_ZSTD_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct erofs_zstream;

/* A streaming encoder at level with a window of 1 << window_log bytes. */
int erofs_zstream_new(int level, unsigned int window_log, struct erofs_zstream **out);
void erofs_zstream_free(struct erofs_zstream *zs);

/*
 * The block libzstd cuts frames in (128 KiB, or the window if smaller):
 * the unit of the head.  A cap below it leaves no head, every try a whole
 * compression.
 */
size_t erofs_zstream_block(const struct erofs_zstream *zs);

/*
 * Starts a frame of src[0, len) that is to fit cap bytes: compresses
 * whole blocks while the next one is expected to fit (from the blocks so
 * far, else from hint), then, as one more block, 13/16 of the input
 * expected to fill the rest when that is 16 KiB or more, and keeps the
 * compressor's state after the last block that fit.  hint is the input
 * the frame is expected to hold (0: not known): libzstd picks its
 * parameters by it, as for a source of that size.  *taken is the input
 * those blocks hold, less than len; *head and *head_len their bytes (the
 * frame header first).  0 or -ENOMEM / -EIO.
 */
int erofs_zstream_begin(struct erofs_zstream *zs, const uint8_t *src, size_t len, size_t hint,
			size_t cap, size_t *taken, const uint8_t **head, size_t *head_len);

/*
 * Ends the frame begun with len more bytes of input after the head:
 * writes the rest of the frame (its last blocks) into out[0, out_cap).
 * Returns the bytes written, 0 when they do not fit out_cap, or -ENOMEM /
 * -EIO.  Tries may come in any order; each starts from the saved state.
 */
int erofs_zstream_try(struct erofs_zstream *zs, size_t len, uint8_t *out, size_t out_cap);

#endif
