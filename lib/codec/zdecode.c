// SPDX-License-Identifier: MIT
/* Decoding one pcluster's stream (see include/erofs/codec/zdecode.h). */
#include <errno.h>
#include <lz4.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_getFrameHeader() */
#include <zstd.h>
#include <zstd_errors.h>

#include "erofs/common/compalg.h"
#include "erofs/common/format.h"
#include "erofs/codec/zdecode.h"

#ifndef EFSCORRUPTED
#define EFSCORRUPTED EUCLEAN
#endif

struct erofs_zdecoder {
	lzma_stream lzma;
	bool lzma_used;
	z_stream zlib;
	bool zlib_ready;
	ZSTD_DCtx *zstd;
};

const char *erofs_zdecode_name(unsigned int alg)
{
	return erofs_compr_alg_title(alg);
}

static int corrupt(const struct erofs_zdecode_req *req, char *why, size_t why_len)
{
	snprintf(why, why_len, "corrupt %s data (%zu bytes)", erofs_zdecode_name(req->alg),
		 req->insize);
	return -EFSCORRUPTED;
}

static int wrong_size(const struct erofs_zdecode_req *req, const char *what, size_t got,
		      char *why, size_t why_len)
{
	snprintf(why, why_len, "%s data decodes to %s%zu bytes", erofs_zdecode_name(req->alg), what,
		 got);
	return -EFSCORRUPTED;
}

static int decode_lz4(const struct erofs_zdecode_req *req, char *why, size_t why_len)
{
	int ret;

	if (req->insize > INT32_MAX || req->llen > INT32_MAX)
		return corrupt(req, why, why_len);
	if (req->partial)
		ret = LZ4_decompress_safe_partial((const char *)req->src, (char *)req->dst,
						  (int)req->insize, (int)req->llen, (int)req->llen);
	else
		ret = LZ4_decompress_safe((const char *)req->src, (char *)req->dst,
					  (int)req->insize, (int)req->llen);
	if (ret < 0)
		return corrupt(req, why, why_len);
	if ((size_t)ret != req->llen)
		return wrong_size(req, "", (size_t)ret, why, why_len);
	return 0;
}

