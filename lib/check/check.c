// SPDX-License-Identifier: MIT
/*
 * The image check behind fsck.erofs (include/erofs/check/check.h); how its
 * files share the work: include/erofs/check/checkwalk.h.
 *
 * The walk is depth-first over an explicit stack (no recursion, so nesting
 * depth cannot exhaust the C stack).  Every directory nid is visited once;
 * a second reference to a directory is reported as a loop / directory hard
 * link and not followed, so the total work is bounded by the directory
 * bytes plus the data in the image.
 *
 * The walk itself (inodes, directories, xattrs, symlinks, creating
 * directories and special files) runs on one thread, in a fixed order.
 * The data of each regular file is a job of an ordered queue: read and
 * decoded (check) or written out (--extract) on a worker thread, then
 * retired in walk order: what it found is recorded and printed then, and
 * a directory's own metadata (mtime last) is applied once every job
 * inside it is retired.  Anything the walk prints drains the queue first,
 * so the output is the same for every --workers value.
 *
 * With fragments, the packed inode (no directory names it) is checked
 * first, once: its inode, index and every extent.  A file's fragment is
 * then only checked to lie inside it (the reader does that when it loads
 * the file), not decoded again; --extract reads it through the packed
 * inode's extents, one at a time.
 *
 * No path is kept: each inode's node records the name it was reached by
 * and the directory holding it (lib/read/nidtab.c), each frame of the stack
 * the names of its directory's entries, and a path is put together only
 * for a message.  Memory is O(inodes + depth) and the walk's time linear,
 * however deep the tree.  With --extract, at most OPEN_DIRS directories of
 * the stack keep a descriptor; one closed to stay under that is reopened
 * through its child's "..", checked to be the directory made.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check/checkwalk.h"
#include "erofs/common/ondisk.h"

/* ------------------------------------------------------------------ */
/* messages and bookkeeping                                            */

/* The path of a place, built now (MSGPATH bytes). */
const char *ck_show(const struct checker *f, const struct place *at, char *buf)
{
	if (at->packed)
		return strcpy(buf, "(packed inode)");
	if (at->mbox)
		return strcpy(buf, "(metabox inode)");
	return erofs_nidtab_path(&f->nids, at->dir, at->name, at->len, buf, MSGPATH);
}

const char *ck_show_node(const struct checker *f, const struct erofs_check_node *ni,
			     char *buf)
{
	return erofs_nidtab_node_path(&f->nids, ni, buf, MSGPATH);
}

/* Where a node was reached (the table's names must not grow meanwhile). */
struct place ck_node_place(const struct checker *f, const struct erofs_check_node *ni)
{
	struct place at = { ni->parent, NULL, ni->namelen, ni->packed, ni->mbox };

	if (ni->parent != ni->nid)	/* else the root: the directory itself */
		at.name = f->nids.names + ni->name;
	return at;
}

