// SPDX-License-Identifier: MIT
/*
 * The ordered job queue of fsck.erofs (include/erofs/check/fsckq.h).  One list
 * holds every job not yet retired, oldest first; torun points at the
 * oldest one nobody has taken.  Runners take jobs in list order and mark
 * them done; the owner retires from the head.
 *
 * The owner is one of the runners: when the window is full it retires
 * every done job at the head at once, and while the head is not done it
 * runs the newest queued job itself instead of sleeping.  The newest, as
 * the workers take the oldest: each then works in another directory of
 * the walk (two threads creating files side by side in one directory
 * made file creation a fifth slower, waiting for the directory's lock).
 * It sleeps only
 * when every job in flight is taken, so a worker wakes it about once per
 * window rather than once per job (a 2-core extraction of 75k files made
 * 171k futex calls before, 15-40 voluntary context switches now).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "erofs/check/fsckq.h"

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

/*
 * Queued jobs that wake an idle worker: when the walk is slower than the
 * workers, waking one per job costs two futex calls and two context
 * switches per file.  The owner wakes them for fewer when it waits.
 */
#define WAKE_BATCH	8

struct erofs_fq {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a job to run, or stop */
	pthread_cond_t done;		/* the head is done (owner_waiting) */
	struct erofs_fjob *head, *tail, *torun;
	/*
	 * The owner's end: no job after back is queued, nor any job between
	 * a job and its prev; so following prev from back meets every queued
	 * job, newest first, and never a retired one while one is queued.
	 */
	struct erofs_fjob *back;
	size_t inflight, window;
	size_t queued;			/* jobs nobody has taken */
	unsigned int idle;		/* workers waiting for work */
	bool stop, retiring, owner_waiting;
	void *ctx0;			/* the owner's context */
	void *owner;
	unsigned int nthreads, started;
	pthread_t *threads;
};

/*
 * The lock is held for a few list operations: a thread that finds it
 * taken spins a little before it sleeps (glibc's adaptive mutex), which
 * saves a futex wait, a wake-up and often a preemption per collision.
 */
static void init_lock(pthread_mutex_t *lock)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	pthread_mutex_init(lock, &a);
	pthread_mutexattr_destroy(&a);
}

struct worker_arg {
	struct erofs_fq *q;
	void *ctx;
};

/* The first job at or after j that still has to run. */
static struct erofs_fjob *next_to_run(struct erofs_fjob *j)
{
	while (j && j->state != JOB_QUEUED)
		j = j->next;
	return j;
}

/* Takes the oldest queued job (lock held), or NULL. */
static struct erofs_fjob *take(struct erofs_fq *q)
{
	struct erofs_fjob *j = q->torun;

	if (j) {
		j->state = JOB_RUNNING;
		q->torun = next_to_run(j->next);
		q->queued--;
	}
	return j;
}

/* Takes the newest queued job (lock held), or NULL. */
static struct erofs_fjob *take_newest(struct erofs_fq *q)
{
	struct erofs_fjob *j = q->back;

	if (!q->queued)
		return NULL;	/* back may be retired */
	while (j->state != JOB_QUEUED)
		j = j->prev;
	j->state = JOB_RUNNING;
	q->back = j->prev;
	if (j == q->torun)
		q->torun = next_to_run(j->next);
	q->queued--;
	return j;
}

/* Marks j done (lock held), waking the owner if it waits for it. */
static void finish(struct erofs_fq *q, struct erofs_fjob *j)
{
	j->state = JOB_DONE;
	if (j == q->head && q->owner_waiting)
		pthread_cond_signal(&q->done);
}

