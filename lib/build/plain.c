// SPDX-License-Identifier: MIT
/* Plain files (see include/erofs/build/plain.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/build/compress.h"
#include "erofs/build/dedup.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/fragment.h"
#include "erofs/build/image.h"
#include "erofs/common/io.h"
#include "erofs/build/plain.h"
#include "erofs/build/tails.h"
#include "erofs/build/zdedupe.h"

bool erofs_plain_tail_inline(const struct erofs_build_options *opts,
			     const struct erofs_inode *inode)
{
	uint32_t blksz = 1u << opts->blkszbits, tail = (uint32_t)(inode->size & (blksz - 1));

	return opts->inline_data && tail &&
	       EROFS_EXTENDED_INODE_SIZE + inode->ibody_bound + tail <= blksz;
}

bool erofs_plain_wants_hash(const struct erofs_work_ctx *ctx, const struct erofs_inode *inode)
{
	return ctx->dedup && inode->size_seen && inode->size > 1u << ctx->opts->blkszbits;
}

int erofs_plain_work(const struct erofs_work_ctx *ctx, struct erofs_work *w,
		     struct erofs_dir_cache *dirs)
{
	int err;

	if (!erofs_plain_wants_hash(ctx, w->inode)) {
		/* the committer copies it straight from the source */
		if ((w->fd = erofs_tree_open_or_report(ctx->opts, ctx->tree, w->inode, dirs)) < 0) {
			err = w->fd;
			w->fd = -1;
			return err;
		}
		return 0;
	}
	w->data = malloc(w->end - w->start);
	if (!w->data) {
		erofs_err("out of memory while reading files");
		return -ENOMEM;
	}
	if ((err = erofs_read_work(ctx, w, w->data, dirs)))
		return err;
	w->hash = XXH3_128bits(w->data, (size_t)(w->end - w->start));
	w->hashed = true;
	return 0;
}

/* Writes whole blocks from memory at blk; blocks of zeros become holes. */
static int write_blocks(struct erofs_commit *cc, uint32_t blk, const uint8_t *buf, uint64_t len)
{
	const unsigned int bits = cc->opts->blkszbits;
	const uint32_t blksz = 1u << bits;
	uint64_t pos = (uint64_t)blk << bits;
	int err = 0;

	for (uint64_t done = 0, run; !err && done < len; done += run) {
		bool zeros = erofs_is_zero(buf + done, blksz);

		for (run = blksz; done + run < len &&
				  erofs_is_zero(buf + done + run, blksz) == zeros; run += blksz)
			;
		err = zeros ? erofs_image_zero(cc->img, pos + done, run)
			    : erofs_image_pwrite(cc->img, buf + done, (size_t)run, pos + done);
	}
	cc->stats->bytes_written += len;
	return err;
}

/*
 * The last partial block: kept for the inode, or in a block of its own.  A
 * file of less than a block has no other block to stay next to, so the
 * planner decides, knowing the inode's record; a longer one decides now,
 * against the largest record it can have.
 */
static int put_tail(struct erofs_commit *cc, struct erofs_inode *inode, const uint8_t *tail,
		    uint32_t len)
{
	const unsigned int bits = cc->opts->blkszbits;
	uint32_t blk;
	int err;

	inode->tail_late = inode->size < 1u << bits;
	if (inode->tail_late || erofs_plain_tail_inline(cc->opts, inode)) {
		inode->tail_inline = (uint16_t)len;
		return erofs_tails_add(cc->tails, tail, len, &inode->tail_pos);
	}
	memcpy(cc->scratch, tail, len);
	memset(cc->scratch + len, 0, (1u << bits) - len);
	if ((err = erofs_image_alloc(cc->img, 1, &blk)))
		return err;
	inode->nr_blocks++;
	cc->stats->bytes_written += 1u << bits;
	return erofs_image_pwrite(cc->img, cc->scratch, 1u << bits, (uint64_t)blk << bits);
}

