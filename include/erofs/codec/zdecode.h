/* SPDX-License-Identifier: MIT */
/*
 * Decoders of one pcluster's stream, one per EROFS algorithm: LZ4 through
 * liblz4, MicroLZMA through liblzma, raw DEFLATE through zlib, zstd through
 * libzstd.  Every decoder writes into exactly the buffer it is given and
 * reads only the bytes it is given; a stream that ends early, runs past
 * its output or refers to history it does not have is reported, never
 * trusted.
 */
#ifndef EROFS_ZDECODE_H
#define EROFS_ZDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct erofs_zdecoder;		/* the libraries' contexts, made on first use */

struct erofs_zdecode_req {
	unsigned int alg;		/* EROFS_COMPR_* */
	const uint8_t *src;		/* the stream, padding zeros skipped */
	size_t insize;
	uint8_t *dst;
	size_t llen;			/* bytes wanted */
	/* the stream may decode to more than llen; otherwise exactly llen */
	bool partial;
	uint32_t dict_size;		/* lzma: the superblock's dictionary */
	unsigned int window_log;	/* zstd: the superblock's largest window */
};

/* The algorithm's name in messages ("LZ4", "MicroLZMA", "DEFLATE", "zstd"). */
const char *erofs_zdecode_name(unsigned int alg);

/*
 * 0 on success; -EFSCORRUPTED with the reason in why ("corrupt zstd data",
 * "DEFLATE data decodes to 10 bytes"); -ENOMEM.
 */
int erofs_zdecode(struct erofs_zdecoder **state, const struct erofs_zdecode_req *req,
		  char *why, size_t why_len);
void erofs_zdecoder_free(struct erofs_zdecoder *d);

#endif
