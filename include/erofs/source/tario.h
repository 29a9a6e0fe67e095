/* SPDX-License-Identifier: MIT */
/*
 * The byte stream under the tar reader (tar.h): a file or pipe read forward
 * only, plain or decoded through zlib (gzip), liblzma (xz, lzma) or libzstd,
 * counting the decoded bytes consumed so far.  A plain, seekable input is
 * skipped with lseek; anything else is read and dropped.
 */
#ifndef EROFS_TARIO_H
#define EROFS_TARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/build.h"

struct erofs_tar_stream {
	int fd;
	enum erofs_tar_decoder decoder;
	const char *name;
	bool seekable;		/* plain and lseek works: skip by seeking */
	uint64_t base;		/* plain: the file offset of the stream's first byte */
	uint64_t pos;		/* decoded bytes consumed */
	uint8_t *in;		/* raw bytes read from fd */
	size_t in_len, in_off;
	bool in_eof;
	uint8_t *out;		/* decoded bytes not consumed yet */
	size_t out_len, out_off;
	bool out_eof;		/* the decoder reached the end of its stream */
	void *codec;
	int dump_fd;		/* --ungzip=FILE: decoded bytes also go there; -1: none */
	uint64_t dumped;	/* bytes written to it */
};

/* 0 or -errno (reported).  Refuses a compressed stream when decoder is PLAIN. */
int erofs_tar_stream_open(struct erofs_tar_stream *s, int fd, enum erofs_tar_decoder decoder,
			  const char *name);
/* Reads exactly len bytes: 0, -ENODATA at the end of the stream (*got says
 * how many came), or another -errno (reported). */
int erofs_tar_stream_read(struct erofs_tar_stream *s, void *buf, size_t len, size_t *got);
/* Skips len bytes: 0, -ENODATA when the stream ends first, or -errno (reported). */
int erofs_tar_stream_skip(struct erofs_tar_stream *s, uint64_t len);
void erofs_tar_stream_close(struct erofs_tar_stream *s);

#endif
