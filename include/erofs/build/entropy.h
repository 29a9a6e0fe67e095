/* SPDX-License-Identifier: MIT */
/*
 * What an entropy coder would make of bytes coded one by one, without
 * matches: their order-0 entropy, in bytes.  Fast LZ4, the build's quick
 * estimate, finds no gain in text of a small alphabet (hex, base64) that
 * zstd, LZMA and DEFLATE code in half the bytes or less.
 */
#ifndef EROFS_ENTROPY_H
#define EROFS_ENTROPY_H

#include <stdint.h>

/* ceil(sum over byte values of count * log2(len / count) / 8); the same on every machine */
uint32_t erofs_order0_size(const uint8_t *data, uint32_t len);

/*
 * A fragment's size in a packed inode whose codec has an entropy stage,
 * estimated from its order-0 entropy plus 1/16: the packed inode codes it
 * among other files' bytes, with their statistics and its block headers,
 * and bytes of near-random data should stay plain.  Below
 * EROFS_ENTROPY_MIN bytes the few bytes a file holds say little of its
 * statistics and little is at stake: the rootfs sample's 90 such files
 * (33-319 bytes of text, 17 KB in all) moved its -zzstd,19 image by +12 KiB
 * and its -zzstd,15 one by -12 KiB when packed.
 */
#define EROFS_ENTROPY_MIN	512
static inline uint32_t erofs_entropy_estimate(const uint8_t *data, uint32_t len)
{
	uint32_t size = erofs_order0_size(data, len);

	return size + size / 16;
}

#endif
