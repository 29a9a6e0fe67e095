// SPDX-License-Identifier: MIT
/* The data pipeline (see include/erofs/build/pipeline.h). */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/build/chunk.h"
#include "erofs/build/tarindex.h"
#include "erofs/build/compress.h"
#include "erofs/build/dedup.h"
#include "erofs/build/filedigest.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/fragment.h"
#include "erofs/build/pipeline.h"
#include "erofs/build/plain.h"
#include "erofs/common/progress.h"
#include "erofs/source/xattr.h"
#include "erofs/build/zcommit.h"
#include "erofs/build/zdedupe.h"

/*
 * Pieces in flight are bounded by count and by the bytes they may hold in
 * memory (two segments a worker, and one more); a worker takes several
 * small pieces at once, so that small files cost few lock round trips.
 */
#define RING_SIZE		256
#define BATCH_PIECES		32
#define BATCH_BYTES		(256u << 10)

struct pipeline {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_work_ctx wctx;
	struct erofs_commit cc;

	pthread_mutex_t lock;
	/* workers wait on `changed`, the committer on `work_done`; each side is
	 * woken only when it waits and the event can let it go on */
	pthread_cond_t changed, work_done;
	unsigned int idle_workers;
	bool committer_waiting;

	/* files handed over by the source, in order */
	struct erofs_inode **files;
	size_t nr_files, cap_files, next_file;
	bool source_done;
	uint64_t files_total, bytes_total;

	/* the file being cut into pieces */
	struct erofs_inode *cutting;
	uint64_t cut_pos, piece_size;
	enum erofs_work_kind cut_kind;

	struct erofs_work *ring;
	uint64_t next_seq, committed;
	uint64_t bytes_in_flight, bytes_in_flight_max;
	bool abort;

	struct erofs_progress progress;
};

