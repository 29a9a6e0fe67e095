/* SPDX-License-Identifier: MIT */
/*
 * craft: turn a valid EROFS image into one the kernel must refuse (or one
 * whose data is silently wrong), editing the file in place.
 *
 *   craft badmagic IMG          clobber the superblock magic
 *   craft badcsum IMG           claim a superblock checksum (compat bit 0x1)
 *                               and store a wrong one
 *   craft incompat IMG BITS     OR BITS (e.g. 0x40) into feature_incompat and
 *                               reseal the checksum, so only the bit is wrong
 *   craft check IMG             exit 0 if the stored checksum matches (or none
 *                               is claimed), 1 otherwise
 *   craft flip IMG MARKER       flip one byte in the middle of the first
 *                               occurrence of MARKER (file data of an
 *                               uncompressed image); no metadata changes
 *
 * Superblock facts used (see erofs-format.md): it starts at byte 1024; magic
 * 0xE0F5E1E2 at +0, checksum at +4, feature_compat at +8 (bit 0x1: checksum
 * present), blkszbits at +12, feature_incompat at +80.  The checksum is
 * CRC32C (Castagnoli, reflected, seed 0xFFFFFFFF, no final xor) over the
 * superblock block from byte 1024 with the checksum field zeroed: blocksize -
 * 1024 bytes, or blocksize bytes when the block is not larger than 1024.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SB_OFF 1024
#define SB_MAGIC 0xE0F5E1E2u
#define COMPAT_SB_CHKSUM 0x1u

static void die(const char *msg)
{
	fprintf(stderr, "craft: %s\n", msg);
	exit(1);
}

static uint32_t get32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t crc32c(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & -(crc & 1));
	}
	return crc;
}

/* Checksum of the superblock block as the kernel computes it. */
static uint32_t sb_csum(const unsigned char *img, size_t size)
{
	unsigned int bits = img[SB_OFF + 12];
	size_t len = (size_t)1 << bits;
	unsigned char zero[4] = { 0 };
	uint32_t crc;

	if (bits < 9 || bits > 12)
		die("unsupported blkszbits in the source image");
	if (len > SB_OFF)
		len -= SB_OFF;
	if (SB_OFF + len > size)
		die("image shorter than its superblock block");
	crc = crc32c(0xFFFFFFFFu, img + SB_OFF, 4);
	crc = crc32c(crc, zero, 4);
	return crc32c(crc, img + SB_OFF + 8, len - 8);
}

static void reseal(unsigned char *img, size_t size)
{
	if (get32(img + SB_OFF + 8) & COMPAT_SB_CHKSUM)
		put32(img + SB_OFF + 4, sb_csum(img, size));
}

int main(int argc, char **argv)
{
	unsigned char *img;
	struct stat st;
	int fd;

	if (argc < 3) {
		fprintf(stderr,
			"usage: craft check|badmagic|badcsum IMG\n"
			"       craft incompat IMG BITS\n"
			"       craft flip IMG MARKER\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[2]);
		return 1;
	}
	if (st.st_size < SB_OFF + 128)
		die("image too small");
	img = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	if (img == MAP_FAILED)
		die("mmap failed");
	if (get32(img + SB_OFF) != SB_MAGIC)
		die("source image has no EROFS magic");

	if (!strcmp(argv[1], "check")) {
		if (!(get32(img + SB_OFF + 8) & COMPAT_SB_CHKSUM))
			return 0;
		return get32(img + SB_OFF + 4) == sb_csum(img, (size_t)st.st_size)
			? 0 : 1;
	} else if (!strcmp(argv[1], "badmagic")) {
		put32(img + SB_OFF, 0xDEADBEEFu);
	} else if (!strcmp(argv[1], "badcsum")) {
		put32(img + SB_OFF + 8,
		      get32(img + SB_OFF + 8) | COMPAT_SB_CHKSUM);
		put32(img + SB_OFF + 4, sb_csum(img, (size_t)st.st_size) ^ 1);
	} else if (!strcmp(argv[1], "incompat") && argc == 4) {
		uint32_t bits = (uint32_t)strtoul(argv[3], NULL, 0);

		put32(img + SB_OFF + 80, get32(img + SB_OFF + 80) | bits);
		reseal(img, (size_t)st.st_size);
	} else if (!strcmp(argv[1], "flip") && argc == 4) {
		size_t mlen = strlen(argv[3]);
		unsigned char *hit = memmem(img, (size_t)st.st_size, argv[3],
					    mlen);

		if (!mlen || !hit)
			die("marker not found in the image");
		hit[mlen / 2] ^= 0x20;
	} else {
		die("unknown mode or missing argument");
	}
	if (msync(img, (size_t)st.st_size, MS_SYNC) < 0)
		die("msync failed");
	munmap(img, (size_t)st.st_size);
	close(fd);
	return 0;
}
