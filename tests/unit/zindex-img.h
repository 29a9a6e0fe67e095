/* SPDX-License-Identifier: MIT */
/*
 * What the lcluster index tests (tests/unit/test-zindex*.c) share: the
 * seeded random numbers, an extent layout, the one-file image the writer's
 * erofs_zindex_encode() makes of it (superblock, the inode at nid NID, its
 * index, data from block DATA_BLK), and a reader's mapping of the whole
 * file.
 */
#ifndef ZINDEX_IMG_H
#define ZINDEX_IMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/build/zindex.h"
#include "erofs/read/reader.h"

#define BLK		4096u
#define NID		40u	/* inode at byte 1280, after the superblock and its config */
#define DATA_BLK	2u	/* first data block */

/* seeded by main(): the same cases for the same seed on every host */
extern uint64_t rng_state;
uint64_t rnd(void);
uint64_t rnd_below(uint64_t n);

struct layout {
	struct erofs_build_options opts;
	struct erofs_zinfo zi;
	uint64_t size, nlc;
	unsigned int core, xattr_icount, xattr_size;
	bool big;
	bool want_tail;		/* -E ztailpacking: last pcluster inline, if it fits */
	unsigned int maxblks;
	char desc[160];
};

void add_extent(struct layout *l, uint32_t *cap, uint64_t lofs, uint16_t nblks, bool raw);
void free_layout(struct layout *l);

struct img {
	uint8_t *b;
	size_t size;
	uint32_t meta;		/* inode core + xattrs */
	uint32_t index_size;
};

/* The image of l: the writer's index after the inode, the data blocks
 * zeroed; an inline tail (l->want_tail) is chosen here, at random. */
void build_image(struct layout *l, struct img *m);

/* Opens m, reads the inode at NID and maps the whole file; returns the
 * first error (message in r) or 0, or -ERANGE for a mapping that breaks
 * the reader's contract.  The caller closes r. */
int map_image(struct erofs_reader *r, const struct img *m, struct erofs_rd_inode *vi);

#endif
