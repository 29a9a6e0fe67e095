/* SPDX-License-Identifier: MIT */
/*
 * Cutting a raw DEFLATE stream short (lib/codec/deflate_cut.c).  libdeflate
 * has no destination-size mode, but a DEFLATE stream can end after any of
 * its symbols: the block there takes its end-of-block code and its final
 * bit.  So one compression of a little more input than fits a pcluster,
 * cut at the cap, fills it with the longest prefix of that parse, where a
 * search would compress prefix after prefix.
 */
#ifndef EROFS_DEFLATE_CUT_H
#define EROFS_DEFLATE_CUT_H

#include <stdbool.h>
#include <stdint.h>

/* Where a stream is cut: what erofs_deflate_find_cut() finds for erofs_deflate_write_cut(). */
struct erofs_deflate_cut {
	int64_t bits;			/* the stream's bits kept */
	int64_t final_bit;		/* the bit that marks the last block */
	int in_len;			/* the input the kept bits decode to */
	bool stored;			/* the cut is inside a stored block ... */
	int stored_len;			/* ... after this many of its bytes */
	uint32_t eob;			/* else the end-of-block code, as it is in the stream */
	int eob_len;			/* its length in bits */
};

/* A reader's tables, one per thread (malloc()'d; NULL when out of memory). */
struct erofs_deflate_cutter;
struct erofs_deflate_cutter *erofs_deflate_cutter_new(void);
void erofs_deflate_cutter_free(struct erofs_deflate_cutter *r);

/*
 * Finds the cut of stream[0, len) that decodes to the most input within
 * cap bytes.  Returns that input's length (cut->in_len), 0 when not even
 * one symbol fits or the stream does not decode; a stream that fits
 * whole is "cut" at its end.
 */
int erofs_deflate_find_cut(struct erofs_deflate_cutter *r, const uint8_t *stream, int len, int cap,
			   struct erofs_deflate_cut *cut);

/* Writes the stream cut there into dst (at least cap bytes); returns its length. */
int erofs_deflate_write_cut(const uint8_t *stream, const struct erofs_deflate_cut *cut,
			    uint8_t *dst);

#endif
