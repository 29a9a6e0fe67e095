// SPDX-License-Identifier: MIT
/* The tar source (see include/erofs/source/tarsrc.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/common/io.h"
#include "erofs/source/copyup.h"
#include "erofs/source/namedtree.h"
#include "erofs/source/scan.h"
#include "erofs/source/tar.h"
#include "erofs/source/tarsrc.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

#define COPY_BUFFER	(1u << 20)
#define WHITEOUT_PREFIX	".wh."
#define OPAQUE_MARKER	".wh..wh..opq"

struct tarsrc {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_tar *tar;
	const char *name;		/* the input, for messages */
	int in_fd;
	int dump_fd;			/* --ungzip=FILE and the like; -1: none */
	bool in_place;
	uint64_t base;			/* in place: the tar's first byte in in_fd */
	uint64_t spool_end;		/* otherwise (and sparse files) the bytes are copied */
	uint8_t *copy_buf;
	struct erofs_tree_builder b;	/* inodes made in the tar's order */
	struct erofs_copy_up *copy_up;	/* --incremental: the image added to, opened on demand */
	bool root_given;		/* the tar has an entry for "." */
	int64_t newest_mtime;
	uint32_t newest_nsec;
	const struct erofs_tar_entry *e;	/* the entry being added, for messages */
};

static int entry_error(const struct tarsrc *t, const char *why)
{
	const size_t shown = 256;	/* a hostile name may be megabytes long */

	erofs_err("%s: entry '%.*s%s' (header at byte %llu): %s", t->name, (int)shown,
		  t->e->path, strlen(t->e->path) > shown ? "..." : "",
		  (unsigned long long)t->e->header_offset, why);
	return -EINVAL;
}

/*
 * A directory the tar did not list (yet): 0755, owned as its parent, dated
 * as the entry below it (the root's own date is only known at the end).
 */
static struct erofs_inode *implicit_dir(struct tarsrc *t, struct erofs_inode *parent)
{
	struct erofs_inode *dir = erofs_builder_new_inode(&t->b);

	if (!dir)
		return NULL;
	dir->mode = S_IFDIR | 0755;
	dir->uid = parent->uid;
	dir->gid = parent->gid;
	erofs_set_mtime(t->opts, dir, t->e->mtime, t->e->mtime_nsec);
	return dir;
}

/*
 * Walks path's directories (creating the missing ones) to the directory of
 * its last name: *dir and *last (NULL: the path is the root itself).
 */
