/* SPDX-License-Identifier: MIT */
/*
 * Little-endian field helpers and the record codecs of the on-disk format.
 * Every byte that enters or leaves an image goes through these.
 */
#ifndef EROFS_ONDISK_H
#define EROFS_ONDISK_H

#include <stddef.h>
#include <stdint.h>

#include "erofs/common/format.h"

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* CRC32C (Castagnoli, reflected), seeded by the caller, no final xor. */
uint32_t erofs_crc32c(uint32_t crc, const void *data, size_t len);

/* The superblock checksum over [1024, 1024 + span) with the field zeroed. */
size_t erofs_sb_checksum_span(unsigned int blkszbits);
uint32_t erofs_sb_checksum(const uint8_t *from_1024, size_t span);

/* Writes 128 bytes, 144 when sb_extslots >= 1 (the metabox nid's slot). */
void erofs_super_encode(const struct erofs_super *sb, uint8_t out[EROFS_SUPER_MAX_SIZE]);
/* Reads 128 bytes, and the metabox nid only if len reaches it and sb_extslots >= 1. */
void erofs_super_decode(const uint8_t *in, size_t len, struct erofs_super *sb);

/* Encodes in the form selected by erofs_inode_version(di->format); returns its size. */
unsigned int erofs_dinode_encode(const struct erofs_dinode *di, uint8_t *out);
/* Decodes the compact form, or the extended one when the version bit says so:
 * the caller must have erofs_inode_core_size() bytes available. */
void erofs_dinode_decode(const uint8_t *in, struct erofs_dinode *di);

void erofs_dirent_encode(const struct erofs_dirent *de, uint8_t out[EROFS_DIRENT_SIZE]);
void erofs_dirent_decode(const uint8_t in[EROFS_DIRENT_SIZE], struct erofs_dirent *de);

void erofs_xattr_entry_encode(const struct erofs_xattr_entry *e, uint8_t out[4]);
void erofs_xattr_entry_decode(const uint8_t in[4], struct erofs_xattr_entry *e);
/*
 * The name filter bit of an xattr: base_index is its short prefix's index
 * (a long prefix's base index), name what follows that prefix.
 */
unsigned int erofs_xattr_filter_bit(unsigned int base_index, const void *name, size_t len);

/* The directory-entry file type for an inode mode. */
uint8_t erofs_mode_to_ftype(uint16_t mode);

#endif
