// SPDX-License-Identifier: MIT
/*
 * dump.erofs's walk of the tree: depth first in on-disk entry order, the
 * order erofs-utils' dump.erofs counts (-S) and searches for a nid's path
 * (--nid), so that both print what it prints.  No recursion: a stack of
 * directory listings, one per level, so depth costs heap, not C stack.
 * Every directory is entered once (a second entry naming one is
 * corruption), so the walk ends on any byte string.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/read/nidtab.h"
#include "erofs/read/reader.h"
#include "erofs/dump/dump.h"
#include "erofs/read/handle.h"

void erofs_dump_init(struct erofs_dump *d, struct eforge_image *img, FILE *out)
{
	memset(d, 0, sizeof(*d));
	d->r = erofs_forge_reader(img);
	d->out = out;
}

int erofs_dump_fail(struct erofs_dump *d, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	return err;
}

int erofs_dump_reader_fail(struct erofs_dump *d, int err, const char *what, uint64_t nid)
{
	char shown[320];

	erofs_escape(shown, sizeof(shown), what, strlen(what));
	return erofs_dump_fail(d, err, "%s (nid %" PRIu64 "): %s", shown, nid,
			       erofs_reader_error(d->r));
}

/* ---- one directory's entries, kept while its subtree is walked ---- */

struct dump_dirent {
	uint64_t nid;
	size_t nameoff;
	unsigned int namelen;
};

struct dump_frame {
	uint64_t nid;
	struct dump_dirent *ents;
	size_t n, cap, next;
	char *names;
	size_t names_len, names_cap;
	size_t pathlen;			/* the directory's path length */
};

static int collect(void *arg, const struct erofs_rd_dentry *de)
{
	struct dump_frame *f = arg;

	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct dump_dirent *e = realloc(f->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		f->ents = e;
		f->cap = cap;
	}
	if (f->names_cap - f->names_len < de->namelen) {
		size_t cap = f->names_cap ? f->names_cap * 2 : 256;
		char *p;

		while (cap - f->names_len < de->namelen)
			cap *= 2;
		p = realloc(f->names, cap);
		if (!p)
			return -ENOMEM;
		f->names = p;
		f->names_cap = cap;
	}
	memcpy(f->names + f->names_len, de->name, de->namelen);
	f->ents[f->n++] = (struct dump_dirent){ de->nid, f->names_len, de->namelen };
	f->names_len += de->namelen;
	return 0;
}

static void frame_free(struct dump_frame *f)
{
	free(f->ents);
	free(f->names);
}

struct walk {
	struct erofs_dump *d;
	struct dump_frame *stack;
	size_t depth, cap;
	char *path;
	size_t pathlen, pathcap;
	struct erofs_nidtab dirs;	/* directories entered */
};

static int path_set(struct walk *w, size_t at, const char *name, unsigned int len)
{
	size_t need = at + 1 + len + 1;

	if (need > w->pathcap) {
		size_t cap = w->pathcap ? w->pathcap : 256;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(w->path, cap);
		if (!p)
			return -ENOMEM;
		w->path = p;
		w->pathcap = cap;
	}
	w->path[at] = '/';
	memcpy(w->path + at + 1, name, len);
	w->pathlen = at + 1 + len;
	w->path[w->pathlen] = '\0';
	return 0;
}

/* Lists directory vi (entered from parent) onto the stack. */
static int push_dir(struct walk *w, const struct erofs_rd_inode *vi, uint64_t parent)
{
	struct erofs_dump *d = w->d;
	struct dump_frame *f;
	int err;

	if (erofs_nidtab_find(&w->dirs, vi->nid))
		return erofs_dump_fail(d, -EUCLEAN, "%s (nid %" PRIu64 "): directory named twice",
				       w->path, vi->nid);
	if (!erofs_nidtab_add(&w->dirs, vi->nid))
		return erofs_dump_fail(d, -ENOMEM, "out of memory");
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct dump_frame *s = realloc(w->stack, cap * sizeof(*s));

		if (!s)
			return erofs_dump_fail(d, -ENOMEM, "out of memory");
		w->stack = s;
		w->cap = cap;
	}
	f = &w->stack[w->depth];
	memset(f, 0, sizeof(*f));
	f->nid = vi->nid;
	f->pathlen = w->pathlen == 1 ? 0 : w->pathlen;	/* the root: "" + "/name" */
	err = erofs_dir_iterate(d->r, vi, parent, collect, f);
	if (err) {
		frame_free(f);
		if (err == -ENOMEM)
			return erofs_dump_fail(d, err, "out of memory");
		return erofs_dump_reader_fail(d, err, w->path, vi->nid);
	}
	w->depth++;
	return 0;
}

static int visit(struct walk *w, erofs_dump_visit_fn fn, void *arg,
		 const struct erofs_rd_inode *vi, uint64_t parent, const char *name,
		 unsigned int namelen)
{
	struct erofs_dump_visit v = {
		.vi = vi, .parent_nid = parent, .name = name, .namelen = namelen,
		.path = w->path, .pathlen = w->pathlen,
	};
	int ret = fn(arg, &v);

	if (ret || !S_ISDIR(vi->di.mode))
		return ret;
	return push_dir(w, vi, parent);
}