static int sink_files(void *arg, struct erofs_inode *const *files, size_t n)
{
	struct pipeline *p = arg;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	if (p->abort) {
		err = -ECANCELED;
	} else if (p->nr_files + n > p->cap_files) {
		size_t cap = p->cap_files ? p->cap_files * 2 : 4096;
		struct erofs_inode **bigger;

		while (cap < p->nr_files + n)
			cap *= 2;
		bigger = realloc(p->files, cap * sizeof(*bigger));
		if (!bigger) {
			err = -ENOMEM;
		} else {
			p->files = bigger;
			p->cap_files = cap;
		}
	}
	for (size_t i = 0; !err && i < n; i++) {
		/* before any worker sees it: the digest pair sizes its xattrs */
		if (erofs_digest_wanted(p->opts, p->tree, files[i]) &&
		    (err = erofs_digest_prepare(p->opts, files[i])))
			break;
		p->files[p->nr_files++] = files[i];
		p->files_total++;
		p->bytes_total += files[i]->size;
	}
	if (!err && p->idle_workers)
		pthread_cond_signal(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return err;
}

static enum erofs_work_kind kind_of(const struct pipeline *p, const struct erofs_inode *inode)
{
	if (inode == p->tree->packed)
		return EROFS_WORK_COMPRESS;
	if (inode->kept_blkaddr)
		return EROFS_WORK_KEEP;
	if (p->opts->tar_index)
		return EROFS_WORK_INDEX;
	/* files within one block keep their inline tails */
	if (p->opts->chunkbits)
		return inode->size > 1u << p->opts->blkszbits ||
		       (p->opts->blobdev && inode->size) ? EROFS_WORK_CHUNKS : EROFS_WORK_PLAIN;
	if (p->opts->compressor != EROFS_COMPRESS_NONE && inode->pcluster_size)
		return EROFS_WORK_COMPRESS;
	return EROFS_WORK_PLAIN;
}

/* Where a file is cut: fixed points, whatever the workers. */
static uint64_t piece_size(const struct pipeline *p, const struct erofs_inode *inode,
			   enum erofs_work_kind kind)
{
	switch (kind) {
	case EROFS_WORK_CHUNKS:
		return erofs_chunk_piece_size(p->opts);
	case EROFS_WORK_PLAIN:
		/* a file nobody hashes is copied whole, inside the kernel */
		if (!erofs_plain_wants_hash(&p->wctx, inode))
			return inode->size;
		break;
	case EROFS_WORK_COMPRESS:
		break;
	case EROFS_WORK_INDEX:
	case EROFS_WORK_KEEP:
		return inode->size;	/* nothing is read, or only the tail at commit */
	}
	return erofs_segment_size(p->opts);
}

/* The next piece of work, under the lock; NULL: none now (*finished: none ever). */
static struct erofs_work *next_piece(struct pipeline *p, bool *finished)
{
	struct erofs_work *w;
	uint64_t end, weight;

	*finished = false;
	if (!p->cutting || p->cut_pos >= p->cutting->size) {
		if (p->next_file == p->nr_files) {
			*finished = p->source_done;
			return NULL;
		}
		p->cutting = p->files[p->next_file++];
		p->cut_pos = 0;
		p->cut_kind = kind_of(p, p->cutting);
		p->piece_size = piece_size(p, p->cutting, p->cut_kind);
	}
	end = p->cutting->size - p->cut_pos > p->piece_size ? p->cut_pos + p->piece_size
							    : p->cutting->size;
	/* a file copied whole from its source holds no memory */
	weight = (p->cut_kind == EROFS_WORK_PLAIN && p->piece_size == p->cutting->size) ||
		 p->cut_kind == EROFS_WORK_KEEP ? 0 : end - p->cut_pos;
	if (p->next_seq >= p->committed + RING_SIZE ||
	    (p->bytes_in_flight && p->bytes_in_flight + weight > p->bytes_in_flight_max))
		return NULL;
	w = &p->ring[p->next_seq % RING_SIZE];
	*w = (struct erofs_work){
		.seq = p->next_seq++, .kind = p->cut_kind, .inode = p->cutting,
		.start = p->cut_pos, .end = end, .first = !p->cut_pos,
		.last = end == p->cutting->size, .packed = p->cutting == p->tree->packed,
		.fd = -1, .weight = weight,
	};
	p->bytes_in_flight += weight;
	p->cut_pos = end;
	return w;
}

static bool more_to_hand_out(const struct pipeline *p)
{
	return p->next_seq < p->committed + RING_SIZE &&
	       ((p->cutting && p->cut_pos < p->cutting->size) || p->next_file < p->nr_files);
}

static int process(struct pipeline *p, struct erofs_compressor *c, int init_err,
		   struct erofs_work *w, struct erofs_dir_cache *dirs)
{
	if (init_err) {
		erofs_err("out of memory starting a worker");
		return init_err;
	}
	if (p->opts->inode_digest) {
		int err = erofs_digest_work(&p->wctx, w, dirs);

		if (err)
			return err;
	}
	switch (w->kind) {
	case EROFS_WORK_COMPRESS:
		return erofs_compress_work(c, &p->wctx, w, dirs);
	case EROFS_WORK_CHUNKS:
		return erofs_chunk_work(&p->wctx, w, dirs);
	case EROFS_WORK_INDEX:
	case EROFS_WORK_KEEP:
		return 0;
	case EROFS_WORK_PLAIN:
		break;
	}
	return erofs_plain_work(&p->wctx, w, dirs);
}

static void *worker_main(void *arg)
{
	struct pipeline *p = arg;
	struct erofs_compressor *c = NULL;
	struct erofs_dir_cache dirs;
	int init_err = p->opts->compressor != EROFS_COMPRESS_NONE
			       ? erofs_compressor_new(p->opts, &c) : 0;

	erofs_dir_cache_init(&dirs);
	pthread_mutex_lock(&p->lock);
	while (!p->abort) {
		bool finished = false;
		uint64_t first = p->next_seq, bytes = 0;
		uint32_t n = 0;
		struct erofs_work *w;

		/* a batch: consecutive pieces, up to BATCH_BYTES of them */
		while (n < BATCH_PIECES && (!n || bytes < BATCH_BYTES) &&
		       (w = next_piece(p, &finished))) {
			bytes += w->end - w->start;
			n++;
		}
		if (!n) {
			if (finished)
				break;
			p->idle_workers++;
			pthread_cond_wait(&p->changed, &p->lock);
			p->idle_workers--;
			continue;
		}
		if (p->idle_workers && more_to_hand_out(p))
			pthread_cond_signal(&p->changed);
		pthread_mutex_unlock(&p->lock);
		for (uint64_t seq = first; seq < first + n; seq++) {
			w = &p->ring[seq % RING_SIZE];
			w->err = process(p, c, init_err, w, &dirs);
		}
		pthread_mutex_lock(&p->lock);
		for (uint64_t seq = first; seq < first + n; seq++)
			p->ring[seq % RING_SIZE].done = true;
		if (p->committer_waiting && p->committed >= first && p->committed < first + n)
			pthread_cond_signal(&p->work_done);
	}
	pthread_mutex_unlock(&p->lock);
	erofs_dir_cache_release(&dirs);
	erofs_compressor_free(c);
	return NULL;
}

static void release_work(struct erofs_work *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->data);
	free(w->blocks);
	free(w->z.extents);
	free(w->frag);
	free(w->chunks);
	w->fd = -1;
	w->data = w->blocks = w->frag = NULL;
	w->z.extents = NULL;
	w->chunks = NULL;
}

