/* SPDX-License-Identifier: MIT */
/*
 * Where the blocks of a raw DEFLATE stream end, in its input and in its
 * output: the DEFLATE prefix search (lib/codec/codec_deflate.c) learns
 * from its first try's output what shorter prefixes would take, as the
 * zstd one does from the frame's blocks.
 */
#ifndef EROFS_DEFLATE_BLOCKS_H
#define EROFS_DEFLATE_BLOCKS_H

#include <stdint.h>

/*
 * For each block of stream[0, len) but the last, up to max: the input it
 * ends at (in[], increasing) and the bytes of stream up to its end
 * (out[]; the byte its last bit is in counts).  Returns the count; a
 * stream that does not decode yields the blocks before the damage.
 */
int erofs_deflate_block_ends(const uint8_t *stream, int len, int *in, int *out, int max);

#endif
