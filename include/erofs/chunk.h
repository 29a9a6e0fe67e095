/* SPDX-License-Identifier: MIT */
/*
 * --chunksize: chunk-based files (the CHUNK_BASED layout with a 4-byte
 * block map).  Each chunk of a file is stored once in the chunk area however
 * many times it occurs in the tree (XXH3-128 hash, then a byte comparison),
 * and chunks of zeros, holes included, take no space at all (null entries),
 * so sparse files stay sparse.  Unique chunks wait in the spool until the
 * writer copies the whole spool into the image as one area.
 */
#ifndef EROFS_CHUNK_H
#define EROFS_CHUNK_H

#include <stdint.h>

#include "erofs/build.h"
#include "erofs/compress.h"

struct erofs_tree;

struct erofs_chunks {
	uint8_t chunkbits;		/* this file's chunk size: runs merged (see chunk.c) */
	uint32_t count;
	uint32_t *spool_block;		/* per chunk: block in the spool, or EROFS_NULL_ADDR */
};

struct erofs_chunk_stats {
	uint64_t chunks, shared, null;	/* chunks seen, stored elsewhere already, holes */
	uint64_t saved_bytes;		/* bytes that sharing and holes kept out */
	uint64_t flat;			/* files kept flat in the chunk area (tail inline) */
};

int erofs_chunk_tree(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     struct erofs_spool *spool, struct erofs_chunk_stats *stats);
void erofs_chunks_free(struct erofs_chunks *chunks);

/* i_u of a chunk-based inode: the chunk size in block bits, block-map form. */
uint16_t erofs_chunk_format(const struct erofs_build_options *opts,
			    const struct erofs_chunks *chunks);
/* Bytes after the inode core and xattrs: alignment and the block map. */
uint32_t erofs_chunk_table_size(uint32_t meta_size, uint32_t count);
void erofs_chunk_table_encode(const struct erofs_chunks *chunks, uint32_t meta_size,
			      uint32_t area_blkaddr, uint8_t *out);

#endif
