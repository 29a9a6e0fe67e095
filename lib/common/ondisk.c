// SPDX-License-Identifier: MIT
/* Field-by-field codecs for the on-disk records (see include/erofs/common/format.h). */
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "erofs/common/ondisk.h"

/* superblock field offsets */
enum {
	SB_MAGIC = 0x00, SB_CHECKSUM = 0x04, SB_COMPAT = 0x08, SB_BLKSZBITS = 0x0C,
	SB_EXTSLOTS = 0x0D, SB_ROOT_NID = 0x0E, SB_INOS = 0x10, SB_BUILD_TIME = 0x18,
	SB_BUILD_NSEC = 0x20, SB_BLOCKS = 0x24, SB_META_BLKADDR = 0x28,
	SB_XATTR_BLKADDR = 0x2C, SB_UUID = 0x30, SB_VOLUME_NAME = 0x40,
	SB_INCOMPAT = 0x50, SB_U1 = 0x54, SB_EXTRA_DEVICES = 0x56,
	SB_DEVT_SLOTOFF = 0x58, SB_DIRBLKBITS = 0x5A, SB_XATTR_PREFIX_COUNT = 0x5B,
	SB_XATTR_PREFIX_START = 0x5C, SB_PACKED_NID = 0x60, SB_XATTR_FILTER_RESERVED = 0x68,
	SB_ISHARE_XATTR_PREFIX_ID = 0x69,
	SB_BUILD_TIME_DELTA = 0x6C, SB_ROOTNID_8B = 0x70, SB_METABOX_NID = 0x80,
};

void erofs_super_encode(const struct erofs_super *sb, uint8_t out[EROFS_SUPER_MAX_SIZE])
{
	/* only the superblock's own bytes: callers may encode in place before config records */
	memset(out, 0, sb->sb_extslots ? EROFS_SUPER_MAX_SIZE : EROFS_SUPER_SIZE);
	put_le32(out + SB_MAGIC, sb->magic);
	put_le32(out + SB_CHECKSUM, sb->checksum);
	put_le32(out + SB_COMPAT, sb->feature_compat);
	out[SB_BLKSZBITS] = sb->blkszbits;
	out[SB_EXTSLOTS] = sb->sb_extslots;
	put_le16(out + SB_ROOT_NID, sb->root_nid);
	put_le64(out + SB_INOS, sb->inos);
	put_le64(out + SB_BUILD_TIME, sb->build_time);
	put_le32(out + SB_BUILD_NSEC, sb->build_time_nsec);
	put_le32(out + SB_BLOCKS, sb->blocks);
	put_le32(out + SB_META_BLKADDR, sb->meta_blkaddr);
	put_le32(out + SB_XATTR_BLKADDR, sb->xattr_blkaddr);
	memcpy(out + SB_UUID, sb->uuid, 16);
	memcpy(out + SB_VOLUME_NAME, sb->volume_name, 16);
	put_le32(out + SB_INCOMPAT, sb->feature_incompat);
	put_le16(out + SB_U1, sb->u1);
	put_le16(out + SB_EXTRA_DEVICES, sb->extra_devices);
	put_le16(out + SB_DEVT_SLOTOFF, sb->devt_slotoff);
	out[SB_DIRBLKBITS] = sb->dirblkbits;
	out[SB_XATTR_PREFIX_COUNT] = sb->xattr_prefix_count;
	put_le32(out + SB_XATTR_PREFIX_START, sb->xattr_prefix_start);
	put_le64(out + SB_PACKED_NID, sb->packed_nid);
	out[SB_XATTR_FILTER_RESERVED] = sb->xattr_filter_reserved;
	out[SB_ISHARE_XATTR_PREFIX_ID] = sb->ishare_xattr_prefix_id;
	put_le32(out + SB_BUILD_TIME_DELTA, sb->build_time_delta);
	put_le64(out + SB_ROOTNID_8B, sb->rootnid_8b);
	if (sb->sb_extslots)
		put_le64(out + SB_METABOX_NID, sb->metabox_nid);
}

