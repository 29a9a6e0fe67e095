// SPDX-License-Identifier: MIT
/*
 * Directories in the check (include/erofs/check/checkwalk.h): collecting a
 * directory's entries into its frame and, with --extract, keeping at most
 * OPEN_DIRS descriptors of the stack open, reopening the ones closed (and
 * the directory of a hard link's first name) when they are needed again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check/checkwalk.h"
#include "erofs/common/ondisk.h"

/* ------------------------------------------------------------------ */
/* the walk                                                            */

int ck_collect_dent(void *arg, const struct erofs_rd_dentry *de)
{
	struct frame *fr = arg;
	struct dent *d;

	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? fr->cap * 2 : 16;
		fr->ents = ck_xrealloc(fr->ents, fr->cap * sizeof(*fr->ents));
	}
	if (fr->names_cap - fr->names_len < de->namelen + 1u) {
		fr->names_cap = fr->names_cap ? fr->names_cap * 2 : 1024;
		if (fr->names_cap - fr->names_len < de->namelen + 1u)
			fr->names_cap = fr->names_len + de->namelen + 1;
		fr->names = ck_xrealloc(fr->names, fr->names_cap);
	}
	d = &fr->ents[fr->n++];
	d->nid = de->nid;
	d->ft = de->file_type;
	d->name = fr->names_len;
	d->len = (uint8_t)de->namelen;	/* at most 255: checked by the reader */
	memcpy(fr->names + fr->names_len, de->name, de->namelen);
	fr->names[fr->names_len + de->namelen] = '\0';
	fr->names_len += de->namelen + 1u;
	return 0;
}

/* ---- directory descriptors of the stack (extraction) ---- */

/* Keeps at most OPEN_DIRS frames below the root with an open descriptor,
 * closing the shallowest ones; the top frame always keeps its own. */
void ck_close_far_dirs(struct checker *f)
{
	while (f->open_dirs > OPEN_DIRS && f->open_lo < f->depth - 1) {
		struct frame *fr = &f->stack[f->open_lo++];

		if (f->open_lo == 1 || fr->dirfd < 0)
			continue;	/* the root's stays open */
		ck_close_dir_later(f, fr->dirfd);
		fr->dirfd = FD_CLOSED;
		f->open_dirs--;
	}
}

/* Before the top frame goes: its parent, if closed, is reopened through
 * the top's "..", or else from the nearest open ancestor by name. */
void ck_reopen_parent(struct checker *f)
{
	struct frame *top = &f->stack[f->depth - 1], *up = top - 1;
	size_t k;
	int fd;

	if (f->depth < 2 || up->dirfd != FD_CLOSED)
		return;
	if (top->dirfd >= 0) {
		fd = erofs_extract_reopen_parent(f->o.x, top->dirfd, up->dev, up->ino);
	} else {
		for (k = f->depth - 2; k > 0 && f->stack[k - 1].dirfd < 0; k--)
			;
		fd = k ? erofs_nidtab_open_dir(&f->nids, f->o.x, up->vi.nid,
					       f->stack[k - 1].dirfd, f->stack[k - 1].vi.nid) : -EBADF;
	}
	if (fd < 0) {
		struct place at = { up->vi.nid, NULL, 0, false, false };

		up->dirfd = -1;
		ck_report(f, &at, up->vi.nid,
		       "cannot reopen the extracted directory for its other entries: %s",
		       strerror(-fd));
		return;
	}
	up->dirfd = fd;
	f->open_dirs++;
	f->open_lo = f->depth - 2;
}

/*
 * A descriptor on the directory where a hard link's target was extracted:
 * its frame's, if open; else one opened down from the nearest ancestor
 * with an open frame, kept for the next link into the same directory.
 * -1 when it cannot be opened (reported).
 */
int ck_link_dir_fd(struct checker *f, uint64_t dir, const struct place *at, uint64_t nid)
{
	const struct erofs_check_node *a = ck_nid_find(f, dir);
	size_t steps = 0;
	int fd;

	if (a && a->frame && f->stack[a->frame - 1].dirfd >= 0)
		return f->stack[a->frame - 1].dirfd;
	if (f->link_dirfd >= 0 && f->link_dir == dir)
		return f->link_dirfd;
	while (a && !(a->frame && f->stack[a->frame - 1].dirfd >= 0) && a->parent != a->nid &&
	       steps++ <= f->nids.count)
		a = ck_nid_find(f, a->parent);
	if (a && a->frame && f->stack[a->frame - 1].dirfd >= 0)
		fd = erofs_nidtab_open_dir(&f->nids, f->o.x, dir, f->stack[a->frame - 1].dirfd,
					   a->nid);
	else
		fd = -ENOENT;
	if (fd < 0) {
		ck_report(f, at, nid, "cannot open the directory of its first link: %s",
		       strerror(-fd));
		return -1;
	}
	if (f->link_dirfd >= 0)
		close(f->link_dirfd);
	f->link_dir = dir;
	f->link_dirfd = fd;
	return fd;
}

/* ---- the extractor's directories from the nid table ---- */

int erofs_nidtab_open_dir(const struct erofs_nidtab *t, struct erofs_extractor *x, uint64_t dir,
			  int from, uint64_t from_nid)
{
	const struct erofs_check_node *d = erofs_nidtab_find(t, dir);
	const struct erofs_check_node **chain;
	size_t n = 0, i;
	int fd, err = 0;

	if (from < 0)
		from_nid = UINT64_MAX;
	chain = malloc((t->count + 1) * sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	/* the directories below from (or below the root), deepest first */
	while (d && d->nid != from_nid && d->parent != d->nid && n <= t->count) {
		chain[n++] = d;
		d = erofs_nidtab_find(t, d->parent);
	}
	if (!d || n > t->count || (from >= 0 && d->nid != from_nid)) {
		free(chain);
		return -ENOENT;	/* not below from: cannot happen for a walked tree */
	}
	fd = from >= 0 ? dup(from) : erofs_extract_root(x);
	if (fd < 0)
		err = from >= 0 ? -errno : fd;
	for (i = n; i-- > 0 && !err;) {
		char name[EROFS_NAME_LEN + 1];
		int next;

		memcpy(name, t->names + chain[i]->name, chain[i]->namelen);
		name[chain[i]->namelen] = '\0';
		next = erofs_extract_reopen_dir(x, fd, name);
		close(fd);
		fd = next;
		if (fd < 0)
			err = fd;
	}
	free(chain);
	return err ? err : fd;
}
