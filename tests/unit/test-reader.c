// SPDX-License-Identifier: MIT
/*
 * Unit tests for the read layer (lib/read/): images and directory blocks are crafted in
 * memory with the on-disk codecs, then fed to the reader.  Every rejection
 * is checked for its return code and for the words of its message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lz4.h>

#include "erofs/check/check.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "unit.h"

/* err is the expected return, words a substring of the message */
#define EXPECT_ERR(expr, err, words, r) do {				\
	int ret_ = (expr);						\
	checks++;							\
	if (ret_ != (err) || !strstr(erofs_reader_error(r), (words))) {	\
		failures++;						\
		fprintf(stderr, "%s:%d: %s returned %d (\"%s\"), "	\
			"expected %d with \"%s\"\n", __FILE__, __LINE__,\
			#expr, ret_, erofs_reader_error(r), (err), (words)); \
	}								\
} while (0)

/* ------------------------------------------------------------------ */
/* a tiny in-memory image: 4 KiB blocks, metadata from block 0          */

#define BLK	4096u
#define ROOT	36u	/* nid of the root, right after the superblock */

struct img {
	uint8_t *b;
	size_t size;
	struct erofs_super sb;
	bool csum;
};

static void img_init(struct img *m, unsigned int nblocks)
{
	m->size = (size_t)nblocks * BLK;
	m->b = calloc(1, m->size);
	memset(&m->sb, 0, sizeof(m->sb));
	m->sb.magic = EROFS_MAGIC;
	m->sb.blkszbits = 12;
	m->sb.root_nid = ROOT;
	m->sb.blocks = nblocks;
	m->sb.feature_compat = EROFS_COMPAT_MTIME;
	m->sb.inos = 1;
	m->csum = false;
}

static void img_seal(struct img *m)
{
	if (m->csum)
		m->sb.feature_compat |= EROFS_COMPAT_SB_CHKSUM;
	erofs_super_encode(&m->sb, m->b + EROFS_SUPER_OFFSET);
	if (m->csum) {
		size_t span = erofs_sb_checksum_span(12);

		put_le32(m->b + EROFS_SUPER_OFFSET + EROFS_SB_CHECKSUM_OFFSET,
			 erofs_sb_checksum(m->b + EROFS_SUPER_OFFSET, span));
	}
}

static int img_open(struct img *m, struct erofs_reader *r)
{
	img_seal(m);
	return erofs_reader_open_mem(r, m->b, m->size);
}

static void put_inode(struct img *m, uint64_t nid, uint16_t mode, unsigned int layout,
		      uint64_t size, uint32_t u, bool extended)
{
	struct erofs_dinode di;

	memset(&di, 0, sizeof(di));
	di.format = erofs_inode_format(extended ? EROFS_INODE_EXTENDED : EROFS_INODE_COMPACT,
				       layout);
	di.mode = mode;
	di.size = size;
	di.u = u;
	di.nlink = S_ISDIR(mode) ? 2 : 1;
	erofs_dinode_encode(&di, m->b + nid * 32);
}

struct ent {
	uint64_t nid;
	const char *name;
	uint8_t ft;
};

/* Encodes a directory block of entries (already sorted); returns bytes used. */
static unsigned int put_dirblock(uint8_t *blk, const struct ent *e, unsigned int n)
{
	unsigned int i, off = n * EROFS_DIRENT_SIZE;

	for (i = 0; i < n; i++) {
		struct erofs_dirent de = { e[i].nid, (uint16_t)off, e[i].ft };
		size_t len = strlen(e[i].name);

		erofs_dirent_encode(&de, blk + i * EROFS_DIRENT_SIZE);
		memcpy(blk + off, e[i].name, len);
		off += (unsigned int)len;
	}
	return off;
}

/* root directory inline right after its inode; returns the dir size */
static unsigned int put_root(struct img *m, const struct ent *e, unsigned int n)
{
	uint8_t blk[BLK];
	unsigned int used;

	memset(blk, 0, sizeof(blk));
	used = put_dirblock(blk, e, n);
	put_inode(m, ROOT, S_IFDIR | 0755, EROFS_LAYOUT_FLAT_INLINE, used, 0, false);
	memcpy(m->b + ROOT * 32 + 32, blk, used);
	return used;
}

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

	/* compressed layouts (test_compressed() has more): an all-zero compact
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

/* ------------------------------------------------------------------ */
/* directory blocks                                                    */

struct seen {
	unsigned int n;
	char names[16][256];
	uint64_t nids[16];
};

static int record(void *arg, const struct erofs_rd_dentry *de)
{
	struct seen *s = arg;

	if (s->n < 16) {
		memcpy(s->names[s->n], de->name, de->namelen);
		s->names[s->n][de->namelen] = '\0';
		s->nids[s->n] = de->nid;
	}
	s->n++;
	return 0;
}

/* parses one block of entries; 0 or the error, message in err */
static int parse(const struct ent *e, unsigned int n, unsigned int maxsize,
		 struct seen *s, char *err)
{
	uint8_t blk[BLK];
	struct erofs_dir_cursor cur;
	unsigned int used;
	int ret;

	memset(blk, 0, sizeof(blk));
	memset(s, 0, sizeof(*s));
	used = put_dirblock(blk, e, n);
	erofs_dir_cursor_init(&cur, 10, 5);
	err[0] = '\0';
	ret = erofs_dirblock_parse(blk, maxsize ? maxsize : used, BLK, &cur, record, s,
				   err, 256);
	if (!ret)
		ret = erofs_dir_cursor_finish(&cur, err, 256);
	return ret;
}

#define EXPECT_DIR(call, words) do {					\
	int ret_ = (call);						\
	checks++;							\
	if (ret_ != -EUCLEAN || !strstr(err, (words))) {		\
		failures++;						\
		fprintf(stderr, "%s:%d: got %d \"%s\", expected \"%s\"\n", \
			__FILE__, __LINE__, ret_, err, (words));	\
	}								\
} while (0)

