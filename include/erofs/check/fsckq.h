/* SPDX-License-Identifier: MIT */
/*
 * An ordered job queue for fsck.erofs (--workers): the walk submits jobs in
 * its own, deterministic order; worker threads (and the submitting thread
 * while it waits) run them in any order, each with its own context; the
 * submitting thread retires them strictly in
 * submission order, so whatever a job prints is printed at retirement and
 * the output is the same for any number of workers.
 *
 * With no threads (workers <= 1) a job is run and retired inside
 * erofs_fq_submit(): the same callbacks, in the same order.
 *
 * Anything the submitting thread prints outside a retirement must first
 * call erofs_fq_drain(), so that it comes after the jobs submitted before
 * it.  Retirement callbacks may call erofs_fq_drain() (it does nothing
 * then) but not erofs_fq_submit().
 */
#ifndef EROFS_FSCKQ_H
#define EROFS_FSCKQ_H

#include <stddef.h>

struct erofs_fq;
struct erofs_fjob;

/* Runs on a worker (ctx: the worker's own context). */
typedef void (*erofs_fjob_run_fn)(struct erofs_fjob *job, void *ctx);
/* Runs on the submitting thread, in submission order; owns the job after. */
typedef void (*erofs_fjob_retire_fn)(struct erofs_fjob *job, void *owner);

struct erofs_fjob {
	erofs_fjob_run_fn run;		/* NULL: nothing to run, only to retire */
	erofs_fjob_retire_fn retire;
	/* private to lib/check/fsckq.c */
	struct erofs_fjob *next;
	struct erofs_fjob *prev;	/* an older job that may still be queued */
	int state;
};

/*
 * A queue whose jobs run on nrunners threads: the submitting thread, with
 * context ctx[0], runs jobs while it waits for the oldest one, and
 * nrunners - 1 worker threads run them with ctx[1..nrunners-1] (the array
 * itself is not kept).  nrunners <= 1: every job runs inline (ctx[0]).
 * At most window jobs in flight; owner is passed to every retirement.
 * NULL if the threads cannot be started.
 */
struct erofs_fq *erofs_fq_create(unsigned int nrunners, void **ctx, size_t window, void *owner);
void erofs_fq_submit(struct erofs_fq *q, struct erofs_fjob *job);
void erofs_fq_drain(struct erofs_fq *q);
/* Drains, then stops and joins the workers. */
void erofs_fq_destroy(struct erofs_fq *q);

#endif