void erofs_super_decode(const uint8_t *in, size_t len, struct erofs_super *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->magic = get_le32(in + SB_MAGIC);
	sb->checksum = get_le32(in + SB_CHECKSUM);
	sb->feature_compat = get_le32(in + SB_COMPAT);
	sb->blkszbits = in[SB_BLKSZBITS];
	sb->sb_extslots = in[SB_EXTSLOTS];
	sb->root_nid = get_le16(in + SB_ROOT_NID);
	sb->inos = get_le64(in + SB_INOS);
	sb->build_time = get_le64(in + SB_BUILD_TIME);
	sb->build_time_nsec = get_le32(in + SB_BUILD_NSEC);
	sb->blocks = get_le32(in + SB_BLOCKS);
	sb->meta_blkaddr = get_le32(in + SB_META_BLKADDR);
	sb->xattr_blkaddr = get_le32(in + SB_XATTR_BLKADDR);
	memcpy(sb->uuid, in + SB_UUID, 16);
	memcpy(sb->volume_name, in + SB_VOLUME_NAME, 16);
	sb->feature_incompat = get_le32(in + SB_INCOMPAT);
	sb->u1 = get_le16(in + SB_U1);
	sb->extra_devices = get_le16(in + SB_EXTRA_DEVICES);
	sb->devt_slotoff = get_le16(in + SB_DEVT_SLOTOFF);
	sb->dirblkbits = in[SB_DIRBLKBITS];
	sb->xattr_prefix_count = in[SB_XATTR_PREFIX_COUNT];
	sb->xattr_prefix_start = get_le32(in + SB_XATTR_PREFIX_START);
	sb->packed_nid = get_le64(in + SB_PACKED_NID);
	sb->xattr_filter_reserved = in[SB_XATTR_FILTER_RESERVED];
	sb->ishare_xattr_prefix_id = in[SB_ISHARE_XATTR_PREFIX_ID];
	sb->build_time_delta = get_le32(in + SB_BUILD_TIME_DELTA);
	sb->rootnid_8b = get_le64(in + SB_ROOTNID_8B);
	if (sb->sb_extslots && len >= SB_METABOX_NID + 8)
		sb->metabox_nid = get_le64(in + SB_METABOX_NID);
}

/* inode field offsets: compact (C_) and extended (X_) */
enum {
	I_FORMAT = 0x00, I_XATTR_ICOUNT = 0x02, I_MODE = 0x04,
	I_NB = 0x06, C_NLINK = 0x06, C_SIZE = 0x08, C_MTIME = 0x0C, C_U = 0x10, C_INO = 0x14, C_UID = 0x18,
	C_GID = 0x1A,
	X_SIZE = 0x08, X_U = 0x10, X_INO = 0x14, X_UID = 0x18, X_GID = 0x1C,
	X_MTIME = 0x20, X_MTIME_NSEC = 0x28, X_NLINK = 0x2C,
};

unsigned int erofs_dinode_encode(const struct erofs_dinode *di, uint8_t *out)
{
	unsigned int version = erofs_inode_version(di->format);
	unsigned int size = erofs_inode_core_size(version);

	memset(out, 0, size);
	put_le16(out + I_FORMAT, di->format);
	put_le16(out + I_XATTR_ICOUNT, di->xattr_icount);
	put_le16(out + I_MODE, di->mode);
	if (version == EROFS_INODE_EXTENDED) {
		put_le64(out + X_SIZE, di->size);
		put_le32(out + X_U, di->u);
		put_le32(out + X_INO, di->ino);
		put_le32(out + X_UID, di->uid);
		put_le32(out + X_GID, di->gid);
		put_le64(out + X_MTIME, (uint64_t)di->mtime);
		put_le32(out + X_MTIME_NSEC, di->mtime_nsec);
		put_le32(out + X_NLINK, di->nlink);
		put_le16(out + I_NB, di->nb_hi);
	} else {
		put_le16(out + C_NLINK, (uint16_t)di->nlink);
		put_le32(out + C_SIZE, (uint32_t)di->size);
		put_le32(out + C_MTIME, di->compact_mtime);
		put_le32(out + C_U, di->u);
		put_le32(out + C_INO, di->ino);
		put_le16(out + C_UID, (uint16_t)di->uid);
		put_le16(out + C_GID, (uint16_t)di->gid);
	}
	return size;
}