/* Takes the next n blocks for the file being committed. */
static int take_blocks(struct erofs_commit *cc, struct erofs_inode *inode, uint32_t n,
		       uint32_t *blk)
{
	int err = erofs_image_alloc(cc->img, n, blk);

	if (!err)
		inode->nr_blocks += n;
	return err;
}

int erofs_plain_store(struct erofs_commit *cc, struct erofs_inode *inode, int fd)
{
	const unsigned int bits = cc->opts->blkszbits;
	uint64_t whole = inode->size & ~(uint64_t)((1u << bits) - 1);
	uint32_t tail = (uint32_t)(inode->size - whole), blk;
	uint64_t base = erofs_tree_data_base(cc->tree, inode);
	int err;

	erofs_image_rewind(cc->img, cc->file_blk);
	inode->blkaddr = cc->file_blk;
	inode->nr_blocks = 0;
	inode->tail_inline = 0;
	if (whole && !(err = take_blocks(cc, inode, (uint32_t)(whole >> bits), &blk))) {
		err = erofs_image_copy(cc->img, (uint64_t)blk << bits, fd, base, whole);
		cc->stats->bytes_written += whole;
		if (err && !cc->img->error)
			erofs_report_source_error(cc->opts, inode, err);
		if (err)
			return err;
	}
	if (tail) {
		err = erofs_pread_all(fd, cc->scratch2, tail, base + whole);
		if (err) {
			erofs_report_source_error(cc->opts, inode, err);
			return err;
		}
		if ((err = put_tail(cc, inode, cc->scratch2, tail)))
			return err;
	}
	if (!erofs_tree_size_unchanged(cc->tree, inode, fd)) {
		erofs_report_source_error(cc->opts, inode, -EAGAIN);
		return -EAGAIN;
	}
	if (!inode->nr_blocks)
		inode->blkaddr = EROFS_NULL_ADDR;
	return 0;
}

bool erofs_share_data(struct erofs_commit *cc, struct erofs_inode *inode,
		      struct erofs_inode *orig)
{
	const struct erofs_zinfo *zi = orig->z;

	/* the original's inline tail must fit this inode's record too */
	if (zi ? zi->tail_size > erofs_inline_room(cc->opts, inode)
	       : orig->tail_inline && !erofs_plain_tail_inline(cc->opts, inode))
		return false;
	/* what the file stored so far goes: blocks, pclusters, fragment pieces */
	erofs_image_rewind(cc->img, cc->file_blk);
	if (cc->zdedupe)
		erofs_zdedupe_truncate(cc->zdedupe, cc->zdedupe_mark);
	if (cc->packed)
		erofs_packed_truncate(cc->packed, cc->packed_mark);
	inode->same_data = orig;
	inode->z = orig->z;
	inode->blkaddr = orig->blkaddr;
	inode->nr_blocks = orig->nr_blocks;
	inode->tail_inline = orig->tail_inline;
	inode->tail_pos = orig->tail_pos;
	/* what was not stored again: its blocks, and a fragment's bytes */
	cc->stats->dedup_files++;
	cc->stats->dedup_bytes += (uint64_t)orig->nr_blocks << cc->opts->blkszbits;
	if (zi && zi->fragment)
		cc->stats->dedup_bytes += orig->size - zi->frag_lofs;
	if (zi) {	/* a compressed file too, through its original's extents */
		cc->stats->nr_compressed++;
		cc->stats->compressed_input += inode->size;
	}
	return true;
}