static int decode_lzma(struct erofs_zdecoder *d, const struct erofs_zdecode_req *req, char *why,
		       size_t why_len)
{
	lzma_ret ret;

	if (!d->lzma_used) {
		d->lzma = (lzma_stream)LZMA_STREAM_INIT;
		d->lzma_used = true;
	}
	/* the stream fills its pcluster to the end (0-padding), so its size is known */
	ret = lzma_microlzma_decoder(&d->lzma, req->insize, req->llen, !req->partial,
				     req->dict_size);
	if (ret == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (ret != LZMA_OK)
		return corrupt(req, why, why_len);
	d->lzma.next_in = req->src;
	d->lzma.avail_in = req->insize;
	d->lzma.next_out = req->dst;
	d->lzma.avail_out = req->llen;
	ret = lzma_code(&d->lzma, LZMA_FINISH);
	if (ret == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (ret != LZMA_STREAM_END)
		return corrupt(req, why, why_len);
	if (d->lzma.total_out != req->llen)
		return wrong_size(req, "", (size_t)d->lzma.total_out, why, why_len);
	return 0;
}

static int decode_deflate(struct erofs_zdecoder *d, const struct erofs_zdecode_req *req,
			  char *why, size_t why_len)
{
	uint8_t extra;
	int ret;

	if (!d->zlib_ready) {
		/* the largest window: the kernel inflates every stream with it too */
		if (inflateInit2(&d->zlib, -MAX_WBITS) != Z_OK)
			return -ENOMEM;
		d->zlib_ready = true;
	} else if (inflateReset(&d->zlib) != Z_OK) {
		return corrupt(req, why, why_len);
	}
	if (req->insize > UINT32_MAX || req->llen > UINT32_MAX)
		return corrupt(req, why, why_len);
	d->zlib.next_in = (Bytef *)req->src;
	d->zlib.avail_in = (uInt)req->insize;
	d->zlib.next_out = req->dst;
	d->zlib.avail_out = (uInt)req->llen;
	ret = inflate(&d->zlib, Z_SYNC_FLUSH);
	if (ret == Z_MEM_ERROR)
		return -ENOMEM;
	if (ret != Z_OK && ret != Z_STREAM_END && !(ret == Z_BUF_ERROR && !d->zlib.avail_out))
		return corrupt(req, why, why_len);
	if (d->zlib.avail_out)
		return ret == Z_STREAM_END ? wrong_size(req, "", d->zlib.total_out, why, why_len)
					   : corrupt(req, why, why_len);
	if (req->partial || ret == Z_STREAM_END)
		return 0;
	/* the output is full: the stream must end here, with nothing more to give */
	d->zlib.next_out = &extra;
	d->zlib.avail_out = 1;
	ret = inflate(&d->zlib, Z_SYNC_FLUSH);
	if (ret == Z_STREAM_END && d->zlib.avail_out)
		return 0;
	if (!d->zlib.avail_out)
		return wrong_size(req, "more than ", req->llen, why, why_len);
	return corrupt(req, why, why_len);
}

static int decode_zstd(struct erofs_zdecoder *d, const struct erofs_zdecode_req *req, char *why,
		       size_t why_len)
{
	ZSTD_inBuffer in = { req->src, req->insize, 0 };
	ZSTD_outBuffer out = { req->dst, req->llen, 0 };
	const unsigned int window_log = req->window_log < 10 ? 10 : req->window_log;
	ZSTD_frameHeader fh;
	uint8_t extra;
	size_t ret;

	if (!d->zstd && !(d->zstd = ZSTD_createDCtx()))
		return -ENOMEM;
	/*
	 * A frame wanting a larger window than the superblock's is refused, as
	 * the kernel's bounded stream decoder does; libzstd itself only checks
	 * when it needs a window buffer, not when the output holds the frame.
	 */
	if (ZSTD_getFrameHeader(&fh, req->src, req->insize))
		return corrupt(req, why, why_len);
	if (fh.windowSize > (1ull << window_log)) {
		snprintf(why, why_len, "zstd frame with a %llu-byte window (the superblock allows %llu)",
			 (unsigned long long)fh.windowSize, 1ull << window_log);
		return -EFSCORRUPTED;
	}
	ZSTD_DCtx_reset(d->zstd, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(ZSTD_DCtx_setParameter(d->zstd, ZSTD_d_windowLogMax, (int)window_log)))
		return corrupt(req, why, why_len);
	for (;;) {
		size_t before_in = in.pos, before_out = out.pos;

		ret = ZSTD_decompressStream(d->zstd, &out, &in);
		if (ZSTD_isError(ret)) {
			if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
				return -ENOMEM;
			return corrupt(req, why, why_len);
		}
		if (!ret || out.pos == out.size)
			break;
		if (in.pos == before_in && out.pos == before_out)	/* the stream stops short */
			return corrupt(req, why, why_len);
	}
	if (out.pos != req->llen)
		return wrong_size(req, "", out.pos, why, why_len);
	if (req->partial || !ret)
		return 0;
	/* the output is full: the frame must end here */
	out = (ZSTD_outBuffer){ &extra, 1, 0 };
	for (;;) {
		size_t before_in = in.pos;

		ret = ZSTD_decompressStream(d->zstd, &out, &in);
		if (ZSTD_isError(ret))
			return corrupt(req, why, why_len);
		if (out.pos)
			return wrong_size(req, "more than ", req->llen, why, why_len);
		if (!ret)
			return 0;
		if (in.pos == before_in)
			return corrupt(req, why, why_len);
	}
}

int erofs_zdecode(struct erofs_zdecoder **state, const struct erofs_zdecode_req *req,
		  char *why, size_t why_len)
{
	if (req->alg == EROFS_COMPR_LZ4)
		return decode_lz4(req, why, why_len);
	if (!*state && !(*state = calloc(1, sizeof(**state))))
		return -ENOMEM;
	switch (req->alg) {
	case EROFS_COMPR_LZMA: return decode_lzma(*state, req, why, why_len);
	case EROFS_COMPR_DEFLATE: return decode_deflate(*state, req, why, why_len);
	case EROFS_COMPR_ZSTD: return decode_zstd(*state, req, why, why_len);
	default:
		snprintf(why, why_len, "unknown compression algorithm %u", req->alg);
		return -EOPNOTSUPP;
	}
}

void erofs_zdecoder_free(struct erofs_zdecoder *d)
{
	if (!d)
		return;
	if (d->lzma_used)
		lzma_end(&d->lzma);
	if (d->zlib_ready)
		inflateEnd(&d->zlib);
	ZSTD_freeDCtx(d->zstd);
	free(d);
}
