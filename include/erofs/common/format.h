/* SPDX-License-Identifier: MIT */
/*
 * EROFS on-disk format: constants and decoded (host-order) records.
 *
 * Written for erofs-forge from Documentation/filesystems/erofs.rst and the
 * layout described by fs/erofs/erofs_fs.h of Linux 6.1.  Nothing here is a
 * raw overlay of disk bytes: every record is encoded and decoded field by
 * field through the little-endian helpers of ondisk.c, so host struct
 * padding and byte order never reach an image.
 */
#ifndef EROFS_FORMAT_H
#define EROFS_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#define EROFS_MAGIC			0xE0F5E1E2u
#define EROFS_SUPER_OFFSET		1024u
#define EROFS_SUPER_SIZE		128u	/* sb_extslots == 0 */
#define EROFS_SB_EXTSLOT_SIZE		16u	/* superblock size = 128 + 16 * sb_extslots */
#define EROFS_SUPER_MAX_SIZE		144u	/* one extension slot: the metabox nid */
#define EROFS_MIN_BLKSZBITS		9u
#define EROFS_MAX_BLKSZBITS		12u	/* PAGE_SHIFT on x86-64 */
#define EROFS_NAME_LEN			255u
#define EROFS_SLOT_BITS			5u	/* inodes live in 32-byte slots */
#define EROFS_SLOT_SIZE			(1u << EROFS_SLOT_BITS)
#define EROFS_NULL_ADDR			0xFFFFFFFFu
#define EROFS_MAX_LABEL_LEN		15u	/* 6.1 wants a NUL in the 16-byte field */

/* compat features: unknown ones are ignored by the kernel */
#define EROFS_COMPAT_SB_CHKSUM		0x00000001u
#define EROFS_COMPAT_MTIME		0x00000002u
#define EROFS_COMPAT_XATTR_FILTER	0x00000004u	/* Linux 6.6 reads it; 6.1 ignores it */
#define EROFS_COMPAT_SHARED_EA_IN_METABOX 0x00000008u	/* shared xattrs in the metabox data */
#define EROFS_COMPAT_PLAIN_XATTR_PFX	0x00000010u	/* the prefix table is not in the packed inode */
/* ishare_xattr_prefix_id names the long prefix of the per-file content
 * digest xattr (--xattr-inode-digest); Linux 7.0 shares page cache by it */
#define EROFS_COMPAT_ISHARE_XATTRS	0x00000020u

/*
 * The per-inode xattr name filter: a 32-bit Bloom filter in the ibody
 * header's first word, where a set bit means "no xattr of this inode hashes
 * here".  The hash is xxh32 of the name after its base prefix, seeded with
 * EROFS_XATTR_FILTER_SEED plus the base prefix's index.
 */
#define EROFS_XATTR_FILTER_BITS		32u
#define EROFS_XATTR_FILTER_SEED		0x25BBE08Fu

/* incompat features: a 6.1 kernel refuses any bit outside this set */
#define EROFS_INCOMPAT_ZERO_PADDING	0x00000001u
#define EROFS_INCOMPAT_COMPR_CFGS	0x00000002u	/* same bit: BIG_PCLUSTER */
#define EROFS_INCOMPAT_CHUNKED_FILE	0x00000004u
#define EROFS_INCOMPAT_DEVICE_TABLE	0x00000008u	/* same bit: COMPR_HEAD2 */
#define EROFS_INCOMPAT_ZTAILPACKING	0x00000010u
#define EROFS_INCOMPAT_FRAGMENTS	0x00000020u	/* same bit: DEDUPE */
#define EROFS_INCOMPAT_LINUX_6_1	0x0000003Fu
#define EROFS_INCOMPAT_XATTR_PREFIXES	0x00000040u	/* long xattr name prefixes: Linux 6.4 */
#define EROFS_INCOMPAT_48BIT		0x00000080u	/* 48-bit addresses, extents: Linux 6.15 */
#define EROFS_INCOMPAT_METABOX		0x00000100u	/* inodes in a metabox inode: Linux 6.17 */

/*
 * 48-bit layout.  Block counts and start blocks gain 16 high bits (the
 * superblock's rootnid_2b becomes blocks_hi when rootnid_8b is non-zero,
 * inodes keep them in i_nb), compact inodes carry mtime - epoch, and
 * compressed files may use byte-addressed extent records instead of
 * lcluster indexes.
 */
#define EROFS_I_NLINK_1			0x0010u	/* non-directory compact inode: nlink 1,
						 * i_nb holds the high 16 address bits */
