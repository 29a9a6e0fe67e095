// SPDX-License-Identifier: MIT
/*
 * Fixed-output-size LZ4/LZ4HC compression of regular files into the spool
 * (see include/erofs/compress.h).
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
 * - an extent decodes to at most EXTENT_INPUT_MAX bytes, below the
 *   2047-lcluster reach of an index delta.
 *
 * Parallelism: files are cut into segments of SEGMENT_SIZE bytes (block
 * aligned; an extent never crosses one), and each segment is a work item.
 * Workers compress items into memory in any order; the calling thread
 * appends them to the spool strictly in item order.  The segmenting does
 * not depend on the worker count, so the image is the same for every
 * --workers value.  At most INFLIGHT_PER_WORKER items per worker wait in
 * memory, which bounds the memory used.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lz4hc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/compress.h"
#include "erofs/diag.h"
#include "erofs/format.h"
#include "erofs/fragment.h"
#include "erofs/io.h"
#include "erofs/progress.h"
#include "erofs/tree.h"
#include "erofs/xattr.h"
#include "erofs/zdedupe.h"

#define EXTENT_INPUT_MAX	(4u << 20)	/* input offered to one pcluster */
#define SEGMENT_SIZE		(8u << 20)
#define INFLIGHT_PER_WORKER	4
#define ESTIMATE_PIECE		(64u << 10)
/* -E dedupe: content-defined cut points (see next_anchor()) */
#define ANCHOR_MIN_GAP		(128u << 10)
#define ANCHOR_MASK		((1ull << 18) - 1)

/* One segment of one file, compressed into memory by a worker. */
struct work_item {
	struct erofs_inode *inode;
	uint64_t start, end;		/* file bytes */
	uint32_t pcluster_size;
	unsigned int algorithm;		/* index into the -z list */
	bool last;			/* the file's last segment */
	bool packed;			/* a segment of the packed inode's data */
	/* results */
	uint8_t *blocks;		/* nr_blocks blocks */
	struct erofs_zinfo z;		/* lofs absolute, pblk from the segment's start */
	uint8_t *frag;			/* -E fragments: the segment's bytes from frag_at on */
	uint64_t frag_at;		/* file offset of frag[0] */
	uint32_t frag_len, frag_est;	/* ...and their size once compressed, estimated */
	int err;
	bool done;
};

struct work_queue {
	const struct erofs_build_options *opts;
	const struct erofs_tree *tree;
	struct erofs_packed *packed;	/* fragments; NULL without them */
	struct erofs_zdedupe *dedupe;	/* -E dedupe: the pclusters stored so far */
	struct work_item *items;
	uint32_t nr_items;
	uint32_t next;			/* next item to hand out */
	uint32_t committed;		/* items appended to the spool */
	uint32_t max_ahead;		/* items allowed past `committed` */
	bool abort;
	pthread_mutex_t lock;
	pthread_cond_t item_done, room;
};

