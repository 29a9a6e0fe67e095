// SPDX-License-Identifier: MIT
/*
 * Fixed-output-size LZ4/LZ4HC compression of file segments, the workers'
 * side (see include/erofs/build/compress.h).
 *
 * The rules every extent follows, so that a Linux 6.1 kernel can map it:
 * - an lcluster (one block) holds at most one extent head, so every extent
 *   but the last of a segment spans at least one block of input;
 * - a raw (uncompressed) pcluster is one block holding at most one block of
 *   input, its bytes from the start of the block; a file's last one may not
 *   cross an lcluster boundary, since the kernel measures a raw extent it
 *   cannot see the end of up to the end of that lcluster and refuses one
 *   longer than its block;
 * - compressed bytes are right-aligned in their pcluster behind zeros (the
 *   0-padding feature lets the kernel find where they start);
 * - a pcluster of more than one block needs a non-head lcluster after its
 *   head, where the index records the block count;
 * - an extent decodes to at most EXTENT_INPUT_MAX bytes (LZ4) or
 *   EXTENT_INPUT_MAX_DENSE (the denser codecs, whose 1 MiB pcluster holds
 *   some 6 MiB of text; newer kernels refuse extents over 12 MiB), and to
 *   fewer than the 2047-lcluster reach of an index delta (which binds with
 *   blocks smaller than 2 KiB).
 *
 * Files are cut into segments of erofs_segment_size() bytes (an extent never
 * crosses one), each a piece of work; the cut points do not depend on the
 * worker count, so neither does the image.
 */
#include <errno.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/codec/codec.h"
#include "erofs/build/compress.h"
#include "erofs/build/entropy.h"
#include "erofs/build/dedup.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/common/io.h"
#include "erofs/build/zindex.h"

#define EXTENT_INPUT_MAX	(4u << 20)	/* input offered to one LZ4 pcluster */
#define EXTENT_INPUT_MAX_DENSE	(8u << 20)	/* ... to one LZMA, DEFLATE or zstd pcluster */
#define ESTIMATE_PIECE		(64u << 10)
/* -E dedupe: content-defined cut points (see next_anchor()) */
#define ANCHOR_MIN_GAP		(128u << 10)
#define ANCHOR_MASK		((1ull << 18) - 1)

/* Per-thread state of one compressor. */
struct erofs_compressor {
	const struct erofs_build_options *opts;
	uint32_t blksz;
	uint32_t extent_max;		/* input offered to one LZ4 pcluster */
	uint32_t extent_max_dense;	/* ... to one of the other codecs */
	struct erofs_codec *codecs[EROFS_MAX_ALGORITHMS];	/* one per -z algorithm */
	uint8_t *input;			/* the segment being compressed */
	uint8_t *pcluster;		/* output of one pcluster */
	uint8_t *estimate;		/* scratch for erofs_estimate_alone() */
	uint8_t *spare;			/* a second pcluster's room, made when needed */
	uint64_t gear[256];		/* next_anchor()'s per-byte values */
};

/*
 * -E dedupe finds repeated pclusters, so a repeated run must be cut into
 * the same pclusters wherever it lies.  Extents are therefore also cut at
 * content-defined anchors: positions where a rolling hash of the 64 bytes
 * before them has its low bits clear ("gear" hashing: shift, add a random
 * value per byte).  A run repeated at another offset, in this file or
 * another, meets the same anchors and compresses into the same pclusters
 * after its first one.  Anchors come at least ANCHOR_MIN_GAP apart, about
 * every ANCHOR_MIN_GAP + ANCHOR_MASK bytes; each costs about half a block.
 */
