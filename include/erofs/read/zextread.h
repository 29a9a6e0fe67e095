/* SPDX-License-Identifier: MIT */
/*
 * Encoded extent records (48-bit, Linux 6.15) as the reader decodes,
 * checks and maps them (lib/read/zextread.c); their writer is
 * lib/build/zextent.c.
 */
#ifndef EROFS_ZEXTREAD_H
#define EROFS_ZEXTREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

struct erofs_zext_rec {
	uint32_t plen;			/* raw: length, partial bit, format */
	uint64_t pstart;		/* byte address (recsz >= 8) */
	uint64_t lstart;		/* file offset (recsz >= 16) */
};

/* A table of records, fetched one at a time through get (so that the unit
 * tests can hand-build them, and the reader read them from the metabox). */
struct erofs_zext_table {
	unsigned int recsz;		/* 4, 8, 16 or 32 */
	unsigned int lclusterbits;	/* recsz <= 8: one record per lcluster */
	uint64_t nrecs;
	uint64_t isize;
	uint64_t base;			/* recsz 4: where record 0's data starts */
	bool fragment;			/* the last record is the packed inode's tail */
	bool interlaced;		/* advise INTERLACED */
	unsigned int blkszbits;
	uint16_t algs;			/* the superblock's available algorithms */
	uint64_t phys_limit;		/* stored bytes must end at or before this */
	int (*get)(void *arg, uint64_t i, uint8_t *raw);	/* recsz bytes of record i */
	void *arg;
	/* recsz 4: the start of record run_idx, so sequential maps stay O(1) */
	bool run_valid;
	uint64_t run_idx, run_pa;
};

void erofs_zext_decode(const uint8_t *raw, unsigned int recsz, struct erofs_zext_rec *rec);
/* Checks the table as a whole (its size; with 16 and 32-byte records that
 * lstart rises strictly from 0 and stays below i_size): 0 or -EUCLEAN with
 * a message in err; an error of get is returned as is. */
int erofs_zext_check(struct erofs_zext_table *t, char *err, size_t errlen);
/* Maps la (< isize) to its extent, every field of its record checked.  A
 * hole comes back unmapped; the fragment tail as EROFS_MAP_FRAGMENT with
 * its offset in the packed inode in pa. */
int erofs_zext_map(struct erofs_zext_table *t, uint64_t la, struct erofs_map *map, char *err,
		   size_t errlen);

/* The reader's side: the map header h at byte hdr of vi's metadata space. */
int erofs_zext_setup(struct erofs_reader *r, struct erofs_rd_inode *vi, const uint8_t h[8],
		     uint64_t hdr);
int erofs_zext_map_inode(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
			 struct erofs_map *map, uint64_t *run_idx, uint64_t *run_pa, bool *run_valid);

#endif
