/* SPDX-License-Identifier: MIT */
/*
 * Fixed-output-size compression, the workers' side: each physical cluster
 * (pcluster) of N blocks is filled with as much input as liblz4's
 * destination-size compressors fit into it, so every block read from disk
 * is fully used.  A worker compresses one segment of a file into memory;
 * the committer (zcommit.h) decides what of it goes into the image.
 */
#ifndef EROFS_COMPRESS_H
#define EROFS_COMPRESS_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/tree.h"
#include "erofs/source/work.h"

/* One thread's compressor state. */
int erofs_compressor_new(const struct erofs_build_options *opts, struct erofs_compressor **out);
void erofs_compressor_free(struct erofs_compressor *c);

/*
 * Reads the work's bytes (opening the file into w->fd, kept open for the
 * committer), hashes them for whole-file dedup when ctx->dedup is set, and
 * compresses them into w->blocks and w->z, or into w->frag for fragments;
 * a whole file that an earlier piece of work already holds is left
 * uncompressed with w->dup_hint set.  Errors are reported.
 */
int erofs_compress_work(struct erofs_compressor *c, const struct erofs_work_ctx *ctx,
			struct erofs_work *w, struct erofs_dir_cache *dirs);

/*
 * Compresses src, the file's bytes from lofs on (not its end), into
 * out->blocks and out->z as pclusters alone (no fragment, no inline tail),
 * until an extent ends at or past stop bytes, or the len bytes run out:
 * the head of a fragment whose end is stored already.  out->end is where
 * the extents end.  The caller frees out->blocks and out->z.extents.
 */
int erofs_compress_head(struct erofs_compressor *c, struct erofs_inode *inode,
			const uint8_t *src, uint64_t lofs, uint32_t len, uint32_t stop,
			struct erofs_work *out);

/* What len bytes roughly cost compressed alone: fast LZ4's size, as for a fragment's estimate. */
uint32_t erofs_estimate_alone(struct erofs_compressor *c, const uint8_t *data, uint32_t len);

/*
 * What len bytes roughly cost compressed right after context[0,
 * context_len) (at most 64 KiB), which they may match: fast LZ4's size, as
 * for a fragment's estimate (see compress.c), with that context.
 */
uint32_t erofs_estimate_after(struct erofs_compressor *c, const uint8_t *context,
			      uint32_t context_len, const uint8_t *data, uint32_t len);

/*
 * Bytes an inline tail (-E ztailpacking) of this file may take: what the
 * block leaves beside the largest record the inode can have.
 */
uint32_t erofs_inline_room(const struct erofs_build_options *opts,
			   const struct erofs_inode *inode);

/* Reads [w->start, w->end) of the work's file into buf, opening w->fd first if needed. */
int erofs_read_work(const struct erofs_work_ctx *ctx, struct erofs_work *w, uint8_t *buf,
		    struct erofs_dir_cache *dirs);

#endif