/* Per-thread state of one compressor. */
struct compressor {
	const struct erofs_build_options *opts;
	uint32_t blksz;
	LZ4_streamHC_t *hc_state;	/* initialised once, then reset cheaply */
	uint8_t *input;			/* the segment being compressed */
	uint8_t *pcluster;		/* output of one pcluster */
	uint8_t *estimate;		/* scratch for estimate_compressed() */
	uint64_t gear[256];		/* next_anchor()'s per-byte values */
	struct erofs_dir_cache dirs;
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

static int compressor_init(struct compressor *c, const struct erofs_build_options *opts)
{
	memset(c, 0, sizeof(*c));
	c->opts = opts;
	c->dirs.fd = -1;
	c->blksz = 1u << opts->blkszbits;
	c->input = malloc(SEGMENT_SIZE);
	c->pcluster = malloc(EROFS_PCLUSTER_MAX_SIZE);
	c->estimate = malloc(LZ4_COMPRESSBOUND(ESTIMATE_PIECE));
	for (unsigned int b = 0; b < 256; b++)
		c->gear[b] = gear_value(b);
	for (unsigned int i = 0; i < opts->nr_algorithms; i++)
		if (opts->algorithms[i].kind == EROFS_COMPRESS_LZ4HC && !c->hc_state &&
		    !(c->hc_state = LZ4_createStreamHC()))
			return -ENOMEM;
	if (!c->input || !c->pcluster || !c->estimate)
		return -ENOMEM;
	return 0;
}

static void compressor_release(struct compressor *c)
{
	free(c->input);
	free(c->pcluster);
	free(c->estimate);
	LZ4_freeStreamHC(c->hc_state);
	erofs_dir_cache_release(&c->dirs);
}

/* Fills one pcluster of cap bytes; returns the compressed length, 0 if nothing fits. */
static int compress_pcluster(struct compressor *c, const struct erofs_algorithm *alg,
			     const uint8_t *src, int *src_len, int cap)
{
	if (alg->kind == EROFS_COMPRESS_LZ4HC) {
		/*
		 * Every pcluster is an independent stream.  The one-shot
		 * LZ4_compress_HC_destSize() clears 256 KiB of match tables
		 * per call; a fast reset starts a new stream without that,
		 * with the same output.
		 */
		LZ4_resetStreamHC_fast(c->hc_state, alg->level);
		return LZ4_compress_HC_continue_destSize(c->hc_state, (const char *)src,
							 (char *)c->pcluster, src_len, cap);
	}
	return LZ4_compress_destSize((const char *)src, (char *)c->pcluster, src_len, cap);
}

/*
 * What bytes stored as a fragment will roughly cost once the packed inode
 * is compressed: fast LZ4 over 64 KiB pieces, which the packed inode's own
 * compression (with neighbours as context) usually beats.
 */
static uint32_t estimate_compressed(struct compressor *c, const uint8_t *src, uint32_t len)
{
	uint64_t total = 0;

	for (uint32_t pos = 0; pos < len; pos += ESTIMATE_PIECE) {
		int n = (int)(len - pos < ESTIMATE_PIECE ? len - pos : ESTIMATE_PIECE);
		int out = LZ4_compress_default((const char *)src + pos, (char *)c->estimate, n,
					       LZ4_COMPRESSBOUND(ESTIMATE_PIECE));

		total += out > 0 && out < n ? (uint64_t)out : (uint64_t)n;
	}
	return (uint32_t)total;
}

/*
 * Fast LZ4's size for the rest of a file (left bytes) if all of it fits in
 * cap bytes, else 0: a cheap guess at what lz4hc will do with it.
 */
static int fast_rest_size(struct compressor *c, const uint8_t *src, uint64_t left, int cap)
{
	int src_len = (int)left, out;

	if (left > EXTENT_INPUT_MAX)
		return 0;
	out = LZ4_compress_destSize((const char *)src, (char *)c->pcluster, &src_len, cap);
	return out > 0 && (uint64_t)src_len == left ? out : 0;
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

static int read_segment(const struct work_queue *q, struct work_item *item, uint8_t *buf,
			struct erofs_dir_cache *dirs)
{
	const char *src = q->opts->source;
	size_t len = (size_t)(item->end - item->start), done = 0;
	int fd, err = 0;
	struct stat st;

	if (item->packed) {
		err = erofs_pread_all(q->packed->fd, buf, len, item->start);
		if (err)
			erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
		return err;
	}
	fd = erofs_tree_open_file(q->tree, item->inode, dirs);
	if (fd < 0) {
		err = errno;
		erofs_err("%s/%s: cannot open: %s", src, item->inode->path,
			  erofs_tree_open_error(err));
		return -err;
	}
	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)(item->start + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? errno : ENODATA;
			break;
		}
		done += (size_t)n;
	}
	if (err == ENODATA)
		erofs_err("%s/%s: file shrank during the build", src, item->inode->path);
	else if (err)
		erofs_err("%s/%s: cannot read: %s", src, item->inode->path, strerror(err));
	else if (item->last && (fstat(fd, &st) || (uint64_t)st.st_size != item->inode->size)) {
		erofs_err("%s/%s: file changed size during the build", src, item->inode->path);
		err = EAGAIN;
	}
	close(fd);
	return -err;
}

