// SPDX-License-Identifier: MIT
/* Committing compressed segments (see include/erofs/build/zcommit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/codec/codec.h"
#include "erofs/build/compress.h"
#include "erofs/build/dedup.h"
#include "erofs/build/entropy.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/fragment.h"
#include "erofs/build/image.h"
#include "erofs/build/plain.h"
#include "erofs/build/tails.h"
#include "erofs/build/zcommit.h"
#include "erofs/build/zdedupe.h"
#include "erofs/build/zindex.h"

/* the most packed data an appended fragment may match: LZ4's reach */
#define APPEND_CONTEXT_MAX	(64u << 10)

/*
 * Whether a compressed layout beats the plain one (full blocks plus an
 * inline tail); a fragment counts at its estimated compressed size.
 */
static bool worth_it(const struct erofs_build_options *opts, const struct erofs_inode *inode,
		     const struct erofs_zinfo *zi, uint64_t frag_est)
{
	uint32_t meta = EROFS_EXTENDED_INODE_SIZE + inode->ibody_bound;

	return (uint64_t)zi->nr_blocks * (1u << opts->blkszbits) + zi->tail_size + frag_est +
	       erofs_zindex_size(opts, meta, inode->size, zi) < inode->size;
}

/*
 * worth_it() for a file about to be committed.  Fast LZ4's estimate of its
 * fragment finds no gain in text of a small alphabet (hex, base64), so such
 * files were stored plain (2,000 hex files of 0.5-3 KB, -zlzma: 3.66 MB
 * against erofs-utils' 1.99); when the packed inode's codec has an entropy
 * stage, the fragment's order-0 estimate (erofs_entropy_estimate()) has a
 * say too: the file is compressed when either estimate says it gains.
 * Where the worker made the order-0 estimate alone (w->frag_est_order0),
 * fast LZ4's is made here, only when that one says no.
 */
static int worth_compressing(struct erofs_commit *cc, const struct erofs_inode *inode,
			     const struct erofs_work *w, bool *worth)
{
	const struct erofs_build_options *opts = cc->opts;
	const enum erofs_compressor_kind packed_kind = opts->algorithms[0].kind;
	uint32_t est;
	int err;

	*worth = worth_it(opts, inode, inode->z, w->frag ? w->frag_est : 0);
	if (*worth || !w->frag)
		return 0;
	if (w->frag_est_order0) {
		if (!cc->compressor && (err = erofs_compressor_new(opts, &cc->compressor)))
			return err;
		est = erofs_estimate_alone(cc->compressor, w->frag, w->frag_len);
	} else if (w->frag_len < EROFS_ENTROPY_MIN || packed_kind == EROFS_COMPRESS_LZ4 ||
		   packed_kind == EROFS_COMPRESS_LZ4HC) {
		return 0;
	} else {
		est = erofs_entropy_estimate(w->frag, w->frag_len);
	}
	*worth = est < w->frag_est && worth_it(opts, inode, inode->z, est);
	return 0;
}

/*
 * -E ztailpacking: takes the file's last pcluster out of the blocks when it
 * is one block and its bytes fit inline beside the largest inode record
 * this file can have; the planner then keeps the record inside one block.
 */
static int pack_tail(struct erofs_commit *cc, struct erofs_inode *inode, struct erofs_work *w)
{
	const unsigned int bits = cc->opts->blkszbits;
	struct erofs_zextent *last = &w->z.extents[w->z.nr_extents - 1];
	const uint8_t *block;
	int err;

	if (last->nblks != 1 || last->clen > erofs_inline_room(cc->opts, inode))
		return 0;
	block = w->blocks + ((uint64_t)last->pblk << bits);
	/* compressed bytes sit at the end of their block, raw ones at its start */
	err = erofs_tails_add(cc->tails, last->raw ? block : block + (1u << bits) - last->clen,
			      last->clen, &inode->tail_pos);
	if (err)
		return err;
	inode->z->tail_size = last->clen;
	w->z.nr_blocks--;
	last->nblks = 0;
	return 0;
}

