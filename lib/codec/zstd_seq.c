// SPDX-License-Identifier: MIT
/*
 * zstd in two stages (see include/erofs/codec/zstd_seq.h).
 *
 * Stage one, ZSTD_generateSequences(), runs a whole compression at the
 * level with its entropy stage skipped and hands back the parse.  Stage
 * two is ZSTD_compress2() on a context whose own match finder is replaced
 * by a registered sequence producer (produce() below) that feeds it the
 * kept sequences, clipped to the prefix being encoded: everything else
 * about the frame (block splitting, literal and sequence coding, raw and
 * RLE blocks) is libzstd's, as when it compresses that prefix itself.
 * ZSTD_compressSequences() would do the entropy stage too, but in 1.5.4
 * it does not split blocks as ZSTD_compress2() does at level 16 and up,
 * which costs some size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY	/* sequences and sequence producers */
#include <zstd.h>
#include <zstd_errors.h>

#include "erofs/codec/zstd_seq.h"

/* a match shorter than this may not be coded (the format's minimum) */
#define MATCH_MIN	3

struct erofs_zseq {
	/*
	 * Stage one: the level's match finder.  After ZSTD_generateSequences()
	 * a context keeps collecting sequences (1.5.4 never clears that), so
	 * it serves for nothing else.
	 */
	ZSTD_CCtx *finder;
	ZSTD_CCtx *coder;		/* stage two: fed by produce() */
	ZSTD_CCtx *plain;		/* erofs_zseq_compress() */
	int level;
	/*
	 * The window's parse: seqs[i] is a literal run followed by a match;
	 * block delimiters are folded into the next literal run, and what
	 * follows the last match is literals.  ends[i] is where seqs[i]'s
	 * match ends in the window.
	 */
	ZSTD_Sequence *seqs;
	uint32_t *ends;
	size_t nr_seqs, seqs_cap;
	const uint8_t *src;
	size_t window;
	size_t prefix;			/* the length being encoded */
	/* where the blocks libzstd asked produce() for ended, in order */
	uint32_t *block_ends;
	size_t nr_blocks, blocks_cap;
};

static int zstd_error(size_t ret)
{
	return ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
}

static size_t first_ending_after(const struct erofs_zseq *z, size_t pos)
{
	size_t lo = 0, hi = z->nr_seqs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (z->ends[mid] > pos)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Appends the part of the match [from, to) that lies in a block, clipped to it. */
static size_t clipped_match(ZSTD_Sequence *out, size_t n, uint32_t offset, size_t from,
			    size_t to, size_t *lits)
{
	if (to <= from)
		return n;
	if (to - from < MATCH_MIN) {
		*lits += to - from;
		return n;
	}
	out[n] = (ZSTD_Sequence){ .offset = offset, .litLength = (unsigned int)*lits,
				  .matchLength = (unsigned int)(to - from) };
	*lits = 0;
	return n + 1;
}

/*
 * libzstd's callback for each block [src, src + size) of the frame being
 * encoded: the kept sequences that fall in that block, clipped to it.  A
 * match cut by the block's start or end keeps its offset for the part
 * inside (the bytes it copies are as far back as before); a part shorter
 * than MATCH_MIN becomes literals.  Every match given is at least
 * MATCH_MIN long, so out_cap (ZSTD_sequenceBound() of the block) holds
 * them and the closing delimiter.
 */
static size_t produce(void *state, ZSTD_Sequence *out, size_t out_cap, const void *src,
		      size_t size, const void *dict, size_t dict_size, int level,
		      size_t window_size)
{
	struct erofs_zseq *z = state;
	const uint8_t *p = src;
	size_t start, end, pos, i, lits = 0, n = 0;

	(void)dict, (void)dict_size, (void)level, (void)window_size;
	/* libzstd passes blocks of the input it was given, in place */
	if (p < z->src || (size_t)(p - z->src) + size > z->prefix || out_cap < size / MATCH_MIN + 1)
		return ZSTD_SEQUENCE_PRODUCER_ERROR;
	start = (size_t)(p - z->src);
	end = start + size;
	if (z->nr_blocks < z->blocks_cap)
		z->block_ends[z->nr_blocks++] = (uint32_t)end;
	i = first_ending_after(z, start);
	pos = i ? z->ends[i - 1] : 0;
	if (i < z->nr_seqs && pos < start) {	/* begins before the block */
		const size_t match = pos + z->seqs[i].litLength;

		lits = match > start ? (match < end ? match : end) - start : 0;
		n = clipped_match(out, n, z->seqs[i].offset, match > start ? match : start,
				  z->ends[i] < end ? z->ends[i] : end, &lits);
		pos = z->ends[i++];
	}
	for (; i < z->nr_seqs && z->ends[i] <= end; i++) {	/* wholly inside */
		out[n] = z->seqs[i];
		out[n++].litLength += (unsigned int)lits;
		lits = 0;
		pos = z->ends[i];
	}
	if (i < z->nr_seqs && pos < end) {	/* ends after the block */
		const size_t match = pos + z->seqs[i].litLength;

		lits += (match < end ? match : end) - pos;
		n = clipped_match(out, n, z->seqs[i].offset, match, end, &lits);
		pos = end;
	}
	if (pos < end)		/* literals to the block's end: no match is left */
		lits += end - (pos > start ? pos : start);
	out[n++] = (ZSTD_Sequence){ .litLength = (unsigned int)lits };	/* block end */
	return n;
}

static int set_params(ZSTD_CCtx *cctx, int level, unsigned int window_log)
{
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, (int)window_log)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching,
						ZSTD_ps_disable)))
		return -EINVAL;
	return 0;
}

