/* SPDX-License-Identifier: MIT */
/*
 * Fixed-output-size compression: each physical cluster (pcluster) of N
 * blocks is filled with as much input as liblz4's destination-size
 * compressors fit into it, so every block read from disk is fully used.
 * Compressed pclusters are spooled to a temporary file before the layout
 * is planned (a file that does not gain is stored plain instead), then
 * copied into place by the writer.  The index encoders (full and compact)
 * live in zindex.c.
 */
#ifndef EROFS_COMPRESS_H
#define EROFS_COMPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/build.h"

struct erofs_tree;
struct erofs_inode;

/* One extent: logical bytes [lofs, next extent's lofs) from one pcluster. */
struct erofs_zextent {
	uint64_t lofs;
	/* -E dedupe: the pcluster is another file's (NULL: this file's own) */
	const struct erofs_inode *owner;
	uint32_t pblk;		/* first block, counted from the owner's first compressed block */
	uint16_t nblks;
	bool raw;		/* stored uncompressed (a PLAIN lcluster head) */
	uint16_t clen;		/* compressed bytes (raw: the extent's bytes in its block) */
};

struct erofs_zinfo {
	struct erofs_zextent *extents;
	uint32_t nr_extents;
	uint32_t nr_blocks;	/* compressed blocks of the file */
	uint32_t pcluster_size;	/* bytes; 0 means the -C default */
	uint64_t spool_pos;	/* where those blocks wait in the spool */
	/* -E ztailpacking: the last extent's pcluster stored inline after the
	 * index instead of in a block of its own */
	uint8_t *tail;
	uint16_t tail_size;
	/* -E fragments: the file's bytes from frag_lofs on (all of them when
	 * frag_lofs is 0) are in the packed inode's data at frag_off; the last
	 * extent, of no blocks, stands for them in the index */
	bool fragment;
	uint64_t frag_lofs, frag_off;
	/* -E dedupe: some extent uses a pcluster out of order, which only
	 * full indexes can address */
	bool full_index;
	uint32_t shared_blocks;	/* blocks its extents use that it did not store */
};

static inline bool erofs_zinfo_whole_fragment(const struct erofs_zinfo *zi)
{
	return zi && zi->fragment && !zi->frag_lofs;
}

/* The spool: an unlinked temporary file beside the image. */
struct erofs_spool {
	int fd;
	uint64_t size;
};

/*
 * Compresses every regular file of the tree that gains from it, filling
 * inode->z; the others keep inode->z NULL and are stored plain.  With
 * fragments, it also builds and compresses tree->packed.
 */
int erofs_compress_tree(const struct erofs_build_options *opts, struct erofs_tree *tree,
			struct erofs_spool *spool);
int erofs_spool_open(const struct erofs_build_options *opts, struct erofs_spool *spool);
void erofs_spool_close(struct erofs_spool *spool);
void erofs_zinfo_free(struct erofs_zinfo *zi);

/* --- indexes (zindex.c) --- */

/* Bytes after the inode core and xattrs: alignment, map header and index
 * (zi NULL: the largest a file of this size can need). */
uint32_t erofs_zindex_size(const struct erofs_build_options *opts, uint32_t meta_size,
			   uint64_t file_size, const struct erofs_zinfo *zi);
/* h_advise for a compressed file with these options. */
uint16_t erofs_zadvise(const struct erofs_build_options *opts, const struct erofs_zinfo *zi);
/* The pcluster size --compress-hints (or -C) gives a file, 0: do not
 * compress; and which -z algorithm compresses it. */
uint32_t erofs_pcluster_for(const struct erofs_build_options *opts, const char *path,
			    unsigned int *algorithm);
/* Encodes erofs_zindex_size() bytes at out; blkaddr is the first data block. */
void erofs_zindex_encode(const struct erofs_build_options *opts, uint32_t meta_size,
			 uint64_t file_size, const struct erofs_zinfo *zi, uint32_t blkaddr,
			 uint8_t *out);

#endif
