// SPDX-License-Identifier: MIT
/*
 * Unit tests for the read layer (lib/read/): the superblock and the
 * inodes with their data, in images crafted in memory with the on-disk
 * codecs (reader-img.h).  Every rejection is checked for its return code
 * and for the words of its message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "reader-img.h"
#include "unit.h"

/* ------------------------------------------------------------------ */
/* superblock                                                          */

static void test_super(void)
{
	struct erofs_reader r;
	struct img m;

	img_init(&m, 4);
	m.csum = true;
	CHECK(img_open(&m, &r) == 0);
	CHECK(r.blksz == BLK && r.size == 4 * BLK);

	/* checksum covers the rest of block 0 */
	m.b[3000] ^= 1;
	erofs_super_encode(&m.sb, m.b + EROFS_SUPER_OFFSET);
	EXPECT_ERR(erofs_reader_open_mem(&r, m.b, m.size), -EUCLEAN, "checksum", &r);
	m.b[3000] ^= 1;
	CHECK(img_open(&m, &r) == 0);
	m.csum = false;
	m.sb.feature_compat = EROFS_COMPAT_MTIME;

	m.sb.magic = 0x12345678;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "magic", &r);
	m.sb.magic = EROFS_MAGIC;

	m.sb.blkszbits = 8;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "block size", &r);
	m.sb.blkszbits = 13;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "block size", &r);
	m.sb.blkszbits = 12;

	/* long xattr prefixes are read (their table only when an xattr uses one) */
	m.sb.feature_incompat = 0x40;
	CHECK(img_open(&m, &r) == 0);
	erofs_reader_close(&r);
	/* 48-bit and metabox images are read; a metabox needs its nid's slot */
	m.sb.feature_incompat = 0x180 | EROFS_INCOMPAT_ZERO_PADDING;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN,
		   "the metabox feature, but no extension slot for its nid (sb_extslots 0)", &r);
	m.sb.feature_incompat = 0x100 | EROFS_INCOMPAT_ZERO_PADDING;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "the metabox feature without the 48bit feature", &r);
	m.sb.feature_incompat = 0x80000000u;
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "features: unknown bits 0x80000000", &r);
	m.sb.feature_incompat = EROFS_INCOMPAT_LINUX_6_1;
	CHECK(img_open(&m, &r) == 0);
	m.sb.feature_incompat = 0;

	m.sb.dirblkbits = 1;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "dirblkbits", &r);
	m.sb.dirblkbits = 0;

	m.sb.sb_extslots = 255;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "sb_extslots", &r);
	m.sb.sb_extslots = 0;

	memset(m.sb.volume_name, 'A', 16);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "volume name", &r);
	memset(m.sb.volume_name, 'A', 15);
	m.sb.volume_name[15] = 0;
	CHECK(img_open(&m, &r) == 0);

	m.sb.blocks = 5;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "truncated", &r);
	m.sb.blocks = 0;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "block count", &r);
	m.sb.blocks = 4;

	m.sb.meta_blkaddr = 4;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "meta_blkaddr", &r);
	m.sb.meta_blkaddr = 0xFFFFFFFF;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "meta_blkaddr", &r);
	m.sb.meta_blkaddr = 0;
	m.sb.xattr_blkaddr = 9;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "xattr_blkaddr", &r);
	m.sb.xattr_blkaddr = 0;
	m.sb.meta_blkaddr = 3;
	m.sb.root_nid = 200;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "root nid", &r);
	m.sb.meta_blkaddr = 0;
	m.sb.root_nid = ROOT;

	m.sb.build_time_nsec = 1000000000u;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "build_time_nsec", &r);
	m.sb.build_time_nsec = 0;

	m.sb.feature_incompat = EROFS_INCOMPAT_DEVICE_TABLE;
	m.sb.extra_devices = 1;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "device table", &r);	/* slot 0: the superblock */
	m.sb.devt_slotoff = 9;		/* 1152: right after the superblock */
	CHECK(img_open(&m, &r) == 0);
	CHECK(r.nr_devs == 1 && r.device_id_mask == 1 && r.devs[0].fd == -1);
	erofs_reader_close(&r);
	m.sb.devt_slotoff = 0xFFFF;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "device table", &r);
	m.sb.devt_slotoff = 0;
	m.sb.feature_incompat = 0;
	CHECK(img_open(&m, &r) == 0);	/* extra_devices ignored without the bit */
	m.sb.extra_devices = 0;

	img_seal(&m);
	EXPECT_ERR(erofs_reader_open_mem(&r, m.b, 1100), -EUCLEAN, "too small", &r);
	EXPECT_ERR(erofs_reader_open_mem(&r, m.b, 0), -EUCLEAN, "too small", &r);
	/* a file longer than the filesystem: the tail is outside */
	CHECK(erofs_reader_open_mem(&r, m.b, m.size) == 0);
	free(m.b);

	img_init(&m, 1);	/* one 4 KiB block */
	m.sb.blocks = 2;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "truncated", &r);
	free(m.b);
}