static void test_dirents(void)
{
	const struct ent ok[] = {
		{ 10, ".", EROFS_FT_DIR }, { 5, "..", EROFS_FT_DIR },
		{ 20, "a", EROFS_FT_REG_FILE }, { 21, "ab", EROFS_FT_SYMLINK },
		{ 22, "b", EROFS_FT_DIR },
	};
	struct ent e[8];
	char err[256], longname[300];
	struct seen s;
	uint8_t blk[BLK];
	struct erofs_dir_cursor cur;
	unsigned int used;

	CHECK(parse(ok, 5, 0, &s, err) == 0);
	CHECK(s.n == 3 && !strcmp(s.names[0], "a") && !strcmp(s.names[1], "ab") &&
	      !strcmp(s.names[2], "b") && s.nids[2] == 22);
	/* the last name may end at the block end, or at a NUL before it */
	CHECK(parse(ok, 5, BLK, &s, err) == 0 && s.n == 3 && !strcmp(s.names[2], "b"));

	/* names sorted by bytes: "." < ".." < "-" is wrong, "-" (0x2d) < "." (0x2e) */
	memcpy(e, (struct ent[]){ { 30, "-x", 1 }, { 10, ".", 2 }, { 5, "..", 2 } },
	       3 * sizeof(*e));
	CHECK(parse(e, 3, 0, &s, err) == 0 && s.n == 1);

	memcpy(e, ok, sizeof(ok));
	e[2].name = "c";
	EXPECT_DIR(parse(e, 5, 0, &s, err), "not sorted");
	e[2].name = "ab";
	EXPECT_DIR(parse(e, 5, 0, &s, err), "duplicate");
	e[2].name = "a";
	e[0].nid = 11;
	EXPECT_DIR(parse(e, 5, 0, &s, err), "'.' points to nid 11");
	e[0].nid = 10;
	e[1].nid = 10;
	EXPECT_DIR(parse(e, 5, 0, &s, err), "'..' points to nid 10");
	e[1].nid = 5;
	e[1].ft = EROFS_FT_REG_FILE;
	EXPECT_DIR(parse(e, 5, 0, &s, err), "file type");
	e[1].ft = EROFS_FT_DIR;
	e[3].ft = EROFS_FT_MAX;
	EXPECT_DIR(parse(e, 5, 0, &s, err), "invalid file type");
	e[3].ft = EROFS_FT_SYMLINK;
	e[3].name = "a/b";
	EXPECT_DIR(parse(e, 5, 0, &s, err), "contains '/'");
	e[3].name = "ab";
	EXPECT_DIR(parse(e + 1, 4, 0, &s, err), "no '.'");
	memcpy(e, ok, sizeof(ok));
	e[1].name = "...";
	EXPECT_DIR(parse(e, 5, 0, &s, err), "no '..'");

	memset(longname, 'n', 256);
	longname[256] = '\0';
	memcpy(e, ok, sizeof(ok));
	e[4].name = longname;
	EXPECT_DIR(parse(e, 5, 0, &s, err), "name of 256 bytes");
	longname[255] = '\0';
	CHECK(parse(e, 5, 0, &s, err) == 0 && strlen(s.names[2]) == 255);

	/* raw nameoff damage */
	memset(blk, 0, sizeof(blk));
	used = put_dirblock(blk, ok, 5);
	erofs_dir_cursor_init(&cur, 10, 5);
	put_le16(blk + 8, 0);
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used, BLK, &cur, NULL, NULL, err, 256),
		   "invalid first nameoff 0");
	put_le16(blk + 8, 61);
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used, BLK, &cur, NULL, NULL, err, 256),
		   "invalid first nameoff 61");
	put_le16(blk + 8, 6);
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used, BLK, &cur, NULL, NULL, err, 256),
		   "invalid first nameoff 6");
	put_le16(blk + 8, 4092);	/* 341 entries would need more than the block */
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used, BLK, &cur, NULL, NULL, err, 256),
		   "invalid first nameoff");
	put_le16(blk + 8, 60);
	put_le16(blk + 12 + 8, 60);	/* empty name for "." */
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used, BLK, &cur, NULL, NULL, err, 256),
		   "bad nameoff 60");
	put_le16(blk + 12 + 8, 61);
	put_le16(blk + 24 + 8, 59);	/* going backwards */
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used, BLK, &cur, NULL, NULL, err, 256),
		   "bad nameoff");
	put_le16(blk + 24 + 8, 63);
	put_le16(blk + 48 + 8, 9000);	/* a nameoff past the block */
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, BLK, BLK, &cur, NULL, NULL, err, 256),
		   "next 9000");
	put_le16(blk + 48 + 8, (uint16_t)(used - 1));	/* the last name, cut off */
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, used - 1, BLK, &cur, NULL, NULL, err, 256),
		   "beyond the block");
	put_le16(blk + 48 + 8, (uint16_t)(used - 1));
	blk[used - 1] = 'b';
	blk[65] = 0;		/* a NUL inside "ab" (not the last name) */
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, BLK, BLK, &cur, NULL, NULL, err, 256),
		   "NUL");
	erofs_dir_cursor_init(&cur, 10, 5);
	EXPECT_DIR(erofs_dirblock_parse(blk, 8, BLK, &cur, NULL, NULL, err, 256),
		   "too short");

	/* order is checked across blocks through the cursor */
	{
		const struct ent b1[] = { { 10, ".", 2 }, { 5, "..", 2 }, { 20, "m", 1 } };
		const struct ent b2[] = { { 21, "c", 1 } };
		const struct ent b3[] = { { 21, "z", 1 } };
		uint8_t blk2[BLK];
		unsigned int u1, u2;

		memset(blk, 0, sizeof(blk));
		memset(blk2, 0, sizeof(blk2));
		u1 = put_dirblock(blk, b1, 3);
		u2 = put_dirblock(blk2, b2, 1);
		erofs_dir_cursor_init(&cur, 10, 5);
		CHECK(erofs_dirblock_parse(blk, BLK, BLK, &cur, NULL, NULL, err, 256) == 0);
		cur.blkno = 1;
		EXPECT_DIR(erofs_dirblock_parse(blk2, u2, BLK, &cur, NULL, NULL, err, 256),
			   "not sorted: 'c' after 'm'");
		erofs_dir_cursor_init(&cur, 10, 5);
		CHECK(erofs_dirblock_parse(blk, u1, BLK, &cur, NULL, NULL, err, 256) == 0);
		memset(blk2, 0, sizeof(blk2));
		u2 = put_dirblock(blk2, b3, 1);
		CHECK(erofs_dirblock_parse(blk2, u2, BLK, &cur, NULL, NULL, err, 256) == 0);
		CHECK(erofs_dir_cursor_finish(&cur, err, 256) == 0 && cur.nentries == 4);
	}

	/* names are shown escaped in messages */
	memcpy(e, ok, sizeof(ok));
	e[2].name = "\033[2J";
	e[3].name = "\033";
	EXPECT_DIR(parse(e, 5, 0, &s, err), "'\\x1b[2J' after '..'");
}

