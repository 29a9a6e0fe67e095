// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/check/fsckq.c, the ordered job queue of fsck.erofs
 * --workers: with 1 to 4 runners, windows from 1 to 4096 jobs, jobs of
 * uneven length and jobs with nothing to run, every job runs exactly
 * once, on some runner's own context, before it is retired; retirement
 * is in submission order; drain retires everything submitted; and a
 * retirement may call drain.  A queue that loses a job or a wake-up
 * hangs: SIGALRM fails the test then.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/check/fsckq.h"

#include "unit.h"

#define MAXJOBS	20000

struct job {
	struct erofs_fjob j;
	unsigned int id;
	atomic_int runs;
	int ran_on;			/* the context it ran with */
};

struct owner {
	struct erofs_fq *q;
	unsigned int next_retire;	/* the id the next retirement must have */
	unsigned int bad_order, bad_runs, bad_ctx;
	int nctx;
};

static void spin(unsigned int n)
{
	volatile unsigned int x = 0;

	while (n--)
		x++;
}

static void run(struct erofs_fjob *j, void *ctx)
{
	struct job *job = (struct job *)j;

	atomic_fetch_add(&job->runs, 1);
	job->ran_on = *(int *)ctx;
	spin((job->id * 2654435761u) % 7 == 0 ? 20000 : 200);	/* some long ones */
}

static void retire(struct erofs_fjob *j, void *arg)
{
	struct job *job = (struct job *)j;
	struct owner *o = arg;

	if (job->id != o->next_retire)
		o->bad_order++;
	o->next_retire = job->id + 1;
	if (atomic_load(&job->runs) != (job->j.run ? 1 : 0))
		o->bad_runs++;
	if (job->j.run && (job->ran_on < 0 || job->ran_on >= o->nctx))
		o->bad_ctx++;
	if (job->id % 1000 == 999)
		erofs_fq_drain(o->q);	/* allowed, and does nothing here */
	free(job);
}

static void one_case(unsigned int runners, size_t window, unsigned int njobs)
{
	int ids[4] = { 0, 1, 2, 3 };
	void *ctx[4] = { &ids[0], &ids[1], &ids[2], &ids[3] };
	struct owner o = { .nctx = (int)runners };
	unsigned int i;

	o.q = erofs_fq_create(runners, ctx, window, &o);
	CHECK(o.q != NULL);
	if (!o.q)
		return;
	for (i = 0; i < njobs; i++) {
		struct job *job = calloc(1, sizeof(*job));

		CHECK(job != NULL);
		if (!job)
			break;
		job->id = i;
		job->ran_on = -1;
		job->j.run = i % 5 == 4 ? NULL : run;	/* some only to retire */
		job->j.retire = retire;
		erofs_fq_submit(o.q, &job->j);
		if (i == njobs / 2) {
			erofs_fq_drain(o.q);
			CHECK(o.next_retire == i + 1);
		}
	}
	erofs_fq_destroy(o.q);
	CHECK(o.next_retire == njobs);
	CHECK(o.bad_order == 0);
	CHECK(o.bad_runs == 0);
	CHECK(o.bad_ctx == 0);
}

int main(void)
{
	static const size_t windows[] = { 1, 2, 7, 64, 4096 };

	alarm(120);	/* a lost wake-up or a job taken twice hangs: fail instead */

	for (unsigned int runners = 1; runners <= 4; runners++)
		for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
			one_case(runners, windows[w], runners == 1 ? 2000 : MAXJOBS);
	return unit_summary("test-fsckq");
}
