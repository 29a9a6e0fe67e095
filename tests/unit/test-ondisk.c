// SPDX-License-Identifier: MIT
/* Unit tests of the on-disk codecs: exact bytes where the format fixes them. */
#include <stdio.h>
#include <string.h>

#include "erofs/build/dir.h"
#include "erofs/common/ondisk.h"

static int failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                            \
			failures++;                                          \
		}                                                            \
	} while (0)

static void test_le_helpers(void)
{
	uint8_t b[8];

	put_le16(b, 0x1234);
	CHECK(b[0] == 0x34 && b[1] == 0x12);
	put_le32(b, 0xE0F5E1E2u);
	CHECK(b[0] == 0xE2 && b[1] == 0xE1 && b[2] == 0xF5 && b[3] == 0xE0);
	put_le64(b, 0x0102030405060708ull);
	CHECK(b[0] == 8 && b[7] == 1);
	CHECK(get_le64(b) == 0x0102030405060708ull);
	CHECK(get_le32(b) == 0x05060708u && get_le16(b + 6) == 0x0102);
}

static void test_crc32c(void)
{
	/* the standard check value, with the final inversion the kernel omits */
	CHECK((erofs_crc32c(~0u, "123456789", 9) ^ ~0u) == 0xE3069283u);
	CHECK(erofs_crc32c(~0u, "", 0) == ~0u);
	/* chaining equals one pass */
	CHECK(erofs_crc32c(erofs_crc32c(~0u, "1234", 4), "56789", 5) ==
	      erofs_crc32c(~0u, "123456789", 9));
	CHECK(erofs_sb_checksum_span(12) == 3072 && erofs_sb_checksum_span(10) == 1024 &&
	      erofs_sb_checksum_span(9) == 512);
}

static void test_superblock(void)
{
	struct erofs_super sb = {
		.magic = EROFS_MAGIC, .checksum = 0xdeadbeef, .feature_compat = 3,
		.blkszbits = 12, .root_nid = 36, .inos = 7, .build_time = 0x123456789ull,
		.build_time_nsec = 999, .blocks = 42, .meta_blkaddr = 1, .xattr_blkaddr = 2,
		.feature_incompat = EROFS_INCOMPAT_CHUNKED_FILE, .u1 = 5, .extra_devices = 6,
		.devt_slotoff = 7, .packed_nid = 0x1122334455ull,
	}, back;
	uint8_t raw[EROFS_SUPER_SIZE];

	memcpy(sb.uuid, "0123456789abcdef", 16);
	memcpy(sb.volume_name, "label", 6);
	erofs_super_encode(&sb, raw);
	CHECK(get_le32(raw + 0) == EROFS_MAGIC);
	CHECK(get_le32(raw + 4) == 0xdeadbeef);
	CHECK(raw[0x0C] == 12 && get_le16(raw + 0x0E) == 36);
	CHECK(get_le64(raw + 0x18) == 0x123456789ull && get_le32(raw + 0x20) == 999);
	CHECK(get_le32(raw + 0x24) == 42 && get_le32(raw + 0x28) == 1 && get_le32(raw + 0x2C) == 2);
	CHECK(!memcmp(raw + 0x30, "0123456789abcdef", 16) && !memcmp(raw + 0x40, "label", 6));
	CHECK(get_le32(raw + 0x50) == EROFS_INCOMPAT_CHUNKED_FILE);
	CHECK(get_le16(raw + 0x54) == 5 && get_le16(raw + 0x56) == 6 && get_le16(raw + 0x58) == 7);
	CHECK(get_le64(raw + 0x60) == 0x1122334455ull);
	for (unsigned int i = 0x68; i < EROFS_SUPER_SIZE; i++)
		CHECK(raw[i] == 0);
	erofs_super_decode(raw, sizeof(raw), &back);
	CHECK(!memcmp(&sb, &back, sizeof(sb)));
}

/* 48-bit and metabox fields: their offsets in the 144-byte superblock */
static void test_super_48bit(void)
{
	struct erofs_super sb = {
		.magic = EROFS_MAGIC, .blkszbits = 12, .sb_extslots = 1, .root_nid = 0x0003,
		.blocks = 0x10, .feature_incompat = EROFS_INCOMPAT_48BIT | EROFS_INCOMPAT_METABOX,
		.build_time_delta = 0xabcdef01u, .rootnid_8b = EROFS_NID_METABOX_BIT | 5,
		.metabox_nid = 0x123456789aull,
	}, back;
	uint8_t raw[EROFS_SUPER_MAX_SIZE];

	memset(raw, 0xee, sizeof(raw));
	erofs_super_encode(&sb, raw);
	CHECK(get_le32(raw + 0x6C) == 0xabcdef01u);
	CHECK(get_le64(raw + 0x70) == (EROFS_NID_METABOX_BIT | 5));
	CHECK(get_le64(raw + 0x78) == 0 && get_le64(raw + 0x88) == 0);
	CHECK(get_le64(raw + 0x80) == 0x123456789aull);
	erofs_super_decode(raw, sizeof(raw), &back);
	CHECK(!memcmp(&sb, &back, sizeof(sb)));
	CHECK(erofs_super_root_nid(&back) == (EROFS_NID_METABOX_BIT | 5));
	CHECK(erofs_super_blocks(&back) == (3ull << 32 | 0x10));
	/* a short buffer never yields the extension slot */
	erofs_super_decode(raw, EROFS_SUPER_SIZE, &back);
	CHECK(back.metabox_nid == 0);
	/* without 48BIT the first root nid field is the root */
	sb.feature_incompat = 0;
	CHECK(erofs_super_root_nid(&sb) == 3 && erofs_super_blocks(&sb) == 0x10);
	/* no extension slot: exactly 128 bytes are written */
	sb.sb_extslots = 0;
	memset(raw, 0xee, sizeof(raw));
	erofs_super_encode(&sb, raw);
	CHECK(raw[EROFS_SUPER_SIZE] == 0xee && raw[EROFS_SUPER_MAX_SIZE - 1] == 0xee);
}