/* ------------------------------------------------------------------ */
/* inodes and data                                                     */

static void test_inodes(void)
{
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	uint8_t buf[3 * BLK];
	char lnk[EROFS_SYMLINK_MAXLEN + 1];
	struct img m;
	uint8_t *p;

	img_init(&m, 8);
	CHECK(img_open(&m, &r) == 0);

	EXPECT_ERR(erofs_read_inode(&r, 1ull << 60, &vi), -EUCLEAN, "out of range", &r);
	EXPECT_ERR(erofs_read_inode(&r, UINT64_MAX, &vi), -EUCLEAN, "the image has no metabox", &r);
	EXPECT_ERR(erofs_read_inode(&r, 8 * BLK / 32, &vi), -EUCLEAN, "out of range", &r);

	/* a regular file, FLAT_PLAIN, two blocks at block 4 */
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 5000, 4, false);
	memset(m.b + 4 * BLK, 'x', BLK);
	memset(m.b + 5 * BLK, 'y', BLK);
	CHECK(erofs_read_inode(&r, 40, &vi) == 0);
	CHECK(erofs_read_data(&r, &vi, buf, 5000, 0) == 0);
	CHECK(buf[0] == 'x' && buf[4095] == 'x' && buf[4096] == 'y' && buf[4999] == 'y');
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, 2, 4999), -EINVAL, "beyond i_size", &r);

	/* the same with blocks past the end, also with overflowing sizes */
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 5000, 7, false);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "beyond the end", &r);
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 1ull << 62, 1, true);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "beyond the end", &r);
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 4096, 0xFFFFFFFE, true);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "beyond the end", &r);
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 1ull << 63, 1, true);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "negative i_size", &r);
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0xFFFFFFFF, false);
	CHECK(erofs_read_inode(&r, 40, &vi) == 0);	/* empty: no block needed */

	/* i_format, layout, mode, nlink */
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	put_le16(m.b + 40 * 32, 0x10);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EOPNOTSUPP, "i_format 0x0010", &r);
	put_le16(m.b + 40 * 32, erofs_inode_format(0, 5));
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EOPNOTSUPP, "layout 5", &r);
	put_inode(&m, 40, 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "bogus file type", &r);
	put_inode(&m, 40, 0170644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "bogus file type", &r);
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	put_le16(m.b + 40 * 32 + 6, 0);
	EXPECT_ERR(erofs_read_inode(&r, 40, &vi), -EUCLEAN, "link count is 0", &r);

	/* an extended inode in the last slot of the image */
	put_inode(&m, 8 * BLK / 32 - 1, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	m.b[8 * BLK - 32] |= 1;
	EXPECT_ERR(erofs_read_inode(&r, 8 * BLK / 32 - 1, &vi), -EUCLEAN, "extended inode", &r);
	m.b[8 * BLK - 32] &= (uint8_t)~1;
	CHECK(erofs_read_inode(&r, 8 * BLK / 32 - 1, &vi) == 0);

	/* xattr ibody beyond the end of the image */
	put_inode(&m, 8 * BLK / 32 - 2, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	put_le16(m.b + 8 * BLK - 64 + 2, 10);	/* 48 bytes of xattrs: past the end */
	EXPECT_ERR(erofs_read_inode(&r, 8 * BLK / 32 - 2, &vi), -EUCLEAN, "inline xattrs", &r);

	/* FLAT_INLINE: tail after the inode, inside its block */
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_INLINE, 4096 + 10, 4, false);
	memcpy(m.b + 40 * 32 + 32, "0123456789", 10);
	CHECK(erofs_read_inode(&r, 40, &vi) == 0);
	CHECK(erofs_read_data(&r, &vi, buf, 4106, 0) == 0);
	CHECK(buf[0] == 'x' && !memcmp(buf + 4096, "0123456789", 10));
	CHECK(erofs_map_blocks(&r, &vi, 4100, &map) == 0);
	CHECK(map.la == 4096 && map.llen == 10 && (map.flags & EROFS_MAP_META));
	/* the tail may end exactly at the block end, not one byte further */
	put_inode(&m, 126, S_IFREG | 0644, EROFS_LAYOUT_FLAT_INLINE, 32, 0, false);
	CHECK(erofs_read_inode(&r, 126, &vi) == 0);
	put_inode(&m, 126, S_IFREG | 0644, EROFS_LAYOUT_FLAT_INLINE, 33, 0, false);
	EXPECT_ERR(erofs_read_inode(&r, 126, &vi), -EUCLEAN, "crosses a block boundary", &r);
	/* an inode in the last slot of a block: its tail starts the next block */
	put_inode(&m, 127, S_IFREG | 0644, EROFS_LAYOUT_FLAT_INLINE, 7, 0, false);
	memcpy(m.b + BLK, "nextblk", 7);
	CHECK(erofs_read_inode(&r, 127, &vi) == 0 && vi.inline_pos == BLK);
	CHECK(erofs_read_data(&r, &vi, buf, 7, 0) == 0 && !memcmp(buf, "nextblk", 7));

	/* CHUNK_BASED, 4-byte block map, 4 KiB chunks: block 4, hole, block 5 */
	put_inode(&m, 50, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, 3 * BLK, 0, false);
	p = m.b + 50 * 32 + 32;
	put_le32(p, 4);
	put_le32(p + 4, EROFS_NULL_ADDR);
	put_le32(p + 8, 5);
	CHECK(erofs_read_inode(&r, 50, &vi) == 0);
	CHECK(erofs_read_data(&r, &vi, buf, 3 * BLK, 0) == 0);
	CHECK(buf[0] == 'x' && buf[BLK] == 0 && buf[2 * BLK - 1] == 0 && buf[2 * BLK] == 'y');
	CHECK(erofs_map_blocks(&r, &vi, BLK + 5, &map) == 0);
	CHECK(map.la == BLK && map.llen == BLK && !(map.flags & EROFS_MAP_MAPPED));
	put_le32(p + 8, 8);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, 3 * BLK, 0), -EUCLEAN, "chunk 2 at block 8", &r);
	put_le32(p + 8, 0xFFFFFFFE);
	EXPECT_ERR(erofs_map_blocks(&r, &vi, 2 * BLK, &map), -EUCLEAN, "beyond the end", &r);
	/* unknown chunk format bits, reserved bits, a table past the end */
	put_inode(&m, 50, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, 3 * BLK, 0x40, false);
	EXPECT_ERR(erofs_read_inode(&r, 50, &vi), -EOPNOTSUPP, "chunk format", &r);
	put_inode(&m, 50, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, 3 * BLK, 0x10000, false);
	EXPECT_ERR(erofs_read_inode(&r, 50, &vi), -EUCLEAN, "reserved chunk", &r);
	put_inode(&m, 50, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, 1ull << 62, 0, true);
	EXPECT_ERR(erofs_read_inode(&r, 50, &vi), -EUCLEAN, "chunk table", &r);
	/* huge chunks: one entry covering a sparse 2^40-byte file */
	put_inode(&m, 50, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, 1ull << 40, 31, true);
	put_le32(m.b + 50 * 32 + 64, EROFS_NULL_ADDR);
	CHECK(erofs_read_inode(&r, 50, &vi) == 0);
	CHECK(vi.nchunks == 1);
	CHECK(erofs_map_blocks(&r, &vi, (1ull << 40) - 1, &map) == 0);
	CHECK(map.la == 0 && map.llen == 1ull << 40 && !map.flags);
	put_le32(m.b + 50 * 32 + 64, 1);	/* but mapped, it cannot fit */
	EXPECT_ERR(erofs_map_blocks(&r, &vi, 0, &map), -EUCLEAN, "beyond the end", &r);

	/* 8-byte chunk indexes: table aligned to 8, device ids refused */
	put_inode(&m, 60, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, BLK,
		  EROFS_CHUNK_FORMAT_INDEXES, false);
	p = m.b + 60 * 32 + 32;
	memset(p, 0, 8);
	put_le32(p + 4, 4);
	CHECK(erofs_read_inode(&r, 60, &vi) == 0);
	CHECK(vi.chunk_table == 60 * 32 + 32 && vi.chunk_unit == 8);
	CHECK(erofs_read_data(&r, &vi, buf, BLK, 0) == 0 && buf[7] == 'x');
	put_le16(p + 2, 1);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, BLK, 0), -EUCLEAN, "device 1", &r);
	put_le16(p + 2, 0);
	put_le16(p, 7);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, BLK, 0), -EUCLEAN, "reserved index", &r);

	/* compressed layouts (test-reader-compressed.c has more): an all-zero compact
	 * index is one uncompressed extent in block 0 + 1 (the kernel counts
	 * the pack's head on from the stored block), and an all-zero full
	 * index puts it in block 0, over the superblock */
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT, 100, 1, false);
	memset(m.b + 70 * 32 + 32, 0, 64);
	memset(m.b + BLK, 'c', 100);
	CHECK(erofs_read_inode(&r, 70, &vi) == 0);
	CHECK(vi.z_index == 70 * 32 + 40 && vi.z_nlclusters == 1 && vi.z_blocks == 1);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0);
	CHECK(map.la == 0 && map.llen == 100 && map.pa == BLK && map.plen == BLK &&
	      map.flags == EROFS_MAP_MAPPED);
	CHECK(erofs_read_data(&r, &vi, buf, 100, 0) == 0 && buf[0] == 'c' && buf[99] == 'c');
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 100, 1, false);
	erofs_reader_close(&r);	/* drops the cached mapping of nid 70 */
	CHECK(erofs_read_inode(&r, 70, &vi) == 0);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.pa == 0);
	/* compressed files need 4 KiB blocks */
	erofs_reader_close(&r);

	/* symlinks */
	put_inode(&m, 80, S_IFLNK | 0777, EROFS_LAYOUT_FLAT_INLINE, 5, 0, false);
	memcpy(m.b + 80 * 32 + 32, "a/b/c", 5);
	CHECK(erofs_read_inode(&r, 80, &vi) == 0);
	CHECK(erofs_read_symlink(&r, &vi, lnk, sizeof(lnk)) == 0 && !strcmp(lnk, "a/b/c"));
	m.b[80 * 32 + 34] = 0;
	EXPECT_ERR(erofs_read_symlink(&r, &vi, lnk, sizeof(lnk)), -EUCLEAN, "NUL", &r);
	put_inode(&m, 80, S_IFLNK | 0777, EROFS_LAYOUT_FLAT_INLINE, 0, 0, false);
	EXPECT_ERR(erofs_read_inode(&r, 80, &vi), -EUCLEAN, "symlink target length", &r);
	put_inode(&m, 80, S_IFLNK | 0777, EROFS_LAYOUT_FLAT_PLAIN, 4096, 4, false);
	EXPECT_ERR(erofs_read_inode(&r, 80, &vi), -EUCLEAN, "symlink target length", &r);
	put_inode(&m, 80, S_IFLNK | 0777, EROFS_LAYOUT_FLAT_PLAIN, 4095, 4, false);
	CHECK(erofs_read_inode(&r, 80, &vi) == 0);
	CHECK(erofs_read_symlink(&r, &vi, lnk, sizeof(lnk)) == 0 && strlen(lnk) == 4095);

	/* devices carry rdev, not a block address: no data checks */
	put_inode(&m, 90, S_IFCHR | 0600, EROFS_LAYOUT_FLAT_PLAIN, 0,
		  erofs_encode_rdev(1, 3), false);
	CHECK(erofs_read_inode(&r, 90, &vi) == 0);
	EXPECT_ERR(erofs_map_blocks(&r, &vi, 0, &map), -EINVAL, "no data", &r);

	/* directories too small for the dot entries */
	put_inode(&m, 90, S_IFDIR | 0755, EROFS_LAYOUT_FLAT_INLINE, 10, 0, false);
	EXPECT_ERR(erofs_read_inode(&r, 90, &vi), -EUCLEAN, "too small", &r);

	/* extended inode: own mtime; compact: the build time */
	m.sb.build_time = 1234;
	m.sb.build_time_nsec = 5;
	CHECK(img_open(&m, &r) == 0);
	put_inode(&m, 90, S_IFIFO | 0600, 0, 0, 0, false);
	CHECK(erofs_read_inode(&r, 90, &vi) == 0 && vi.mtime == 1234 && vi.mtime_nsec == 5);
	put_inode(&m, 90, S_IFIFO | 0600, 0, 0, 0, true);
	put_le64(m.b + 90 * 32 + 0x20, (uint64_t)-5);
	put_le32(m.b + 90 * 32 + 0x28, 999999999);
	CHECK(erofs_read_inode(&r, 90, &vi) == 0 && vi.mtime == -5 && vi.mtime_nsec == 999999999);
	put_le32(m.b + 90 * 32 + 0x28, 1000000000);
	EXPECT_ERR(erofs_read_inode(&r, 90, &vi), -EUCLEAN, "nanoseconds", &r);
	free(m.b);
}

int main(void)
{
	test_super();
	test_inodes();
	return unit_summary("test-reader-super");
}
