/* SPDX-License-Identifier: MIT */
/*
 * The image walk shared by the libFuzzer harnesses (fuzz-reader.c,
 * fuzz-extract.c; its code in fuzz-walk.c, linked into every harness that
 * includes this file): what fsck.erofs does to an image, through the same
 * library calls (lib/read/, lib/check/extract.c), on an image
 * held in memory.
 *
 *   - the superblock (erofs_reader_open_mem, or _fd on a memfd);
 *   - every inode reachable from the root, each nid loaded once, each
 *     directory entered once (a second reference is a loop or a directory
 *     hard link and is not followed), entries collected and then visited
 *     depth-first over an explicit stack, as lib/check/check-image.c does (its nid
 *     table, names and paths are the ones used here: every node's path is
 *     put together at a few buffer sizes);
 *   - xattrs (shared and inline) of every inode, ACL values parsed;
 *   - symlink targets;
 *   - file and directory data: every extent mapped (erofs_map_blocks),
 *     compressed extents decoded (erofs_decode_extent), mapped ones read
 *     (erofs_read_mapped; fragments only checked against the packed
 *     inode, as fsck does), then the whole file read again with
 *     erofs_read_data() and a few ranges at pseudo-random offsets compared
 *     with that sequential read;
 *   - the packed inode (fragments), as fsck checks it: xattrs, every
 *     extent, all of its data;
 *   - link counts of files and directories after the walk;
 *   - with an extractor, the tree recreated below its directory the way
 *     fsck --extract=DIR does (dir_begin / node / hardlink / dir_end).
 *
 * Besides the sanitizers, the harness checks the reader's contract
 * (include/erofs/read/reader.h) and aborts when it is broken: a mapping that
 * does not contain the offset asked for, runs past i_size or lies outside
 * the image; a failure without a message; -EINVAL (the harness only makes
 * valid calls, so EINVAL means the reader handed itself something bad);
 * a symlink target of the wrong length; two reads of the same bytes that
 * differ.
 *
 * Work per input is bounded so that a slow but legitimate image (a 200 KiB
 * image can describe hundreds of MiB of compressed data) cannot pass for a
 * hang: FZ_DATA_BUDGET bytes decoded or copied, FZ_MAP_BUDGET mappings and
 * FZ_DENT_BUDGET directory entries; past those the walk goes on without
 * reading data, or stops.  A loop inside one library call is not bounded
 * by the harness: that is what the -timeout of the campaign catches.
 *
 * Byte 0 of the image (in the 1024 bytes before the superblock, which no
 * structure uses) selects harness modes, so the fuzzer can flip them:
 *   bit 0  keep the superblock checksum as it is; otherwise a checksummed
 *          superblock is resealed first, so mutations reach past it;
 *   bit 1  read through a file descriptor (a memfd) as fsck does, which
 *          takes the reader's pread and block-cache paths; fuzz-reader
 *          then walks the image from memory too, and both walks must
 *          agree on everything (a digest of all bytes read, entries,
 *          sizes and failure messages).
 */
#ifndef FUZZ_WALK_H
#define FUZZ_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz-diag.h"

#include "erofs/check/check.h"
#include "erofs/check/extract.h"
#include "erofs/read/reader.h"

#define FZ_KEEP_CSUM	0x01u
#define FZ_USE_FD	0x02u

#define FZ_DATA_BUDGET	(48ull << 20)	/* bytes decoded or copied per input */
#define FZ_MAP_BUDGET	(1u << 19)	/* erofs_map_blocks() calls per input */
#define FZ_DENT_BUDGET	(1u << 17)	/* directory entries kept per input */
#define FZ_CMP_MAX	(1u << 20)	/* files up to this size are re-read at random */
#define FZ_READ_CHUNK	(64u << 10)

/* ---- state ---- */

struct fz_dent {
	uint64_t nid;
	char *name;
	uint8_t ft;
};

struct fz_frame {
	struct erofs_rd_inode vi;
	struct fz_dent *ents;
	size_t n, cap, next;
	uint32_t subdirs;
	int dirfd;
	bool damaged;
};

struct fz {
	struct erofs_reader r;
	struct erofs_extractor *x;	/* NULL: check only */
	struct erofs_nidtab nids;	/* each nid reached, as fsck's */
	struct fz_frame *stack;
	size_t depth, stackcap;
	uint64_t data_left, maps_left, dents_left;
	uint8_t *buf;			/* FZ_READ_CHUNK */
	uint8_t *whole;			/* FZ_CMP_MAX: a file read sequentially */
	uint64_t sink;			/* digest of what was read and every failure */
	unsigned long problems;		/* what fsck would count as errors */
};

/* ---- helpers the harnesses share ---- */

/* malloc() and realloc() that abort: inputs are small, out of memory is a bug */
void *fz_alloc(size_t n);
void *fz_realloc(void *p, size_t n);
/* Order-sensitive digest of the walk: two walks of one image (from memory
 * and through a descriptor) must agree on it. */
void fz_fold(struct fz *f, uint64_t v);
void fz_fold_bytes(struct fz *f, const void *p, size_t n);
/* Every failure must be a negative errno this harness expects, with a
 * message; -EINVAL means the reader broke its own invariants. */
void fz_failed(struct fz *f, int err);
/* the nid table: fsck's own (lib/check/check-image.c) */
struct erofs_check_node *fz_find(struct fz *f, uint64_t nid);
struct erofs_check_node *fz_add(struct fz *f, uint64_t nid);
/* xorshift64: the next pseudo-random number of *s */
uint64_t fz_rand(uint64_t *s);

/* ---- the walk ---- */

/* The whole walk; x (may be NULL) extracts as fsck --extract=DIR does. */
void fz_walk(struct fz *f, struct erofs_extractor *x);
/* Leaves the innermost directory of the walk: its link count checked, its
 * extraction finished, its entries freed. */
void fz_pop_dir(struct fz *f);

/* ---- setup and teardown for one input ---- */

/* A private copy of the input, the superblock checksum resealed unless
 * byte 0 says otherwise. */
uint8_t *fz_image(const uint8_t *data, size_t size, unsigned int *flags);
/* A memfd holding the image, as fsck.erofs would be given one. */
int fz_memfd(const uint8_t *img, size_t size);
/* Opens the image from memory or, with FZ_USE_FD, through a memfd
 * (returned in *fdp for the caller to close). */
int fz_open(struct fz *f, const uint8_t *img, size_t size, unsigned int flags, int *fdp);
void fz_init(struct fz *f);
void fz_free(struct fz *f);

#endif
