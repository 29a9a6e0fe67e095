// SPDX-License-Identifier: MIT
/*
 * The check's data jobs (include/erofs/check/checkwalk.h): each regular
 * file's data is checked (CK_JOB_SCAN) or extracted (CK_JOB_EXTRACT) on a
 * worker with its own reader, and retired in walk order through fsck's
 * ordered queue (lib/check/fsckq.c), where what it found is recorded and
 * printed; a directory's metadata (CK_JOB_DIR_END) and the close of a
 * descriptor the jobs borrow (CK_JOB_CLOSE) wait in the same queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check/checkwalk.h"

/* ------------------------------------------------------------------ */
/* data jobs: run on the workers, retired in walk order                */


struct ck_job {
	struct erofs_fjob j;
	int kind;
	struct erofs_rd_inode vi;
	uint64_t dir;			/* the directory naming it */
	uint8_t len;
	char name[EROFS_NAME_LEN + 1];
	int fd;				/* its parent (extract, borrowed) or itself */
	int err;
	struct ck_scan scan;		/* CK_JOB_SCAN */
	bool digest;			/* ...and the content digest to compare */
	int digest_err;
	uint8_t want[32], got[32];
	struct erofs_xlog log;		/* CK_JOB_EXTRACT */
};

/*
 * Jobs in flight (about 1 KiB each).  Wide enough that while one big file
 * is written at the head, the walk's thread finds other jobs to run rather
 * than waiting for it, and the worker that wrote it finds more queued
 * behind: each wait put a thread to sleep and cost a wake-up.
 */
#define JOB_WINDOW	4096

/*
 * A job in flight holds up to two descriptors (the file it writes, or a
 * directory awaiting its metadata or its close; counted twice to spare): the
 * window leaves room under RLIMIT_NOFILE for the stack's OPEN_DIRS and a few more.
 */
static size_t job_window(void)
{
	struct rlimit rl;
	size_t spare;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return JOB_WINDOW;
	if (rl.rlim_cur < OPEN_DIRS + 32 + 2)
		return 1;
	spare = (size_t)(rl.rlim_cur - OPEN_DIRS - 32) / 2;
	return spare < JOB_WINDOW ? spare : JOB_WINDOW;
}

static void job_run(struct erofs_fjob *j, void *ctx)
{
	struct ck_job *job = (struct ck_job *)j;
	struct ck_worker *w = ctx;

	if (job->kind == CK_JOB_SCAN) {
		ck_scan_extents(&w->scan, &job->vi, true, &job->scan);
		/* data on a device not given (--no-devices) cannot be hashed */
		job->digest = job->digest && !job->scan.missing_dev;
		if (job->digest && !job->scan.failed)
			job->digest_err = ck_digest_compute(&w->r, &job->vi, job->got);
	} else
		job->err = erofs_extract_file_logged(w->f->o.x, &w->xw, job->fd, job->name,
						     &job->vi, &job->log);
}

static void job_retire(struct erofs_fjob *j, void *owner)
{
	struct ck_job *job = (struct ck_job *)j;
	struct checker *f = owner;
	const struct place at = { job->dir, job->name, job->len, false, false };
	struct erofs_check_xpath xp;
	struct erofs_check_node *ni;

	switch (job->kind) {
	case CK_JOB_SCAN:
		ck_scan_apply(f, &at, &job->vi, &job->scan, true);
		if (job->digest && !job->scan.failed && job->digest_err)
			ck_report(f, &at, job->vi.nid, "reading it for its content digest failed");
		else if (job->digest && !job->scan.failed)
			ck_digest_compare(f, &at, job->vi.nid, job->want, job->got);
		break;
	case CK_JOB_EXTRACT:
		erofs_xlog_flush(f->o.x, &job->log,
				 erofs_check_xpath(&xp, &f->nids, job->dir, job->name, job->len));
		ni = ck_nid_find(f, job->vi.nid);
		if (ni) {
			ni->pending = false;
			if (!job->err)
				ni->extracted = true;
		}
		break;
	case CK_JOB_CLOSE:
		close(job->fd);
		break;
	case CK_JOB_DIR_END:
		erofs_extract_dir_end(f->o.x, job->fd,
				      erofs_check_xpath(&xp, &f->nids, job->dir, NULL, 0), &job->vi);
		break;
	}
	free(job);
}

static struct ck_job *new_job(int kind, const struct erofs_rd_inode *vi)
{
	struct ck_job *job = calloc(1, sizeof(*job));

	if (!job)
		ck_nomem();
	job->kind = kind;
	job->vi = *vi;
	job->j.retire = job_retire;
	job->j.run = kind == CK_JOB_SCAN || kind == CK_JOB_EXTRACT ? job_run : NULL;
	job->fd = -1;
	return job;
}

