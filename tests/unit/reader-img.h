/* SPDX-License-Identifier: MIT */
/*
 * What the read layer's unit tests (tests/unit/test-reader-*.c) share: a
 * tiny image crafted in memory with the on-disk codecs (4 KiB blocks,
 * metadata from block 0, the root right after the superblock), the
 * inodes and directory blocks put into it, and EXPECT_ERR(), which checks
 * a rejection's return code and the words of its message.
 */
#ifndef READER_IMG_H
#define READER_IMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "erofs/read/reader.h"

/* err is the expected return, words a substring of the message; counts in
 * unit.h's counters, so the test includes unit.h */
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

#define BLK	4096u
#define ROOT	36u	/* nid of the root, right after the superblock */

struct img {
	uint8_t *b;
	size_t size;
	struct erofs_super sb;
	bool csum;
};

/* nblocks zeroed blocks and a superblock for them, sealed by img_open() */
void img_init(struct img *m, unsigned int nblocks);
/* encodes m->sb (and its checksum with m->csum) into the image */
void img_seal(struct img *m);
int img_open(struct img *m, struct erofs_reader *r);
void put_inode(struct img *m, uint64_t nid, uint16_t mode, unsigned int layout,
	       uint64_t size, uint32_t u, bool extended);

struct ent {
	uint64_t nid;
	const char *name;
	uint8_t ft;
};

/* Encodes a directory block of entries (already sorted); returns bytes used. */
unsigned int put_dirblock(uint8_t *blk, const struct ent *e, unsigned int n);
/* root directory inline right after its inode; returns the dir size */
unsigned int put_root(struct img *m, const struct ent *e, unsigned int n);

#endif
