// SPDX-License-Identifier: MIT
/*
 * The ordered job queue of fsck.erofs (include/erofs/fsckq.h).  One list
 * holds every job not yet retired, oldest first; torun points at the
 * oldest one no worker has taken.  Workers take jobs in list order and
 * mark them done; the owner retires from the head, waiting for it when
 * it is not done yet.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "erofs/fsckq.h"

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct erofs_fq {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a job to run, or stop */
	pthread_cond_t done;		/* a job is done */
	struct erofs_fjob *head, *tail, *torun;
	size_t inflight, window;
	bool stop, retiring;
	void *ctx0;			/* the context of inline jobs */
	void *owner;
	unsigned int nthreads, started;
	pthread_t *threads;
};

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

static void *worker_main(void *p)
{
	struct erofs_fq *q = ((struct worker_arg *)p)->q;
	void *ctx = ((struct worker_arg *)p)->ctx;

	free(p);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct erofs_fjob *j;

		while (!q->torun && !q->stop)
			pthread_cond_wait(&q->work, &q->lock);
		if (!q->torun)
			break;
		j = q->torun;
		j->state = JOB_RUNNING;
		q->torun = next_to_run(j->next);
		pthread_mutex_unlock(&q->lock);
		j->run(j, ctx);
		pthread_mutex_lock(&q->lock);
		j->state = JOB_DONE;
		if (j == q->head)
			pthread_cond_signal(&q->done);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct erofs_fq *erofs_fq_create(unsigned int nthreads, void **ctx, size_t window, void *owner)
{
	struct erofs_fq *q = calloc(1, sizeof(*q));
	unsigned int i;

	if (!q)
		return NULL;
	q->ctx0 = ctx[0];
	q->owner = owner;
	q->window = window ? window : 1;
	q->nthreads = nthreads;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->done, NULL);
	if (!nthreads)
		return q;
	q->threads = calloc(nthreads, sizeof(*q->threads));
	if (!q->threads)
		goto fail;
	for (i = 0; i < nthreads; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (!a)
			goto fail;
		a->q = q;
		a->ctx = ctx[i];
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

/* Retires the oldest job, waiting until it is done.  Owner thread only. */
static void retire_head(struct erofs_fq *q)
{
	struct erofs_fjob *j;

	pthread_mutex_lock(&q->lock);
	j = q->head;
	while (j->state != JOB_DONE)
		pthread_cond_wait(&q->done, &q->lock);
	q->head = j->next;
	if (!q->head)
		q->tail = NULL;
	q->inflight--;
	pthread_mutex_unlock(&q->lock);
	j->retire(j, q->owner);
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
		retire_head(q);
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
		retire_head(q);
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
