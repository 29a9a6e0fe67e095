// SPDX-License-Identifier: MIT
/* Reading one EROFS image as a layer (see include/erofs/source/imglayer.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/common/io.h"
#include "erofs/common/ondisk.h"
#include "erofs/source/imglayer.h"
#include "erofs/source/namedtree.h"
#include "erofs/source/xattr.h"

int erofs_layer_open(struct erofs_layer *l, const struct erofs_build_options *opts,
		     const char *name)
{
	int err;

	l->opts = opts;
	l->name = name;
	l->path_len = 0;
	if (l->path)
		l->path[0] = '\0';
	erofs_rd_source_init(&l->src, name);
	if ((err = erofs_rd_source_open(&l->src, &l->r))) {
		erofs_err("%s", l->src.err);
		erofs_rd_source_close(&l->src);
		return err == -ENOMEM ? err : -EINVAL;
	}
	l->open = true;
	return 0;
}

void erofs_layer_close(struct erofs_layer *l)
{
	if (l->open) {
		erofs_reader_close(&l->r);
		erofs_rd_source_close(&l->src);
		l->open = false;
	}
	l->path_len = 0;
	if (l->path)
		l->path[0] = '\0';
}

void erofs_layer_release(struct erofs_layer *l)
{
	erofs_layer_close(l);
	free(l->path);
	free(l->buf);
	l->path = NULL;
	l->buf = NULL;
	l->path_cap = 0;
}

int erofs_layer_error(struct erofs_layer *l, int err, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	erofs_err("%s: /%.*s: %s", l->name, (int)(l->path_len > 1024 ? 1024 : l->path_len),
		  l->path ? l->path : "", why);
	return err;
}

int erofs_layer_reader_failed(struct erofs_layer *l, int err)
{
	if (err == -ENOMEM)
		return err;
	return erofs_layer_error(l, err == -EOPNOTSUPP ? err : -EINVAL, "%s",
				 erofs_reader_error(&l->r));
}

int erofs_layer_path_push(struct erofs_layer *l, const char *name, size_t len, size_t *mark)
{
	size_t need = l->path_len + 1 + len + 1;

	if (need > l->path_cap) {
		size_t cap = need * 2;
		char *bigger = realloc(l->path, cap);

		if (!bigger)
			return -ENOMEM;
		l->path = bigger;
		l->path_cap = cap;
	}
	*mark = l->path_len;
	if (l->path_len)
		l->path[l->path_len++] = '/';
	memcpy(l->path + l->path_len, name, len);
	l->path_len += len;
	l->path[l->path_len] = '\0';
	return 0;
}

void erofs_layer_path_pop(struct erofs_layer *l, size_t mark)
{
	l->path_len = mark;
	l->path[mark] = '\0';
}

struct xattr_walk {
	struct erofs_layer *l;
	struct erofs_xattr_set **set;
	bool opaque;
	bool reported;		/* the error was ours, already said */
};

static int put_xattr(void *arg, const struct erofs_rd_xattr *x)
{
	struct xattr_walk *xw = arg;
	const char *prefix = erofs_rd_xattr_prefix(x->index);
	char name[EROFS_NAME_LEN * 2 + 64];
	int n, err;

	xw->reported = true;
	if (!prefix)
		return erofs_layer_error(xw->l, -EINVAL, "xattr of unknown prefix index %u",
					 x->index);
	n = snprintf(name, sizeof(name), "%s%.*s", prefix, (int)x->name_len, x->name);
	if (n < 0 || (size_t)n >= sizeof(name))
		return erofs_layer_error(xw->l, -EINVAL, "xattr name too long");
	if (!strcmp(name, EROFS_XATTR_OVL_OPAQUE) && x->value_size == 1 &&
	    *(const char *)x->value == 'y')
		xw->opaque = true;
	/* the empty origin marks a directory holding whiteouts, which go too */
	if (xw->l->opts->ovlfs_strip && !strcmp(name, EROFS_XATTR_OVL_ORIGIN) && !x->value_size)
		return 0;
	err = erofs_xattrs_put(xw->set, name, x->value, x->value_size,
			       xw->l->path ? xw->l->path : "");
	xw->reported = err != 0;
	return err;
}

int erofs_layer_xattrs(struct erofs_layer *l, const struct erofs_rd_inode *vi,
		       struct erofs_xattr_set **set, bool *opaque)
{
	struct xattr_walk xw = { .l = l, .set = set };
	int err;

