// SPDX-License-Identifier: MIT
/*
 * Unit tests for the read layer (lib/read/): shared and inline xattrs,
 * in an image crafted in memory with the on-disk codecs (reader-img.h).
 * Every rejection is checked for its return code and for the words of its
 * message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "reader-img.h"
#include "unit.h"

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


int main(void)
{
	test_xattrs();
	return unit_summary("test-reader-xattrs");
}