static void test_inodes(void)
{
	struct erofs_dinode compact = {
		.format = erofs_inode_format(EROFS_INODE_COMPACT, EROFS_LAYOUT_FLAT_INLINE),
		.xattr_icount = 3, .mode = 0100644, .size = 4097, .u = 77, .ino = 5,
		.uid = 1000, .gid = 1001, .nlink = 2,
	}, extended = {
		.format = erofs_inode_format(EROFS_INODE_EXTENDED, EROFS_LAYOUT_FLAT_PLAIN),
		.mode = 040755, .size = 0x100000001ull, .u = 9, .ino = 6, .uid = 70000,
		.gid = 80000, .mtime = -86400, .mtime_nsec = 123456789, .nlink = 70000,
	}, back;
	uint8_t raw[64];

	CHECK(erofs_dinode_encode(&compact, raw) == 32);
	CHECK(get_le16(raw) == 0x4);	/* version 0, layout 2 */
	CHECK(get_le16(raw + 2) == 3 && get_le16(raw + 4) == 0100644 && get_le16(raw + 6) == 2);
	CHECK(get_le32(raw + 8) == 4097 && get_le32(raw + 12) == 0);
	CHECK(get_le32(raw + 16) == 77 && get_le32(raw + 20) == 5);
	CHECK(get_le16(raw + 24) == 1000 && get_le16(raw + 26) == 1001 && get_le32(raw + 28) == 0);
	erofs_dinode_decode(raw, &back);
	CHECK(!memcmp(&compact, &back, sizeof(back)));

	CHECK(erofs_dinode_encode(&extended, raw) == 64);
	CHECK(get_le16(raw) == 0x1);	/* version 1, layout 0 */
	CHECK(get_le64(raw + 8) == 0x100000001ull && get_le32(raw + 16) == 9);
	CHECK(get_le32(raw + 24) == 70000 && get_le32(raw + 28) == 80000);
	CHECK((int64_t)get_le64(raw + 32) == -86400 && get_le32(raw + 40) == 123456789);
	CHECK(get_le32(raw + 44) == 70000);
	for (unsigned int i = 48; i < 64; i++)
		CHECK(raw[i] == 0);
	erofs_dinode_decode(raw, &back);
	CHECK(!memcmp(&extended, &back, sizeof(back)));

	/* 48-bit: compact mtime at 0x0C, extended i_nb at 0x06 */
	compact.compact_mtime = 0x89abcdefu;
	compact.format |= EROFS_I_NLINK_1;
	compact.nlink = 0x0012;		/* the high start-block bits */
	erofs_dinode_encode(&compact, raw);
	CHECK(get_le32(raw + 12) == 0x89abcdefu && get_le16(raw + 6) == 0x0012);
	CHECK(get_le16(raw) == (0x4 | EROFS_I_NLINK_1));
	erofs_dinode_decode(raw, &back);
	CHECK(!memcmp(&compact, &back, sizeof(back)));
	extended.nb_hi = 0x4321;
	erofs_dinode_encode(&extended, raw);
	CHECK(get_le16(raw + 6) == 0x4321);
	erofs_dinode_decode(raw, &back);
	CHECK(!memcmp(&extended, &back, sizeof(back)));
}

static void test_small_records(void)
{
	struct erofs_dirent de = { .nid = 0x0102030405ull, .nameoff = 36, .file_type = 7 }, de2;
	struct erofs_xattr_entry xe = { .name_len = 3, .name_index = 6, .value_size = 300 }, xe2;
	uint8_t raw[12];
	uint32_t major, minor;

	memset(raw, 0xff, sizeof(raw));
	erofs_dirent_encode(&de, raw);
	CHECK(get_le64(raw) == 0x0102030405ull && get_le16(raw + 8) == 36 && raw[10] == 7 &&
	      raw[11] == 0);
	erofs_dirent_decode(raw, &de2);
	CHECK(de2.nid == de.nid && de2.nameoff == 36 && de2.file_type == 7);

	erofs_xattr_entry_encode(&xe, raw);
	CHECK(raw[0] == 3 && raw[1] == 6 && get_le16(raw + 2) == 300);
	erofs_xattr_entry_decode(raw, &xe2);
	CHECK(xe2.name_len == 3 && xe2.name_index == 6 && xe2.value_size == 300);

	CHECK(erofs_xattr_entry_size(3, 5) == 12 && erofs_xattr_entry_size(0, 0) == 4);
	CHECK(erofs_xattr_ibody_size(0) == 0 && erofs_xattr_ibody_size(1) == 12 &&
	      erofs_xattr_ibody_size(4) == 24);

	/* new_encode_dev(): 8 low minor bits, 12 major bits, then the high minor bits */
	CHECK(erofs_encode_rdev(8, 1) == 0x801);
	CHECK(erofs_encode_rdev(300, 70000) == ((70000u & 0xff) | (300u << 8) |
						((70000u & ~0xffu) << 12)));
	erofs_decode_rdev(erofs_encode_rdev(300, 70000), &major, &minor);
	CHECK(major == 300 && minor == 70000);
	CHECK(erofs_mode_to_ftype(0120777) == EROFS_FT_SYMLINK &&
	      erofs_mode_to_ftype(0140000) == EROFS_FT_SOCK);
}

int main(void)
{
	test_le_helpers();
	test_crc32c();
	test_superblock();
	test_super_48bit();
	test_inodes();
	test_small_records();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts("test-ondisk: all checks passed");
	return 0;
}