/* a whole directory through the image: two blocks, FLAT_PLAIN */
static void test_dir_iterate(void)
{
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct seen s;
	struct img m;
	const struct ent b1[] = { { ROOT, ".", 2 }, { ROOT, "..", 2 }, { 40, "a", 1 } };
	const struct ent b2[] = { { 40, "b", 1 } };
	unsigned int u2;

	img_init(&m, 8);
	memset(m.b + 4 * BLK, 0, 2 * BLK);
	put_dirblock(m.b + 4 * BLK, b1, 3);
	u2 = put_dirblock(m.b + 5 * BLK, b2, 1);
	put_inode(&m, ROOT, S_IFDIR | 0755, EROFS_LAYOUT_FLAT_PLAIN, BLK + u2, 4, false);
	CHECK(img_open(&m, &r) == 0);
	CHECK(erofs_read_inode(&r, ROOT, &vi) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(erofs_dir_iterate(&r, &vi, ROOT, record, &s) == 0);
	CHECK(s.n == 2 && !strcmp(s.names[1], "b"));
	memset(&s, 0, sizeof(s));
	EXPECT_ERR(erofs_dir_iterate(&r, &vi, 7, record, &s), -EUCLEAN, "'..' points", &r);

	/* an inline root: "." must be the root itself */
	{
		const struct ent e[] = { { ROOT, ".", 2 }, { ROOT, "..", 2 }, { 40, "x", 1 } };

		put_root(&m, e, 3);
		CHECK(erofs_read_inode(&r, ROOT, &vi) == 0);
		memset(&s, 0, sizeof(s));
		CHECK(erofs_dir_iterate(&r, &vi, ROOT, record, &s) == 0 && s.n == 1);
	}
	free(m.b);
}

/* ------------------------------------------------------------------ */
/* xattrs                                                              */

struct xseen {
	unsigned int n;
	char keys[8][300];
	char vals[8][64];
};

static int xrecord(void *arg, const struct erofs_rd_xattr *x)
{
	struct xseen *s = arg;

	if (s->n < 8) {
		snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s%.*s%s",
			 erofs_rd_xattr_prefix(x->index), (int)x->name_len, x->name,
			 x->shared ? " (shared)" : "");
		snprintf(s->vals[s->n], sizeof(s->vals[0]), "%.*s", (int)x->value_size,
			 (const char *)x->value);
	}
	s->n++;
	return 0;
}

static unsigned int put_xentry(uint8_t *p, unsigned int index, const char *name,
			       const char *value)
{
	struct erofs_xattr_entry e = { (uint8_t)strlen(name), (uint8_t)index,
				       (uint16_t)strlen(value) };

	erofs_xattr_entry_encode(&e, p);
	memcpy(p + 4, name, e.name_len);
	memcpy(p + 4 + e.name_len, value, e.value_size);
	return erofs_xattr_entry_size(e.name_len, e.value_size);
}

static void test_xattrs(void)
{
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct xseen s;
	struct img m;
	uint8_t *ib;
	unsigned int off, icount;
	uint32_t shared1;

	img_init(&m, 8);
	m.sb.xattr_blkaddr = 2;
	/* shared area at block 2: id 0 = trusted.t=v, id 3 = hidden, ... */
	off = put_xentry(m.b + 2 * BLK, EROFS_XATTR_INDEX_TRUSTED, "t", "v");
	put_xentry(m.b + 2 * BLK + off, 0, "btrfs.x", "1");

	/* inode 40: 2 shared ids, user.foo=bar, hidden, system.posix_acl_access */
	ib = m.b + 40 * 32 + 32;
	ib[4] = 2;
	put_le32(ib + 12, 0);
	put_le32(ib + 16, off / 4);
	off = 20;
	off += put_xentry(ib + off, EROFS_XATTR_INDEX_USER, "foo", "bar");
	off += put_xentry(ib + off, 0, "hidden.name", "zz");
	off += put_xentry(ib + off, EROFS_XATTR_INDEX_POSIX_ACL_ACCESS, "", "acl");
	icount = (off - 12) / 4 + 1;
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 0, 0, false);
	put_le16(m.b + 40 * 32 + 2, (uint16_t)icount);
	shared1 = get_le32(ib + 16);
	CHECK(img_open(&m, &r) == 0);
	CHECK(erofs_read_inode(&r, 40, &vi) == 0);
	CHECK(vi.xattr_isize == off);
	memset(&s, 0, sizeof(s));
	CHECK(erofs_xattr_iterate(&r, &vi, xrecord, &s) == 0);
	CHECK(s.n == 3);
	CHECK(!strcmp(s.keys[0], "trusted.t (shared)") && !strcmp(s.vals[0], "v"));
	CHECK(!strcmp(s.keys[1], "user.foo") && !strcmp(s.vals[1], "bar"));
	CHECK(!strcmp(s.keys[2], "system.posix_acl_access") && !strcmp(s.vals[2], "acl"));

	/* h_shared_count larger than the area (kernel gap G5) */
	ib[4] = 200;
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "200 shared xattrs", &r);
	ib[4] = 2;
	/* shared id past the end of the image */
	put_le32(ib + 16, 0x40000000);
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "shared xattr id", &r);
	put_le32(ib + 16, 0xFFFFFFFF);
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "shared xattr id", &r);
	put_le32(ib + 16, shared1);
	/* an entry whose value overruns the ibody */
	put_le16(ib + 20 + 2, 200);
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "overruns", &r);
	put_le16(ib + 20 + 2, 3);
	/* unknown index, ACL with a suffix, user. with no name, NUL in a name */
	ib[21] = 7;
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "name index 7", &r);
	ib[21] = 0x81;
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN,
		   "long prefix 1, but the image has 0", &r);
	ib[21] = EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT;
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "suffix", &r);
	ib[21] = EROFS_XATTR_INDEX_USER;
	ib[25] = 0;
	EXPECT_ERR(erofs_xattr_iterate(&r, &vi, xrecord, &s), -EUCLEAN, "NUL", &r);
	ib[25] = 'o';
	memset(&s, 0, sizeof(s));
	CHECK(erofs_xattr_iterate(&r, &vi, xrecord, &s) == 0 && s.n == 3);
	free(m.b);
}

/* ------------------------------------------------------------------ */
/* compressed files (tests/unit/test-zindex.c checks indexes in depth)  */

/* text that LZ4 shrinks a lot, but not to nothing */
static void fill_text(uint8_t *p, size_t n)
{
	static const char *const words[] = { "alpha ", "beta ", "gamma ", "delta\n", "lz4 " };
	uint32_t x = 12345;
	size_t i = 0;

	while (i < n && i < 1500) {
		const char *w;

		x = x * 1103515245u + 12345u;
		w = words[(x >> 16) % 5];
		while (*w && i < n)
			p[i++] = (uint8_t)*w++;
	}
	for (; i < n; i++)	/* then repeats, shifted a little each time */
		p[i] = p[i - 1499];
}

/* A file of 10000 bytes: one LZ4 extent right-aligned in block 5, full or
 * compact index.  Returns the compressed length. */