static uint64_t gear_value(unsigned int byte)
{
	/* splitmix64 of the byte: fixed, so images are reproducible */
	uint64_t z = (byte + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The first anchor at or after `from` in buf[0, len), or len for none. */
static uint64_t next_anchor(const uint64_t *gear, const uint8_t *buf, uint64_t from,
			    uint64_t len)
{
	uint64_t h = 0;

	if (from >= len)
		return len;
	/* the hash at a position depends only on the 64 bytes before it */
	for (uint64_t i = from > 64 ? from - 64 : 0; i < from; i++)
		h = (h << 1) + gear[buf[i]];
	for (uint64_t i = from; i < len; i++) {
		if (!(h & ANCHOR_MASK))
			return i;
		h = (h << 1) + gear[buf[i]];
	}
	return len;
}

int erofs_compressor_new(const struct erofs_build_options *opts, struct erofs_compressor **out)
{
	struct erofs_compressor *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	c->opts = opts;
	c->blksz = 1u << opts->blkszbits;
	/* an extent may start inside its first lcluster: one lcluster spare */
	c->extent_max = EXTENT_INPUT_MAX < (EROFS_LI_DELTA_MAX - 1) << opts->blkszbits
				? EXTENT_INPUT_MAX : (EROFS_LI_DELTA_MAX - 1) << opts->blkszbits;
	c->extent_max_dense = EXTENT_INPUT_MAX_DENSE < (EROFS_LI_DELTA_MAX - 1) << opts->blkszbits
				? EXTENT_INPUT_MAX_DENSE : (EROFS_LI_DELTA_MAX - 1) << opts->blkszbits;
	/* --max-extent-bytes: what one extent may decode to, for readers of it */
	if (opts->max_extent_bytes && opts->max_extent_bytes < c->extent_max)
		c->extent_max = opts->max_extent_bytes;
	if (opts->max_extent_bytes && opts->max_extent_bytes < c->extent_max_dense)
		c->extent_max_dense = opts->max_extent_bytes;
	c->input = malloc(erofs_segment_size(opts));
	c->pcluster = malloc(EROFS_PCLUSTER_MAX_SIZE);
	c->estimate = malloc(LZ4_COMPRESSBOUND(ESTIMATE_PIECE));
	for (unsigned int b = 0; b < 256; b++)
		c->gear[b] = gear_value(b);
	if (!c->input || !c->pcluster || !c->estimate)
		return -ENOMEM;
	for (unsigned int i = 0; i < opts->nr_algorithms; i++) {
		int err = erofs_codec_new(&opts->algorithms[i], &c->codecs[i]);

		if (err)
			return err;
	}
	return 0;
}

void erofs_compressor_free(struct erofs_compressor *c)
{
	if (!c)
		return;
	free(c->input);
	free(c->pcluster);
	free(c->estimate);
	free(c->spare);
	for (unsigned int i = 0; i < EROFS_MAX_ALGORITHMS; i++)
		erofs_codec_free(c->codecs[i]);
	free(c);
}

/*
 * Fills one pcluster of cap bytes; returns the compressed length, 0 if
 * nothing fits.  expect: the input the segment's previous pcluster took,
 * found at prev; budget: what the codec carries from that pcluster to
 * this one, NULL for a pcluster out of the stream's order (see
 * erofs_codec_fill_next()).
 */
static int compress_pcluster(struct erofs_compressor *c, unsigned int alg_index,
			     const uint8_t *src, int *src_len, const uint8_t *prev, int expect,
			     int *budget, int cap)
{
	int none = 0;

	return erofs_codec_fill_next(c->codecs[alg_index], src, src_len, prev, expect,
				     budget ? budget : &none, c->pcluster, cap);
}

/*
 * Fast LZ4's size of data in 64 KiB pieces, a piece counted at most at its
 * own length: each piece alone, or with a stream, each matching what the
 * stream saw before it (data lies in one buffer).
 */
static uint32_t lz4_pieces(struct erofs_compressor *c, LZ4_stream_t *stream, const uint8_t *data,
			   uint32_t len)
{
	uint64_t total = 0;

	for (uint32_t pos = 0; pos < len; pos += ESTIMATE_PIECE) {
		const char *piece = (const char *)data + pos;
		int n = (int)(len - pos < ESTIMATE_PIECE ? len - pos : ESTIMATE_PIECE);
		int out = stream ? LZ4_compress_fast_continue(stream, piece, (char *)c->estimate, n,
							      LZ4_COMPRESSBOUND(ESTIMATE_PIECE), 1)
				 : LZ4_compress_default(piece, (char *)c->estimate, n,
							LZ4_COMPRESSBOUND(ESTIMATE_PIECE));

		total += out > 0 && out < n ? (uint64_t)out : (uint64_t)n;
	}
	return (uint32_t)total;
}

/*
 * What bytes stored as a fragment will roughly cost once the packed inode
 * is compressed: fast LZ4 over 64 KiB pieces, which the packed inode's own
 * compression (with neighbours as context) usually beats.
 */
uint32_t erofs_estimate_alone(struct erofs_compressor *c, const uint8_t *src, uint32_t len)
{
	return lz4_pieces(c, NULL, src, len);
}

uint32_t erofs_estimate_after(struct erofs_compressor *c, const uint8_t *context,
			      uint32_t context_len, const uint8_t *data, uint32_t len)
{
	LZ4_stream_t stream;

	LZ4_initStream(&stream, sizeof(stream));
	LZ4_loadDict(&stream, (const char *)context, (int)context_len);
	return lz4_pieces(c, &stream, data, len);
}

/*
 * Fast LZ4's size for the rest of a file (left bytes) if all of it fits in
 * cap bytes, else 0: a cheap guess at what the file's codec will do with it.
 */
static int fast_rest_size(struct erofs_compressor *c, const uint8_t *src, uint64_t left, int cap)
{
	int src_len = (int)left, out;

	if (left > c->extent_max)
		return 0;
	out = LZ4_compress_destSize((const char *)src, (char *)c->pcluster, &src_len, cap);
	return out > 0 && (uint64_t)src_len == left ? out : 0;
}

/*
 * fast_rest_size() for a rest that may fit, else 0 unasked.  expect: the
 * input the file's last pcluster took in pcluster_size bytes of its own
 * codec (0 when none did yet).  A rest that would need more than twice
 * cap at that pcluster's ratio is left to the file's codec: fast LZ4
 * fitting it would have to beat that codec twice over, where it compresses
 * less than any of them.  fast_rest_size() filled its cap in vain for each
 * pcluster of a file's last 4 MiB: 107 of its 164 calls on the rootfs
 * sample at -zzstd,3, each some 500 KB of LZ4, and this skips 73 of them,
 * none that would have fitted (nor at zstd 15, DEFLATE or LZMA).
 */
static int fast_rest_size_if(struct erofs_compressor *c, const uint8_t *src, uint64_t left,
			     int cap, int expect, uint32_t pcluster_size)
{
	if (expect > 0 && left * pcluster_size > 2 * (uint64_t)cap * (uint64_t)expect)
		return 0;
	return fast_rest_size(c, src, left, cap);
}

/*
 * With fragments, a file whose rest fits in one pcluster goes to the
 * packed inode whole; finding that out with the file's own codec costs a
 * compression that is then thrown away (a sixth of zstd -15's match
 * finding on linux-6.1's fs/, 7% of lzma's input).  Fast LZ4 decides
 * first: the rest is taken when fast LZ4 fits it in this many bytes.
 * The denser codecs reach well under half of fast LZ4's size on text
 * and code; a rest taken at a little more than one pcluster costs
 * nothing (the packed inode is filled all the same), while the bound
 * keeps big files in their own pclusters.  At 2x, zstd -3 stored 12 KiB
 * more on fs/ (its rests compress worse alone than in the packed inode's
 * stream), so the faster codecs get 1.5x; no other size changed.
 */
static int rest_cap(const struct erofs_algorithm *alg, uint32_t pcluster_size)
{
	uint64_t cap;

	switch (alg->kind) {
	case EROFS_COMPRESS_LZMA:
		cap = (uint64_t)pcluster_size * 2;
		break;
	case EROFS_COMPRESS_ZSTD:	/* 4: codec_zstd.c's FAST_LEVEL */
		cap = alg->level > 4 ? (uint64_t)pcluster_size * 2 : (uint64_t)pcluster_size * 3 / 2;
		break;
	case EROFS_COMPRESS_DEFLATE:
		cap = (uint64_t)pcluster_size * 3 / 2;
		break;
	default:		/* lz4hc: fast LZ4 must fit the pcluster itself */
		cap = pcluster_size;
		break;
	}
	return (int)(cap < EROFS_PCLUSTER_MAX_SIZE ? cap : EROFS_PCLUSTER_MAX_SIZE);
}

static int add_extent(struct erofs_zinfo *zi, uint32_t *cap, uint64_t lofs, uint16_t nblks,
		      bool raw, uint16_t clen)
{
	if (zi->nr_extents == *cap) {
		uint32_t bigger_cap = *cap ? *cap * 2 : 16;
		struct erofs_zextent *bigger = realloc(zi->extents, bigger_cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		zi->extents = bigger;
		*cap = bigger_cap;
	}
	zi->extents[zi->nr_extents++] = (struct erofs_zextent){
		.lofs = lofs, .pblk = zi->nr_blocks, .nblks = nblks, .raw = raw, .clen = clen,
	};
	zi->nr_blocks += nblks;
	return 0;
}

static uint64_t blocks_for(uint64_t bytes, uint32_t blksz)
{
	return (bytes + blksz - 1) / blksz;
}

int erofs_read_work(const struct erofs_work_ctx *ctx, struct erofs_work *w, uint8_t *buf,
		    struct erofs_dir_cache *dirs)
{
	size_t len = (size_t)(w->end - w->start);
	int err;

	if (w->packed) {
		err = erofs_pread_all(ctx->packed_fd, buf, len, w->start);
		if (err)
			erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
		return err;
	}
	if (w->fd < 0 &&
	    (w->fd = erofs_tree_open_or_report(ctx->opts, ctx->tree, w->inode, dirs)) < 0) {
		err = w->fd;
		w->fd = -1;
		return err;
	}
	err = erofs_pread_all(w->fd, buf, len, erofs_tree_data_base(ctx->tree, w->inode) + w->start);
	if (!err && w->last && !erofs_tree_size_unchanged(ctx->tree, w->inode, w->fd))
		err = -EAGAIN;
	if (err)
		erofs_report_source_error(ctx->opts, w->inode, err);
	return err;
}

uint32_t erofs_inline_room(const struct erofs_build_options *opts,
			   const struct erofs_inode *inode)
{
	uint32_t blksz = 1u << opts->blkszbits;
	uint32_t meta = EROFS_EXTENDED_INODE_SIZE + inode->ibody_bound;
	/* with shared pclusters the file may need a full index */
	static const struct erofs_zinfo full = { .full_index = true };
	uint32_t record = meta + erofs_zindex_size(opts, meta, inode->size,
						   opts->share_pclusters ? &full : NULL);

	return record < blksz ? blksz - record : 0;
}

/*
 * Whether a fragment's estimate is its order-0 one, fast LZ4's made only if
 * the committer needs it (zcommit.c).  With a zstd or LZMA packed inode a
 * fragment's estimate only decides whether its file is worth compressing,
 * which it is when either estimate says so (erofs_entropy_estimate()), and
 * an order-0 histogram costs less than fast LZ4: that was 6.5% of the CPU
 * of -zzstd,3 -C131072 -Efragments,ztailpacking on the rootfs sample.
 * DEFLATE's and LZ4's cuts (zcommit.c's split_fragment()) read the
 * estimate as fast LZ4's, and so do fragments under EROFS_ENTROPY_MIN.
 */
static bool order0_first(const struct erofs_build_options *opts, uint32_t len)
{
	/* the codecs whose fragments are never cut, so nothing else reads it */
	return len >= EROFS_ENTROPY_MIN && erofs_opts_packed_window(opts) == UINT64_MAX;
}

/*
 * Keeps the segment's bytes from pos on as the file's fragment (or a piece
 * of it).  fast_size: fast LZ4's size of those bytes when fast_rest_size()
 * measured it already, else 0; it then stands for erofs_estimate_alone(),
 * which would compress the same bytes again.
 */
static int take_fragment(struct erofs_compressor *c, struct erofs_work *item, uint64_t pos,
			 int fast_size)
{
	uint32_t len = (uint32_t)(item->end - item->start - pos);

	item->frag = malloc(len ? len : 1);
	if (!item->frag)
		return -ENOMEM;
	memcpy(item->frag, c->input + pos, len);
	item->frag_at = item->start + pos;
	item->frag_len = len;
	item->frag_est_order0 = false;
	if (fast_size > 0) {
		item->frag_est = (uint32_t)fast_size < len ? (uint32_t)fast_size : len;
	} else if (order0_first(c->opts, len)) {
		item->frag_est = erofs_entropy_estimate(item->frag, len);
		item->frag_est_order0 = true;
	} else {
		item->frag_est = erofs_estimate_alone(c, item->frag, len);
	}
	return 0;
}

/*
 * -E ztailpacking wants a file's last pcluster one block short of what
 * the rest of the file takes, so that what is left goes inline; finding
 * that out with lz4hc costs a second compression of the rest.  Fast LZ4
 * guesses the block count instead, and lz4hc fills one block less at once;
 * only when lz4hc saves a whole block more than guessed does the caller
 * compress again.  Returns the output cap for the first try.
 */
static int ztail_first_cap(struct erofs_compressor *c, const uint8_t *src, uint64_t left, int cap)
{
	/* lz4hc's output is seldom above 92% of fast LZ4's (measured on
	 * source and documentation trees: same image sizes, fewer retries) */
	uint64_t guess = blocks_for((uint64_t)fast_rest_size(c, src, left, cap) * 92 / 100,
				    c->blksz);

	return guess < 2 ? cap : (int)((guess - 1) * c->blksz);
}

/*
 * --max-extent-bytes=-N: extents of N input bytes each (counted from the
 * file's start; a segment's end cuts one short), each compressed whole
 * when that saves bytes, else stored raw; their bytes follow one another
 * unaligned in item->blocks, zero-padded to a block at the end.
 */
static int compress_fixed(struct erofs_compressor *c, struct erofs_work *item)
{
	const uint32_t blksz = c->blksz, n = c->opts->max_extent_bytes;
	const uint64_t len = item->end - item->start;
	struct erofs_zinfo *zi = &item->z;
	const unsigned int alg_index = item->inode->algorithm;
	const uint32_t cap = item->inode->pcluster_size < EROFS_PCLUSTER_MAX_SIZE
				     ? item->inode->pcluster_size : EROFS_PCLUSTER_MAX_SIZE;
	uint64_t pos = 0, used = 0;
	uint32_t ecap = 0;

	zi->unaligned = true;
	item->blocks = malloc(blocks_for(len, blksz) * blksz + blksz);
	if (!item->blocks)
		return -ENOMEM;
	while (pos < len) {
		uint64_t lofs = item->start + pos;
		uint64_t take = n - lofs % n < len - pos ? n - lofs % n : len - pos;
		int out_len = erofs_codec_whole(c->codecs[alg_index], c->input + pos, (int)take,
						c->pcluster, (int)(take - 1 < cap ? take - 1 : cap));
		bool raw = out_len <= 0;
		struct erofs_zextent *e;

		if (out_len < 0)
			return out_len;
		/* raw: no pcluster over 1 MiB, the most Linux reads in one */
		if (raw && take > EROFS_PCLUSTER_MAX_SIZE)
			take = EROFS_PCLUSTER_MAX_SIZE;
		if (zi->nr_extents == ecap) {
			struct erofs_zextent *bigger;

			ecap = ecap ? ecap * 2 : 16;
			if (!(bigger = realloc(zi->extents, ecap * sizeof(*bigger))))
				return -ENOMEM;
			zi->extents = bigger;
		}
		e = &zi->extents[zi->nr_extents++];
		*e = (struct erofs_zextent){
			.lofs = lofs, .raw = raw, .bytes = raw ? (uint32_t)take : (uint32_t)out_len,
			.pblk = (uint32_t)(used / blksz), .boff = (uint16_t)(used % blksz),
		};
		e->nblks = (uint16_t)blocks_for(e->boff + (uint64_t)e->bytes, blksz);
		e->clen = (uint16_t)(e->bytes < 65535 ? e->bytes : 65535);
		memcpy(item->blocks + used, raw ? c->input + pos : c->pcluster, e->bytes);
		used += e->bytes;
		pos += take;
	}
	zi->nr_blocks = (uint32_t)blocks_for(used, blksz);
	memset(item->blocks + used, 0, (size_t)zi->nr_blocks * blksz - used);
	return 0;
}

/*
 * Compresses one segment into item->blocks and item->z; with may_fragment,
 * its end (or all of it) may be left in item->frag for the packed inode.
 * No extent starts at or past stop: when the input is not all taken by
 * then, item->end moves back to where the extents end.
 */
static int compress_segment(struct erofs_compressor *c, struct erofs_work *item,
			    bool may_fragment, uint64_t stop)
{
	const uint32_t blksz = c->blksz;
	const uint64_t len = item->end - item->start;
	struct erofs_zinfo *zi = &item->z;
	/* the file's tail may go to the packed inode (never the packed
	 * inode's own); with all-fragments, every byte of the file does */
	const bool to_fragment = may_fragment && c->opts->fragments && !item->packed;
	const bool fragment_tail = to_fragment && item->last;
	const bool ztail = c->opts->ztailpacking && item->last && !to_fragment;
	const unsigned int alg_index = item->packed ? 0 : item->inode->algorithm;
	const struct erofs_algorithm *alg = &c->opts->algorithms[alg_index];
	const uint32_t pcluster_size = item->packed ? erofs_opts_packed_pcluster(c->opts)
						    : item->inode->pcluster_size;
	const bool anchored = c->opts->dedupe && !item->packed;
	const uint32_t extent_max = alg->kind == EROFS_COMPRESS_LZ4 || alg->kind == EROFS_COMPRESS_LZ4HC
					    ? c->extent_max : c->extent_max_dense;
	uint32_t cap = 0;
	uint64_t pos = 0, anchor = 0;
	uint8_t *out;
	/*
	 * The input the last full-size pcluster took, the codec's guess for
	 * the next one.  Never with -E dedupe: a run repeated elsewhere must
	 * compress the same from its anchor on, whatever came before.
	 */
	int expect = 0;
	const uint8_t *prev = NULL;	/* where those bytes are, still in c->input */
	int budget = 0;			/* and what the codec carries on (erofs_codec_fill_next()) */
	int err;

	if (to_fragment && c->opts->all_fragments)
		return take_fragment(c, item, 0, 0);
	if (c->opts->fixed_extents && !item->packed)
		return compress_fixed(c, item);
	/* never more blocks than the raw input, plus a pcluster of rounding */
	item->blocks = malloc(blocks_for(len, blksz) * blksz + pcluster_size);
	if (!item->blocks)
		return -ENOMEM;
	out = item->blocks;
	while (pos < len && pos < stop) {
		uint64_t left = len - pos;
		int src_len = (int)(left < extent_max ? left : extent_max), out_len, fast_size = 0;
		uint64_t nblks, raw_blocks, lofs = item->start + pos;

		/* an extent may end at an anchor only past its own lcluster
		 * (one head per lcluster); nearer ones are skipped */
		while (anchored && anchor < len &&
		       (anchor <= pos || (item->start + anchor) / blksz <= lofs / blksz))
			anchor = next_anchor(c->gear, c->input,
					     anchor <= pos ? pos + ANCHOR_MIN_GAP : anchor + 1, len);
		if (anchored && anchor - pos < (uint64_t)src_len)
			src_len = (int)(anchor - pos);

		/*
		 * Fragments: what is left once it would fit in one pcluster
		 * goes to the packed inode, so that no pcluster is left part
		 * full.  Fast LZ4 answers first (rest_cap()); the file's codec
		 * only when it may fit where fast LZ4 says it does not.
		 */
		if (fragment_tail &&
		    (left <= pcluster_size ||
		     (alg->kind != EROFS_COMPRESS_LZ4 &&
		      (fast_size = fast_rest_size_if(c, c->input + pos, left,
						     rest_cap(alg, pcluster_size), expect,
						     pcluster_size)))))
			return take_fragment(c, item, pos, fast_size);
		out_len = compress_pcluster(c, alg_index, c->input + pos, &src_len, prev, expect,
					    &budget, ztail && alg->kind == EROFS_COMPRESS_LZ4HC &&
					    (uint64_t)src_len == left
						? ztail_first_cap(c, c->input + pos, left,
								  (int)pcluster_size)
						: (int)pcluster_size);
		if (out_len < 0)
			return out_len;
		expect = anchored ? 0 : src_len;
		prev = expect ? c->input + pos : NULL;
		budget = expect ? budget : 0;
		if (fragment_tail && (uint64_t)src_len == left)
			return take_fragment(c, item, pos, 0);
		nblks = blocks_for((uint64_t)out_len, blksz);
		if (ztail && (uint64_t)src_len == left && nblks > 1) {
			/* the file ends in this pcluster: fill one block less, so
			 * that what is left can become a short inline tail */
			src_len = (int)left;
			out_len = compress_pcluster(c, alg_index, c->input + pos, &src_len, NULL, 0,
						    NULL, (int)((nblks - 1) * blksz));
			if (out_len < 0)
				return out_len;
			nblks = blocks_for((uint64_t)out_len, blksz);
		}
		if (stop - pos < (uint64_t)src_len && nblks > 1) {
			/* past the stop the bytes are free (a fragment's head):
			 * fill only the blocks that [pos, stop) needs */
			int need_len = (int)(stop - pos), need;

			/* (c->pcluster still holds the fill, which may be kept) */
			if (!c->spare && !(c->spare = malloc(EROFS_PCLUSTER_MAX_SIZE)))
				return -ENOMEM;
			need = erofs_codec_fill(c->codecs[alg_index], c->input + pos, &need_len, NULL, 0,
						c->spare, (int)pcluster_size);
			if (need < 0)
				return need;
			if ((uint64_t)need_len == stop - pos && need > 0 &&
			    blocks_for((uint64_t)need, blksz) < nblks) {
				nblks = blocks_for((uint64_t)need, blksz);
				src_len = (int)(left < extent_max ? left : extent_max);
				out_len = compress_pcluster(c, alg_index, c->input + pos, &src_len,
							    NULL, 0, NULL, (int)(nblks * blksz));
				if (out_len < 0)
					return out_len;
				nblks = blocks_for((uint64_t)out_len, blksz);
			}
		}
		/*
		 * Keep it only if it saves a block and can be indexed.  A file's
		 * last pcluster is kept at no gain too when it may go inline
		 * (saving bytes), or when raw blocks would cost one more: a last
		 * raw extent may not cross an lcluster boundary (see above).
		 */
		bool file_end = item->last && pos + (uint64_t)src_len == len;
		bool raw_splits = (lofs & (blksz - 1)) + (uint64_t)src_len > blksz;
		/* (a head in the last lcluster has no room for a big pcluster's
		 * block count after it: only an inline tail may start there) */
		bool goes_inline = ztail && (uint64_t)out_len <= erofs_inline_room(c->opts, item->inode);

		if (out_len > 0 && (nblks < blocks_for((uint64_t)src_len, blksz) ||
				    (file_end && nblks == 1 && out_len < src_len &&
				     (goes_inline || raw_splits))) &&
		    (nblks == 1 || (lofs + (uint64_t)src_len) / blksz >= lofs / blksz + 2)) {
			memset(out, 0, nblks * blksz - (uint64_t)out_len);
			memcpy(out + nblks * blksz - (uint64_t)out_len, c->pcluster, (size_t)out_len);
			out += nblks * blksz;
			if ((err = add_extent(zi, &cap, lofs, (uint16_t)nblks, false,
					      (uint16_t)(out_len < 65535 ? out_len : 65535))))
				return err;
			pos += (uint64_t)src_len;
			continue;
		}
		/* incompressible: raw blocks for what the compressor could not
		 * shrink (with fragments, until the rest fits one pcluster) */
		raw_blocks = out_len > 0 && (uint64_t)src_len >= blksz ? (uint64_t)src_len / blksz : 1;
		for (; raw_blocks && pos < len && pos < stop; raw_blocks--) {
			uint64_t n = len - pos < blksz ? len - pos : blksz;
			uint64_t in_lcluster = (item->start + pos) & (blksz - 1);

			if (fragment_tail && len - pos <= pcluster_size)
				break;
			if (anchored && pos < anchor && pos + n > anchor)
				n = anchor - pos;	/* past the head's lcluster: see above */
			if (item->last && pos + n == len && in_lcluster + n > blksz)
				n = blksz - in_lcluster;	/* the rest follows, aligned */

			memcpy(out, c->input + pos, n);
			memset(out + n, 0, blksz - n);
			out += blksz;
			if ((err = add_extent(zi, &cap, item->start + pos, 1, true, (uint16_t)n)))
				return err;
			pos += n;
		}
	}
	if (pos < len)		/* stopped: the extents end here */
		item->end = item->start + pos;
	return 0;
}

/*
 * Whole-file dedup wants every file's hash; a whole file an earlier piece
 * of work holds too is most likely a duplicate, so compressing it would be
 * wasted: the committer decides.
 */
static bool hash_for_dedup(const struct erofs_work_ctx *ctx, struct erofs_work *w,
			   const uint8_t *bytes)
{
	if (!ctx->dedup || w->packed || w->inode->size <= 1u << ctx->opts->blkszbits)
		return false;
	w->hash = XXH3_128bits(bytes, (size_t)(w->end - w->start));
	w->hashed = true;
	return w->first && w->last && erofs_dedup_hint(ctx->dedup, w->inode->size, w->hash, w->seq);
}

static void report_failure(int err, bool packed)
{
	if (err == -ENOMEM)
		erofs_err("out of memory while compressing");
	else if (err)
		erofs_err("compressing: the %s encoder failed (%s)",
			  packed ? "packed inode's" : "file's", strerror(-err));
}

int erofs_compress_work(struct erofs_compressor *c, const struct erofs_work_ctx *ctx,
			struct erofs_work *w, struct erofs_dir_cache *dirs)
{
	int err = erofs_read_work(ctx, w, c->input, dirs);

	if (err)
		return err;
	if (hash_for_dedup(ctx, w, c->input)) {
		w->dup_hint = true;
		return 0;
	}
	err = compress_segment(c, w, true, UINT64_MAX);
	report_failure(err, w->packed);
	w->compressed = !err;
	return err;
}

int erofs_compress_head(struct erofs_compressor *c, struct erofs_inode *inode,
			const uint8_t *src, uint64_t lofs, uint32_t len, uint32_t stop,
			struct erofs_work *out)
{
	int err;

	*out = (struct erofs_work){ .kind = EROFS_WORK_COMPRESS, .inode = inode, .fd = -1,
				    .start = lofs, .end = lofs + len };
	memcpy(c->input, src, len);
	err = compress_segment(c, out, false, stop);
	if (err) {
		free(out->blocks);
		free(out->z.extents);
		report_failure(err, false);
	}
	return err;
}