#define EROFS_I_DOT_OMITTED		0x0010u	/* directory: no "." entry */
#define EROFS_I_FORMAT_KNOWN_48BIT	0x001Fu

/* A dirent or superblock nid with this bit names a slot in the metabox inode's data. */
#define EROFS_NID_METABOX_BIT		(1ull << 63)

/*
 * Long xattr name prefixes: name index 0x80 | n stands for prefix n of a
 * table of xattr_prefix_count records, each at a 4-byte aligned offset: u16
 * length, then the base (short) prefix's index and the infix that follows
 * it.  The table lies at byte xattr_prefix_start * 4 of the packed inode's
 * data when the image has one, else of the image (COMPAT_PLAIN_XATTR_PFX).
 */
#define EROFS_XATTR_LONG_PREFIX		0x80u
#define EROFS_XATTR_LONG_PREFIX_MASK	0x7Fu
#define EROFS_XATTR_LONG_PREFIX_MAX	128u

/* i_format: bit 0 version, bits 1..3 data layout; 6.1 rejects higher bits */
#define EROFS_I_VERSION_MASK		0x0001u
#define EROFS_I_LAYOUT_SHIFT		1u
#define EROFS_I_LAYOUT_MASK		0x0007u
#define EROFS_I_FORMAT_KNOWN		0x000Fu

enum erofs_inode_version {
	EROFS_INODE_COMPACT = 0,	/* 32 bytes */
	EROFS_INODE_EXTENDED = 1,	/* 64 bytes */
};

#define EROFS_COMPACT_INODE_SIZE	32u
#define EROFS_EXTENDED_INODE_SIZE	64u

enum erofs_data_layout {
	EROFS_LAYOUT_FLAT_PLAIN = 0,
	EROFS_LAYOUT_COMPRESSED_FULL = 1,
	EROFS_LAYOUT_FLAT_INLINE = 2,
	EROFS_LAYOUT_COMPRESSED_COMPACT = 3,
	EROFS_LAYOUT_CHUNK_BASED = 4,
};

/* directory entry file types (the kernel's FT_* numbering) */
enum erofs_file_type {
	EROFS_FT_UNKNOWN = 0,
	EROFS_FT_REG_FILE = 1,
	EROFS_FT_DIR = 2,
	EROFS_FT_CHRDEV = 3,
	EROFS_FT_BLKDEV = 4,
	EROFS_FT_FIFO = 5,
	EROFS_FT_SOCK = 6,
	EROFS_FT_SYMLINK = 7,
	EROFS_FT_MAX = 8,
};

#define EROFS_DIRENT_SIZE		12u

/* xattrs */
#define EROFS_XATTR_IBODY_HEADER_SIZE	12u
#define EROFS_XATTR_ENTRY_HEADER_SIZE	4u
#define EROFS_XATTR_ALIGN		4u
#define EROFS_XATTR_MAX_SHARED		255u	/* h_shared_count is a u8 */
#define EROFS_XATTR_MAX_VALUE		65535u	/* e_value_size is a u16 */

enum erofs_xattr_index {
	EROFS_XATTR_INDEX_NONE = 0,	/* full name stored, hidden from the kernel */
	EROFS_XATTR_INDEX_USER = 1,
	EROFS_XATTR_INDEX_POSIX_ACL_ACCESS = 2,
	EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT = 3,
	EROFS_XATTR_INDEX_TRUSTED = 4,
	EROFS_XATTR_INDEX_LUSTRE = 5,
	EROFS_XATTR_INDEX_SECURITY = 6,
};

/* compression (Z_EROFS) */
#define EROFS_COMPR_LZ4			0u	/* algorithm ids */
#define EROFS_COMPR_LZMA		1u	/* MicroLZMA, Linux 5.16 */
#define EROFS_COMPR_DEFLATE		2u	/* raw DEFLATE, Linux 6.6 */
#define EROFS_COMPR_ZSTD		3u	/* zstd frames, Linux 6.10 */
#define EROFS_COMPR_MAX			4u
/* payloads of the config records after the superblock (each after a u16 length) */
#define EROFS_COMPR_CFG_LZ4_SIZE	14u	/* le16 max_distance, le16 max_pclusterblks */
#define EROFS_COMPR_CFG_LZMA_SIZE	14u	/* le32 dict_size, le16 format (0) */
#define EROFS_COMPR_CFG_DEFLATE_SIZE	6u	/* u8 windowbits (<= 15) */
#define EROFS_COMPR_CFG_ZSTD_SIZE	6u	/* u8 format (0), u8 windowlog - 10 */
#define EROFS_LZMA_MAX_DICT_SIZE	(8u << 20)
#define EROFS_ZSTD_MAX_DICT_SIZE	(1u << 20)
#define EROFS_PCLUSTER_MAX_SIZE		(1u << 20)
#define EROFS_EXTENT_DECODED_MAX	(12u << 20)	/* Linux: what one extent may decode to */
#define EROFS_ZMAP_HEADER_SIZE		8u
#define EROFS_LCLUSTER_INDEX_SIZE	8u	/* a full (non-compact) index entry */

