// SPDX-License-Identifier: MIT
/* Chunk-based files with chunk dedup and holes (see include/erofs/build/chunk.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "erofs/build/chunk.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/image.h"
#include "erofs/common/io.h"
#include "erofs/common/ondisk.h"
#include "erofs/build/plain.h"
#include "erofs/build/tails.h"

/*
 * Chunks stored so far, by content: open addressing on 64 bits of the hash
 * (16 bytes a slot, up to three quarters full); a match is confirmed byte
 * by byte anyway, so the rest of the hash would only spare rare compares.
 */
struct chunk_entry {
	uint64_t hash;
	uint32_t len;
	uint32_t blkaddr;	/* EROFS_NULL_ADDR: empty slot */
};

struct erofs_chunk_index {
	struct chunk_entry *table;
	size_t mask, used;
	uint32_t next_chunk;	/* of the file being committed */
};

#define CHUNK_FORMAT_INDEXES	0x0020u
#define CHUNK_INDEX_SIZE	8u
#define BLOB_DEVICE_ID		1u

uint16_t erofs_chunk_format(const struct erofs_build_options *opts,
			    const struct erofs_chunks *chunks)
{
	return (uint16_t)((chunks->chunkbits - opts->blkszbits) |
			  (erofs_opts_chunk_indexes(opts) ? CHUNK_FORMAT_INDEXES : 0));
}

/* Where chunk data goes: the blob, or the image itself. */
static struct erofs_image *chunk_dest(const struct erofs_commit *cc)
{
	return cc->img->blob ? cc->img->blob : cc->img;
}

/* Whether groups of 2^shift chunks are each all holes or one contiguous run. */
static bool mergeable(const struct erofs_chunks *ch, unsigned int shift, uint32_t blocks_each)
{
	uint32_t group = 1u << shift;

	for (uint32_t g = 0; g < ch->count; g += group) {
		uint32_t first = ch->blkaddr[g];

		for (uint32_t j = g + 1; j < g + group && j < ch->count; j++) {
			uint32_t want = first == EROFS_NULL_ADDR ? EROFS_NULL_ADDR
								 : first + (j - g) * blocks_each;

			if (ch->blkaddr[j] != want)
				return false;
		}
	}
	return true;
}

/*
 * A file whose chunks lie in long contiguous runs (or long holes) gets a
 * larger chunk size of its own, so its block map shrinks: a file stored
 * whole needs one entry, a file of holes one null entry.
 */
static void merge_runs(const struct erofs_build_options *opts, struct erofs_chunks *ch)
{
	uint32_t blocks_each = 1u << (opts->chunkbits - opts->blkszbits);
	unsigned int shift = 0;

	while (ch->count > 1u << shift && opts->chunkbits + shift + 1 <= opts->blkszbits + 31 &&
	       mergeable(ch, shift + 1, blocks_each))
		shift++;
	if (!shift)
		return;
	for (uint32_t i = 0; i << shift < ch->count; i++)
		ch->blkaddr[i] = ch->blkaddr[i << shift];
	ch->count = (ch->count + (1u << shift) - 1) >> shift;
	ch->chunkbits = (uint8_t)(opts->chunkbits + shift);
}

static uint32_t table_unit(const struct erofs_build_options *opts)
{
	return erofs_opts_chunk_indexes(opts) ? CHUNK_INDEX_SIZE : 4u;
}

uint32_t erofs_chunk_table_size(const struct erofs_build_options *opts, uint32_t meta_size,
				uint32_t count)
{
	uint32_t unit = table_unit(opts);

	return ((meta_size + unit - 1) & ~(unit - 1)) - meta_size + unit * count;
}

void erofs_chunk_table_encode(const struct erofs_build_options *opts,
			      const struct erofs_chunks *chunks, uint32_t meta_size, uint8_t *out)
{
	uint32_t unit = table_unit(opts);
	uint32_t pad = ((meta_size + unit - 1) & ~(unit - 1)) - meta_size;

	memset(out, 0, pad + (size_t)unit * chunks->count);
	for (uint32_t i = 0; i < chunks->count; i++) {
		uint8_t *at = out + pad + (size_t)unit * i;

		if (unit == 4) {
			put_le32(at, chunks->blkaddr[i]);
			continue;
		}
		/* advise 0; a hole names no device, nor does data in the image
		 * itself (-E force-chunk-indexes without an extra device) */
		if (chunks->blkaddr[i] != EROFS_NULL_ADDR && erofs_opts_extra_device(opts))
			put_le16(at + 2, chunks->device_id ? chunks->device_id : BLOB_DEVICE_ID);
		put_le32(at + 4, chunks->blkaddr[i]);
	}
}