/* A file starts: where its data goes, and what it may take back. */
/*
 * --dsunit: a file that will take blocks in the image starts on a multiple
 * of dsunit blocks (chunks: only when the unit fits in one chunk, as
 * erofs-utils does, and not on a --blobdev blob).
 */
static void align_file(struct erofs_commit *cc, const struct erofs_work *w)
{
	const struct erofs_build_options *opts = cc->opts;
	uint64_t aligned;

	cc->unaligned_blk = cc->img->next_blk;
	if (opts->dsunit < 2 || w->inode->size < 1u << opts->blkszbits ||
	    w->kind == EROFS_WORK_INDEX || w->kind == EROFS_WORK_KEEP)
		return;
	if (w->kind == EROFS_WORK_CHUNKS &&
	    (opts->blobdev || opts->dsunit > 1u << (opts->chunkbits - opts->blkszbits)))
		return;
	aligned = ((uint64_t)cc->img->next_blk + opts->dsunit - 1) / opts->dsunit * opts->dsunit;
	if (aligned < UINT32_MAX)
		erofs_image_rewind(cc->img, (uint32_t)aligned);
}

/* A file that took no block after all (shared, inline) gives the gap back. */
static void unalign_file(struct erofs_commit *cc)
{
	if (cc->img->next_blk == cc->file_blk && cc->unaligned_blk < cc->file_blk)
		erofs_image_rewind(cc->img, cc->unaligned_blk);
}

static void begin_file(struct erofs_commit *cc, struct erofs_inode *inode)
{
	cc->file_blk = cc->img->next_blk;
	cc->zdedupe_mark = cc->zdedupe ? erofs_zdedupe_mark(cc->zdedupe) : 0;
	cc->packed_mark = cc->packed ? cc->packed->size : 0;
	erofs_dedup_hash_begin(cc);
	inode->blkaddr = cc->file_blk;
	inode->nr_blocks = 0;
}

static int commit_work(struct pipeline *p, struct erofs_work *w)
{
	int err = w->err;

	if (!err && w->first) {
		align_file(&p->cc, w);
		begin_file(&p->cc, w->inode);
	}
	if (!err) {
		switch (w->kind) {
		case EROFS_WORK_COMPRESS:
			err = erofs_zcommit(&p->cc, w);
			break;
		case EROFS_WORK_CHUNKS:
			err = erofs_chunk_commit(&p->cc, w);
			break;
		case EROFS_WORK_PLAIN:
			err = erofs_plain_commit(&p->cc, w);
			break;
		case EROFS_WORK_INDEX:
			err = erofs_tarindex_commit(&p->cc, w);
			break;
		case EROFS_WORK_KEEP:
			err = erofs_plain_keep(&p->cc, w);
			break;
		}
	}
	if (!err && w->last)
		unalign_file(&p->cc);
	if (err == -ENOMEM)
		erofs_err("out of memory while writing data");
	if (!w->packed) {
		p->cc.stats->bytes_read += w->end - w->start;
		p->cc.stats->files_done += w->last;
	}
	return err ? err : p->cc.img->error;
}

static void show_progress(struct pipeline *p)
{
	struct erofs_progress_state s = {
		.files_done = p->cc.stats->files_done, .bytes_read = p->cc.stats->bytes_read,
		.bytes_written = p->cc.stats->bytes_written,
	};

	pthread_mutex_lock(&p->lock);
	s.files_total = p->files_total;
	s.bytes_total = p->bytes_total;
	s.totals_known = p->source_done;
	pthread_mutex_unlock(&p->lock);
	erofs_progress_update(&p->progress, &s);
}

static void abort_all(struct pipeline *p)
{
	pthread_mutex_lock(&p->lock);
	p->abort = true;
	pthread_cond_broadcast(&p->changed);
	pthread_cond_broadcast(&p->work_done);
	pthread_mutex_unlock(&p->lock);
}

/* Whether every file handed over is cut and committed (under the lock). */
static bool all_committed(const struct pipeline *p)
{
	return p->source_done && p->next_file == p->nr_files &&
	       (!p->cutting || p->cut_pos >= p->cutting->size) && p->committed == p->next_seq;
}

