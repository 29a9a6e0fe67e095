/* SPDX-License-Identifier: MIT */
/*
 * --chunksize: chunk-based files (the CHUNK_BASED layout with a 4-byte
 * block map).  Each chunk of a file is stored once however many times it
 * occurs in the tree (XXH3-128 hash, then a byte comparison against the
 * stored copy), and chunks of zeros, holes included, take no space at all
 * (null entries), so sparse files stay sparse.  A file that shares nothing
 * stays a flat file with its tail inline.  Workers read and hash chunks;
 * the committer looks them up and writes the new ones.
 *
 * --blobdev: every file's data is chunks, written to the blob (the
 * image's extra device 1) instead of the image; the inodes then carry
 * 8-byte chunk indexes naming that device (no file stays flat).
 */
#ifndef EROFS_CHUNK_H
#define EROFS_CHUNK_H

#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/tree.h"
#include "erofs/source/work.h"

/* The bytes of a file one piece of work covers: whole chunks. */
uint64_t erofs_chunk_piece_size(const struct erofs_build_options *opts);
int erofs_chunk_work(const struct erofs_work_ctx *ctx, struct erofs_work *w,
		     struct erofs_dir_cache *dirs);
/* The committer's chunk index: made before the first commit, freed after the last. */
int erofs_chunk_begin(struct erofs_commit *cc);
void erofs_chunk_end(struct erofs_commit *cc);
int erofs_chunk_commit(struct erofs_commit *cc, struct erofs_work *w);

/*
 * i_u of a chunk-based inode: the chunk size in block bits, block-map
 * form; with --blobdev, 8-byte chunk indexes naming device 1 (the blob).
 */
uint16_t erofs_chunk_format(const struct erofs_build_options *opts,
			    const struct erofs_chunks *chunks);
/* Bytes after the inode core and xattrs: alignment and the block map (or indexes). */
uint32_t erofs_chunk_table_size(const struct erofs_build_options *opts, uint32_t meta_size,
				uint32_t count);
void erofs_chunk_table_encode(const struct erofs_build_options *opts,
			      const struct erofs_chunks *chunks, uint32_t meta_size, uint8_t *out);

#endif