static int put_zfile(struct img *m, const uint8_t *data, bool compact)
{
	uint8_t *ino = m->b + 40 * 32, zbuf[BLK];
	int clen = LZ4_compress_default((const char *)data, (char *)zbuf, 10000, BLK);
	uint8_t *idx;

	put_inode(m, 40, S_IFREG | 0644, compact ? EROFS_LAYOUT_COMPRESSED_COMPACT :
		  EROFS_LAYOUT_COMPRESSED_FULL, 10000, 1, false);
	memset(ino + 32, 0, 64);
	memset(m->b + 5 * BLK, 0, BLK);
	memcpy(m->b + 6 * BLK - clen, zbuf, (size_t)clen);
	/* map header at 40 * 32 + 32 (8-aligned): all zero, LZ4 */
	if (!compact) {
		idx = ino + 32 + 16;
		put_le16(idx, EROFS_LCLUSTER_HEAD1);
		put_le32(idx + 4, 5);
		put_le16(idx + 8, EROFS_LCLUSTER_NONHEAD);
		put_le16(idx + 12, 1);
		put_le16(idx + 14, 2);
		put_le16(idx + 16, EROFS_LCLUSTER_NONHEAD);
		put_le16(idx + 20, 2);
		put_le16(idx + 22, 1);
	} else {
		/* ebase 1320: 4-byte packs (2 entries of 16 bits, then the base) */
		idx = ino + 32 + 8;
		put_le16(idx, EROFS_LCLUSTER_HEAD1 << 12);
		put_le16(idx + 2, EROFS_LCLUSTER_NONHEAD << 12 | 2);	/* last: delta[1] */
		put_le32(idx + 4, 4);				/* block 5 = 4 + 1 */
		put_le16(idx + 8, EROFS_LCLUSTER_NONHEAD << 12 | 2);
		put_le32(idx + 12, 5);
	}
	return clen;
}

static void test_compressed(void)
{
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	static uint8_t data[10000], out[10000];
	const uint8_t *dec;
	struct img m;
	int clen;

	fill_text(data, sizeof(data));
	for (int compact = 0; compact < 2; compact++) {
		img_init(&m, 8);
		m.sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING;
		clen = put_zfile(&m, data, compact);
		CHECK(clen > 0 && clen < (int)BLK);
		CHECK(img_open(&m, &r) == 0);
		CHECK(r.available_compr_algs == 1 && r.lz4_max_pclusterblks == 1);
		CHECK(erofs_read_inode(&r, 40, &vi) == 0);
		CHECK(erofs_map_blocks(&r, &vi, 9999, &map) == 0);
		CHECK(map.la == 0 && map.llen == 10000 && map.pa == 5 * BLK && map.plen == BLK &&
		      map.flags == (EROFS_MAP_MAPPED | EROFS_MAP_ENCODED) && map.alg == 0);
		memset(out, 0, sizeof(out));
		CHECK(erofs_read_data(&r, &vi, out, 10000, 0) == 0 && !memcmp(out, data, 10000));
		CHECK(erofs_read_data(&r, &vi, out, 100, 5000) == 0 && !memcmp(out, data + 5000, 100));
		CHECK(erofs_decode_extent(&r, &vi, &map, &dec) == 0 && !memcmp(dec, data, 10000));

		/* a stream that decodes to more than the extent */
		put_le32(m.b + 40 * 32 + 8, 9999);
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		EXPECT_ERR(erofs_read_data(&r, &vi, out, 10, 0), -EUCLEAN,
			   "pcluster at block 5: corrupt LZ4 data", &r);
		/* ... or to less */
		put_le32(m.b + 40 * 32 + 8, 10001);
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		EXPECT_ERR(erofs_read_data(&r, &vi, out, 10, 0), -EUCLEAN,
			   "LZ4 data decodes to 10000 bytes for the 10001-byte extent at byte 0", &r);
		put_le32(m.b + 40 * 32 + 8, 10000);
		/* garbage in the stream */
		m.b[6 * BLK - clen + clen / 2] ^= 0xff;
		m.b[6 * BLK - clen + clen / 2 + 1] ^= 0x5a;
		m.b[6 * BLK - 3] = 0xff;
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		checks++;
		if (!erofs_read_data(&r, &vi, out, 10000, 0) && memcmp(out, data, 10000)) {
			failures++;	/* LZ4 has no checksum, but this must not pass */
			fprintf(stderr, "%s:%d: damaged stream decoded\n", __FILE__, __LINE__);
		}
		/* an all-zero pcluster */
		memset(m.b + 5 * BLK, 0, BLK);
		erofs_reader_close(&r);
		CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, 40, &vi) == 0);
		EXPECT_ERR(erofs_read_data(&r, &vi, out, 10, 0), -EUCLEAN,
			   "pcluster at block 5: its first block is all zeros", &r);
		erofs_reader_close(&r);
		free(m.b);
	}

	/* compressed data with 2 KiB blocks (Linux 6.8+): 2 KiB lclusters */
	img_init(&m, 8);
	m.sb.blkszbits = 11;
	m.sb.blocks = 16;
	m.sb.root_nid = 64;
	put_inode(&m, 40, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 10000, 1, false);
	CHECK(img_open(&m, &r) == 0);
	CHECK(erofs_read_inode(&r, 40, &vi) == 0 && vi.z_lclusterbits == 11);
	erofs_reader_close(&r);
	free(m.b);

	/* compression configs after the superblock */
	img_init(&m, 8);
	m.sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS;
	m.sb.u1 = 1;
	put_le16(m.b + 1152, 14);
	put_le16(m.b + 1156, 16);
	CHECK(img_open(&m, &r) == 0 && r.lz4_max_pclusterblks == 16 && r.sb_end == 1152 + 16);
	put_le16(m.b + 1156, 0);
	CHECK(img_open(&m, &r) == 0 && r.lz4_max_pclusterblks == 1);
	put_le16(m.b + 1156, 257);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "LZ4 pclusters of 257 blocks (at most 256)", &r);
	put_le16(m.b + 1152, 13);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "LZ4 config of 13 bytes (want 14)", &r);
	put_le16(m.b + 1152, 0);	/* 0 means 65536 bytes */
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "compression config of algorithm 0 (65536 bytes) beyond the end", &r);
	/* the other algorithms' records, 4-byte aligned, checked as the kernel checks them */
	m.sb.u1 = 0xf;
	put_le16(m.b + 1152, 14);
	put_le16(m.b + 1156, 4);
	put_le16(m.b + 1168, 14);		/* lzma: dict_size, format */
	put_le32(m.b + 1170, 65536);
	put_le16(m.b + 1184, 6);		/* deflate: windowbits */
	m.b[1186] = 15;
	put_le16(m.b + 1192, 6);		/* zstd: format, windowlog - 10 */
	m.b[1195] = 10;
	CHECK(img_open(&m, &r) == 0 && r.lzma_dict_size == 65536 && r.deflate_windowbits == 15 &&
	      r.zstd_window_log == 20 && r.available_compr_algs == 0xf && r.sb_end == 1200);
	put_le32(m.b + 1170, (8u << 20) + 1);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "MicroLZMA dictionary of 8388609 bytes (4096 to 8388608)", &r);
	put_le32(m.b + 1170, 65536);
	put_le16(m.b + 1174, 1);
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "unknown MicroLZMA format 1", &r);
	put_le16(m.b + 1174, 0);
	m.b[1186] = 16;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "DEFLATE window of 2^16 bytes (at most 2^15)", &r);
	m.b[1186] = 15;
	m.b[1195] = 11;
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "zstd window of 2^21 bytes (at most 1048576)", &r);
	m.b[1195] = 255;	/* 2^265: checked without shifting by it (fuzz-fsck found it) */
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "zstd window of 2^265 bytes (at most 1048576)", &r);
	m.b[1195] = 10;
	m.b[1194] = 1;
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "unknown zstd format 1", &r);
	m.b[1194] = 0;
	put_le16(m.b + 1192, 5);
	EXPECT_ERR(img_open(&m, &r), -EUCLEAN, "zstd config of 5 bytes (want 6)", &r);
	/* algorithms no Linux knows: refused whole */
	m.sb.u1 = 0x8009;
	EXPECT_ERR(img_open(&m, &r), -EOPNOTSUPP, "unsupported compression algorithms: unknown bits 0x8000", &r);
	m.sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING;
	m.sb.u1 = 4096;	/* now lz4_max_distance */
	CHECK(img_open(&m, &r) == 0 && r.lz4_max_distance == 4096 && r.available_compr_algs == 1 &&
	      r.sb_end == 1152);
	free(m.b);
}