/* Takes finished pieces in order until the source is done and all committed. */
static int commit_loop(struct pipeline *p)
{
	int err = 0;

	for (;;) {
		uint64_t ready = 0, freed = 0;

		pthread_mutex_lock(&p->lock);
		for (;;) {
			while (p->committed + ready < p->next_seq &&
			       p->ring[(p->committed + ready) % RING_SIZE].done)
				ready++;
			if (ready || p->abort || all_committed(p))
				break;
			p->committer_waiting = true;
			pthread_cond_wait(&p->work_done, &p->lock);
			p->committer_waiting = false;
		}
		pthread_mutex_unlock(&p->lock);
		if (p->abort)
			return -ECANCELED;
		if (!ready)
			return 0;
		for (uint64_t i = 0; i < ready; i++) {
			struct erofs_work *w = &p->ring[(p->committed + i) % RING_SIZE];

			if (!err)
				err = commit_work(p, w);
			freed += w->weight;
			release_work(w);
		}
		pthread_mutex_lock(&p->lock);
		p->committed += ready;
		p->bytes_in_flight -= freed;
		if (p->idle_workers)
			pthread_cond_broadcast(&p->changed);
		pthread_mutex_unlock(&p->lock);
		if (err) {
			abort_all(p);
			return err;
		}
		show_progress(p);
	}
}

struct source_thread {
	struct pipeline *p;
	const struct erofs_source *source;
	int err;
};

static void *source_main(void *arg)
{
	struct source_thread *st = arg;
	struct pipeline *p = st->p;

	st->err = st->source->run(st->source->arg, sink_files, p);
	pthread_mutex_lock(&p->lock);
	p->source_done = true;
	pthread_cond_broadcast(&p->changed);
	pthread_cond_broadcast(&p->work_done);
	pthread_mutex_unlock(&p->lock);
	if (st->err)
		abort_all(p);
	return NULL;
}

/* Runs the workers and commits until every file handed over is in the image. */
static int run_phase(struct pipeline *p, const struct erofs_source *source)
{
	unsigned int nr_workers = p->opts->workers ? p->opts->workers : 1, started = 0;
	pthread_t *threads = calloc(nr_workers, sizeof(*threads));
	struct source_thread st = { .p = p, .source = source };
	pthread_t source_thread;
	bool source_started = false;
	int err = 0;

	if (!threads)
		return -ENOMEM;
	if (source) {
		if (pthread_create(&source_thread, NULL, source_main, &st))
			err = -EAGAIN;
		source_started = !err;
	}
	for (; !err && started < nr_workers; started++)
		if (pthread_create(&threads[started], NULL, worker_main, p))
			break;
	if (!err && !started)
		err = -EAGAIN;
	if (err) {
		erofs_err("cannot start threads: %s", strerror(-err));
		abort_all(p);
	} else {
		err = commit_loop(p);
	}
	if (err)
		abort_all(p);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	if (source_started)
		pthread_join(source_thread, NULL);
	free(threads);
	/* pieces handed out but never committed */
	for (uint64_t seq = p->committed; seq < p->next_seq; seq++)
		release_work(&p->ring[seq % RING_SIZE]);
	/* the first failure is the one reported; the others were cancelled */
	if (err && err != -ECANCELED)
		return err;
	return st.err ? st.err : err;
}

/* The long xattr prefix table starts the packed inode's data (Linux 6.4 looks there). */
static int add_prefix_table(const struct erofs_build_options *opts, struct erofs_packed *packed)
{
	uint32_t size = erofs_xattr_prefix_table_size(opts);
	uint64_t off;
	uint8_t *table;
	int err;

	if (!size)
		return 0;
	if (!(table = malloc(size)))
		return -ENOMEM;
	erofs_xattr_prefix_table_encode(opts, table);
	err = erofs_packed_add(packed, table, size, false, &off);
	free(table);
	return err;
}

/*
 * The packed inode: a regular file no directory names, whose data is every
 * fragment back to back, compressed in pclusters of its own size.
 */
static int run_packed(struct pipeline *p, struct erofs_packed *packed)
{
	struct erofs_inode *inode = calloc(1, sizeof(*inode));

	if (!inode)
		return -ENOMEM;
	inode->mode = S_IFREG | 0600;
	inode->nlink = 1;
	inode->size = packed->size;
	inode->parent = inode;
	p->tree->packed = inode;
	p->wctx.packed_fd = packed->fd;
	p->files[0] = inode;
	p->nr_files = 1;
	p->next_file = 0;
	p->cutting = NULL;
	p->source_done = true;
	return run_phase(p, NULL);
}

