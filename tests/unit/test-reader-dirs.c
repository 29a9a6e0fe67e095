// SPDX-License-Identifier: MIT
/*
 * Unit tests for the read layer (lib/read/): directory blocks parsed
 * alone and directories read through an image crafted in memory
 * (reader-img.h), fsck's paths from the nid table, and names escaped for
 * messages.  Every rejection is checked for its return code and for the
 * words of its message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/nidtab.h"
#include "erofs/read/reader.h"

#include "reader-img.h"
#include "unit.h"

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

int main(void)
{
	char out[32];

	test_dirents();
	test_dir_iterate();
	test_paths();

	CHECK(!strcmp(erofs_escape(out, sizeof(out), "a\nb\\", 4), "a\\x0ab\\x5c"));
	CHECK(!strcmp(erofs_escape(out, 16, "abcdefghijklmnopqrstuvwxyz", 26), "abcdefgh..."));

	return unit_summary("test-reader-dirs");
}