/* h_advise bits of the map header */
#define EROFS_ZADVISE_COMPACTED_2B	0x0001u
#define EROFS_ZADVISE_EXTENTS		0x0001u	/* COMPRESSED_FULL + 48-bit: extent records */
#define EROFS_ZADVISE_BIG_PCLUSTER_1	0x0002u
#define EROFS_ZADVISE_BIG_PCLUSTER_2	0x0004u
#define EROFS_ZADVISE_INLINE_PCLUSTER	0x0008u
#define EROFS_ZADVISE_INTERLACED	0x0010u
#define EROFS_ZADVISE_FRAGMENT		0x0020u
#define EROFS_ZADVISE_EXTRECSZ_SHIFT	1u	/* with EXTENTS: record size 4 << bits 1..2 */
#define EROFS_ZADVISE_EXTRECSZ_MASK	0x3u

/*
 * Extent records (48-bit): u32 plen, then pstart_lo, pstart_hi, lstart_lo,
 * lstart_hi, 12 reserved bytes, cut to the record size (4, 8, 16 or 32).
 * Physical starts are byte addresses.
 */
#define EROFS_EXTENT_MAX_SIZE		32u
#define EROFS_EXTENT_PLEN_MASK		((EROFS_PCLUSTER_MAX_SIZE << 1) - 1u)
#define EROFS_EXTENT_PLEN_PARTIAL	(1u << 27)
#define EROFS_EXTENT_PLEN_FMT_SHIFT	28u	/* 0 raw, otherwise algorithm + 1 */
#define EROFS_PCLUSTER_MAX_DSIZE	(12u << 20)	/* longest decoded extent */

enum erofs_lcluster_type {
	EROFS_LCLUSTER_PLAIN = 0,	/* head of an uncompressed pcluster */
	EROFS_LCLUSTER_HEAD1 = 1,	/* head of a compressed pcluster */
	EROFS_LCLUSTER_NONHEAD = 2,	/* continues the extent of an earlier head */
	EROFS_LCLUSTER_HEAD2 = 3,
};

#define EROFS_LI_PARTIAL_REF		0x8000u	/* full index, head: partial reference */
#define EROFS_LI_D0_CBLKCNT		0x0800u	/* first nonhead: delta[0] holds the block count */
#define EROFS_LI_DELTA_MAX		(EROFS_LI_D0_CBLKCNT - 1u)

/*
 * Bits of an entry's value in a compact index pack: lclusterbits, but never
 * fewer than CBLKCNT's flag needs (sub-page blocks, Linux 6.8+; Linux 6.1
 * reads compact indexes of 4 KiB lclusters only, where both are 12).
 */
static inline unsigned int erofs_compact_lobits(unsigned int lclusterbits)
{
	return lclusterbits > 12 ? lclusterbits : 12;
}

/*
 * The superblock, decoded, raw: see erofs_super_root_nid() and
 * erofs_super_blocks() for the 48-bit reading of root_nid and blocks.
 */
struct erofs_super {
	uint32_t magic;
	uint32_t checksum;
	uint32_t feature_compat;
	uint8_t blkszbits;
	uint8_t sb_extslots;
	uint16_t root_nid;		/* rootnid_2b, or blocks_hi when rootnid_8b != 0 */
	uint64_t inos;
	uint64_t build_time;		/* "epoch" in 48-bit images */
	uint32_t build_time_nsec;
	uint32_t blocks;
	uint32_t meta_blkaddr;
	uint32_t xattr_blkaddr;
	uint8_t uuid[16];
	uint8_t volume_name[16];
	uint32_t feature_incompat;
	uint16_t u1;		/* available_compr_algs or lz4_max_distance */
	uint16_t extra_devices;
	uint16_t devt_slotoff;
	uint8_t dirblkbits;
	uint8_t xattr_prefix_count;	/* long xattr name prefixes (Linux 6.4) */
	uint32_t xattr_prefix_start;	/* their table's byte offset / 4 */
	uint64_t packed_nid;
	uint8_t xattr_filter_reserved;	/* must be 0 for the name filter to be used */
	uint8_t ishare_xattr_prefix_id;	/* COMPAT_ISHARE_XATTRS: the digest's long prefix */
	uint32_t build_time_delta;	/* 48-bit: mkfs time - epoch (offset 0x6C) */
	uint64_t rootnid_8b;		/* 48-bit: the root nid, when non-zero */
	uint64_t metabox_nid;		/* extension slot 1: the metabox inode */
};