/* ------------------------------------------------------------------ */
/* fragments and interlaced plain pclusters (6.1's zmap.c semantics)    */

#define PACKED	40u	/* the packed inode: put_zfile's LZ4 file of 10000 bytes */
#define FA	48u	/* whole-file fragment, compact: 3000 bytes at 1234 */
#define FB	56u	/* full index: a raw block, then a tail fragment at 5000 */
#define FC	64u	/* full index: LZ4 [0,5000), interlaced plain [5000,9000) */
#define FD	72u	/* full index: its only head (lcluster 0) is the tail */
#define FE	80u	/* compact index: a raw block, then a tail fragment at 7000 */

static uint8_t *zhdr(struct img *m, uint64_t nid)
{
	return m->b + nid * 32 + 32;	/* no xattrs: 8-aligned right after the core */
}

static void put_full_entry(struct img *m, uint64_t nid, unsigned int lcn, unsigned int type,
			   unsigned int clusterofs, uint32_t blkaddr)
{
	uint8_t *e = zhdr(m, nid) + 16 + lcn * 8;

	put_le16(e, (uint16_t)type);
	put_le16(e + 2, (uint16_t)clusterofs);
	put_le32(e + 4, blkaddr);
}

static void frag_image(struct img *m, const uint8_t *packed, const uint8_t *cdata, bool interlaced)
{
	uint8_t zbuf[BLK], *h;
	int clen;

	img_init(m, 12);
	m->sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_FRAGMENTS;
	m->sb.packed_nid = PACKED;
	CHECK(put_zfile(m, packed, false) > 0);

	put_inode(m, FA, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT, 3000, 0, false);
	put_le64(zhdr(m, FA), 1234 | 1ull << 63);

	put_inode(m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 6000, 1, false);
	h = zhdr(m, FB);
	put_le32(h, 5000);
	put_le16(h + 4, EROFS_ZADVISE_FRAGMENT);
	put_full_entry(m, FB, 0, EROFS_LCLUSTER_PLAIN, 0, 6);
	put_full_entry(m, FB, 1, EROFS_LCLUSTER_HEAD1, 0, 0);	/* high half of the offset */
	for (unsigned int i = 0; i < BLK; i++)
		m->b[6 * BLK + i] = (uint8_t)(i * 7 + 3);

	put_inode(m, FC, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 9000, 2, false);
	put_le16(zhdr(m, FC) + 4, interlaced ? EROFS_ZADVISE_INTERLACED : 0);
	put_full_entry(m, FC, 0, EROFS_LCLUSTER_HEAD1, 0, 8);
	put_full_entry(m, FC, 1, EROFS_LCLUSTER_PLAIN, 5000 - BLK, 7);
	put_full_entry(m, FC, 2, EROFS_LCLUSTER_PLAIN, 9000 - 2 * BLK, 0);	/* EOF */
	clen = LZ4_compress_default((const char *)cdata, (char *)zbuf, 5000, BLK);
	CHECK(clen > 0 && clen < (int)BLK);
	memcpy(m->b + 9 * BLK - clen, zbuf, (size_t)clen);
	for (unsigned int k = 0; k < 4000; k++) {
		unsigned int at = interlaced ? (5000 + k) % BLK : k;

		m->b[7 * BLK + at] = cdata[5000 + k];
	}

	put_inode(m, FD, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 3000, 0, false);
	put_le32(zhdr(m, FD), 100);
	put_le16(zhdr(m, FD) + 4, EROFS_ZADVISE_FRAGMENT);
	put_full_entry(m, FD, 0, EROFS_LCLUSTER_HEAD1, 0, 0);

	/* compact: ebase 2600, 4-byte packs: PLAIN then HEAD1, base 5 (block 6 = 5 + 1) */
	put_inode(m, FE, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT, 6000, 1, false);
	h = zhdr(m, FE);
	put_le32(h, 7000);
	put_le16(h + 4, EROFS_ZADVISE_FRAGMENT | EROFS_ZADVISE_COMPACTED_2B);
	put_le16(h + 8, EROFS_LCLUSTER_PLAIN << 12);
	put_le16(h + 10, EROFS_LCLUSTER_HEAD1 << 12);
	put_le32(h + 12, 5);
}

/* Reads the whole file, then every range of a few sizes, against want. */
static void check_file(struct erofs_reader *r, uint64_t nid, const uint8_t *want, size_t size)
{
	static uint8_t out[16384];
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(r, nid, &vi);

	CHECK(err == 0);
	if (err) {
		fprintf(stderr, "nid %llu: %s\n", (unsigned long long)nid, erofs_reader_error(r));
		return;
	}
	CHECK(vi.size == size && size <= sizeof(out));
	memset(out, 0xAA, sizeof(out));
	err = erofs_read_data(r, &vi, out, size, 0);
	CHECK(err == 0 && !memcmp(out, want, size));
	if (err)
		fprintf(stderr, "nid %llu: %s\n", (unsigned long long)nid, erofs_reader_error(r));
	for (size_t at = 0; at < size; at += 997) {
		size_t n = size - at < 1500 ? size - at : 1500;

		CHECK(erofs_read_data(r, &vi, out, n, at) == 0 && !memcmp(out, want + at, n));
	}
}