void ck_report(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
{
	char msg[512], p[MSGPATH];
	va_list ap;

	erofs_fq_drain(f->q);	/* after what the jobs before it print */
	f->errors++;
	if (f->errors > MAX_PRINTED_ERRORS) {
		if (f->errors == MAX_PRINTED_ERRORS + 1)
			erofs_err("too many errors; further errors are counted but not shown");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	erofs_err("%s (nid %" PRIu64 "): %s", ck_show(f, at, p), nid, msg);
}

/* An error about the image as a whole, its message complete. */
void ck_report_image(struct checker *f, const char *msg)
{
	erofs_fq_drain(f->q);
	f->errors++;
	if (f->errors > MAX_PRINTED_ERRORS) {
		if (f->errors == MAX_PRINTED_ERRORS + 1)
			erofs_err("too many errors; further errors are counted but not shown");
		return;
	}
	erofs_err("%s", msg);
}


void ck_warn(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
{
	char msg[512], p[MSGPATH];
	va_list ap;

	f->warnings++;
	if (f->o.debug < 1)
		return;
	erofs_fq_drain(f->q);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	erofs_warn("%s (nid %" PRIu64 "): %s", ck_show(f, at, p), nid, msg);
}

void ck_note(struct checker *f, const char *fmt, ...)
{
	char msg[MSGPATH + 64];
	va_list ap;

	erofs_fq_drain(f->q);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	erofs_note("%s", msg);
}

void ck_rfail(struct checker *f, const struct place *at, uint64_t nid)
{
	ck_report(f, at, nid, "%s", erofs_reader_error(f->r));
}

void *ck_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		erofs_err("out of memory");
		exit(EXIT_NOMEM);
	}
	return q;
}

void ck_nomem(void)
{
	erofs_err("out of memory");
	exit(EXIT_NOMEM);
}

/* ------------------------------------------------------------------ */
/* nid table                                                           */

struct erofs_check_node *ck_nid_find(struct checker *f, uint64_t nid)
{
	return erofs_nidtab_find(&f->nids, nid);
}

struct erofs_check_node *ck_nid_add(struct checker *f, uint64_t nid)
{
	struct erofs_check_node *ni = erofs_nidtab_add(&f->nids, nid);

	if (!ni)
		ck_nomem();
	return ni;
}

/* Records where ni is named: entry name (len bytes) of directory dir. */
void ck_nid_name(struct checker *f, struct erofs_check_node *ni, uint64_t dir,
		     const char *name, size_t len)
{
	if (!erofs_nidtab_name(&f->nids, ni, dir, name, len))
		ck_nomem();
}

/* ------------------------------------------------------------------ */
/* data jobs: run on the workers, retired in walk order                */

enum { JOB_SCAN, JOB_EXTRACT, JOB_DIR_END, JOB_CLOSE };

struct ck_job {
	struct erofs_fjob j;
	int kind;
	struct erofs_rd_inode vi;
	uint64_t dir;			/* the directory naming it */
	uint8_t len;
	char name[EROFS_NAME_LEN + 1];
	int fd;				/* its parent (extract, borrowed) or itself */
	int err;
	struct ck_scan scan;		/* JOB_SCAN */
	struct erofs_xlog log;		/* JOB_EXTRACT */
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

	if (job->kind == JOB_SCAN)
		ck_scan_extents(&w->scan, &job->vi, true, &job->scan);
	else
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
	case JOB_SCAN:
		ck_scan_apply(f, &at, &job->vi, &job->scan, true);
		break;
	case JOB_EXTRACT:
		erofs_xlog_flush(f->o.x, &job->log,
				 erofs_check_xpath(&xp, &f->nids, job->dir, job->name, job->len));
		ni = ck_nid_find(f, job->vi.nid);
		if (ni) {
			ni->pending = false;
			if (!job->err)
				ni->extracted = true;
		}
		break;
	case JOB_CLOSE:
		close(job->fd);
		break;
	case JOB_DIR_END:
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
	job->j.run = kind == JOB_SCAN || kind == JOB_EXTRACT ? job_run : NULL;
	job->fd = -1;
	return job;
}

/* A regular file's data: checked (JOB_SCAN) or extracted below pfd. */
static void submit_file(struct checker *f, int kind, const struct place *at,
			const struct erofs_rd_inode *vi, int pfd)
{
	struct ck_job *job = new_job(kind, vi);

	job->dir = at->dir;
	job->len = (uint8_t)at->len;
	if (at->len)	/* the start of --nid has no name */
		memcpy(job->name, at->name, at->len);
	job->name[at->len] = '\0';
	if (kind == JOB_EXTRACT) {
		/* pfd is closed through the queue (JOB_CLOSE, JOB_DIR_END): after this job */
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
	job->kind = JOB_CLOSE;
	job->fd = fd;
	job->j.retire = job_retire;
	erofs_fq_submit(f->q, &job->j);
}

/* A directory's metadata (mtime last) once every job inside it is done. */
static void submit_dir_end(struct checker *f, struct frame *fr)
{
	struct ck_job *job = new_job(JOB_DIR_END, &fr->vi);

	job->dir = fr->vi.nid;
	job->fd = fr->dirfd;
	fr->dirfd = -1;
	erofs_fq_submit(f->q, &job->j);
}

static void drain_before_print(void *arg)
{
	erofs_fq_drain(((struct checker *)arg)->q);
}

static void stop_workers(struct checker *f)
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
static int start_workers(struct checker *f)
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

/* ---- the stack ---- */

/* Pushes a directory: reads and checks all its entries first. */
static void push_dir(struct checker *f, const struct erofs_rd_inode *vi, uint64_t parent,
		     const struct place *at, int dirfd)
{
	struct erofs_check_node *ni;
	struct frame *fr;
	struct stat st;

	if (f->depth == f->stackcap) {
		f->stackcap = f->stackcap ? f->stackcap * 2 : 64;
		f->stack = ck_xrealloc(f->stack, f->stackcap * sizeof(*f->stack));
	}
	fr = &f->stack[f->depth++];
	memset(fr, 0, sizeof(*fr));
	fr->vi = *vi;
	fr->dirfd = dirfd;
	if (dirfd >= 0 && !fstat(dirfd, &st)) {
		fr->dev = st.st_dev;
		fr->ino = st.st_ino;
	}
	ni = ck_nid_find(f, vi->nid);
	if (ni)
		ni->frame = (uint32_t)f->depth;
	if (dirfd >= 0 && f->depth > 1) {
		f->open_dirs++;
		ck_close_far_dirs(f);
	}
	f->st.ndirs++;
	if (f->o.debug >= 7) {
		char p[MSGPATH];

		ck_note(f, "checking directory %s", ck_show(f, at, p));
	}
	if (erofs_dir_iterate(f->r, vi, parent, ck_collect_dent, fr)) {
		ck_rfail(f, at, vi->nid);	/* the entries before the damage are still walked */
		fr->damaged = f->dirs_damaged = true;
	} else {
		ck_scan_data(f, at, vi, false, false);
	}
}

static void pop_dir(struct checker *f)
{
	struct frame *fr = &f->stack[f->depth - 1];
	const struct place at = { fr->vi.nid, NULL, 0, false, false };
	struct erofs_check_node *ni = ck_nid_find(f, fr->vi.nid);
	uint32_t want = 2 + fr->subdirs;

	/* a damaged directory's subdirectories were not all counted */
	if (!fr->damaged && fr->vi.di.nlink != want && fr->vi.di.nlink != 1)
		ck_report(f, &at, fr->vi.nid,
		       "directory link count %u, expected %u (2 + %u subdirectories)",
		       fr->vi.di.nlink, want, fr->subdirs);
	ck_reopen_parent(f);
	if (fr->dirfd >= 0) {
		submit_dir_end(f, fr);
		if (f->depth > 1)
			f->open_dirs--;
	}
	if (ni)
		ni->frame = 0;
	free(fr->ents);
	free(fr->names);
	f->depth--;
	if (f->open_lo > f->depth)
		f->open_lo = f->depth;
}

static void check_special(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi)
{
	if (vi->size)
		ck_warn(f, at, vi->nid, "special file with i_size %" PRIu64, vi->size);
	if ((S_ISFIFO(vi->di.mode) || S_ISSOCK(vi->di.mode)) && vi->di.u)
		ck_warn(f, at, vi->nid, "fifo or socket with non-zero rdev 0x%x", vi->di.u);
}

/* Another entry naming an inode reached before. */
static void visit_again(struct checker *f, struct frame *parent, const struct dent *d,
			struct erofs_check_node *ni, const struct place *at)
{
	const char *name = parent->names + d->name;
	struct erofs_check_xpath xp;
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;
	char p[MSGPATH];

	ni->refs++;
	if (ni->packed || ni->mbox) {
		ck_report(f, at, d->nid,
		       "the directory entry names the %s inode, which no directory may link",
		       ni->packed ? "packed" : "metabox");
		return;
	}
	if (ni->bad)
		return;
	if (erofs_mode_to_ftype(ni->mode) != d->ft)
		ck_report(f, at, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, ni->mode);
	if (S_ISDIR(ni->mode)) {
		ck_report(f, at, d->nid, "directory already reached as %s (directory hard link or loop)",
		       ck_show_node(f, ni, p));
		return;
	}
	f->st.nlinks_extra++;
	if (pfd < 0)
		return;
	if (ni->pending)
		erofs_fq_drain(f->q);	/* whether its first copy made it */
	erofs_check_xpath(&xp, &f->nids, parent->vi.nid, name, d->len);
	if (ni->extracted) {
		char tname[EROFS_NAME_LEN + 1];
		int tfd = ck_link_dir_fd(f, ni->parent, at, d->nid);

		memcpy(tname, f->nids.names + ni->name, ni->namelen);
		tname[ni->namelen] = '\0';
		if (tfd >= 0)
			erofs_extract_hardlink(f->o.x, pfd, name, &xp.base, tfd, tname);
	} else if (!erofs_read_inode(f->r, d->nid, &vi) &&
		   !erofs_extract_node(f->o.x, pfd, name, &xp.base, &vi)) {
		/* the first copy extracted is the one later links point at */
		ck_nid_name(f, ni, parent->vi.nid, name, d->len);
		ni->extracted = true;
	}
}

static void visit(struct checker *f, struct frame *parent, const struct dent *d)
{
	const char *name = parent->names + d->name;
	const struct place at = { parent->vi.nid, name, d->len, false, false };
	struct erofs_check_node *ni = ck_nid_find(f, d->nid);
	struct erofs_check_xpath xp;
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;

	if (d->ft == EROFS_FT_DIR)
		parent->subdirs++;
	if (f->o.debug >= 7) {
		char p[MSGPATH];

		ck_note(f, "checking %s", ck_show(f, &at, p));
	}
	if (ni) {
		visit_again(f, parent, d, ni, &at);
		return;
	}

	ni = ck_nid_add(f, d->nid);
	ni->refs = 1;
	ck_nid_name(f, ni, parent->vi.nid, name, d->len);
	if (erofs_read_inode(f->r, d->nid, &vi)) {
		ni->bad = true;
		ck_rfail(f, &at, d->nid);
		return;
	}
	if (!ck_meta_claim(f, erofs_meta_vaddr(f->r, &vi, vi.iloc),
			   erofs_meta_vaddr(f->r, &vi, vi.meta_end))) {
		ni->bad = true;
		if (S_ISDIR(vi.di.mode))
			f->dirs_damaged = true;
		ck_report(f, &at, d->nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " of the %s with its metadata) overlaps an inode checked before; not checked further",
		       vi.iloc, vi.meta_end - 1, vi.in_mbox ? "metabox" : "image");
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = erofs_meta_vaddr(f->r, &vi, vi.iloc);
	ni->meta_end = erofs_meta_vaddr(f->r, &vi, vi.meta_end);
	if (erofs_mode_to_ftype(vi.di.mode) != d->ft)
		ck_report(f, &at, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, vi.di.mode);
	ck_check_xattrs(f, &at, &vi);
	erofs_check_xpath(&xp, &f->nids, parent->vi.nid, name, d->len);

	if (S_ISDIR(vi.di.mode)) {
		int fd = -1;

		if (pfd >= 0) {
			fd = erofs_extract_dir_begin(f->o.x, pfd, name, &xp.base);
			if (fd < 0)
				fd = -1;
		}
		push_dir(f, &vi, parent->vi.nid, &at, fd);	/* parent may move */
		return;
	}
	if (S_ISREG(vi.di.mode)) {
		f->st.nfiles++;
		f->st.data_bytes += vi.size;
		if (ck_is_compressed(&vi)) {
			f->st.nzfiles++;
			f->st.zlogical += vi.size;
			f->st.zphysical += (uint64_t)vi.z_blocks << f->r->blkszbits;
			if (vi.z_advise & EROFS_ZADVISE_FRAGMENT) {
				f->st.nfragfiles++;
				f->st.fragbytes += vi.size - vi.z_frag_la;
			}
		}
		if (pfd < 0) {
			submit_file(f, JOB_SCAN, &at, &vi, -1);
			return;
		}
		/* when extracting, the extractor reads and reports */
		ck_scan_data(f, &at, &vi, false, false);
		submit_file(f, JOB_EXTRACT, &at, &vi, pfd);
		return;
	} else if (S_ISLNK(vi.di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		f->st.nsymlinks++;
		if (erofs_read_symlink(f->r, &vi, target, sizeof(target)))
			ck_rfail(f, &at, vi.nid);
		else
			ck_scan_data(f, &at, &vi, false, false);
	} else {
		f->st.nspecial++;
		check_special(f, &at, &vi);
	}
	if (pfd >= 0 && !erofs_extract_node(f->o.x, pfd, name, &xp.base, &vi))
		ni->extracted = true;
}

/* A non-directory given by --nid/--path: checked alone. */
static void check_start_leaf(struct checker *f, const struct place *at,
			     const struct erofs_rd_inode *vi)
{
	struct erofs_xpath_str xp;

	ck_check_xattrs(f, at, vi);
	if (S_ISREG(vi->di.mode)) {
		f->st.nfiles++;
		f->st.data_bytes += vi->size;
		ck_scan_data(f, at, vi, !f->o.x, !f->o.x);
	} else if (S_ISLNK(vi->di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		f->st.nsymlinks++;
		if (erofs_read_symlink(f->r, vi, target, sizeof(target)))
			ck_rfail(f, at, vi->nid);
	} else {
		f->st.nspecial++;
		check_special(f, at, vi);
	}
	/* fsck opened the extractor on the target's parent (open_leaf) */
	if (f->o.x)
		erofs_extract_node(f->o.x, f->o.x->rootfd, f->o.x->leaf,
				   erofs_xpath_str(&xp, f->o.x->leaf), vi);
}

static void walk(struct checker *f)
{
	uint64_t root = f->o.has_start ? f->o.start_nid : f->r->root_nid;
	uint64_t parent = f->o.has_start ? f->o.start_parent : root;
	const struct place at = { root, NULL, 0, false, false };
	struct erofs_rd_inode vi;
	struct erofs_check_node *ni;
	int fd = -1;

	f->subtree = root != f->r->root_nid;
	ni = ck_nid_add(f, root);
	ck_nid_name(f, ni, root, "", 0);
	if (erofs_read_inode(f->r, root, &vi)) {
		ni->bad = true;
		ck_rfail(f, &at, root);
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = erofs_meta_vaddr(f->r, &vi, vi.iloc);
	ni->meta_end = erofs_meta_vaddr(f->r, &vi, vi.meta_end);
	ck_meta_claim(f, ni->iloc, ni->meta_end);	/* the first: nothing to overlap */
	ck_check_packed(f);
	ck_check_metabox(f);
	if (!S_ISDIR(vi.di.mode) && f->subtree) {
		check_start_leaf(f, &at, &vi);
		erofs_fq_drain(f->q);
		ck_final_checks(f);
		return;
	}
	if (!S_ISDIR(vi.di.mode)) {
		ck_report(f, &at, root, "root inode is not a directory (mode 0%o)", vi.di.mode);
		return;
	}
	ck_check_xattrs(f, &at, &vi);
	if (f->o.x) {
		fd = erofs_extract_root(f->o.x);
		if (fd < 0)
			fd = -1;
	}
	push_dir(f, &vi, parent, &at, fd);

	while (f->depth) {
		struct frame *fr = &f->stack[f->depth - 1];

		if (fr->next < fr->n) {
			struct dent d = fr->ents[fr->next++];

			visit(f, fr, &d);
			continue;
		}
		pop_dir(f);
	}
	erofs_fq_drain(f->q);
	ck_final_checks(f);
}

/* ------------------------------------------------------------------ */
/* the check                                                           */

int erofs_check_image(struct erofs_reader *r, const struct erofs_check_opts *o,
		      struct erofs_check_result *res)
{
	struct checker c, *f = &c;
	size_t i;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.o = *o;
	c.r = r;
	c.link_dirfd = -1;
	/* the metabox's inodes are claimed after the image's bytes */
	c.metamap_pages = (size_t)((((r->mbox ? r->mbox_vbase + r->mbox->size : r->size) >>
				     EROFS_SLOT_BITS) >> MM_PAGE_BITS) + 1);
	c.metamap = calloc(c.metamap_pages, sizeof(*c.metamap));
	if (c.metamap && !ck_scanner_init(&c.scan, r) && !start_workers(f)) {
		walk(f);
		stop_workers(f);	/* every job retired */
		res->errors = c.errors;
		res->warnings = c.warnings;
		res->st = c.st;
	} else {
		ret = -ENOMEM;
	}

	stop_workers(f);
	if (o->x) {
		o->x->before_print = NULL;
		o->x->before_print_arg = NULL;
	}
	if (c.link_dirfd >= 0)
		close(c.link_dirfd);
	erofs_nidtab_free(&c.nids);
	ck_scanner_fini(&c.scan);
	for (i = 0; c.metamap && i < c.metamap_pages; i++)
		free(c.metamap[i]);
	free(c.metamap);
	free(c.stack);
	free(c.dext);
	return ret;
}