	*set = NULL;
	*opaque = false;
	if (l->opts->xattr_tolerance < 0)	/* -x -1: no xattrs at all */
		return 0;
	err = erofs_xattr_iterate(&l->r, vi, put_xattr, &xw);
	if (err > 0)
		err = 0;
	if (err < 0 && !xw.reported)
		err = erofs_layer_reader_failed(l, err);
	if (err) {
		erofs_xattrs_free(*set);
		*set = NULL;
		return err;
	}
	*opaque = xw.opaque;
	return 0;
}

int erofs_layer_collect(void *arg, const struct erofs_rd_dentry *de)
{
	struct erofs_layer_entries *l = arg;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *bigger = realloc(l->e, cap * sizeof(*l->e));

		if (!bigger)
			return -ENOMEM;
		l->e = bigger;
		l->cap = cap;
	}
	if (l->names_len + de->namelen > l->names_cap) {
		size_t cap = (l->names_len + de->namelen) * 2 + 1024;
		char *bigger = realloc(l->names, cap);

		if (!bigger)
			return -ENOMEM;
		l->names = bigger;
		l->names_cap = cap;
	}
	memcpy(l->names + l->names_len, de->name, de->namelen);
	l->e[l->nr++] = (struct erofs_layer_entry){
		.nid = de->nid, .name_at = (uint32_t)l->names_len,
		.len = (uint16_t)de->namelen, .type = de->file_type,
	};
	l->names_len += de->namelen;
	return 0;
}

void erofs_layer_entries_free(struct erofs_layer_entries *l)
{
	free(l->e);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

int erofs_layer_leaf(struct erofs_layer *l, const struct erofs_rd_inode *vi,
		     struct erofs_inode *inode)
{
	char target[EROFS_SYMLINK_MAXLEN + 1];
	int err;

	switch (vi->di.mode & S_IFMT) {
	case S_IFLNK:
		if ((err = erofs_read_symlink(&l->r, vi, target, sizeof(target))))
			return erofs_layer_reader_failed(l, err);
		if (!(inode->symlink = strdup(target)))
			return -ENOMEM;
		inode->size = strlen(target);
		return 0;
	case S_IFCHR:
	case S_IFBLK:
		erofs_decode_rdev(vi->di.u, &inode->rdev_major, &inode->rdev_minor);
		return 0;
	case S_IFREG:
		inode->size = vi->size;
		return 0;
	default:		/* FIFOs and sockets */
		return 0;
	}
}

int erofs_layer_copy(struct erofs_layer *l, const struct erofs_rd_inode *vi, uint64_t off,
		     uint64_t len, int fd, uint64_t pos)
{
	int err;

	if (!l->buf && !(l->buf = malloc(EROFS_LAYER_COPY_BUFFER)))
		return -ENOMEM;
	for (uint64_t end = off + len, mapped_end = off; off < end; ) {
		size_t n = end - off < EROFS_LAYER_COPY_BUFFER ? (size_t)(end - off)
							       : EROFS_LAYER_COPY_BUFFER;

		/* holes are skipped, not read: a sparse file costs what it stores */
		if (off >= mapped_end) {
			struct erofs_map map;

			if ((err = erofs_map_blocks(&l->r, vi, off, &map)))
				return erofs_layer_reader_failed(l, err);
			if (!(map.flags & EROFS_MAP_MAPPED)) {
				off = map.la + map.llen;
				continue;
			}
			mapped_end = map.la + map.llen;
		}
		if (n > mapped_end - off)
			n = (size_t)(mapped_end - off);
		if ((err = erofs_read_data(&l->r, vi, l->buf, n, off)))
			return erofs_layer_reader_failed(l, err);
		if (!erofs_is_zero(l->buf, n) &&
		    (err = erofs_pwrite_all(fd, l->buf, n, pos + off))) {
			erofs_err("temporary copy of %s's files: write failed: %s", l->name,
				  strerror(-err));
			return err;
		}
		off += n;
	}
	return 0;
}

int erofs_layer_probe(const char *path, unsigned int *blkszbits)
{
	uint8_t sb[EROFS_SUPER_OFFSET + 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0) {
		err = errno;
		erofs_err("%s: cannot open: %s", path, strerror(err));
		return -err;
	}
	n = pread(fd, sb, sizeof(sb), 0);
	if (n < 0)
		err = errno;
	close(fd);
	if (err) {
		erofs_err("%s: cannot read: %s", path, strerror(err));
		return -err;
	}
	if ((size_t)n < sizeof(sb) || get_le32(sb + EROFS_SUPER_OFFSET) != EROFS_MAGIC)
		return 0;
	*blkszbits = sb[EROFS_SUPER_OFFSET + 12];
	return 1;
}