static void test_fragments(void)
{
	static uint8_t packed[10000], cdata[9000], want[16384];
	const struct erofs_rd_inode *pk;
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	uint8_t buf[64];
	struct img m;

	fill_text(packed, sizeof(packed));
	for (unsigned int i = 0; i < sizeof(cdata); i++)	/* text, then bytes that vary */
		cdata[i] = i < 5000 ? packed[i] : (uint8_t)(i * 13 + i / 251);

	for (int interlaced = 0; interlaced < 2; interlaced++) {
		frag_image(&m, packed, cdata, interlaced);
		CHECK(img_open(&m, &r) == 0);
		CHECK(erofs_packed_inode(&r, &pk) == 1 && pk->nid == PACKED && pk->size == 10000);
		check_file(&r, FA, packed + 1234, 3000);
		memcpy(want, m.b + 6 * BLK, BLK);
		memcpy(want + BLK, packed + 5000, 6000 - BLK);
		check_file(&r, FB, want, 6000);
		check_file(&r, FC, cdata, 9000);
		check_file(&r, FD, packed + 100, 3000);
		memcpy(want + BLK, packed + 7000, 6000 - BLK);
		check_file(&r, FE, want, 6000);

		/* the maps themselves */
		CHECK(erofs_read_inode(&r, FA, &vi) == 0 && vi.z_whole_fragment &&
		      vi.meta_end == FA * 32 + 40);
		CHECK(erofs_map_blocks(&r, &vi, 2999, &map) == 0 && map.la == 0 && map.llen == 3000 &&
		      map.pa == 1234 && map.flags == (EROFS_MAP_MAPPED | EROFS_MAP_FRAGMENT));
		CHECK(erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 1 && vi.z_frag_la == BLK);
		CHECK(erofs_map_blocks(&r, &vi, 5000, &map) == 0 && map.la == BLK &&
		      map.llen == 6000 - BLK && map.pa == 5000 && (map.flags & EROFS_MAP_FRAGMENT));
		CHECK(erofs_map_blocks(&r, &vi, 10, &map) == 0 && map.la == 0 && map.llen == BLK &&
		      map.flags == EROFS_MAP_MAPPED);
		CHECK(erofs_read_inode(&r, FC, &vi) == 0);
		CHECK(erofs_map_blocks(&r, &vi, 8999, &map) == 0 && map.la == 5000 && map.llen == 4000 &&
		      map.pa == 7 * BLK && map.plen == BLK &&
		      map.flags == (EROFS_MAP_MAPPED | (interlaced ? EROFS_MAP_INTERLACED : 0)));
		CHECK(erofs_read_mapped(&r, &map, buf, 8, 8190) == 0 && !memcmp(buf, cdata + 8190, 8));
		EXPECT_ERR(erofs_read_mapped(&r, &map, buf, 8, 8995), -EINVAL, "outside its extent", &r);
		CHECK(erofs_read_inode(&r, FD, &vi) == 0 && vi.z_tail_lcn == 0 && vi.z_frag_la == 0);
		CHECK(erofs_read_packed(&r, buf, 10, 9990) == 0 && !memcmp(buf, packed + 9990, 10));
		EXPECT_ERR(erofs_read_packed(&r, buf, 11, 9990), -EUCLEAN,
			   "read of 11 bytes at 9990 beyond the end of the packed inode (10000 bytes)", &r);
		erofs_reader_close(&r);
		free(m.b);
	}

	/* the packed inode decoded on demand: a damaged pcluster names it */
	frag_image(&m, packed, cdata, false);
	m.b[6 * BLK - 40] ^= 0xff;
	m.b[6 * BLK - 41] ^= 0x5a;
	m.b[6 * BLK - 3] = 0xff;
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FA, &vi) == 0);
	checks++;
	{
		static uint8_t out[3000];
		int err = erofs_read_data(&r, &vi, out, 3000, 0);

		if (!err ? !memcmp(out, packed + 1234, 3000) :
		    !strstr(erofs_reader_error(&r), "packed inode (nid 40): pcluster at block 5")) {
			failures++;
			fprintf(stderr, "%s:%d: damaged packed pcluster: %d %s\n", __FILE__, __LINE__,
				err, erofs_reader_error(&r));
		}
	}
	erofs_reader_close(&r);
	free(m.b);

	/* hostile images */
	struct fcase {
		const char *what;
		uint64_t nid;
		void (*edit)(struct img *m);
		int err;
		const char *words;
	};
	static const struct fcase cases[] = {
		{ "no packed inode", FA, NULL, -EUCLEAN,
		  "fragment of 3000 bytes, but the superblock names no packed inode (packed_nid 0)" },
		{ "packed_nid out of range", FB, NULL, -EUCLEAN,
		  "unusable packed inode (nid 1099511627776): nid 1099511627776 out of range" },
		{ "packed inode a directory", FE, NULL, -EUCLEAN,
		  "unusable packed inode (nid 36): not a regular file (mode 040755)" },
		{ "packed inode a fragment itself", FA, NULL, -EUCLEAN,
		  "the whole file is a fragment, but this is the packed inode itself" },
		{ "... and a file reading it", FB, NULL, -EUCLEAN,
		  "unusable packed inode (nid 48): the whole file is a fragment, but this is the packed inode itself" },
		{ "fragment past the packed inode", FA, NULL, -EUCLEAN,
		  "fragment of 3000 bytes at offset 9000 beyond the end of the packed inode (nid 40, 10000 bytes)" },
		{ "fragment offset that wraps", FA, NULL, -EUCLEAN,
		  "fragment of 3000 bytes at offset 9223372036854775807 beyond the end" },
		{ "huge i_size", FA, NULL, -EUCLEAN,
		  "fragment of 4611686018427387904 bytes at offset 1234 beyond the end" },
		{ "no sb feature", FA, NULL, -EUCLEAN,
		  "the whole file is a fragment of the packed inode, but the superblock lacks the fragments feature" },
		{ "tail with a PLAIN head", FB, NULL, -EUCLEAN,
		  "lcluster 1: the tail extent is a fragment, but its head is uncompressed" },
		{ "tail with an inline pcluster", FB, NULL, -EUCLEAN,
		  "both an inline tail pcluster and a tail fragment" },
		{ "tail offset's high half", FB, NULL, -EUCLEAN,
		  "fragment of 1904 bytes at offset 4294972296 beyond the end" },
		{ "tail HEAD2 not in the sb", FB, NULL, -EUCLEAN,
		  "lcluster 1: HEAD2 tail extent with algorithm 1, which the superblock does not list" },
	};
	static const struct ent dots[] = {
		{ ROOT, ".", EROFS_FT_DIR }, { ROOT, "..", EROFS_FT_DIR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fcase *c = &cases[i];
		int err;

		frag_image(&m, packed, cdata, false);
		switch (i) {
		case 0: m.sb.packed_nid = 0; break;
		case 1: m.sb.packed_nid = 1ull << 40; break;
		case 2: m.sb.packed_nid = ROOT; put_root(&m, dots, 2); break;
		case 3: case 4: m.sb.packed_nid = FA; break;
		case 5: put_le64(zhdr(&m, FA), 9000 | 1ull << 63); break;
		case 6: put_le64(zhdr(&m, FA), UINT64_MAX); break;
		case 7: put_inode(&m, FA, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_COMPACT,
				  1ull << 62, 0, true);
			put_le64(zhdr(&m, FA) + 32, 1234 | 1ull << 63); break;
		case 8: m.sb.feature_incompat &= ~EROFS_INCOMPAT_FRAGMENTS; break;
		case 9: put_full_entry(&m, FB, 1, EROFS_LCLUSTER_PLAIN, 0, 0); break;
		case 10: put_le16(zhdr(&m, FB) + 4, EROFS_ZADVISE_FRAGMENT | EROFS_ZADVISE_INLINE_PCLUSTER); break;
		case 11: put_full_entry(&m, FB, 1, EROFS_LCLUSTER_HEAD1, 0, 1); break;
		case 12: put_full_entry(&m, FB, 1, EROFS_LCLUSTER_HEAD2, 0, 0);
			zhdr(&m, FB)[6] = 0x10; break;
		}
		CHECK(img_open(&m, &r) == 0);
		err = erofs_read_inode(&r, c->nid, &vi);
		checks++;
		if (err != c->err || !strstr(erofs_reader_error(&r), c->words)) {
			failures++;
			fprintf(stderr, "%s: returned %d (\"%s\"), expected %d with \"%s\"\n",
				c->what, err, erofs_reader_error(&r), c->err, c->words);
		}
		erofs_reader_close(&r);
		free(m.b);
	}

	/* an extent head after the tail extent: refused, not read from the
	 * fragment (lcluster 2's NONHEAD leads back over lcluster 1's head) */
	frag_image(&m, packed, cdata, false);
	put_inode(&m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 10000, 1, false);
	put_full_entry(&m, FB, 0, EROFS_LCLUSTER_HEAD1, 0, 0);
	put_full_entry(&m, FB, 1, EROFS_LCLUSTER_PLAIN, 0, 6);
	put_le16(zhdr(&m, FB) + 16 + 16, EROFS_LCLUSTER_NONHEAD);
	put_le16(zhdr(&m, FB) + 16 + 20, 2);
	put_le16(zhdr(&m, FB) + 16 + 22, 1);
	put_le32(zhdr(&m, FB), 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 0);
	/* the tail head is lcluster 0: as in 6.1, the whole file is the fragment */
	CHECK(erofs_map_blocks(&r, &vi, 5000, &map) == 0 && map.la == 0 && map.llen == 10000 &&
	      (map.flags & EROFS_MAP_FRAGMENT) && map.pa == 0);
	erofs_reader_close(&r);
	put_full_entry(&m, FB, 0, EROFS_LCLUSTER_PLAIN, 0, 6);
	put_full_entry(&m, FB, 1, EROFS_LCLUSTER_HEAD1, 0, 0);
	put_full_entry(&m, FB, 2, EROFS_LCLUSTER_HEAD1, 0, 0);
	put_inode(&m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 3 * BLK + 100, 1, false);
	put_le16(zhdr(&m, FB) + 16 + 24, EROFS_LCLUSTER_NONHEAD);
	put_le16(zhdr(&m, FB) + 16 + 28, 2);	/* back over lcluster 2's head */
	put_le16(zhdr(&m, FB) + 16 + 30, 1);
	put_le32(zhdr(&m, FB), 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 1);
	EXPECT_ERR(erofs_map_blocks(&r, &vi, BLK + 5, &map), -EUCLEAN,
		   "lcluster 2: an extent starts after the tail extent (a fragment) at lcluster 1", &r);
	erofs_reader_close(&r);
	free(m.b);

	/* erofs-utils' form: the tail fragment (head at lcluster 1) ends inside
	 * lcluster 3, whose entry is a PLAIN head at exactly i_size; 6.1 never
	 * maps it, and neither may we refuse the file for it */
	frag_image(&m, packed, cdata, false);
	put_inode(&m, FB, S_IFREG | 0644, EROFS_LAYOUT_COMPRESSED_FULL, 3 * BLK + 100, 1, false);
	put_le32(zhdr(&m, FB), 1000);
	put_le16(zhdr(&m, FB) + 16 + 16, EROFS_LCLUSTER_NONHEAD);
	put_le16(zhdr(&m, FB) + 16 + 20, 1);
	put_le16(zhdr(&m, FB) + 16 + 22, 1);
	put_full_entry(&m, FB, 3, EROFS_LCLUSTER_PLAIN, 100, 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0 && vi.z_tail_lcn == 1 &&
	      vi.z_frag_la == BLK);
	CHECK(erofs_map_blocks(&r, &vi, 3 * BLK + 99, &map) == 0 && map.la == BLK &&
	      map.llen == 2 * BLK + 100 && map.pa == 1000 && (map.flags & EROFS_MAP_FRAGMENT));
	memcpy(want, m.b + 6 * BLK, BLK);
	memcpy(want + BLK, packed + 1000, 2 * BLK + 100);
	check_file(&r, FB, want, 3 * BLK + 100);
	erofs_reader_close(&r);
	/* ... but a head that starts before i_size is the tail's own head (and
	 * uncompressed), and one past i_size is refused as in any file */
	put_full_entry(&m, FB, 3, EROFS_LCLUSTER_PLAIN, 99, 0);
	CHECK(img_open(&m, &r) == 0);
	EXPECT_ERR(erofs_read_inode(&r, FB, &vi), -EUCLEAN,
		   "lcluster 3: the tail extent is a fragment, but its head is uncompressed", &r);
	erofs_reader_close(&r);
	put_full_entry(&m, FB, 3, EROFS_LCLUSTER_PLAIN, 101, 0);
	CHECK(img_open(&m, &r) == 0 && erofs_read_inode(&r, FB, &vi) == 0);
	EXPECT_ERR(erofs_map_blocks(&r, &vi, 2 * BLK, &map), -EUCLEAN,
		   "lcluster 3: an extent starts at byte 12389, beyond i_size 12388", &r);
	erofs_reader_close(&r);
	free(m.b);
}

