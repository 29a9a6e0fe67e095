/* SPDX-License-Identifier: MIT */
/*
 * The units the pipeline moves (pipeline.h), as plain data shared by the
 * stages that fill them: a piece of work is a segment of one file (or of
 * the packed inode's data); a worker reads, hashes and compresses it, and
 * the committer puts the result into the image, strictly in order.
 */
#ifndef EROFS_WORK_H
#define EROFS_WORK_H

#include <stdbool.h>
#include <stdint.h>
#include <xxhash.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/* -E fragments: where the packed inode's data waits (fragment.h) */
struct erofs_packed;
struct erofs_dedup;
struct erofs_zdedupe;
struct erofs_image;
struct erofs_tails;
struct erofs_compressor;
struct erofs_chunk_index;

/* One chunk of --chunksize, as a worker found it. */
struct erofs_chunk_seen {
	XXH128_hash_t hash;
	bool null;			/* a hole or all zeros: no block at all */
};

enum erofs_work_kind {
	EROFS_WORK_PLAIN,		/* plain.h */
	EROFS_WORK_COMPRESS,		/* compress.h, zcommit.h */
	EROFS_WORK_CHUNKS,		/* chunk.h */
	EROFS_WORK_INDEX,		/* tarindex.h: data left where it is */
	EROFS_WORK_KEEP,		/* plain.h: a base image's blocks kept, its tail new */
};

struct erofs_work {
	/* what to do, set when the work is handed out */
	uint64_t seq;			/* position in commit order */
	enum erofs_work_kind kind;
	struct erofs_inode *inode;
	uint64_t start, end;		/* the file's bytes this work covers */
	bool first, last;		/* the file's first and last segments */
	bool packed;			/* a segment of the packed inode's data */
	uint64_t weight;		/* the memory it may hold, in bytes */

	/* what the worker found */
	bool done;			/* under the pipeline's lock */
	int err;			/* reported already */
	int fd;				/* the source, open until the work commits; -1: none */
	bool hashed;
	XXH128_hash_t hash;		/* of [start, end) */
	uint8_t *data;			/* the bytes themselves, when kept for the committer */
	/* compressed files */
	bool compressed;		/* blocks and z hold the segment compressed */
	bool dup_hint;			/* not compressed: an earlier file looks the same */
	uint8_t *blocks;		/* z.nr_blocks blocks */
	struct erofs_zinfo z;		/* lofs absolute, pblk from the segment's first block */
	uint8_t *frag;			/* -E fragments: the segment's bytes from frag_at on */
	uint64_t frag_at;
	uint32_t frag_len, frag_est;	/* ...and their size once compressed, estimated */
	bool frag_est_order0;		/* frag_est is the order-0 one; fast LZ4's not made */
	/* --chunksize */
	struct erofs_chunk_seen *chunks;
	uint32_t nr_chunks;
};

/* What every worker shares (read-only but for the dedup hints, which lock). */
struct erofs_work_ctx {
	const struct erofs_build_options *opts;
	const struct erofs_tree *tree;
	int packed_fd;			/* the packed inode's data; -1: none */
	struct erofs_dedup *dedup;	/* whole-file dedup; NULL: off */
};

/* What the committer has: the image and the indexes of what it holds. */
struct erofs_build_stats {
	uint32_t dedup_files;		/* files sharing another file's data */
	uint64_t dedup_bytes;		/* the blocks and tails they did not store */
	uint32_t zdedupe_blocks;	/* -E dedupe: pcluster blocks used again, not stored */
	uint32_t nr_fragments, nr_shared_fragments;	/* fragments, those stored once for several */
	uint64_t shared_fragment_bytes;
	uint64_t chunks, shared_chunks, null_chunks;	/* --chunksize */
	uint64_t chunk_saved_bytes;
	uint64_t flat_chunk_files;	/* files sharing nothing, kept flat */
	uint32_t nr_compressed;		/* files stored compressed */
	uint64_t compressed_input;	/* their bytes */
	uint64_t bytes_read, bytes_written;	/* source bytes committed, image bytes written */
	uint64_t files_done;
};

struct erofs_commit {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_image *img;
	struct erofs_tails *tails;
	struct erofs_dedup *dedup;	/* NULL: off */
	struct erofs_zdedupe *zdedupe;	/* -E dedupe; NULL: off */
	struct erofs_packed *packed;	/* -E fragments; NULL: off */
	struct erofs_chunk_index *chunk_index;	/* --chunksize; NULL: off */
	struct erofs_build_stats *stats;
	struct erofs_work_ctx *wctx;
	struct erofs_compressor *compressor;	/* the committer's own, made when needed */
	uint8_t *scratch, *scratch2;	/* EROFS_PCLUSTER_MAX_SIZE bytes each */

	/* the file being committed */
	uint32_t file_blk;		/* its first data block */
	uint32_t unaligned_blk;		/* --dsunit: the next block before it was aligned */
	uint32_t zdedupe_mark;		/* the pcluster index before it */
	uint64_t packed_mark;		/* the packed data before it */
	XXH3_state_t *file_hash;	/* the hash of its segments' hashes */
	uint32_t nr_segments;
	XXH128_hash_t first_hash;
	bool file_hashed;		/* every segment was */
};

/* A source of files (a directory scan, later a tar stream). */
/* Hands files to the pipeline, in order; non-zero: stop (the build failed). */
typedef int (*erofs_file_sink)(void *pipeline, struct erofs_inode *const *files, size_t n);

struct erofs_source {
	/* Runs in a thread of its own; returns 0 or an error it reported.
	 * Fills the tree and hands over every regular file with data, in the
	 * order its data is to be laid out, a few at a time. */
	int (*run)(void *arg, erofs_file_sink sink, void *pipeline);
	void *arg;
};

/* The size every segment has but a file's last: cut points do not depend on workers. */
#define EROFS_SEGMENT_SIZE	(8u << 20)
#define EROFS_SEGMENT_SIZE_BIG	(16u << 20)

/*
 * The segment size of a build: an extent never crosses a segment, so each
 * segment ends in a short pcluster.  With pclusters of 512 KiB and more,
 * an 8 MiB segment holds barely one full LZMA pcluster (about 6 MiB of
 * input) and a short one; 16 MiB segments halve that loss.
 */
static inline uint32_t erofs_segment_size(const struct erofs_build_options *opts)
{
	uint32_t largest = opts->pcluster_size > opts->packed_pcluster_size
				   ? opts->pcluster_size : opts->packed_pcluster_size;

	for (size_t i = 0; i < opts->nr_hints; i++)
		if (opts->hints[i].pcluster_size > largest)
			largest = opts->hints[i].pcluster_size;
	return largest >= (512u << 10) ? EROFS_SEGMENT_SIZE_BIG : EROFS_SEGMENT_SIZE;
}

#endif