/* -d 3 and up: when each phase ended, and what the workers did meanwhile */
static void phase_done(const struct erofs_build_options *opts, const char *phase,
		       const struct erofs_commit *cc)
{
	struct timespec now;

	if (opts->debug_level < 3)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(stderr, "mkfs.erofs: %-10s ends at %.3f s: %llu MiB read, %llu MiB written\n",
		phase, (double)now.tv_sec + now.tv_nsec / 1e9,
		(unsigned long long)(cc->stats->bytes_read >> 20),
		(unsigned long long)(cc->stats->bytes_written >> 20));
}

int erofs_pipeline_run(const struct erofs_build_options *opts, struct erofs_tree *tree,
		       const struct erofs_source *source, struct erofs_image *img,
		       struct erofs_tails *tails, struct erofs_build_stats *stats)
{
	unsigned int nr_workers = opts->workers ? opts->workers : 1;
	struct erofs_packed packed = { .fd = -1 };
	struct erofs_zdedupe zdedupe = { 0 };
	struct erofs_dedup *dedup = NULL;
	struct pipeline p = {
		.opts = opts, .tree = tree,
		.bytes_in_flight_max = (2ull * nr_workers + 1) * erofs_segment_size(opts),
	};
	int err = 0;

	p.wctx = (struct erofs_work_ctx){ .opts = opts, .tree = tree, .packed_fd = -1 };
	p.cc = (struct erofs_commit){
		.opts = opts, .tree = tree, .img = img, .tails = tails, .stats = stats,
		.wctx = &p.wctx, .zdedupe = opts->share_pclusters ? &zdedupe : NULL,
	};
	/* chunk dedup covers what whole-file dedup would find */
	if (opts->share_identical_files && !opts->chunkbits && (err = erofs_dedup_init(&dedup)))
		return err;
	p.wctx.dedup = p.cc.dedup = dedup;
	if (opts->fragments && (err = erofs_packed_open(&packed, opts->image,
							 opts->fragdedupe == EROFS_FRAGDEDUPE_FULL)))
		goto out;
	if (opts->fragments && !opts->plain_xattr_prefixes &&
	    (err = add_prefix_table(opts, &packed)))
		goto out;
	p.cc.packed = opts->fragments ? &packed : NULL;
	p.ring = calloc(RING_SIZE, sizeof(*p.ring));
	p.cc.scratch = malloc(EROFS_PCLUSTER_MAX_SIZE > (1u << 20) ? EROFS_PCLUSTER_MAX_SIZE
								 : (1u << 20));
	p.cc.scratch2 = malloc(EROFS_PCLUSTER_MAX_SIZE > (1u << 20) ? EROFS_PCLUSTER_MAX_SIZE
								  : (1u << 20));
	p.cc.file_hash = XXH3_createState();
	if (!p.ring || !p.cc.scratch || !p.cc.scratch2 || !p.cc.file_hash) {
		err = -ENOMEM;
		goto out;
	}
	if (opts->chunkbits && (err = erofs_chunk_begin(&p.cc)))
		goto out;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	pthread_cond_init(&p.work_done, NULL);
	erofs_progress_start(&p.progress, opts->show_progress);

	err = run_phase(&p, source);
	phase_done(opts, "files", &p.cc);
	if (!err && packed.size && opts->compress_dirs) {
		/* --zD: compressed by the writer, after the directories' entries */
		tree->pending_packed = true;
		tree->pending_packed_fd = packed.fd;
		tree->pending_packed_size = packed.size;
		packed.fd = -1;
	} else if (!err && packed.size) {
		err = run_packed(&p, &packed);
		phase_done(opts, "packed", &p.cc);
	}
	if (!err) {
		struct erofs_progress_state s = {
			.files_done = stats->files_done, .files_total = p.files_total,
			.bytes_read = stats->bytes_read, .bytes_total = p.bytes_total,
			.bytes_written = stats->bytes_written, .totals_known = true,
		};

		erofs_progress_finish(&p.progress, &s);
	}
	stats->nr_fragments = packed.nr_fragments;
	stats->nr_shared_fragments = packed.nr_shared;
	stats->shared_fragment_bytes = packed.shared_bytes;

	pthread_cond_destroy(&p.work_done);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
out:
	if (opts->chunkbits)
		erofs_chunk_end(&p.cc);
	erofs_compressor_free(p.cc.compressor);
	XXH3_freeState(p.cc.file_hash);
	free(p.cc.scratch);
	free(p.cc.scratch2);
	free(p.ring);
	free(p.files);
	erofs_packed_close(&packed);
	erofs_zdedupe_free(&zdedupe);
	erofs_dedup_free(dedup);
	if (err == -ENOMEM)
		erofs_err("out of memory while writing data");
	return err;
}
