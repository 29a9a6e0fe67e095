/* SPDX-License-Identifier: MIT */
/*
 * Little-endian field access and the superblock checksum, for the host-side
 * image editors of qemu-tests (craft.c, and fuzz-mutate through
 * fuzz-mutate.h).  Header-only so that each tool stays one gcc command.
 *
 * The checksum is CRC32C (Castagnoli, reflected, seed 0xFFFFFFFF, no final
 * xor) over the superblock block from byte 1024 with the checksum field
 * (+4) zeroed: blocksize - 1024 bytes, or blocksize bytes when the block is
 * not larger than 1024.
 */
#ifndef QEMU_TESTS_EROFS_IMAGE_H
#define QEMU_TESTS_EROFS_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define SB_OFF 1024
#define SB_MAGIC 0xE0F5E1E2u
#define COMPAT_SB_CHKSUM 0x1u

static inline uint16_t get16(const unsigned char *p) { return p[0] | p[1] << 8; }
static inline uint32_t get32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const unsigned char *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}
static inline void put16(unsigned char *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}
static inline void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t crc32c(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & -(crc & 1));
	}
	return crc;
}

/*
 * The checksum the kernel expects for image IMG of SIZE bytes; -1 when the
 * block size field is out of range or the block is not all there.
 */
static inline int64_t erofs_sb_csum(const unsigned char *img, size_t size)
{
	unsigned int bits = img[SB_OFF + 12];
	size_t len = (size_t)1 << (bits & 31);
	unsigned char zero[4] = { 0 };
	uint32_t crc;

	if (bits < 9 || bits > 12)
		return -1;
	if (len > SB_OFF)
		len -= SB_OFF;
	if (SB_OFF + len > size)
		return -1;
	crc = crc32c(0xFFFFFFFFu, img + SB_OFF, 4);
	crc = crc32c(crc, zero, 4);
	return crc32c(crc, img + SB_OFF + 8, len - 8);
}

#endif