int erofs_plain_commit(struct erofs_commit *cc, struct erofs_work *w)
{
	const unsigned int bits = cc->opts->blkszbits;
	struct erofs_inode *inode = w->inode;
	uint64_t whole_end = w->end & ~(uint64_t)((1u << bits) - 1);
	uint32_t blk;
	int err;

	erofs_dedup_hash_segment(cc, w);
	if (!w->data) {		/* the whole file, straight from the source */
		err = erofs_plain_store(cc, inode, w->fd);
		if (!err && cc->dedup && inode->size > 1u << bits)
			err = erofs_dedup_record(cc, inode, false, (XXH128_hash_t){ 0, 0 });
		return err;
	}
	if (w->last) {
		XXH128_hash_t hash = { 0, 0 };
		struct erofs_inode *orig = NULL;
		bool hashed = erofs_dedup_hash_end(cc, &hash);

		if (hashed) {
			err = erofs_dedup_find(cc, inode, hash, w->fd, &orig);
			if (err)
				return err;
			if (orig && erofs_share_data(cc, inode, orig))
				return 0;
		}
		if (whole_end > w->start && !(err = take_blocks(cc, inode,
					(uint32_t)((whole_end - w->start) >> bits), &blk)))
			err = write_blocks(cc, blk, w->data, whole_end - w->start);
		if (!err && w->end > whole_end)
			err = put_tail(cc, inode, w->data + (whole_end - w->start),
				       (uint32_t)(w->end - whole_end));
		if (!err && !inode->nr_blocks)
			inode->blkaddr = EROFS_NULL_ADDR;
		if (!err && cc->dedup && inode->size > 1u << bits)
			err = erofs_dedup_record(cc, inode, hashed, hash);
		return err;
	}
	if ((err = take_blocks(cc, inode, (uint32_t)((w->end - w->start) >> bits), &blk)))
		return err;
	return write_blocks(cc, blk, w->data, w->end - w->start);
}

/* The kept head blocks and one new block with the tail, as a block map. */
static int keep_as_block_map(struct erofs_commit *cc, struct erofs_inode *inode,
			     uint32_t head_blocks, uint32_t tail)
{
	const unsigned int bits = cc->opts->blkszbits;
	struct erofs_chunks *ch = calloc(1, sizeof(*ch));
	uint32_t blk;
	int err;

	if (!ch || !(ch->blkaddr = malloc((head_blocks + 1u) * sizeof(*ch->blkaddr)))) {
		free(ch);
		return -ENOMEM;
	}
	ch->chunkbits = (uint8_t)bits;
	ch->count = head_blocks + 1u;
	for (uint32_t i = 0; i < head_blocks; i++)
		ch->blkaddr[i] = inode->kept_blkaddr + i;
	inode->chunks = ch;
	memset(cc->scratch2 + tail, 0, (1u << bits) - tail);
	if ((err = erofs_image_alloc(cc->img, 1, &blk)))
		return err;
	ch->blkaddr[head_blocks] = blk;
	inode->blkaddr = EROFS_NULL_ADDR;
	inode->nr_blocks = 1;
	cc->stats->bytes_written += 1u << bits;
	return erofs_image_pwrite(cc->img, cc->scratch2, 1u << bits, (uint64_t)blk << bits);
}

int erofs_plain_keep(struct erofs_commit *cc, struct erofs_work *w)
{
	const unsigned int bits = cc->opts->blkszbits;
	struct erofs_inode *inode = w->inode;
	uint64_t whole = inode->size & ~(uint64_t)((1u << bits) - 1);
	uint32_t tail = (uint32_t)(inode->size - whole);
	int err;

	if (!w->first)
		return 0;
	inode->blkaddr = whole ? inode->kept_blkaddr : EROFS_NULL_ADDR;
	inode->nr_blocks = 0;
	inode->tail_inline = 0;
	if (!tail)
		return 0;
	err = erofs_pread_all(inode->data_layer ? cc->tree->layer_fds[inode->data_layer - 1]
						: cc->tree->data_fd,
			      cc->scratch2, tail, inode->data_pos + whole);
	if (err) {
		erofs_report_source_error(cc->opts, inode, err);
		return err;
	}
	/* the head must be followed by the tail: inline, or not contiguous */
	if (whole && !erofs_plain_tail_inline(cc->opts, inode))
		return keep_as_block_map(cc, inode, (uint32_t)(whole >> bits), tail);
	return put_tail(cc, inode, cc->scratch2, tail);
}