/* fsck's paths, put together from the names of the nid table (lib/read/nidtab.c) */
static void test_paths(void)
{
	struct erofs_nidtab t = { 0 };
	struct erofs_check_node *n;
	char out[64], longname[256];
	const char *want;

	memset(longname, 'x', 255);
	longname[255] = '\0';
	n = erofs_nidtab_add(&t, 1);
	CHECK(n && erofs_nidtab_name(&t, n, 1, "", 0));		/* the root */
	n = erofs_nidtab_add(&t, 2);
	CHECK(n && erofs_nidtab_name(&t, n, 1, "usr", 3));
	n = erofs_nidtab_add(&t, 3);
	CHECK(n && erofs_nidtab_name(&t, n, 2, "a\nb", 3));
	n = erofs_nidtab_add(&t, 4);
	CHECK(n && erofs_nidtab_name(&t, n, 3, longname, 255));

	CHECK(!strcmp(erofs_nidtab_path(&t, 1, NULL, 0, out, sizeof(out)), "/"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 1, "etc", 3, out, sizeof(out)), "/etc"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, NULL, 0, out, sizeof(out)), "/usr/a\\x0ab"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, "f", 1, out, sizeof(out)), "/usr/a\\x0ab/f"));
	CHECK(!strcmp(erofs_nidtab_node_path(&t, erofs_nidtab_find(&t, 3), out, sizeof(out)),
		      "/usr/a\\x0ab"));
	/* too long: the last components stay, behind "/..." */
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, "f", 1, out, 13), "/.../f"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, "f", 1, out, 14), "/usr/a\\x0ab/f"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, "file", 4, out, 16), "/.../file"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, "file", 4, out, 17), "/usr/a\\x0ab/file"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 4, "file", 4, out, 20), "/.../file"));
	CHECK(!strcmp(erofs_nidtab_path(&t, 3, "file", 4, out, 6), "/..."));
	/* a leaf longer than the buffer is cut, not dropped */
	erofs_nidtab_path(&t, 4, longname, 255, out, sizeof(out));
	CHECK(!strncmp(out, "/.../xxxx", 9) && strlen(out) < sizeof(out) &&
	      !strcmp(out + strlen(out) - 3, "..."));
	/* a dir the table does not know, and a cycle, end in "/..." */
	want = "/.../f";
	CHECK(!strcmp(erofs_nidtab_path(&t, 99, "f", 1, out, sizeof(out)), want));
	erofs_nidtab_find(&t, 2)->parent = 3;
	CHECK(!strncmp(erofs_nidtab_path(&t, 3, NULL, 0, out, sizeof(out)), "/...", 4));
	erofs_nidtab_free(&t);
	CHECK(!t.tab && !t.names && !t.count);
}