static inline bool erofs_super_has_rootnid_8b(const struct erofs_super *sb)
{
	return (sb->feature_incompat & EROFS_INCOMPAT_48BIT) && sb->rootnid_8b;
}

static inline uint64_t erofs_super_root_nid(const struct erofs_super *sb)
{
	return erofs_super_has_rootnid_8b(sb) ? sb->rootnid_8b : sb->root_nid;
}

static inline uint64_t erofs_super_blocks(const struct erofs_super *sb)
{
	return erofs_super_has_rootnid_8b(sb) ? (uint64_t)sb->root_nid << 32 | sb->blocks
					      : sb->blocks;
}

/* The device table: 128-byte slots (a 64-byte tag, blocks, mapped_blkaddr) */
#define EROFS_DEVT_SLOT_BYTES		128u
#define EROFS_DEVT_SLOT_BLOCKS		64u	/* offsets inside a slot */
#define EROFS_DEVT_SLOT_MAPPED		68u
#define EROFS_DEVT_SLOT_BLOCKS_HI	72u	/* 48-bit: le32 */
#define EROFS_DEVT_SLOT_MAPPED_HI	76u	/* 48-bit: le16 */

/* Offsets inside the 128-byte superblock that code other than the codec needs. */
#define EROFS_SB_CHECKSUM_OFFSET	4u

/* An inode core, decoded; the same record serves compact and extended forms. */
struct erofs_dinode {
	uint16_t format;		/* raw i_format */
	uint16_t xattr_icount;
	uint16_t mode;
	uint64_t size;
	uint32_t u;			/* raw_blkaddr, rdev, compressed_blocks, chunk format */
	uint32_t ino;
	uint32_t uid;
	uint32_t gid;
	int64_t mtime;			/* extended only */
	uint32_t mtime_nsec;		/* extended only */
	uint32_t nlink;			/* compact: i_nb as is, even with NLINK_1 */
	uint16_t nb_hi;			/* extended, 48-bit: i_nb, the high address bits */
	uint32_t compact_mtime;		/* compact, 48-bit: mtime - epoch */
};

struct erofs_dirent {
	uint64_t nid;
	uint16_t nameoff;
	uint8_t file_type;
};

struct erofs_xattr_entry {
	uint8_t name_len;
	uint8_t name_index;
	uint16_t value_size;
};

static inline unsigned int erofs_inode_version(uint16_t format)
{
	return format & EROFS_I_VERSION_MASK;
}

static inline unsigned int erofs_inode_layout(uint16_t format)
{
	return (format >> EROFS_I_LAYOUT_SHIFT) & EROFS_I_LAYOUT_MASK;
}

static inline uint16_t erofs_inode_format(unsigned int version, unsigned int layout)
{
	return (uint16_t)(version | (layout << EROFS_I_LAYOUT_SHIFT));
}

static inline unsigned int erofs_inode_core_size(unsigned int version)
{
	return version == EROFS_INODE_EXTENDED ? EROFS_EXTENDED_INODE_SIZE
					       : EROFS_COMPACT_INODE_SIZE;
}

/* Size of the inline xattr region for a given i_xattr_icount. */
static inline unsigned int erofs_xattr_ibody_size(uint16_t icount)
{
	return icount ? EROFS_XATTR_IBODY_HEADER_SIZE + 4u * (icount - 1u) : 0;
}

static inline unsigned int erofs_xattr_entry_size(unsigned int name_len,
						  unsigned int value_size)
{
	unsigned int raw = EROFS_XATTR_ENTRY_HEADER_SIZE + name_len + value_size;

	return (raw + EROFS_XATTR_ALIGN - 1) & ~(EROFS_XATTR_ALIGN - 1);
}

/* rdev as the kernel's new_decode_dev() expects it */
static inline uint32_t erofs_encode_rdev(uint32_t major, uint32_t minor)
{
	return (minor & 0xffu) | (major << 8) | ((minor & ~0xffu) << 12);
}

static inline void erofs_decode_rdev(uint32_t rdev, uint32_t *major, uint32_t *minor)
{
	*major = (rdev & 0xfff00u) >> 8;
	*minor = (rdev & 0xffu) | ((rdev >> 12) & 0xfff00u);
}

#endif