/*
 * Bytes an inline tail (-E ztailpacking) of this file may take: what the
 * block leaves beside the largest record the inode can have.  Its xattrs
 * are planned later, so the largest ibody that it or a duplicate sharing
 * its data can need is assumed.
 */
static uint32_t inline_room(const struct erofs_build_options *opts,
			    const struct erofs_inode *inode)
{
	uint32_t blksz = 1u << opts->blkszbits;
	uint32_t meta = EROFS_EXTENDED_INODE_SIZE + inode->ibody_bound;
	/* with dedupe the file may need a full index */
	static const struct erofs_zinfo full = { .full_index = true };
	uint32_t record = meta + erofs_zindex_size(opts, meta, inode->size,
						   opts->dedupe ? &full : NULL);

	return record < blksz ? blksz - record : 0;
}

/* Keeps the segment's bytes from pos on as the file's fragment (or a piece of it). */
static int take_fragment(struct compressor *c, struct work_item *item, uint64_t pos)
{
	uint32_t len = (uint32_t)(item->end - item->start - pos);

	item->frag = malloc(len ? len : 1);
	if (!item->frag)
		return -ENOMEM;
	memcpy(item->frag, c->input + pos, len);
	item->frag_at = item->start + pos;
	item->frag_len = len;
	item->frag_est = estimate_compressed(c, item->frag, len);
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
static int ztail_first_cap(struct compressor *c, const uint8_t *src, uint64_t left, int cap)
{
	/* lz4hc's output is seldom above 92% of fast LZ4's (measured on
	 * source and documentation trees: same image sizes, fewer retries) */
	uint64_t guess = blocks_for((uint64_t)fast_rest_size(c, src, left, cap) * 92 / 100,
				    c->blksz);

	return guess < 2 ? cap : (int)((guess - 1) * c->blksz);
}

/* Compresses one segment into item->blocks and item->z. */
static int compress_segment(struct compressor *c, const struct work_queue *q,
			    struct work_item *item)
{
	const uint32_t blksz = c->blksz;
	const uint64_t len = item->end - item->start;
	struct erofs_zinfo *zi = &item->z;
	/* the file's tail may go to the packed inode (never the packed
	 * inode's own); with all-fragments, every byte of the file does */
	const bool to_fragment = c->opts->fragments && !item->packed;
	const bool fragment_tail = to_fragment && item->last;
	const bool ztail = c->opts->ztailpacking && item->last && !to_fragment;
	const struct erofs_algorithm *alg = &c->opts->algorithms[item->algorithm];
	const bool anchored = c->opts->dedupe && !item->packed;
	uint32_t cap = 0;
	uint64_t pos = 0, anchor = 0;
	uint8_t *out;
	int err;

	if ((err = read_segment(q, item, c->input, &c->dirs)))
		return err;
	if (to_fragment && c->opts->all_fragments)
		return take_fragment(c, item, 0);
	/* never more blocks than the raw input, plus a pcluster of rounding */
	item->blocks = malloc(blocks_for(len, blksz) * blksz + item->pcluster_size);
	if (!item->blocks)
		return -ENOMEM;
	out = item->blocks;
	while (pos < len) {
		uint64_t left = len - pos;
		int src_len = (int)(left < EXTENT_INPUT_MAX ? left : EXTENT_INPUT_MAX), out_len;
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
		 * full.  Fast LZ4 answers first; lz4hc only when it may fit
		 * where fast LZ4 does not.
		 */
		if (fragment_tail && (left <= item->pcluster_size ||
				      (alg->kind == EROFS_COMPRESS_LZ4HC &&
				       fast_rest_size(c, c->input + pos, left, (int)item->pcluster_size))))
			return take_fragment(c, item, pos);
		out_len = compress_pcluster(c, alg, c->input + pos, &src_len,
					    ztail && alg->kind == EROFS_COMPRESS_LZ4HC &&
					    (uint64_t)src_len == left
						? ztail_first_cap(c, c->input + pos, left,
								  (int)item->pcluster_size)
						: (int)item->pcluster_size);
		if (fragment_tail && (uint64_t)src_len == left)
			return take_fragment(c, item, pos);
		nblks = blocks_for((uint64_t)out_len, blksz);
		if (ztail && (uint64_t)src_len == left && nblks > 1) {
			/* the file ends in this pcluster: fill one block less, so
			 * that what is left can become a short inline tail */
			src_len = (int)left;
			out_len = compress_pcluster(c, alg, c->input + pos, &src_len,
						    (int)((nblks - 1) * blksz));
			nblks = blocks_for((uint64_t)out_len, blksz);
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
		bool goes_inline = ztail && (uint64_t)out_len <= inline_room(c->opts, item->inode);

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
		for (; raw_blocks && pos < len; raw_blocks--) {
			uint64_t n = len - pos < blksz ? len - pos : blksz;
			uint64_t in_lcluster = (item->start + pos) & (blksz - 1);

			if (fragment_tail && len - pos <= item->pcluster_size)
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
	return 0;
}

static void *worker_main(void *arg)
{
	struct work_queue *q = arg;
	struct compressor c;
	int init_err = compressor_init(&c, q->opts);

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct work_item *item;

		while (!q->abort && q->next < q->nr_items &&
		       q->next >= q->committed + q->max_ahead)
			pthread_cond_wait(&q->room, &q->lock);
		if (q->abort || q->next >= q->nr_items)
			break;
		item = &q->items[q->next++];
		pthread_mutex_unlock(&q->lock);
		item->err = init_err ? init_err : compress_segment(&c, q, item);
		pthread_mutex_lock(&q->lock);
		item->done = true;
		pthread_cond_broadcast(&q->item_done);
	}
	pthread_mutex_unlock(&q->lock);
	compressor_release(&c);
	return NULL;
}

void erofs_zinfo_free(struct erofs_zinfo *zi)
{
	if (zi) {
		free(zi->extents);
		free(zi->tail);
	}
	free(zi);
}

int erofs_spool_open(const struct erofs_build_options *opts, struct erofs_spool *spool)
{
	int fd = erofs_scratch_open(opts->image);

	if (fd < 0)
		return fd;
	spool->fd = fd;
	spool->size = 0;
	return 0;
}

void erofs_spool_close(struct erofs_spool *spool)
{
	if (spool->fd >= 0)
		close(spool->fd);
	spool->fd = -1;
}

/*
 * Whether a compressed layout beats the plain one (full blocks plus an
 * inline tail); a fragment counts at its estimated compressed size.
 */
static bool worth_it(const struct erofs_build_options *opts, const struct erofs_inode *inode,
		     const struct erofs_zinfo *zi, uint64_t frag_est)
{
	uint32_t meta = EROFS_EXTENDED_INODE_SIZE + erofs_xattr_ibody_max(inode->xattrs);

	return (uint64_t)zi->nr_blocks * (1u << opts->blkszbits) + zi->tail_size + frag_est +
	       erofs_zindex_size(opts, meta, inode->size, zi) < inode->size;
}

static int build_items(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		       struct work_queue *q)
{
	uint32_t blksz = 1u << opts->blkszbits, n = 0;

	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		tree->inodes[i]->ibody_bound = erofs_xattr_ibody_max(tree->inodes[i]->xattrs);
	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *orig = tree->inodes[i]->same_data;

		if (orig && orig->ibody_bound < tree->inodes[i]->ibody_bound)
			orig->ibody_bound = tree->inodes[i]->ibody_bound;
	}

	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < tree->nr_inodes; i++) {
			struct erofs_inode *inode = tree->inodes[i];

			uint32_t pcluster;
			unsigned int algorithm;

			/* a file of one block or less saves nothing, unless its
			 * compressed form can go inline instead of its bytes */
			if (!S_ISREG(inode->mode) || !inode->size ||
			    (inode->size <= blksz && !opts->ztailpacking && !opts->fragments))
				continue;
			/* a duplicate reuses its original's pclusters and tail */
			if (inode->same_data)
				continue;
			pcluster = erofs_pcluster_for(opts, inode->path, &algorithm);
			if (!pcluster)
				continue;	/* a hint says: store it plain */
			for (uint64_t start = 0; start < inode->size; start += SEGMENT_SIZE, n++) {
				uint64_t end = inode->size - start > SEGMENT_SIZE ?
					       start + SEGMENT_SIZE : inode->size;

				if (pass)
					q->items[n] = (struct work_item){
						.inode = inode, .start = start, .end = end,
						.last = end == inode->size,
						.pcluster_size = pcluster, .algorithm = algorithm,
					};
			}
		}
		if (!pass) {
			q->nr_items = n;
			n = 0;
			q->items = calloc(q->nr_items ? q->nr_items : 1, sizeof(*q->items));
			if (!q->items)
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * -E ztailpacking: takes the file's last pcluster out of the blocks when it
 * is one block and its bytes fit inline beside the largest inode record
 * this file can have; the planner then keeps the record inside one block.
 */
static int pack_tail(const struct erofs_build_options *opts, const struct erofs_inode *inode,
		     struct work_item *item)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	struct erofs_zextent *last = &item->z.extents[item->z.nr_extents - 1];
	const uint8_t *block;

	if (last->nblks != 1 || last->clen > inline_room(opts, inode))
		return 0;
	block = item->blocks + ((uint64_t)last->pblk << opts->blkszbits);
	inode->z->tail = malloc(last->clen);
	if (!inode->z->tail)
		return -ENOMEM;
	/* compressed bytes sit at the end of their block, raw ones at its start */
	memcpy(inode->z->tail, last->raw ? block : block + blksz - last->clen, last->clen);
	inode->z->tail_size = last->clen;
	item->z.nr_blocks--;
	last->nblks = 0;
	return 0;
}

/* The file's fragment, or the next piece of it, into the packed inode. */
static int commit_fragment(const struct erofs_build_options *opts, struct erofs_packed *packed,
			   struct erofs_inode *inode, struct work_item *item)
{
	struct erofs_zinfo *zi = inode->z;
	bool first_piece = !zi->fragment;
	uint64_t off;
	int err;

	/* a file packed in pieces is stored as it comes; a whole fragment
	 * may be one already stored */
	err = erofs_packed_add(packed, item->frag, item->frag_len,
			       first_piece && item->last, &off);
	if (err)
		return err;
	if (!first_piece)
		return 0;
	zi->fragment = true;
	zi->frag_lofs = item->frag_at;
	zi->frag_off = off;
	/* compact indexes keep 32 bits of a tail's offset; a full index
	 * keeps the high half in the tail's head */
	if (zi->frag_lofs && off > UINT32_MAX)
		zi->full_index = true;
	/* the index marks where the fragment starts with an extent of no blocks */
	{
		struct erofs_zextent *bigger = realloc(zi->extents,
						       (zi->nr_extents + 1) * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		zi->extents = bigger;
		bigger[zi->nr_extents++] = (struct erofs_zextent){
			.lofs = item->frag_at, .pblk = zi->nr_blocks,
		};
	}
	return 0;
}

/*
 * Whether an extent of dlen bytes at lofs may use a stored pcluster of the
 * key's shape: the rules of the top of this file hold for the extent's own
 * position, which differs from the stored one's.
 */
static bool reference_fits(const struct erofs_build_options *opts,
			   const struct erofs_zdedupe_key *key, uint64_t lofs, bool file_last)
{
	const uint32_t blksz = 1u << opts->blkszbits;

	if (key->nblks > 1 && (lofs + key->decoded) / blksz < lofs / blksz + 2)
		return false;
	return !(key->raw && file_last && (lofs & (blksz - 1)) + key->decoded > blksz);
}

/* A stored pcluster with these bytes, or NULL; the hash is confirmed byte for byte. */
static const struct erofs_zdedupe_entry *find_stored(const struct work_queue *q,
						     const struct erofs_zdedupe_key *key,
						     const uint8_t *bytes,
						     struct erofs_seq_writer *spool, uint8_t *scratch)
{
	const struct erofs_zdedupe_entry *e;
	const unsigned int bits = q->opts->blkszbits;
	uint32_t cursor = 0;

	while ((e = erofs_zdedupe_next(q->dedupe, key, &cursor))) {
		/*
		 * A file stored plain after all keeps only its whole aligned
		 * blocks, which read exactly like raw pclusters of one block:
		 * those are still there to share (incompressible duplicates).
		 */
		if (!e->owner->z && !(e->key.raw && e->key.decoded == 1u << bits &&
				      e->lofs == (uint64_t)e->pblk << bits))
			continue;
		if (erofs_seq_flush(spool) ||
		    erofs_pread_all(spool->fd, scratch, (size_t)key->nblks << bits, e->spool_pos))
			return NULL;
		if (!memcmp(scratch, bytes, (size_t)key->nblks << bits))
			return e;
	}
	return NULL;
}

/*
 * Appends the item's extents to its file and its pclusters to the spool.
 * With -E dedupe (not for the packed inode), a pcluster already stored (in
 * this file or an earlier one) is pointed at instead of stored again.
 */
static int commit_extents(const struct work_queue *q, struct erofs_inode *inode,
			  struct work_item *item, struct erofs_seq_writer *spool,
			  uint64_t *spool_end, uint8_t *scratch)
{
	const struct erofs_build_options *opts = q->opts;
	const unsigned int bits = opts->blkszbits;
	const bool dedupe = q->dedupe && !item->packed;
	struct erofs_zinfo *zi = inode->z;
	const uint32_t n = item->z.nr_extents;
	struct erofs_zextent *bigger;
	int err;

	/* (one more for a fragment's extent) */
	bigger = realloc(zi->extents, (zi->nr_extents + n + 1) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	zi->extents = bigger;
	for (uint32_t i = 0; i < n; i++) {
		struct erofs_zextent e = item->z.extents[i];
		const uint8_t *bytes = item->blocks + ((uint64_t)e.pblk << bits);
		uint64_t end = i + 1 < n ? item->z.extents[i + 1].lofs
				      : item->frag ? item->frag_at : item->end;
		struct erofs_zdedupe_key key = {
			.decoded = (uint32_t)(end - e.lofs), .nblks = e.nblks, .raw = e.raw,
		};
		const struct erofs_zdedupe_entry *stored = NULL;

		if (dedupe && e.nblks) {
			key.hash = XXH3_128bits(bytes, (size_t)e.nblks << bits);
			if (reference_fits(opts, &key, e.lofs, item->last && i + 1 == n && !item->frag))
				stored = find_stored(q, &key, bytes, spool, scratch);
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
					.spool_pos = *spool_end,
				};

				erofs_seq_write(spool, *spool_end, bytes, (size_t)e.nblks << bits);
				*spool_end += (uint64_t)e.nblks << bits;
				zi->nr_blocks += e.nblks;
				if (dedupe && (err = erofs_zdedupe_add(q->dedupe, &entry)))
					return err;
			}
		}
		zi->extents[zi->nr_extents++] = e;
	}
	return 0;
}

/* Appends one finished item to the spool and to its file's extents. */
static int commit_item(const struct work_queue *q, struct work_item *item,
		       struct erofs_seq_writer *spool, uint64_t *spool_end, uint8_t *scratch)
{
	const struct erofs_build_options *opts = q->opts;
	struct erofs_inode *inode = item->inode;
	struct erofs_zinfo *zi = inode->z;
	int err;

	if (!zi) {
		zi = inode->z = calloc(1, sizeof(*zi));
		if (!zi)
			return -ENOMEM;
		zi->spool_pos = *spool_end;
		zi->pcluster_size = item->pcluster_size;
	}
	if (item->last && !item->frag && opts->ztailpacking && item->z.nr_extents &&
	    (err = pack_tail(opts, inode, item)))
		return err;
	if ((err = commit_extents(q, inode, item, spool, spool_end, scratch)))
		return err;
	/* the packed inode itself is always kept compressed: its readers
	 * expect it so, and it seldom fails to gain */
	if (item->last && !item->packed &&
	    !worth_it(opts, inode, zi, item->frag ? item->frag_est : 0)) {
		/* stored plain: its blocks stay unused in the spool, and a
		 * fragment already packed in pieces stays unreferenced */
		erofs_zinfo_free(zi);
		inode->z = NULL;
		return spool->error;
	}
	if (item->frag && (err = commit_fragment(opts, q->packed, inode, item)))
		return err;
	return spool->error;
}

static int run_queue(struct work_queue *q, struct erofs_seq_writer *spool, uint64_t *spool_end)
{
	unsigned int nr_workers = q->opts->workers ? q->opts->workers : 1;
	pthread_t *threads = calloc(nr_workers, sizeof(*threads));
	unsigned int started = 0;
	struct erofs_progress progress;
	uint64_t total = 0, done = 0;
	int err = 0;

	/* what -E dedupe reads a stored pcluster back into */
	uint8_t *scratch = q->dedupe ? malloc(EROFS_PCLUSTER_MAX_SIZE) : NULL;

	if (!threads || (q->dedupe && !scratch)) {
		free(threads);
		free(scratch);
		return -ENOMEM;
	}
	q->max_ahead = nr_workers * INFLIGHT_PER_WORKER;
	for (uint32_t i = 0; i < q->nr_items; i++)
		total += q->items[i].end - q->items[i].start;
	erofs_progress_start(&progress, q->opts->show_progress, "compressing", total);
	for (; started < nr_workers; started++)
		if (pthread_create(&threads[started], NULL, worker_main, q))
			break;
	if (!started)
		err = -EAGAIN;
	for (uint32_t i = 0; i < q->nr_items && !err; i++) {
		struct work_item *item = &q->items[i];

		pthread_mutex_lock(&q->lock);
		while (!item->done)
			pthread_cond_wait(&q->item_done, &q->lock);
		pthread_mutex_unlock(&q->lock);
		err = item->err ? item->err : commit_item(q, item, spool, spool_end, scratch);
		done += item->end - item->start;
		erofs_progress_update(&progress, done, i + 1);
		free(item->blocks);
		free(item->z.extents);
		free(item->frag);
		item->blocks = NULL;
		item->z.extents = NULL;
		item->frag = NULL;
		pthread_mutex_lock(&q->lock);
		q->committed = i + 1;
		pthread_cond_broadcast(&q->room);
		pthread_mutex_unlock(&q->lock);
	}
	if (!err)
		erofs_progress_finish(&progress, q->nr_items);
	pthread_mutex_lock(&q->lock);
	q->abort = true;
	pthread_cond_broadcast(&q->room);
	pthread_mutex_unlock(&q->lock);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	for (uint32_t i = 0; i < q->nr_items; i++) {
		free(q->items[i].blocks);
		free(q->items[i].z.extents);
		free(q->items[i].frag);
	}
	free(threads);
	free(scratch);
	return err;
}

/* Runs the queue's items with their own locks; the spool writer is shared. */
static int run_items(struct work_queue *q, struct erofs_seq_writer *writer, uint64_t *spool_end)
{
	int err;

	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->item_done, NULL);
	pthread_cond_init(&q->room, NULL);
	err = run_queue(q, writer, spool_end);
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->item_done);
	pthread_mutex_destroy(&q->lock);
	free(q->items);
	q->items = NULL;
	return err;
}