int erofs_dump_walk(struct erofs_dump *d, erofs_dump_visit_fn fn, void *arg)
{
	struct walk w = { .d = d };
	struct erofs_rd_inode vi;
	uint64_t root = d->r->root_nid;
	int err;

	err = erofs_read_inode(d->r, root, &vi);
	if (err)
		return erofs_dump_reader_fail(d, err, "/", root);
	if (!S_ISDIR(vi.di.mode))
		return erofs_dump_fail(d, -EUCLEAN, "/ (nid %" PRIu64 "): the root is not a directory",
				       root);
	err = path_set(&w, 0, "", 0);
	if (!err)
		err = visit(&w, fn, arg, &vi, root, "", 0);
	while (!err && w.depth) {
		struct dump_frame *f = &w.stack[w.depth - 1];
		const struct dump_dirent *e;

		if (f->next == f->n) {
			frame_free(f);
			w.depth--;
			continue;
		}
		e = &f->ents[f->next++];
		err = path_set(&w, f->pathlen, f->names + e->nameoff, e->namelen);
		if (err) {
			err = erofs_dump_fail(d, err, "out of memory");
			break;
		}
		err = erofs_read_inode(d->r, e->nid, &vi);
		if (err) {
			err = erofs_dump_reader_fail(d, err, w.path, e->nid);
			break;
		}
		/* f may move when the stack grows: nothing of it is used below */
		err = visit(&w, fn, arg, &vi, f->nid, w.path + w.pathlen - e->namelen, e->namelen);
	}
	while (w.depth)
		frame_free(&w.stack[--w.depth]);
	free(w.stack);
	free(w.path);
	erofs_nidtab_free(&w.dirs);
	return err < 0 ? err : 0;
}

/* ---- a nid's path ---- */

struct find {
	uint64_t nid, parent;
	char *path;
};

static int find_visit(void *arg, const struct erofs_dump_visit *v)
{
	struct find *f = arg;

	if (v->vi->nid != f->nid)
		return 0;
	f->path = strdup(v->path);
	f->parent = v->parent_nid;
	return f->path ? 1 : -ENOMEM;
}

int erofs_dump_find_path(struct erofs_dump *d, uint64_t nid, char **path, uint64_t *parent)
{
	struct find f = { nid, 0, NULL };
	int err = erofs_dump_walk(d, find_visit, &f);

	if (err == -ENOMEM && !f.path)
		err = erofs_dump_fail(d, err, "out of memory");
	*path = f.path;
	*parent = f.parent;
	return err;
}

/* ---- a path's nid ---- */

struct lookup {
	const char *name;
	size_t len;
	uint64_t nid;
	bool found;
};

static int lookup_entry(void *arg, const struct erofs_rd_dentry *de)
{
	struct lookup *l = arg;

	if (de->namelen != l->len || memcmp(de->name, l->name, l->len))
		return 0;
	l->nid = de->nid;
	l->found = true;
	return 1;
}

int erofs_dump_lookup(struct erofs_dump *d, const char *path, uint64_t *nid)
{
	uint64_t *up = NULL;	/* the directories above, for ".." */
	size_t depth = 0, cap = 0;
	uint64_t cur = d->r->root_nid;
	const char *p = path;
	int err = 0;

	for (;;) {
		struct erofs_rd_inode vi;
		struct lookup l = { 0 };
		uint64_t parent = depth ? up[depth - 1] : cur;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		l.name = p;
		l.len = strcspn(p, "/");
		p += l.len;
		if (l.len == 1 && l.name[0] == '.')
			continue;
		err = erofs_read_inode(d->r, cur, &vi);
		if (err) {
			err = erofs_dump_reader_fail(d, err, path, cur);
			break;
		}
		if (!S_ISDIR(vi.di.mode)) {
			err = erofs_dump_fail(d, -ENOTDIR, "%.*s: not a directory",
					      (int)(l.name - path - 1), path);
			break;
		}
		if (l.len == 2 && !memcmp(l.name, "..", 2)) {
			if (depth)	/* the root's ".." is the root */
				cur = up[--depth];
			continue;
		}
		err = erofs_dir_iterate(d->r, &vi, parent, lookup_entry, &l);
		if (err < 0) {
			err = erofs_dump_reader_fail(d, err, path, cur);
			break;
		}
		err = 0;
		if (!l.found) {
			err = erofs_dump_fail(d, -ENOENT, "%.*s: no such file or directory",
					      (int)(p - path), path);
			break;
		}
		if (depth == cap) {
			uint64_t *n = realloc(up, (cap = cap ? cap * 2 : 16) * sizeof(*n));

			if (!n) {
				err = erofs_dump_fail(d, -ENOMEM, "out of memory");
				break;
			}
			up = n;
		}
		up[depth++] = cur;
		cur = l.nid;
	}
	free(up);
	if (!err)
		*nid = cur;
	return err;
}