static int walk(struct tarsrc *t, const char *path, bool create, struct erofs_inode **dir,
		const char **last, size_t *last_len)
{
	struct erofs_inode *at = t->tree->root;
	const char *p = path;

	*last = NULL;
	*last_len = 0;
	if (path[0] == '/')
		return entry_error(t, "absolute name (tar -x would strip the '/'; "
				      "refused here)");
	if (strlen(path) >= PATH_MAX)
		return entry_error(t, "name longer than PATH_MAX");
	for (;;) {
		const char *slash, *next;
		size_t len;
		struct erofs_dentry *d;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		slash = strchr(p, '/');
		len = slash ? (size_t)(slash - p) : strlen(p);
		next = p + len;
		if (len == 1 && p[0] == '.') {
			p = next;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return entry_error(t, "name with a '..' component");
		if (len > EROFS_NAME_LEN)
			return entry_error(t, "a name component longer than 255 bytes");
		while (*next == '/')
			next++;
		if (!*next) {		/* the last name */
			*last = p;
			*last_len = len;
			break;
		}
		d = erofs_builder_lookup(&t->b, at, p, len, false);
		if (!d && !create)
			return -ENOENT;
		if (!d) {
			struct erofs_inode *made = implicit_dir(t, at);

			if (!made || !(d = erofs_builder_lookup(&t->b, at, p, len, true)))
				return -ENOMEM;
			d->inode = made;
		} else if (!erofs_inode_is_dir(d->inode)) {
			return entry_error(t, "a directory on its path is a symlink or not a "
					      "directory (an earlier entry)");
		}
		at = d->inode;
		p = next;
	}
	*dir = at;
	return 0;
}

/* The spool: an unlinked file beside the image (data_fd, or spool_fd in place). */
static int spool_fd(struct tarsrc *t)
{
	int *fd = t->in_place ? &t->tree->spool_fd : &t->tree->data_fd;

	if (*fd < 0) {
		if ((*fd = erofs_scratch_open(t->opts->image)) < 0) {
			int err = *fd;

			*fd = -1;
			return err;
		}
		if (!(t->copy_buf = malloc(COPY_BUFFER)))
			return -ENOMEM;
	}
	return *fd;
}

/* Copies len bytes of the entry's data to pos in the spool, zeros as holes. */
static int spool_copy(struct tarsrc *t, int fd, uint64_t pos, uint64_t len)
{
	for (uint64_t done = 0; done < len; ) {
		size_t n = len - done < COPY_BUFFER ? (size_t)(len - done) : COPY_BUFFER;
		int err = erofs_tar_read_data(t->tar, t->copy_buf, n);

		if (err)
			return err;
		if (!erofs_is_zero(t->copy_buf, n) &&
		    (err = erofs_pwrite_all(fd, t->copy_buf, n, pos + done))) {
			erofs_err("temporary copy of the tar's files: write failed: %s",
				  strerror(-err));
			return err;
		}
		done += n;
	}
	return 0;
}

/* Copies the entry's data into the spool, or notes where it is in the tar. */
static int place_data(struct tarsrc *t, struct erofs_inode *inode, uint64_t size)
{
	const uint32_t align = 4096;	/* whole pages: copy_file_range can share them */
	const struct erofs_tar_entry *e = t->e;
	uint64_t pos;
	int fd, err;

	if (t->opts->tar_headerball)	/* no data: all zeros, one hole */
		return erofs_inode_make_hole(inode, size, t->opts->blkszbits);
	if (t->in_place && !e->sparse) {
		inode->data_pos = t->base + e->data_offset;
		return 0;
	}
	if (t->opts->tar_index) {
		/* an index image only points into the tar: a stream's offsets
		 * are the tar's, and its data is skipped, never copied (a sparse
		 * entry is marked spooled so that tarindex.c refuses it) */
		inode->data_pos = e->sparse ? EROFS_DATA_SPOOLED : e->data_offset;
		return 0;
	}
	if ((fd = spool_fd(t)) < 0)
		return fd;
	pos = (t->spool_end + align - 1) / align * align;
	inode->data_pos = pos | (t->in_place ? EROFS_DATA_SPOOLED : 0);
	if (!e->sparse && (err = spool_copy(t, fd, pos, size)))
		return err;
	for (size_t i = 0; e->sparse && i < e->nr_sparse; i++)
		if ((err = spool_copy(t, fd, pos + e->sparse[i].offset, e->sparse[i].len)))
			return err;
	t->spool_end = pos + size;
	if (ftruncate(fd, (off_t)t->spool_end)) {	/* zeros at the end read back */
		err = errno;
		erofs_err("temporary copy of the tar's files: %s", strerror(err));
		return -err;
	}
	return 0;
}

static int put_xattrs(struct tarsrc *t, struct erofs_inode *inode)
{
	const struct erofs_tar_entry *e = t->e;
	int err = 0;

	if (t->opts->xattr_tolerance < 0)
		return 0;
	for (size_t i = 0; i < e->nr_xattrs && !err; i++)
		err = erofs_xattrs_put(&inode->xattrs, e->xattrs[i].name, e->xattrs[i].value,
				       e->xattrs[i].value_len, e->path);
	return err;
}

static uint16_t type_bits(char type)
{
	switch (type) {
	case '2': return S_IFLNK;
	case '3': return S_IFCHR;
	case '4': return S_IFBLK;
	case '5': return S_IFDIR;
	case '6': return S_IFIFO;
	default: return S_IFREG;
	}
}

/* Fills in an inode from the entry (a directory given again keeps its children). */
static int fill(struct tarsrc *t, struct erofs_inode *inode, bool whiteout)
{
	const struct erofs_tar_entry *e = t->e;
	int err;

	/* a whiteout has no permissions, as erofs-utils and overlayfs make them */
	inode->mode = (uint16_t)(whiteout ? S_IFCHR : type_bits(e->type) | (e->mode & 07777));
	erofs_set_owner(t->opts, inode, e->uid, e->gid);
	erofs_set_mtime(t->opts, inode, e->mtime, e->mtime_nsec);
	if (inode->mtime > t->newest_mtime ||
	    (inode->mtime == t->newest_mtime && inode->mtime_nsec > t->newest_nsec)) {
		t->newest_mtime = inode->mtime;
		t->newest_nsec = inode->mtime_nsec;
	}
	if (whiteout)
		return put_xattrs(t, inode);
	switch (e->type) {
	case '0':
		inode->size = e->size;
		if (e->size && (err = place_data(t, inode, e->size)))
			return err;
		break;
	case '2':
		if (!e->link[0])
			return entry_error(t, "symlink with an empty target");
		if (strlen(e->link) >= PATH_MAX)
			return entry_error(t, "symlink target longer than PATH_MAX");
		if (!(inode->symlink = strdup(e->link)))
			return -ENOMEM;
		inode->size = strlen(e->link);
		break;
	case '3': case '4':
		inode->rdev_major = e->rdev_major;
		inode->rdev_minor = e->rdev_minor;
		break;
	}
	return put_xattrs(t, inode);
}

/*
 * --incremental: the link's target is only in the image added to.  It is
 * copied up into this layer, under its own name, so that the merge keeps
 * the two names one inode (as overlayfs copies up before linking).
 */
static int copy_up(struct tarsrc *t, struct erofs_inode **out)
{
	const uint32_t align = 4096;
	struct erofs_inode *dir, *inode;
	struct erofs_dentry *d;
	const char *last;
	size_t len;
	uint64_t size, pos = 0;
	int fd = -1, err, found;

	if (!t->copy_up && (err = erofs_copy_up_open(t->opts, t->opts->copy_up_from, &t->copy_up)))
		return err;
	found = erofs_copy_up_find(t->copy_up, t->e->link, &size);
	if (found <= 0)
		return found ? found : entry_error(t, "hard link to a missing file or to a directory "
						      "(in this tar and in the image added to)");
	if ((err = walk(t, t->e->link, true, &dir, &last, &len)))
		return err;
	if (!last)
		return entry_error(t, "hard link to the root");
	if (!(inode = erofs_builder_new_inode(&t->b)))
		return -ENOMEM;
	if (size) {
		if ((fd = spool_fd(t)) < 0)
			return fd;
		pos = (t->spool_end + align - 1) / align * align;
		inode->data_pos = pos | (t->in_place ? EROFS_DATA_SPOOLED : 0);
		t->spool_end = pos + size;
	}
	if ((err = erofs_copy_up_fill(t->copy_up, inode, fd, pos)))
		return err;
	if (size && ftruncate(fd, (off_t)t->spool_end)) {
		err = errno;
		erofs_err("temporary copy of the tar's files: %s", strerror(err));
		return -err;
	}
	if (!(d = erofs_builder_lookup(&t->b, dir, last, len, true)))
		return -ENOMEM;
	d->inode = inode;
	*out = inode;
	return 0;
}

/* The inode a hard link's target names now. */
static int link_target(struct tarsrc *t, struct erofs_inode **inode)
{
	struct erofs_inode *dir;
	struct erofs_dentry *target = NULL;
	const char *last;
	size_t len;
	int err = walk(t, t->e->link, false, &dir, &last, &len);

	if (err == -ENOENT && t->opts->copy_up_from)
		return copy_up(t, inode);
	if (err == -ENOENT || (!err && !last))
		return entry_error(t, "hard link to a missing file or to a directory");
	if (err)
		return err;
	target = erofs_builder_lookup(&t->b, dir, last, len, false);
	if ((!target || !target->inode) && t->opts->copy_up_from)
		return copy_up(t, inode);
	if (!target || !target->inode || erofs_inode_is_dir(target->inode))
		return entry_error(t, "hard link to a missing file or to a directory");
	*inode = target->inode;
	return 0;
}

static int add_entry(struct tarsrc *t, const struct erofs_tar_entry *e)
{
	struct erofs_inode *dir, *inode;
	struct erofs_dentry *d;
	const char *last;
	size_t len;
	bool whiteout = false;
	int err;

	t->e = e;
	if ((err = walk(t, e->path, true, &dir, &last, &len)))
		return err;
	if (!last) {		/* "." or "./": the root */
		if (e->type != '5')
			return entry_error(t, "the root is not a directory");
		t->root_given = true;
		return fill(t, dir, false);
	}
	if (t->opts->aufs && len == strlen(OPAQUE_MARKER) && !memcmp(last, OPAQUE_MARKER, len))
		return erofs_xattrs_put(&dir->xattrs, EROFS_XATTR_OVL_OPAQUE, "y", 1, e->path);
	if (t->opts->aufs && len > 4 && !memcmp(last, WHITEOUT_PREFIX, 4)) {
		last += 4;
		len -= 4;
		whiteout = true;
		if (!t->opts->ovlfs_strip &&
		    (err = erofs_xattrs_put(&dir->xattrs, EROFS_XATTR_OVL_ORIGIN, "", 0, e->path)))
			return err;
	}
	/* (no name is made before its inode: the tree never names nothing) */
	if (e->type == '1') {
		if ((err = link_target(t, &inode)))
			return err;
		if (!(d = erofs_builder_lookup(&t->b, dir, last, len, true)))
			return -ENOMEM;
		d->inode = inode;
		return 0;
	}
	d = erofs_builder_lookup(&t->b, dir, last, len, false);
	if (d && erofs_inode_is_dir(d->inode) && e->type == '5' && !whiteout)
		return fill(t, d->inode, false);	/* tar -x updates the directory */
	if (!(inode = erofs_builder_new_inode(&t->b)) || !(d = erofs_builder_lookup(&t->b, dir, last, len, true)))
		return -ENOMEM;
	d->inode = inode;	/* what the name held before goes (freed at the end) */
	return fill(t, inode, whiteout);
}

static int open_input(struct tarsrc *t)
{
	const char *source = t->opts->source;

	t->name = t->opts->source_shown ? t->opts->source_shown : source ? source : "(stdin)";
	t->in_fd = source ? open(source, O_RDONLY | O_CLOEXEC) : fcntl(0, F_DUPFD_CLOEXEC, 0);
	if (t->in_fd < 0) {
		int err = errno;

		erofs_err("%s: cannot open: %s", t->name, strerror(err));
		return -err;
	}
	return 0;
}

static int read_tar(struct tarsrc *t)
{
	struct erofs_tree *tree = t->tree;
	struct erofs_tar_entry e;
	int err;

	if ((err = erofs_tar_open(&t->tar, t->in_fd, t->opts->tar_decoder, t->name)))
		return err;
	if (t->opts->tar_headerball)
		erofs_tar_headers_only(t->tar);
	if (t->opts->tar_dump_file) {
		t->dump_fd = open(t->opts->tar_dump_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				  0644);
		if (t->dump_fd < 0) {
			err = errno;
			erofs_err("%s: cannot create: %s", t->opts->tar_dump_file, strerror(err));
			return -err;
		}
		erofs_tar_dump_decoded(t->tar, t->dump_fd);
	}
	t->in_place = erofs_tar_in_place(t->tar, &t->base);
	tree->data_in_one_file = true;
	tree->data_fd = tree->spool_fd = -1;
	if (t->in_place) {
		tree->data_fd = t->in_fd;
		t->in_fd = -1;		/* the tree's now */
	}
	if (!(tree->root = erofs_builder_new_inode(&t->b)))
		return -ENOMEM;
	tree->root->parent = tree->root;
	tree->root->mode = S_IFDIR | 0755;
	erofs_set_owner(t->opts, tree->root, 0, 0);
	t->newest_mtime = INT64_MIN;
	while ((err = erofs_tar_next(t->tar, &e)) > 0)
		if ((err = add_entry(t, &e)))
			break;
	t->e = NULL;
	/* --tar=i from a stream: the device table needs the tar's size; the
	 * decoded stream's copy is whole, past the archive's end marker */
	if (!err && ((t->opts->tar_index && !t->in_place) || t->dump_fd >= 0))
		err = erofs_tar_drain(t->tar, &tree->tar_size);
	if (!err && !t->root_given)	/* dated as the newest entry */
		erofs_set_mtime(t->opts, tree->root,
				t->newest_mtime == INT64_MIN ? 0 : t->newest_mtime,
				t->newest_mtime == INT64_MIN ? 0 : t->newest_nsec);
	return err;
}

/* --sort=none: the regular files with data in the tar's order, not the tree's. */
static size_t files_in_tar_order(const struct tarsrc *t, struct erofs_inode **files)
{
	size_t nr = 0;

	for (size_t i = 0; i < t->b.nr_all; i++)
		if (erofs_inode_is_reg(t->b.all[i]) && t->b.all[i]->size)
			files[nr++] = t->b.all[i];
	return nr;
}

int erofs_tar_source_run(void *arg, erofs_file_sink sink, void *pipeline)
{
	struct erofs_tar_source *src = arg;
	struct tarsrc t = {
		.opts = src->opts, .tree = src->tree, .in_fd = -1, .dump_fd = -1,
		.b = { .opts = src->opts, .tree = src->tree },
	};
	struct erofs_inode **files = NULL;
	size_t nr = 0;
	int err = open_input(&t);

	if (!err)
		err = read_tar(&t);
	erofs_tar_close(t.tar);
	free(t.copy_buf);
	if (err)
		erofs_builder_release(&t.b, true);
	if (!err)
		err = erofs_builder_finish(&t.b, &files, &nr);
	if (!err && t.opts->tar_sort_none)
		nr = files_in_tar_order(&t, files);
	if (!err && t.opts->tar_headerball)
		nr = 0;		/* every file is a hole already: nothing to read */
	if (!err)
		err = erofs_builder_hand_over(&t.b, files, nr, sink, pipeline);
	if (err == -ENOMEM)
		erofs_err("out of memory while reading %s", t.name ? t.name : "the tar");
	free(files);
	erofs_builder_release(&t.b, false);
	erofs_copy_up_close(t.copy_up);
	if (t.in_fd >= 0)
		close(t.in_fd);
	if (t.dump_fd >= 0 && close(t.dump_fd) && !err) {
		err = -errno;
		erofs_err("%s: %s", src->opts->tar_dump_file, strerror(-err));
	}
	return err;
}