uint64_t erofs_chunk_piece_size(const struct erofs_build_options *opts)
{
	uint64_t chunksize = 1ull << opts->chunkbits;

	return chunksize >= EROFS_SEGMENT_SIZE ? chunksize
					       : EROFS_SEGMENT_SIZE / chunksize * chunksize;
}

/* Reads the piece's chunks, skipping holes, and hashes those that hold data. */
int erofs_chunk_work(const struct erofs_work_ctx *ctx, struct erofs_work *w,
		     struct erofs_dir_cache *dirs)
{
	const struct erofs_build_options *opts = ctx->opts;
	const uint64_t chunksize = 1ull << opts->chunkbits;
	const uint64_t base = erofs_tree_data_base(ctx->tree, w->inode);
	int err = 0;

	w->fd = erofs_tree_open_or_report(opts, ctx->tree, w->inode, dirs);
	if (w->fd < 0) {
		err = w->fd;
		w->fd = -1;
		return err;
	}
	w->nr_chunks = (uint32_t)((w->end - w->start + chunksize - 1) / chunksize);
	/* (a block of slack: the file's last chunk is padded in place) */
	w->data = malloc(w->end - w->start + (1u << opts->blkszbits));
	w->chunks = calloc(w->nr_chunks, sizeof(*w->chunks));
	if (!w->data || !w->chunks) {
		erofs_err("out of memory while chunking");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < w->nr_chunks && !err; i++) {
		uint64_t off = w->start + i * chunksize;
		size_t len = (size_t)(w->end - off < chunksize ? w->end - off : chunksize);
		uint8_t *buf = w->data + i * chunksize;
		off_t data = lseek(w->fd, (off_t)(base + off), SEEK_DATA);

		/* a hole: no need to read it */
		if ((data < 0 && errno == ENXIO) ||
		    (data >= 0 && (uint64_t)data >= base + off + len)) {
			w->chunks[i].null = true;
			continue;
		}
		if ((err = erofs_pread_all(w->fd, buf, len, base + off)))
			break;
		if (erofs_is_zero(buf, len))
			w->chunks[i].null = true;
		else
			w->chunks[i].hash = XXH3_128bits(buf, len);
	}
	if (!err && w->last && !erofs_tree_size_unchanged(ctx->tree, w->inode, w->fd))
		err = -EAGAIN;
	if (err)
		erofs_report_source_error(opts, w->inode, err);
	return err;
}

int erofs_chunk_begin(struct erofs_commit *cc)
{
	struct erofs_chunk_index *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	cc->chunk_index = k;
	return 0;
}

void erofs_chunk_end(struct erofs_commit *cc)
{
	if (cc->chunk_index)
		free(cc->chunk_index->table);
	free(cc->chunk_index);
	cc->chunk_index = NULL;
}

static size_t slot_of(const struct erofs_chunk_index *k, uint64_t h)
{
	return (size_t)h & k->mask;
}