/* ------------------------------------------------------------------ */
/* extra devices: chunk indexes naming one, flat data in a mapped range */

static void test_devices(void)
{
	static uint8_t dev[4 * BLK], buf[2 * BLK];
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct erofs_map map;
	struct img m;
	FILE *f = tmpfile();
	uint8_t *slot, *p;

	CHECK(f != NULL);
	if (!f)
		return;
	for (unsigned int i = 0; i < 4; i++)
		memset(dev + i * BLK, 'A' + i, BLK);
	CHECK(fwrite(dev, sizeof(dev), 1, f) == 1 && fflush(f) == 0);
	img_init(&m, 4);
	m.sb.feature_incompat = EROFS_INCOMPAT_DEVICE_TABLE | EROFS_INCOMPAT_CHUNKED_FILE;
	m.sb.extra_devices = 1;
	m.sb.devt_slotoff = 20;
	slot = m.b + 20 * EROFS_DEVT_SLOT_BYTES;
	put_le32(slot + EROFS_DEVT_SLOT_BLOCKS, 4);
	put_le32(slot + EROFS_DEVT_SLOT_MAPPED, 100);	/* blocks 100..103 of the flat space */
	CHECK(img_open(&m, &r) == 0);

	/* a file of one chunk on device 1, its block 2 */
	put_inode(&m, 60, S_IFREG | 0644, EROFS_LAYOUT_CHUNK_BASED, BLK,
		  EROFS_CHUNK_FORMAT_INDEXES, false);
	p = m.b + 60 * 32 + 32;
	memset(p, 0, 8);
	put_le16(p + 2, 1);
	put_le32(p + 4, 2);
	CHECK(erofs_read_inode(&r, 60, &vi) == 0);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, BLK, 0), -ENXIO,
		   "data on extra device 1 (no tag, 4 blocks), which was not given", &r);
	EXPECT_ERR(erofs_reader_set_device(&r, 1, fileno(f), 3 * BLK), -EUCLEAN, "too short", &r);
	EXPECT_ERR(erofs_reader_set_device(&r, 2, fileno(f), 4 * BLK), -EINVAL,
		   "1 extra device", &r);
	CHECK(erofs_reader_set_device(&r, 1, fileno(f), 4 * BLK) == 0);
	CHECK(erofs_read_data(&r, &vi, buf, BLK, 0) == 0 && buf[0] == 'C' && buf[BLK - 1] == 'C');
	/* as in Linux, device ids count modulo the next power of two: 3 is 1, 2 the image */
	put_le16(p + 2, 3);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.device == 1 && map.pa == 2 * BLK);
	put_le16(p + 2, 2);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.device == 0 && map.pa == 2 * BLK);
	put_le16(p + 2, 1);
	put_le32(p + 4, 4);
	EXPECT_ERR(erofs_read_data(&r, &vi, buf, BLK, 0), -EUCLEAN, "beyond the end of device 1",
		   &r);

	/* flat data at block 101 of the flat space: blocks 1 and 2 of the device */
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 2 * BLK, 101, false);
	CHECK(erofs_read_inode(&r, 70, &vi) == 0);
	CHECK(erofs_map_blocks(&r, &vi, 0, &map) == 0 && map.device == 1 && map.pa == BLK);
	CHECK(erofs_read_data(&r, &vi, buf, 2 * BLK, 0) == 0 && buf[0] == 'B' &&
	      buf[2 * BLK - 1] == 'C');
	/* one reaching past the mapped range, one between the image and it */
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 2 * BLK, 103, false);
	EXPECT_ERR(erofs_read_inode(&r, 70, &vi), -EUCLEAN, "beyond the end", &r);
	put_inode(&m, 70, S_IFREG | 0644, EROFS_LAYOUT_FLAT_PLAIN, 2 * BLK, 50, false);
	EXPECT_ERR(erofs_read_inode(&r, 70, &vi), -EUCLEAN, "beyond the end", &r);
	erofs_reader_close(&r);
	fclose(f);
	free(m.b);
}

int main(void)
{
	char out[32];

	test_super();
	test_inodes();
	test_dirents();
	test_dir_iterate();
	test_xattrs();
	test_compressed();
	test_fragments();
	test_paths();
	test_devices();

	CHECK(!strcmp(erofs_escape(out, sizeof(out), "a\nb\\", 4), "a\\x0ab\\x5c"));
	CHECK(!strcmp(erofs_escape(out, 16, "abcdefghijklmnopqrstuvwxyz", 26), "abcdefgh..."));

	return unit_summary("test-reader");
}