/*
 * The packed inode: a regular file no directory names, whose data is every
 * fragment back to back, compressed in pclusters of its own size.
 */
static int compress_packed(const struct erofs_build_options *opts, struct erofs_tree *tree,
			   struct erofs_packed *packed, struct erofs_seq_writer *writer,
			   uint64_t *spool_end)
{
	struct work_queue q = { .opts = opts, .tree = tree, .packed = packed };
	struct erofs_inode *inode = calloc(1, sizeof(*inode));
	uint32_t n = 0;

	if (!inode || !(inode->path = strdup("(packed inode)"))) {
		free(inode);
		return -ENOMEM;
	}
	inode->mode = S_IFREG | 0600;
	inode->nlink = 1;
	inode->size = packed->size;
	tree->packed = inode;
	q.nr_items = (uint32_t)((packed->size + SEGMENT_SIZE - 1) / SEGMENT_SIZE);
	q.items = calloc(q.nr_items, sizeof(*q.items));
	if (!q.items)
		return -ENOMEM;
	for (uint64_t start = 0; start < packed->size; start += SEGMENT_SIZE, n++) {
		uint64_t end = packed->size - start > SEGMENT_SIZE ? start + SEGMENT_SIZE
								  : packed->size;

		q.items[n] = (struct work_item){
			.inode = inode, .start = start, .end = end, .last = end == packed->size,
			.packed = true,
			.pcluster_size = opts->packed_pcluster_size ? opts->packed_pcluster_size
								    : opts->pcluster_size,
		};
	}
	return run_items(&q, writer, spool_end);
}