static int table_grow(struct erofs_chunk_index *k)
{
	size_t mask = k->table ? k->mask * 2 + 1 : 4095;
	struct chunk_entry *bigger = malloc((mask + 1) * sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	for (size_t i = 0; i <= mask; i++)
		bigger[i].blkaddr = EROFS_NULL_ADDR;
	for (size_t i = 0; k->table && i <= k->mask; i++) {
		size_t s;

		if (k->table[i].blkaddr == EROFS_NULL_ADDR)
			continue;
		for (s = (size_t)k->table[i].hash & mask; bigger[s].blkaddr != EROFS_NULL_ADDR;
		     s = (s + 1) & mask)
			;
		bigger[s] = k->table[i];
	}
	free(k->table);
	k->table = bigger;
	k->mask = mask;
	return 0;
}

static int table_add(struct erofs_chunk_index *k, XXH128_hash_t h, uint32_t len, uint32_t blkaddr)
{
	size_t s;
	int err;

	if ((k->used + 1) * 4 > k->mask * 3 && (err = table_grow(k)))
		return err;
	for (s = slot_of(k, h.low64); k->table[s].blkaddr != EROFS_NULL_ADDR; s = (s + 1) & k->mask)
		;
	k->table[s] = (struct chunk_entry){ h.low64, len, blkaddr };
	k->used++;
	return 0;
}

/* New chunks of the piece being committed, closed up at the buffer's start. */
struct pending {
	uint8_t *buf;
	uint32_t first_blk, nr_blocks;
};

#define COMPARE_PIECE	(1u << 20)	/* what cc->scratch holds */

/* Whether the chunk stored at blkaddr holds these bytes. */
static int same_as_stored(struct erofs_commit *cc, uint32_t blkaddr, const uint8_t *bytes,
			  uint32_t len, const struct pending *pending, bool *same)
{
	const unsigned int bits = cc->opts->blkszbits;

	*same = false;
	if (blkaddr >= pending->first_blk && blkaddr < pending->first_blk + pending->nr_blocks) {
		*same = !memcmp(pending->buf + ((size_t)(blkaddr - pending->first_blk) << bits),
				bytes, len);
		return 0;
	}
	for (uint32_t off = 0; off < len; off += COMPARE_PIECE) {
		uint32_t n = len - off < COMPARE_PIECE ? len - off : COMPARE_PIECE;
		int err = erofs_image_pread(chunk_dest(cc), cc->scratch, n,
					    ((uint64_t)blkaddr << bits) + off);

		if (err)
			return err;
		if (memcmp(cc->scratch, bytes + off, n))
			return 0;
	}
	*same = true;
	return 0;
}

/* An identical stored chunk (hash, then bytes); EROFS_NULL_ADDR: none. */
static int find_same(struct erofs_commit *cc, XXH128_hash_t h, const uint8_t *bytes,
		     uint32_t len, const struct pending *pending, uint32_t *found)
{
	struct erofs_chunk_index *k = cc->chunk_index;

	*found = EROFS_NULL_ADDR;
	for (size_t s = k->table ? slot_of(k, h.low64) : 0;
	     k->table && k->table[s].blkaddr != EROFS_NULL_ADDR;
	     s = (s + 1) & k->mask) {
		const struct chunk_entry *e = &k->table[s];
		bool same;
		int err;

		if (e->len != len || e->hash != h.low64)
			continue;
		if ((err = same_as_stored(cc, e->blkaddr, bytes, len, pending, &same)))
			return err;
		if (same) {
			*found = e->blkaddr;
			return 0;
		}
	}
	return 0;
}

/*
 * Whether a file whose last chunk (len bytes) is new can stay a flat file
 * instead: every earlier chunk was stored for it, in order, right before
 * where this one goes, and its tail surely fits inline.  Its last chunk is
 * then stored without the tail and kept out of the index (its stored form
 * is not the whole chunk).
 */
static bool stays_flat(const struct erofs_commit *cc, const struct erofs_inode *inode,
		       const struct erofs_chunks *ch, uint32_t next_blk)
{
	uint32_t blocks_each = 1u << (cc->opts->chunkbits - cc->opts->blkszbits);

	if (cc->img->blob || !erofs_plain_tail_inline(cc->opts, inode))
		return false;
	if (ch->count > 1 && ch->blkaddr[0] == EROFS_NULL_ADDR)
		return false;	/* a hole: only a chunk table can say so */
	for (uint32_t i = 0; i + 1 < ch->count; i++)
		if (ch->blkaddr[i] != ch->blkaddr[0] + i * blocks_each)
			return false;
	return ch->count == 1 || (uint64_t)ch->blkaddr[ch->count - 2] + blocks_each == next_blk;
}

static int begin_file(struct erofs_commit *cc, struct erofs_inode *inode)
{
	const unsigned int chunkbits = cc->opts->chunkbits;
	struct erofs_chunks *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return -ENOMEM;
	inode->chunks = ch;
	ch->chunkbits = (uint8_t)chunkbits;
	ch->count = (uint32_t)((inode->size + (1ull << chunkbits) - 1) >> chunkbits);
	ch->blkaddr = malloc(ch->count * sizeof(*ch->blkaddr));
	cc->chunk_index->next_chunk = 0;
	inode->blkaddr = EROFS_NULL_ADDR;
	return ch->blkaddr ? 0 : -ENOMEM;
}

/* A flat file after all: its blocks from where its first chunk went, its tail inline. */
static int make_flat(struct erofs_commit *cc, struct erofs_inode *inode, uint32_t first_blk,
		     const uint8_t *tail, uint32_t tail_len)
{
	struct erofs_chunks *ch = inode->chunks;
	int err = erofs_tails_add(cc->tails, tail, tail_len, &inode->tail_pos);

	inode->tail_inline = (uint16_t)tail_len;
	inode->nr_blocks = (uint32_t)(inode->size >> cc->opts->blkszbits);
	inode->blkaddr = inode->nr_blocks ? (ch->count > 1 ? ch->blkaddr[0] : first_blk)
					  : EROFS_NULL_ADDR;
	free(ch->blkaddr);
	free(ch);
	inode->chunks = NULL;
	cc->stats->flat_chunk_files++;
	return err;
}

int erofs_chunk_commit(struct erofs_commit *cc, struct erofs_work *w)
{
	const struct erofs_build_options *opts = cc->opts;
	const unsigned int bits = opts->blkszbits;
	const uint32_t blksz = 1u << bits;
	const uint64_t chunksize = 1ull << opts->chunkbits;
	struct erofs_chunk_index *k = cc->chunk_index;
	struct erofs_inode *inode = w->inode;
	struct erofs_image *dest = chunk_dest(cc);
	struct pending pending = { .buf = w->data, .first_blk = dest->next_blk };
	const uint8_t *flat_tail = NULL;
	uint32_t flat_tail_len = 0, flat_first_blk = 0, blk;
	struct erofs_chunks *ch;
	int err;

	if (w->first && (err = begin_file(cc, inode)))
		return err;
	ch = inode->chunks;
	for (uint32_t i = 0; i < w->nr_chunks; i++) {
		uint32_t idx = k->next_chunk++;
		uint64_t off = w->start + i * chunksize;
		uint32_t len = (uint32_t)(w->end - off < chunksize ? w->end - off : chunksize);
		uint32_t blocks = (len + blksz - 1) / blksz, found;
		const uint8_t *bytes = w->data + i * chunksize;
		uint8_t *to = pending.buf + ((size_t)pending.nr_blocks << bits);

		cc->stats->chunks++;
		if (w->chunks[i].null) {
			ch->blkaddr[idx] = EROFS_NULL_ADDR;	/* reads back as zeros */
			cc->stats->null_chunks++;
			cc->stats->chunk_saved_bytes += (uint64_t)blocks << bits;
			continue;
		}
		if ((err = find_same(cc, w->chunks[i].hash, bytes, len, &pending, &found)))
			return err;
		if (found != EROFS_NULL_ADDR) {
			ch->blkaddr[idx] = found;
			cc->stats->shared_chunks++;
			cc->stats->chunk_saved_bytes += (uint64_t)blocks << bits;
			continue;
		}
		if (idx + 1 == ch->count &&
		    stays_flat(cc, inode, ch, pending.first_blk + pending.nr_blocks)) {
			/* only its whole blocks: the tail goes inline */
			flat_first_blk = pending.first_blk + pending.nr_blocks;
			flat_tail_len = len & (blksz - 1);
			memmove(to, bytes, len);
			flat_tail = to + (len - flat_tail_len);
			pending.nr_blocks += len >> bits;
			break;
		}
		if ((uint64_t)pending.first_blk + pending.nr_blocks + blocks > UINT32_MAX / 2) {
			erofs_err("the image grows past 2^31 blocks of chunks");
			return -EFBIG;
		}
		ch->blkaddr[idx] = pending.first_blk + pending.nr_blocks;
		memmove(to, bytes, len);
		memset(to + len, 0, ((size_t)blocks << bits) - len);
		pending.nr_blocks += blocks;
		if ((err = table_add(k, w->chunks[i].hash, len, ch->blkaddr[idx])))
			return err;
	}
	if (pending.nr_blocks) {
		if ((err = erofs_image_alloc(dest, pending.nr_blocks, &blk)))
			return err;
		cc->stats->bytes_written += (uint64_t)pending.nr_blocks << bits;
		if ((err = erofs_image_pwrite(dest, pending.buf, (size_t)pending.nr_blocks << bits,
					      (uint64_t)blk << bits)))
			return err;
	}
	if (flat_tail)
		return make_flat(cc, inode, flat_first_blk, flat_tail, flat_tail_len);
	if (w->last)
		merge_runs(opts, ch);
	return 0;
}