void erofs_dinode_decode(const uint8_t *in, struct erofs_dinode *di)
{
	memset(di, 0, sizeof(*di));
	di->format = get_le16(in + I_FORMAT);
	di->xattr_icount = get_le16(in + I_XATTR_ICOUNT);
	di->mode = get_le16(in + I_MODE);
	if (erofs_inode_version(di->format) == EROFS_INODE_EXTENDED) {
		di->size = get_le64(in + X_SIZE);
		di->u = get_le32(in + X_U);
		di->ino = get_le32(in + X_INO);
		di->uid = get_le32(in + X_UID);
		di->gid = get_le32(in + X_GID);
		di->mtime = (int64_t)get_le64(in + X_MTIME);
		di->mtime_nsec = get_le32(in + X_MTIME_NSEC);
		di->nlink = get_le32(in + X_NLINK);
		di->nb_hi = get_le16(in + I_NB);
	} else {
		di->nlink = get_le16(in + C_NLINK);
		di->size = get_le32(in + C_SIZE);
		di->compact_mtime = get_le32(in + C_MTIME);
		di->u = get_le32(in + C_U);
		di->ino = get_le32(in + C_INO);
		di->uid = get_le16(in + C_UID);
		di->gid = get_le16(in + C_GID);
	}
}

void erofs_dirent_encode(const struct erofs_dirent *de, uint8_t out[EROFS_DIRENT_SIZE])
{
	put_le64(out, de->nid);
	put_le16(out + 8, de->nameoff);
	out[10] = de->file_type;
	out[11] = 0;
}

void erofs_dirent_decode(const uint8_t in[EROFS_DIRENT_SIZE], struct erofs_dirent *de)
{
	de->nid = get_le64(in);
	de->nameoff = get_le16(in + 8);
	de->file_type = in[10];
}

void erofs_xattr_entry_encode(const struct erofs_xattr_entry *e, uint8_t out[4])
{
	out[0] = e->name_len;
	out[1] = e->name_index;
	put_le16(out + 2, e->value_size);
}

void erofs_xattr_entry_decode(const uint8_t in[4], struct erofs_xattr_entry *e)
{
	e->name_len = in[0];
	e->name_index = in[1];
	e->value_size = get_le16(in + 2);
}

unsigned int erofs_xattr_filter_bit(unsigned int base_index, const void *name, size_t len)
{
	return XXH32(name, len, EROFS_XATTR_FILTER_SEED + base_index) &
	       (EROFS_XATTR_FILTER_BITS - 1);
}

size_t erofs_sb_checksum_span(unsigned int blkszbits)
{
	size_t blksz = (size_t)1 << blkszbits;

	/* the kernel reads the rest of the superblock's block, or one block */
	return blksz > EROFS_SUPER_OFFSET ? blksz - EROFS_SUPER_OFFSET : blksz;
}

uint32_t erofs_sb_checksum(const uint8_t *from_1024, size_t span)
{
	static const uint8_t zero[4];
	uint32_t crc = erofs_crc32c(~0u, from_1024, EROFS_SB_CHECKSUM_OFFSET);

	crc = erofs_crc32c(crc, zero, sizeof(zero));
	return erofs_crc32c(crc, from_1024 + EROFS_SB_CHECKSUM_OFFSET + 4,
			    span - EROFS_SB_CHECKSUM_OFFSET - 4);
}

uint8_t erofs_mode_to_ftype(uint16_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EROFS_FT_REG_FILE;
	case S_IFDIR: return EROFS_FT_DIR;
	case S_IFCHR: return EROFS_FT_CHRDEV;
	case S_IFBLK: return EROFS_FT_BLKDEV;
	case S_IFIFO: return EROFS_FT_FIFO;
	case S_IFSOCK: return EROFS_FT_SOCK;
	case S_IFLNK: return EROFS_FT_SYMLINK;
	default: return EROFS_FT_UNKNOWN;
	}
}