/* A regular file's data: checked (CK_JOB_SCAN) or extracted below pfd. */
void ck_submit_file(struct checker *f, int kind, const struct place *at,
			const struct erofs_rd_inode *vi, int pfd)
{
	struct ck_job *job = new_job(kind, vi);

	job->dir = at->dir;
	job->len = (uint8_t)at->len;
	if (at->len)	/* the start of --nid has no name */
		memcpy(job->name, at->name, at->len);
	job->name[at->len] = '\0';
	if (kind == CK_JOB_SCAN && f->digest_seen) {
		job->digest = true;
		memcpy(job->want, f->digest, sizeof(job->want));
	}
	if (kind == CK_JOB_EXTRACT) {
		/* pfd is closed through the queue (CK_JOB_CLOSE, CK_JOB_DIR_END): after this job */
		job->fd = pfd;
		ck_nid_find(f, vi->nid)->pending = true;
	}
	erofs_fq_submit(f->q, &job->j);
}

/*
 * Closes a directory descriptor of the stack once every job submitted
 * before is retired: those jobs borrow it (no dup and close per file).
 */
void ck_close_dir_later(struct checker *f, int fd)
{
	struct ck_job *job = calloc(1, sizeof(*job));

	if (!job)
		ck_nomem();
	job->kind = CK_JOB_CLOSE;
	job->fd = fd;
	job->j.retire = job_retire;
	erofs_fq_submit(f->q, &job->j);
}

/* A directory's metadata (mtime last) once every job inside it is done. */
void ck_submit_dir_end(struct checker *f, struct frame *fr)
{
	struct ck_job *job = new_job(CK_JOB_DIR_END, &fr->vi);

	job->dir = fr->vi.nid;
	job->fd = fr->dirfd;
	fr->dirfd = -1;
	erofs_fq_submit(f->q, &job->j);
}

static void drain_before_print(void *arg)
{
	erofs_fq_drain(((struct checker *)arg)->q);
}

void ck_stop_workers(struct checker *f)
{
	unsigned int i;

	erofs_fq_destroy(f->q);
	f->q = NULL;
	for (i = 0; f->workers && i < f->nworkers; i++) {
		struct ck_worker *w = &f->workers[i];

		erofs_xworker_fini(&w->xw);
		ck_scanner_fini(&w->scan);
		erofs_reader_close(&w->r);
		if (w->own_fd >= 0)
			close(w->own_fd);
	}
	free(f->workers);
	f->workers = NULL;
}

/*
 * A worker thread reads the image through its own open file: on a shared
 * one, every pread of both threads bounces the file's reference count
 * between the CPUs.  Shared when the image cannot be opened again.
 */
static void own_image_fd(struct ck_worker *w)
{
	struct stat a, b;
	char proc[64];
	int fd;

	w->own_fd = -1;
	if (w->r.fd < 0 || fstat(w->r.fd, &a) || !S_ISREG(a.st_mode))
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", w->r.fd);
	fd = open(proc, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		return;
	}
	w->r.fd = w->own_fd = fd;
}

/*
 * Grows the descriptor table, while the process has one thread, to what
 * the stack and a full window of directory jobs may hold: once threads
 * share it, each doubling waits for an RCU grace period (synchronize_rcu()
 * in expand_files(), milliseconds to tens of milliseconds under load).
 */
static void grow_fd_table(int anyfd, size_t window)
{
	struct rlimit rl;
	size_t want = OPEN_DIRS + 32 + window;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && want >= rl.rlim_cur)
		want = rl.rlim_cur - 1;
	if (want > 1023)
		want = 1023;	/* 1024 slots: what runs keep open stays well below */
	fd = fcntl(anyfd, F_DUPFD_CLOEXEC, (int)want);
	if (fd >= 0)
		close(fd);
}

/* Workers (at least one context, even without threads) and the queue. */
int ck_start_workers(struct checker *f)
{
	unsigned int i, n = f->o.workers > 1 ? f->o.workers : 1;
	void **ctx = calloc(n, sizeof(*ctx));

	f->workers = calloc(n, sizeof(*f->workers));
	if (!ctx || !f->workers) {
		free(ctx);
		return -ENOMEM;
	}
	f->nworkers = n;
	for (i = 0; i < n; i++) {
		struct ck_worker *w = &f->workers[i];

		w->f = f;
		erofs_reader_clone(&w->r, f->r);
		w->own_fd = -1;
		if (i && f->o.workers > 1)	/* ctx[0] runs on the walk's thread */
			own_image_fd(w);
		ctx[i] = w;
		if (ck_scanner_init(&w->scan, &w->r) ||
		    (f->o.x && erofs_xworker_init(&w->xw, &w->r))) {
			free(ctx);
			return -ENOMEM;
		}
		w->scan.skip_missing = f->o.no_devices;
	}
	if (f->o.x && n > 1)
		grow_fd_table(f->o.x->rootfd, job_window());
	f->q = erofs_fq_create(n, ctx, job_window(), f);
	free(ctx);		/* the queue has copied what it needs */
	if (!f->q)
		return -ENOMEM;
	if (f->o.x) {
		f->o.x->before_print = drain_before_print;
		f->o.x->before_print_arg = f;
	}
	return 0;
}