/* The file's fragment, or the next piece of it, into the packed inode. */
static int commit_fragment(struct erofs_commit *cc, struct erofs_inode *inode,
			   struct erofs_work *w)
{
	struct erofs_zinfo *zi = inode->z;
	bool first_piece = !zi->fragment;
	uint64_t off;
	int err;

	/* a file packed in pieces is stored as it comes; a whole fragment
	 * may be one already stored, unless -E ^fragdedupe */
	err = erofs_packed_add(cc->packed, w->frag, w->frag_len,
			       first_piece && w->last && cc->opts->fragdedupe != EROFS_FRAGDEDUPE_OFF,
			       &off);
	if (err)
		return err;
	if (!first_piece)
		return 0;
	zi->fragment = true;
	zi->frag_lofs = w->frag_at;
	zi->frag_off = off;
	/* compact indexes keep 32 bits of a tail's offset; a full index
	 * keeps the high half in the tail's head */
	if (zi->frag_lofs && off > UINT32_MAX)
		zi->full_index = true;
	/* the index marks where the fragment starts with an extent of no blocks
	 * (commit_extents() left room for it) */
	zi->extents[zi->nr_extents++] = (struct erofs_zextent){
		.lofs = w->frag_at, .pblk = zi->nr_blocks,
	};
	return 0;
}

/*
 * Whether an extent of dlen bytes at lofs may use a stored pcluster of the
 * key's shape: the rules of compress.c hold for the extent's own position,
 * which differs from the stored one's.
 */
static bool reference_fits(const struct erofs_build_options *opts,
			   const struct erofs_zdedupe_key *key, uint64_t lofs, bool file_last)
{
	const uint32_t blksz = 1u << opts->blkszbits;

	if (key->nblks > 1 && (lofs + key->decoded) / blksz < lofs / blksz + 2)
		return false;
	return !(key->raw && file_last && (lofs & (blksz - 1)) + key->decoded > blksz);
}

/* The pclusters of the segment being committed that wait in memory. */
struct pending {
	const uint8_t *blocks;		/* the segment's kept blocks, back to back */
	uint32_t first_blk, nr_blocks;	/* where they go */
};

/* A stored pcluster with these bytes, or NULL; the hash is confirmed byte for byte. */
static const struct erofs_zdedupe_entry *find_stored(struct erofs_commit *cc,
						     const struct erofs_zdedupe_key *key,
						     const uint8_t *bytes,
						     const struct pending *pending)
{
	const struct erofs_zdedupe_entry *e;
	const unsigned int bits = cc->opts->blkszbits;
	const size_t len = (size_t)key->nblks << bits;
	uint32_t cursor = 0;

	while ((e = erofs_zdedupe_next(cc->zdedupe, key, &cursor))) {
		uint32_t blk = e->owner->blkaddr + e->pblk;
		const uint8_t *stored = cc->scratch;

		/*
		 * A file stored plain after all keeps only its whole aligned
		 * blocks, which read exactly like raw pclusters of one block:
		 * those are still there to share (incompressible duplicates).
		 */
		if (!e->owner->z && !(e->key.raw && e->key.decoded == 1u << bits &&
				      e->lofs == (uint64_t)e->pblk << bits))
			continue;
		if (blk >= pending->first_blk && blk < pending->first_blk + pending->nr_blocks)
			stored = pending->blocks + ((size_t)(blk - pending->first_blk) << bits);
		else if (erofs_image_pread(cc->img, cc->scratch, len, (uint64_t)blk << bits))
			return NULL;
		if (!memcmp(stored, bytes, len))
			return e;
	}
	return NULL;
}

/*
 * Appends the segment's extents to its file and writes its pclusters after
 * the file's earlier ones.  With -E dedupe (not for the packed inode), a
 * pcluster already stored (in this file or an earlier one) is pointed at
 * instead of stored again.
 */
static int commit_extents(struct erofs_commit *cc, struct erofs_inode *inode,
			  struct erofs_work *w)
{
	const struct erofs_build_options *opts = cc->opts;
	const unsigned int bits = opts->blkszbits;
	const bool dedupe = cc->zdedupe && !w->packed;
	struct erofs_zinfo *zi = inode->z;
	const uint32_t n = w->z.nr_extents;
	struct pending pending = { .blocks = w->blocks, .first_blk = cc->img->next_blk };
	struct erofs_zextent *bigger;
	uint32_t blk, n_done = 0;
	int err;

