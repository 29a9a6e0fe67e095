// SPDX-License-Identifier: MIT
/*
 * CRC32C for the superblock checksum.  No Debian library exports CRC32C
 * (zlib has only the IEEE polynomial), so it is hand-written here, bitwise
 * and table-free: it covers at most one block per image, and needs no
 * shared state between threads.
 */
#include "erofs/common/ondisk.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78u

uint32_t erofs_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len--) {
		crc ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (crc & 1u)));
	}
	return crc;
}