int erofs_zseq_new(int level, unsigned int window_log, struct erofs_zseq **out)
{
	struct erofs_zseq *z = calloc(1, sizeof(*z));
	int err;

	*out = z;
	if (!z)
		return -ENOMEM;
	z->level = level;
	z->finder = ZSTD_createCCtx();
	z->coder = ZSTD_createCCtx();
	z->plain = ZSTD_createCCtx();
	if (!z->finder || !z->coder || !z->plain)
		return -ENOMEM;
	if ((err = set_params(z->finder, level, window_log)) ||
	    (err = set_params(z->coder, level, window_log)) ||
	    (err = set_params(z->plain, level, window_log)))
		return err;
	/*
	 * The finder: in 1.5.4 the block splitter (on by default from level
	 * 16) makes ZSTD_generateSequences() report a block's sequences once
	 * per part; splitting does not change the parse.
	 */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->finder, ZSTD_c_useBlockSplitter,
						ZSTD_ps_disable)))
		return -EINVAL;
	/*
	 * The coder never searches, so its match tables are kept at the
	 * minimum (libzstd clears them for every frame); it turns repeated
	 * offsets back into repeat codes, which levels under 10 skip by
	 * default for outside sequences.
	 */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->coder, ZSTD_c_hashLog, ZSTD_HASHLOG_MIN)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->coder, ZSTD_c_chainLog, ZSTD_CHAINLOG_MIN)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->coder, ZSTD_c_searchForExternalRepcodes,
						ZSTD_ps_enable)))
		return -EINVAL;
	ZSTD_registerSequenceProducer(z->coder, z, produce);
	return 0;
}

void erofs_zseq_free(struct erofs_zseq *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->finder);
	ZSTD_freeCCtx(z->coder);
	ZSTD_freeCCtx(z->plain);
	free(z->seqs);
	free(z->ends);
	free(z->block_ends);
	free(z);
}