	/* (one more for a fragment's extent) */
	bigger = realloc(zi->extents, (zi->nr_extents + n + 1) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	zi->extents = bigger;
	if (w->z.unaligned) {
		/* pclusters packed unaligned share blocks: the segment's blocks
		 * go as they are, after the file's earlier ones */
		zi->unaligned = true;
		for (uint32_t i = 0; i < n; i++) {
			zi->extents[zi->nr_extents] = w->z.extents[i];
			zi->extents[zi->nr_extents++].pblk += zi->nr_blocks;
		}
		pending.nr_blocks = w->z.nr_blocks;
		zi->nr_blocks += w->z.nr_blocks;
		n_done = n;
	}
	for (uint32_t i = n_done; i < n; i++) {
		struct erofs_zextent e = w->z.extents[i];
		const uint8_t *bytes = w->blocks + ((uint64_t)e.pblk << bits);
		uint64_t end = i + 1 < n ? w->z.extents[i + 1].lofs : w->frag ? w->frag_at : w->end;
		struct erofs_zdedupe_key key = {
			.decoded = (uint32_t)(end - e.lofs), .nblks = e.nblks, .raw = e.raw,
			/* a compressed pcluster is only shared by files of its algorithm */
			.algorithm = e.raw ? 0 : zi->algorithm,
		};
		const struct erofs_zdedupe_entry *stored = NULL;

		if (dedupe && e.nblks) {
			key.hash = XXH3_128bits(bytes, (size_t)e.nblks << bits);
			if (reference_fits(opts, &key, e.lofs, w->last && i + 1 == n && !w->frag))
				stored = find_stored(cc, &key, bytes, &pending);
		}
		if (stored) {
			e.owner = stored->owner == inode ? NULL : stored->owner;
			e.pblk = stored->pblk;
			zi->full_index = true;
			zi->shared_blocks += e.nblks;
		} else {
			e.pblk = zi->nr_blocks;
			if (e.nblks) {
				struct erofs_zdedupe_entry entry = {
					.key = key, .owner = inode, .pblk = e.pblk, .lofs = e.lofs,
				};
				uint8_t *to = w->blocks + ((size_t)pending.nr_blocks << bits);

				/* the kept pclusters close up in the buffer */
				if (to != bytes)
					memmove(to, bytes, (size_t)e.nblks << bits);
				pending.nr_blocks += e.nblks;
				zi->nr_blocks += e.nblks;
				if (dedupe && (err = erofs_zdedupe_add(cc->zdedupe, &entry)))
					return err;
			}
		}
		zi->extents[zi->nr_extents++] = e;
	}
	if (!pending.nr_blocks)
		return 0;
	if ((err = erofs_image_alloc(cc->img, pending.nr_blocks, &blk)))
		return err;
	cc->stats->bytes_written += (uint64_t)pending.nr_blocks << bits;
	return erofs_image_pwrite(cc->img, w->blocks, (size_t)pending.nr_blocks << bits,
				  (uint64_t)blk << bits);
}

/*
 * How far back the packed inode's codec can match from where the fragment
 * would be appended: its window, and no further than the start of the
 * packed pcluster the fragment lands in, as each pcluster is compressed
 * alone.  A packed pcluster holds about its size over the fragment's ratio
 * (fast LZ4's, frag_est) of input; the fragment lands halfway through one
 * on average.
 */
static uint32_t packed_reach(const struct erofs_build_options *opts, const struct erofs_work *w)
{
	const uint64_t half_input = w->frag_est ? (uint64_t)erofs_opts_packed_pcluster(opts) *
							  w->frag_len / w->frag_est / 2
						: UINT64_MAX;
	uint64_t reach = erofs_opts_packed_window(opts);

	if (half_input < reach)
		reach = half_input;
	return reach < APPEND_CONTEXT_MAX ? (uint32_t)reach : APPEND_CONTEXT_MAX;
}

/*
 * What the whole fragment would cost appended to the packed data now
 * (estimated), where the codec may match the bytes packed just before it:
 * files alike are packed side by side (perl's unicore tables), and one of
 * them cut from a run stored further back saved only a fraction of the
 * block its head took.
 */
static int appended_cost(struct erofs_commit *cc, const struct erofs_work *w, uint32_t *cost)
{
	const uint32_t reach = packed_reach(cc->opts, w);
	uint8_t *context = malloc(reach ? reach : 1);
	uint32_t got = 0;
	int err = context ? erofs_packed_read_end(cc->packed, context, reach, &got) : -ENOMEM;

	if (!err)
		*cost = erofs_estimate_after(cc->compressor, context, got, w->frag, w->frag_len);
	free(context);
	return err;
}

/*
 * -E fragdedupe=full, as erofs-utils does it: a whole fragment whose end
 * (not all of it) a stored fragment shares is cut.  Its head is compressed
 * now into pclusters of its own, the last of which is filled past the
 * start of the shared run, and the fragment shrinks to what is left, an
 * end of the stored one that commit_fragment() then finds.
 *
 * Unlike erofs-utils, only when the packed inode's codec could not find
 * the shared run itself (it lies further back than the codec's window;
 * cutting within its reach made LZMA images up to 5 times larger), and
 * when the head's blocks cost less than the whole fragment would,
 * compressed in the packed inode (estimated).
 */
static int split_fragment(struct erofs_commit *cc, struct erofs_inode *inode, struct erofs_work *w)
{
	const unsigned int bits = cc->opts->blkszbits;
	const uint32_t blksz = 1u << bits;
	struct erofs_work head;
	uint64_t est_shared, stored_end = 0;
	uint32_t common, cut, kept;
	int err;

	/* the shared run saves at most the whole fragment's estimate: a block or
	 * less is never worth cutting; nor is anything the codec reaches back
	 * to itself (LZMA, zstd): the search for the run is skipped */
	if (w->frag_est <= blksz || erofs_opts_packed_window(cc->opts) == UINT64_MAX)
		return 0;
	if ((err = erofs_packed_common_suffix(cc->packed, w->frag, w->frag_len, &common,
					      &stored_end)) ||
	    !common || common >= w->frag_len)
		return err;	/* none, or a whole match: commit_fragment()'s */
	if (cc->packed->size + w->frag_len - stored_end <= erofs_opts_packed_window(cc->opts))
		return 0;
	est_shared = (uint64_t)w->frag_est * common / w->frag_len;
	if (common < 2 * EROFS_FRAGMENT_TAIL_KEY || est_shared <= blksz)
		return 0;	/* at best a block saved: not worth a compression */
	if (!cc->compressor && (err = erofs_compressor_new(cc->opts, &cc->compressor)))
		return err;
	if ((err = appended_cost(cc, w, &kept)) || kept <= blksz)
		return err;
	/* the fragment keeps at least a key's worth, for commit_fragment() to find */
	if ((err = erofs_compress_head(cc->compressor, inode, w->frag, w->frag_at,
				       w->frag_len - EROFS_FRAGMENT_TAIL_KEY, w->frag_len - common,
				       &head)))
		return err;
	cut = (uint32_t)(head.end - w->frag_at);
	/*
	 * The fragment starts a head of its own: the last extent must start
	 * in an earlier lcluster.  And the blocks must cost less than the
	 * whole fragment would, appended now.
	 */
	if (head.z.nr_extents && head.z.extents[head.z.nr_extents - 1].lofs >> bits < head.end >> bits &&
	    ((uint64_t)head.z.nr_blocks << bits) < kept) {
		err = commit_extents(cc, inode, &head);
		if (!err) {
			memmove(w->frag, w->frag + cut, w->frag_len - cut);
			w->frag_at = head.end;
			w->frag_len -= cut;
			w->frag_est = 0;	/* stored already */
		}
	}
	free(head.blocks);
	free(head.z.extents);
	return err;
}

static int begin_file(struct erofs_commit *cc, struct erofs_inode *inode,
		      const struct erofs_work *w)
{
	inode->z = calloc(1, sizeof(*inode->z));
	if (!inode->z)
		return -ENOMEM;
	inode->z->pcluster_size = w->packed ? erofs_opts_packed_pcluster(cc->opts)
					    : inode->pcluster_size;
	inode->z->algorithm = (uint8_t)erofs_codec_format(
		cc->opts->algorithms[w->packed ? 0 : inode->algorithm].kind);
	return 0;
}

static void drop_zinfo(struct erofs_inode *inode)
{
	free(inode->z->extents);
	free(inode->z);
	inode->z = NULL;
}

/* A whole file an earlier one holds: shares its data, if its record can. */
static int try_share(struct erofs_commit *cc, struct erofs_inode *inode, struct erofs_work *w,
		     bool *shared)
{
	XXH128_hash_t hash;
	struct erofs_inode *orig;
	struct erofs_zinfo *own = inode->z;
	int err;

	*shared = false;
	if (!erofs_dedup_hash_end(cc, &hash))
		return 0;
	if ((err = erofs_dedup_find(cc, inode, hash, w->fd, &orig)) || !orig)
		return err;
	inode->z = NULL;
	if (erofs_share_data(cc, inode, orig)) {
		free(own->extents);
		free(own);
		*shared = true;
		return 0;
	}
	inode->z = own;
	return 0;
}

int erofs_zcommit(struct erofs_commit *cc, struct erofs_work *w)
{
	const struct erofs_build_options *opts = cc->opts;
	struct erofs_inode *inode = w->inode;
	bool shared;
	int err;

	if (w->first && (err = begin_file(cc, inode, w)))
		return err;
	if (!w->packed)
		erofs_dedup_hash_segment(cc, w);
	if (w->last && !w->packed && cc->dedup && inode->size > 1u << opts->blkszbits) {
		if ((err = try_share(cc, inode, w, &shared)) || shared)
			return err;
	}
	if (w->dup_hint) {
		/* the earlier file was not the same after all: compress it now */
		struct erofs_work_ctx ctx = *cc->wctx;

		ctx.dedup = NULL;
		if (!cc->compressor && (err = erofs_compressor_new(opts, &cc->compressor)))
			return err;
		w->dup_hint = false;
		if ((err = erofs_compress_work(cc->compressor, &ctx, w, NULL)))
			return err;
	}
	if (w->last && !w->frag && opts->ztailpacking && w->z.nr_extents &&
	    (err = pack_tail(cc, inode, w)))
		return err;
	if ((err = commit_extents(cc, inode, w)))
		return err;
	/* a fragment in one piece, whose end may be stored already */
	if (w->last && w->frag && !w->packed && !inode->z->fragment && cc->packed &&
	    cc->opts->fragdedupe == EROFS_FRAGDEDUPE_FULL && (err = split_fragment(cc, inode, w)))
		return err;
	inode->nr_blocks = inode->z->nr_blocks;
	if (w->packed)
		return 0;
	if (w->last) {
		XXH128_hash_t hash = { 0, 0 };
		bool hashed = erofs_dedup_hash_end(cc, &hash), worth;

		/* the packed inode itself is always kept compressed: its
		 * readers expect it so, and it seldom fails to gain */
		if ((err = worth_compressing(cc, inode, w, &worth)))
			return err;
		if (!worth) {
			/* stored plain: the pieces of its fragment packed so far go */
			drop_zinfo(inode);
			if (cc->packed)
				erofs_packed_truncate(cc->packed, cc->packed_mark);
			err = erofs_plain_store(cc, inode, w->fd);
		} else {
			if (w->frag && (err = commit_fragment(cc, inode, w)))
				return err;
			cc->stats->nr_compressed++;
			cc->stats->compressed_input += inode->size;
			cc->stats->zdedupe_blocks += inode->z->shared_blocks;
			if (!inode->nr_blocks)
				inode->blkaddr = EROFS_NULL_ADDR;
		}
		if (!err && cc->dedup && inode->size > 1u << opts->blkszbits)
			err = erofs_dedup_record(cc, inode, hashed, hash);
		return err;
	}
	if (w->frag)
		return commit_fragment(cc, inode, w);
	return 0;
}