int erofs_compress_tree(const struct erofs_build_options *opts, struct erofs_tree *tree,
			struct erofs_spool *spool)
{
	struct work_queue q = { .opts = opts, .tree = tree };
	struct erofs_packed packed = { .fd = -1 };
	struct erofs_zdedupe dedupe = { 0 };
	struct erofs_seq_writer writer;
	uint64_t spool_end = 0;
	int err;

	spool->fd = -1;
	if (opts->compressor == EROFS_COMPRESS_NONE)
		return 0;
	if ((err = erofs_spool_open(opts, spool)))
		return err;
	if (opts->fragments && (err = erofs_packed_open(&packed, opts->image)))
		return err;
	q.packed = &packed;
	q.dedupe = opts->dedupe ? &dedupe : NULL;
	if ((err = build_items(opts, tree, &q)))
		goto out;
	if ((err = erofs_seq_init(&writer, spool->fd, "temporary spool", 1u << 20))) {
		free(q.items);
		goto out;
	}
	err = run_items(&q, &writer, &spool_end);
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		if (tree->inodes[i]->same_data)
			tree->inodes[i]->z = tree->inodes[i]->same_data->z;
	if (!err && packed.size)
		err = compress_packed(opts, tree, &packed, &writer, &spool_end);
	if (!err)
		err = erofs_seq_flush(&writer);
	spool->size = spool_end;
	erofs_seq_release(&writer);
	tree->nr_fragments = packed.nr_fragments;
	tree->nr_shared_fragments = packed.nr_shared;
	tree->shared_fragment_bytes = packed.shared_bytes;
out:
	erofs_packed_close(&packed);
	erofs_zdedupe_free(&dedupe);
	if (err == -ENOMEM)
		erofs_err("out of memory while compressing");
	return err;
}