static int reserve(struct erofs_zseq *z, size_t want, size_t blocks)
{
	ZSTD_Sequence *seqs;
	uint32_t *ends;

	if (blocks > z->blocks_cap) {
		uint32_t *bigger = realloc(z->block_ends, blocks * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		z->block_ends = bigger;
		z->blocks_cap = blocks;
	}
	if (want <= z->seqs_cap)
		return 0;
	seqs = realloc(z->seqs, want * sizeof(*seqs));
	if (!seqs)
		return -ENOMEM;
	z->seqs = seqs;
	ends = realloc(z->ends, want * sizeof(*ends));
	if (!ends)
		return -ENOMEM;
	z->ends = ends;
	z->seqs_cap = want;
	return 0;
}

/*
 * A frame whose guess less an eighth falls in a smaller source row of
 * libzstd's still takes that row's parser when it finds shorter matches
 * (levels 11-17: 3- or 4-byte matches where the window's row has 4 or 5):
 * the guess is good to about a twelfth, and input that compresses barely
 * over 2:1 is full of short matches.  -zzstd,15 on the rootfs sample:
 * 0.78% smaller for 0.9% more instructions; less a quarter: 2.0% smaller
 * for 20% more.
 */
#define NEAR_ROW	8

/* The parameters for a frame of about prefix bytes, or all 0 for the window's. */
static ZSTD_compressionParameters parser_for(int level, size_t prefix, size_t window)
{
	const ZSTD_compressionParameters none = { 0 };	/* libzstd's own choice */
	ZSTD_compressionParameters w, p;

	if (!prefix || prefix >= window)
		return none;
	w = ZSTD_getCParams(level, window, 0);
	p = ZSTD_getCParams(level, prefix, 0);
	if (p.strategy != w.strategy)
		return p;
	p = ZSTD_getCParams(level, prefix - prefix / NEAR_ROW, 0);
	return p.minMatch < w.minMatch ? p : none;
}

int erofs_zseq_parser(int level, size_t prefix, size_t window, int *min_match)
{
	const ZSTD_compressionParameters p = parser_for(level, prefix, window);

	*min_match = (int)p.minMatch;
	return (int)p.strategy;
}

int erofs_zseq_expect(struct erofs_zseq *z, size_t prefix, size_t window)
{
	const ZSTD_compressionParameters p = parser_for(z->level, prefix, window);
	const struct {
		ZSTD_cParameter param;
		int value;
	} set[] = {		/* all but windowLog, the superblock's */
		{ ZSTD_c_chainLog, (int)p.chainLog }, { ZSTD_c_hashLog, (int)p.hashLog },
		{ ZSTD_c_searchLog, (int)p.searchLog }, { ZSTD_c_minMatch, (int)p.minMatch },
		{ ZSTD_c_targetLength, (int)p.targetLength }, { ZSTD_c_strategy, (int)p.strategy },
	};

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (ZSTD_isError(ZSTD_CCtx_setParameter(z->finder, set[i].param, set[i].value)))
			return -EINVAL;
	return 0;
}

int erofs_zseq_find(struct erofs_zseq *z, const uint8_t *src, size_t len)
{
	/* at most one sequence per MATCH_MIN bytes, and a delimiter per
	 * block (1 KiB at the smallest window) */
	const size_t bound = ZSTD_sequenceBound(len) + len / 1024 + 2;
	size_t got, kept = 0, pos = 0, lits = 0;
	int err;

	z->src = src;
	z->window = len;
	z->nr_seqs = 0;
	if ((err = reserve(z, bound, len / 1024 + 2)))
		return err;
	got = ZSTD_generateSequences(z->finder, z->seqs, bound, src, len);
	if (ZSTD_isError(got))
		return zstd_error(got);
	if (got > bound)
		return -EIO;
	/* fold the block delimiters (offset 0) into the following literals */
	for (size_t i = 0; i < got; i++) {
		const ZSTD_Sequence s = z->seqs[i];

		lits += s.litLength;
		if (!s.offset)
			continue;
		if (!s.matchLength || s.offset > pos + lits)
			return -EIO;
		pos += lits + s.matchLength;
		if (pos > len)
			return -EIO;
		z->seqs[kept] = (ZSTD_Sequence){ .offset = s.offset, .matchLength = s.matchLength,
						 .litLength = (unsigned int)lits };
		z->ends[kept++] = (uint32_t)pos;
		lits = 0;
	}
	/*
	 * A block too short to compress (the input's last few bytes) is
	 * reported with no sequence at all: its bytes are literals too.
	 */
	if (pos + lits > len)
		return -EIO;
	z->nr_seqs = kept;
	return 0;
}

static int compress_result(size_t n)
{
	if (!ZSTD_isError(n))
		return n > (size_t)INT32_MAX ? -EIO : (int)n;
	if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
		return 0;
	return zstd_error(n);
}

int erofs_zseq_compress(struct erofs_zseq *z, const uint8_t *src, size_t len, uint8_t *out,
			size_t out_cap)
{
	return compress_result(ZSTD_compress2(z->plain, out, out_cap, src, len));
}

int erofs_zseq_encode(struct erofs_zseq *z, size_t len, uint8_t *out, size_t out_cap)
{
	if (len > z->window)
		return -EINVAL;
	z->prefix = len;
	z->nr_blocks = 0;
	return compress_result(ZSTD_compress2(z->coder, out, out_cap, z->src, len));
}

int erofs_zseq_block_points(const struct erofs_zseq *z, const uint8_t *frame, size_t size,
			    int *in, int *out, int max)
{
	size_t pos = ZSTD_frameHeaderSize(frame, size);
	int n = 0;

	if (ZSTD_isError(pos))
		return 0;
	while (pos + 3 <= size) {
		const uint32_t head = frame[pos] | frame[pos + 1] << 8 | (uint32_t)frame[pos + 2] << 16;
		const uint32_t kind = head >> 1 & 3, bytes = kind == 1 ? 1 : head >> 3;

		pos += 3 + bytes;
		if (pos > size || n == max)
			return 0;
		/* a block too short to compress is not asked for: the frame's last */
		in[n] = (size_t)n < z->nr_blocks ? (int)z->block_ends[n] : (int)z->prefix;
		out[n++] = (int)pos;
		if (head & 1)
			break;
	}
	/* more blocks than asked for: the block splitter cut some in parts */
	if (pos != size || (size_t)n > z->nr_blocks + 1 ||
	    ((size_t)n == z->nr_blocks + 1 && in[n - 2] == (int)z->prefix))
		return 0;
	return in[n - 1] == (int)z->prefix ? n : 0;
}
