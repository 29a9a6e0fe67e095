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

#endif
