// SPDX-License-Identifier: MIT
/*
 * What every file of the check shares (include/erofs/check/checkwalk.h):
 * its messages, which name a place by a path built only when printed, and
 * the walk's nid table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/check/checkwalk.h"

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

/* ---- the extractor's names, from the nid table ---- */

static void xpath_show(const struct erofs_xpath *self, char *buf, size_t len)
{
	const struct erofs_check_xpath *p = (const struct erofs_check_xpath *)self;

	erofs_nidtab_path(p->t, p->dir, p->name, p->len, buf, len);
}

const struct erofs_xpath *erofs_check_xpath(struct erofs_check_xpath *p,
					    const struct erofs_nidtab *t, uint64_t dir,
					    const char *name, size_t len)
{
	p->base.show = xpath_show;
	p->t = t;
	p->dir = dir;
	p->name = name;
	p->len = len;
	return &p->base;
}