static void *worker_main(void *p)
{
	struct erofs_fq *q = ((struct worker_arg *)p)->q;
	void *ctx = ((struct worker_arg *)p)->ctx;

	free(p);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct erofs_fjob *j;

		while (!q->torun && !q->stop) {
			q->idle++;
			pthread_cond_wait(&q->work, &q->lock);
			q->idle--;
		}
		j = take(q);
		if (!j)
			break;
		pthread_mutex_unlock(&q->lock);
		j->run(j, ctx);
		pthread_mutex_lock(&q->lock);
		finish(q, j);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct erofs_fq *erofs_fq_create(unsigned int nrunners, void **ctx, size_t window, void *owner)
{
	struct erofs_fq *q = calloc(1, sizeof(*q));
	unsigned int i;

	if (!q)
		return NULL;
	q->ctx0 = ctx[0];
	q->owner = owner;
	q->window = window ? window : 1;
	q->nthreads = nrunners > 1 ? nrunners - 1 : 0;
	init_lock(&q->lock);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->done, NULL);
	if (!q->nthreads)
		return q;
	q->threads = calloc(q->nthreads, sizeof(*q->threads));
	if (!q->threads)
		goto fail;
	for (i = 0; i < q->nthreads; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (!a)
			goto fail;
		a->q = q;
		a->ctx = ctx[i + 1];
		if (pthread_create(&q->threads[i], NULL, worker_main, a)) {
			free(a);
			goto fail;
		}
		q->started++;
	}
	return q;
fail:
	erofs_fq_destroy(q);
	return NULL;
}

/*
 * Retires at least one job (owner thread only): every done job at the
 * head, running queued jobs or, when all are taken, waiting meanwhile.
 */
static void retire_some(struct erofs_fq *q)
{
	struct erofs_fjob *first, *last, *j;

	pthread_mutex_lock(&q->lock);
	if (q->idle && q->queued)	/* fewer than WAKE_BATCH: let them help */
		pthread_cond_broadcast(&q->work);
	while (q->head->state != JOB_DONE) {
		j = take_newest(q);
		if (j) {
			pthread_mutex_unlock(&q->lock);
			j->run(j, q->ctx0);
			pthread_mutex_lock(&q->lock);
			j->state = JOB_DONE;
			continue;
		}
		q->owner_waiting = true;
		pthread_cond_wait(&q->done, &q->lock);
		q->owner_waiting = false;
	}
	first = last = q->head;
	q->inflight--;
	while (last->next && last->next->state == JOB_DONE) {
		last = last->next;
		q->inflight--;
	}
	q->head = last->next;
	if (!q->head)
		q->tail = NULL;
	pthread_mutex_unlock(&q->lock);
	/* detached: retire them in order without the lock */
	for (;;) {
		bool end = first == last;

		j = first;
		first = j->next;
		j->retire(j, q->owner);
		if (end)
			break;
	}
}

void erofs_fq_submit(struct erofs_fq *q, struct erofs_fjob *job)
{
	job->next = NULL;
	if (!q->nthreads) {
		if (job->run)
			job->run(job, q->ctx0);
		q->retiring = true;
		job->retire(job, q->owner);
		q->retiring = false;
		return;
	}
	q->retiring = true;
	while (q->inflight >= q->window)
		retire_some(q);
	q->retiring = false;

	pthread_mutex_lock(&q->lock);
	job->state = job->run ? JOB_QUEUED : JOB_DONE;
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	q->inflight++;
	if (job->run) {
		if (!q->torun)
			q->torun = job;
		/* the jobs between back and job are all taken: skip them */
		job->prev = q->queued ? q->back : NULL;
		q->back = job;
		/* an idle worker is woken for a few jobs at once, not for each */
		if (++q->queued >= WAKE_BATCH && q->idle)
			pthread_cond_signal(&q->work);
	}
	pthread_mutex_unlock(&q->lock);
}

void erofs_fq_drain(struct erofs_fq *q)
{
	if (!q || q->retiring)
		return;
	q->retiring = true;
	while (q->head)
		retire_some(q);
	q->retiring = false;
}

void erofs_fq_destroy(struct erofs_fq *q)
{
	unsigned int i;

	if (!q)
		return;
	erofs_fq_drain(q);
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < q->started; i++)
		pthread_join(q->threads[i], NULL);
	free(q->threads);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->done);
	pthread_mutex_destroy(&q->lock);
	free(q);
}
