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
#include "erofs/source/scan.h"
#include "erofs/source/tar.h"
#include "erofs/source/tarsrc.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

#define HAND_OVER_BATCH	64
#define COPY_BUFFER	(1u << 20)
#define WHITEOUT_PREFIX	".wh."
#define OPAQUE_MARKER	".wh..wh..opq"
#define XATTR_OPAQUE	"trusted.overlay.opaque"
#define XATTR_ORIGIN	"trusted.overlay.origin"

/* A name in a directory being built: dir->children[idx]. */
struct slot {
	struct erofs_inode *dir;
	uint32_t idx;
	uint32_t hash;
};

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
	struct slot *slots;		/* (directory, name) -> its entry */
	size_t mask, used;
	struct erofs_inode **all;	/* every inode made, in the tar's order */
	size_t nr_all, cap_all;
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

static uint32_t name_hash(const struct erofs_inode *dir, const char *name, size_t len)
{
	uint64_t h = (uint64_t)(uintptr_t)dir * 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static struct slot *slot_find(struct tarsrc *t, struct erofs_inode *dir, const char *name,
			      size_t len, uint32_t hash)
{
	for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
		struct slot *s = &t->slots[i];
		const struct erofs_dentry *d;

		if (!s->dir)
			return s;
		d = &s->dir->children[s->idx];
		if (s->hash == hash && s->dir == dir && d->name_len == len &&
		    !memcmp(d->name, name, len))
			return s;
	}
}

static int slots_grow(struct tarsrc *t)
{
	struct tarsrc bigger = { .mask = t->slots ? t->mask * 2 + 1 : 4095 };

	bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		const struct slot *s = &t->slots[i];
		size_t j;

		if (!s->dir)
			continue;
		for (j = s->hash & bigger.mask; bigger.slots[j].dir; j = (j + 1) & bigger.mask)
			;
		bigger.slots[j] = *s;
	}
	free(t->slots);
	t->slots = bigger.slots;
	t->mask = bigger.mask;
	return 0;
}

static struct erofs_inode *new_inode(struct tarsrc *t)
{
	struct erofs_inode *inode;

	if (t->nr_all == t->cap_all) {
		size_t cap = t->cap_all ? t->cap_all * 2 : 1024;
		struct erofs_inode **bigger = realloc(t->all, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		t->all = bigger;
		t->cap_all = cap;
	}
	inode = calloc(1, sizeof(*inode));
	if (inode)
		t->all[t->nr_all++] = inode;
	return inode;
}

/* The entry for name in dir; *inode NULL when there is none yet. */
static struct erofs_dentry *lookup(struct tarsrc *t, struct erofs_inode *dir, const char *name,
				   size_t len, bool create)
{
	uint32_t hash = name_hash(dir, name, len);
	struct slot *s;
	struct erofs_dentry *d;
	char *copy;

	if (!t->slots && slots_grow(t))
		return NULL;
	s = slot_find(t, dir, name, len, hash);
	if (s->dir)
		return &dir->children[s->idx];
	if (!create)
		return NULL;
	if ((t->used + 1) * 2 > t->mask) {
		if (slots_grow(t))
			return NULL;
		s = slot_find(t, dir, name, len, hash);
	}
	/* children grow in powers of two while the tree is built */
	if (!(dir->nr_children & (dir->nr_children - 1)) || dir->nr_children < 4) {
		uint32_t cap = dir->nr_children < 4 ? 4 : dir->nr_children * 2;
		struct erofs_dentry *bigger = realloc(dir->children, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		dir->children = bigger;
	}
	copy = strndup(name, len);
	if (!copy)
		return NULL;
	d = &dir->children[dir->nr_children];
	*d = (struct erofs_dentry){ .name = copy, .name_len = (uint16_t)len };
	*s = (struct slot){ .dir = dir, .idx = dir->nr_children++, .hash = hash };
	t->used++;
	return d;
}

/*
 * A directory the tar did not list (yet): 0755, owned as its parent, dated
 * as the entry below it (the root's own date is only known at the end).
 */
static struct erofs_inode *implicit_dir(struct tarsrc *t, struct erofs_inode *parent)
{
	struct erofs_inode *dir = new_inode(t);

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
		d = lookup(t, at, p, len, false);
		if (!d && !create)
			return -ENOENT;
		if (!d) {
			struct erofs_inode *made = implicit_dir(t, at);

			if (!made || !(d = lookup(t, at, p, len, true)))
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

/* The inode a hard link's target names now. */
static int link_target(struct tarsrc *t, struct erofs_inode **inode)
{
	struct erofs_inode *dir;
	struct erofs_dentry *target = NULL;
	const char *last;
	size_t len;
	int err = walk(t, t->e->link, false, &dir, &last, &len);

	if (err == -ENOENT || (!err && !last))
		return entry_error(t, "hard link to a missing file or to a directory");
	if (err)
		return err;
	target = lookup(t, dir, last, len, false);
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
		return erofs_xattrs_put(&dir->xattrs, XATTR_OPAQUE, "y", 1, e->path);
	if (t->opts->aufs && len > 4 && !memcmp(last, WHITEOUT_PREFIX, 4)) {
		last += 4;
		len -= 4;
		whiteout = true;
		if (!t->opts->ovlfs_strip &&
		    (err = erofs_xattrs_put(&dir->xattrs, XATTR_ORIGIN, "", 0, e->path)))
			return err;
	}
	/* (no name is made before its inode: the tree never names nothing) */
	if (e->type == '1') {
		if ((err = link_target(t, &inode)))
			return err;
		if (!(d = lookup(t, dir, last, len, true)))
			return -ENOMEM;
		d->inode = inode;
		return 0;
	}
	d = lookup(t, dir, last, len, false);
	if (d && erofs_inode_is_dir(d->inode) && e->type == '5' && !whiteout)
		return fill(t, d->inode, false);	/* tar -x updates the directory */
	if (!(inode = new_inode(t)) || !(d = lookup(t, dir, last, len, true)))
		return -ENOMEM;
	d->inode = inode;	/* what the name held before goes (freed at the end) */
	return fill(t, inode, whiteout);
}

static bool is_whiteout(const struct erofs_inode *inode)
{
	return (inode->mode & S_IFMT) == S_IFCHR && !inode->rdev_major && !inode->rdev_minor;
}

static int compare_dentries(const void *a, const void *b)
{
	const struct erofs_dentry *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->name_len < y->name_len ? x->name_len : y->name_len);

	return c ? c : (int)x->name_len - (int)y->name_len;
}

/* A directory's final form: whiteouts stripped if asked, names sorted into one arena. */
static int seal_dir(struct tarsrc *t, struct erofs_inode *dir)
{
	size_t total = 0, used = 0;
	uint32_t kept = 0;
	char *arena;

	for (uint32_t i = 0; i < dir->nr_children; i++) {
		struct erofs_dentry *d = &dir->children[i];

		if (t->opts->ovlfs_strip && is_whiteout(d->inode)) {
			free((char *)d->name);
			continue;
		}
		dir->children[kept++] = *d;
		total += d->name_len + 1u;
	}
	dir->nr_children = kept;
	if (kept)	/* (an empty directory has no array) */
		qsort(dir->children, kept, sizeof(*dir->children), compare_dentries);
	arena = malloc(total ? total : 1);
	if (!arena)
		return -ENOMEM;
	for (uint32_t i = 0; i < kept; i++) {
		struct erofs_dentry *d = &dir->children[i];

		memcpy(arena + used, d->name, d->name_len + 1u);
		free((char *)d->name);
		d->name = arena + used;
		used += d->name_len + 1u;
	}
	dir->names = arena;
	return 0;
}

static void free_unreached(struct erofs_inode *inode)
{
	for (uint32_t i = 0; erofs_inode_is_dir(inode) && i < inode->nr_children; i++)
		free((char *)inode->children[i].name);
	free(inode->children);
	if ((inode->mode & S_IFMT) == S_IFLNK)
		free(inode->symlink);
	erofs_xattrs_free(inode->xattrs);
	free(inode);
}

/*
 * Breadth first from the root: seals each directory, gives each inode its
 * first name, parent and depth, counts links; then frees what no name
 * reaches (replaced entries).  files: the regular files with data, in
 * breadth-first order.
 */
static int finish_tree(struct tarsrc *t, struct erofs_inode ***files, size_t *nr_files)
{
	struct erofs_tree *tree = t->tree;
	struct erofs_inode **queue = malloc((t->nr_all + 1) * sizeof(*queue));
	struct erofs_inode **regular = malloc((t->nr_all + 1) * sizeof(*regular));
	size_t head = 0, tail = 0, nr = 0;
	int err = 0;

	if (!queue || !regular) {
		free(queue);
		free(regular);
		return -ENOMEM;
	}
	queue[tail++] = tree->root;
	tree->root->nid = 1;		/* "reached", until the planner numbers it */
	tree->nr_dirs = 1;
	while (head < tail && !err) {
		struct erofs_inode *dir = queue[head++];

		if ((err = seal_dir(t, dir)))
			break;
		dir->nlink = 2;
		for (uint32_t i = 0; i < dir->nr_children; i++) {
			struct erofs_dentry *d = &dir->children[i];
			struct erofs_inode *child = d->inode;

			if (erofs_inode_is_dir(child))
				dir->nlink++;
			if (child->nid) {	/* another name of a hard-linked file */
				child->nlink++;
				continue;
			}
			child->nid = 1;
			child->parent = dir;
			child->dentry = d;
			child->depth = dir->depth + 1;
			child->nlink = 1;
			if (erofs_inode_is_dir(child)) {
				queue[tail++] = child;
				tree->nr_dirs++;
			} else if (erofs_inode_is_reg(child) && child->size) {
				regular[nr++] = child;
			}
		}
	}
	free(queue);
	for (size_t i = 0, n = t->nr_all, kept = t->nr_all = 0; i < n; i++) {
		struct erofs_inode *inode = t->all[i];

		if (!inode->nid) {
			free_unreached(inode);
			continue;
		}
		inode->nid = 0;
		if (t->opts->ovlfs_strip)
			erofs_xattrs_remove(&inode->xattrs, XATTR_OPAQUE);
		erofs_xattrs_sort(inode->xattrs);
		inode->ibody_bound = erofs_xattr_ibody_max(inode->xattrs);
		t->all[kept++] = inode;
		t->nr_all = kept;
	}
	if (err) {
		free(regular);
		return err;
	}
	*files = regular;
	*nr_files = nr;
	return 0;
}

/* Hands the files over, in the tree's order or (--sort=none) the tar's. */
static int hand_over(struct tarsrc *t, struct erofs_inode **files, size_t nr,
		     erofs_file_sink sink, void *pipeline)
{
	const struct erofs_build_options *opts = t->opts;
	struct erofs_tree *tree = t->tree;
	struct erofs_size_set sizes = { 0 };
	bool sizes_wanted = opts->share_identical_files && !opts->chunkbits;
	size_t done = 0;
	int err = 0;

	if (opts->tar_sort_none) {
		nr = 0;
		for (size_t i = 0; i < t->nr_all; i++)
			if (erofs_inode_is_reg(t->all[i]) && t->all[i]->size)
				files[nr++] = t->all[i];
	}
	for (size_t i = 0; i < t->nr_all; i++)
		if (erofs_inode_is_reg(t->all[i]))
			tree->nr_files++;
	for (size_t i = 0; i < nr && !err; i++) {
		struct erofs_inode *inode = files[i];
		char *path = NULL;

		tree->data_bytes += inode->size;
		if (opts->nr_hints && !(path = erofs_inode_path(inode))) {
			err = -ENOMEM;
			break;
		}
		erofs_choose_compression(opts, inode, path ? path : "");
		free(path);
		if (sizes_wanted && inode->size > 1u << opts->blkszbits &&
		    (err = erofs_size_seen(&sizes, inode->size, &inode->size_seen)))
			break;
		if (i + 1 - done == HAND_OVER_BATCH || i + 1 == nr) {
			err = sink(pipeline, files + done, i + 1 - done);
			done = i + 1;
		}
	}
	free(sizes.slots);
	return err;
}

static int open_input(struct tarsrc *t)
{
	const char *source = t->opts->source;

	t->name = source ? source : "(stdin)";
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
	if (!(tree->root = new_inode(t)))
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

int erofs_tar_source_run(void *arg, erofs_file_sink sink, void *pipeline)
{
	struct erofs_tar_source *src = arg;
	struct tarsrc t = { .opts = src->opts, .tree = src->tree, .in_fd = -1, .dump_fd = -1 };
	struct erofs_inode **files = NULL;
	size_t nr = 0;
	int err = open_input(&t);

	if (!err)
		err = read_tar(&t);
	erofs_tar_close(t.tar);
	free(t.copy_buf);
	free(t.slots);
	if (err) {	/* the tree is half built: its names are not sealed yet */
		for (size_t i = 0; i < t.nr_all; i++)
			free_unreached(t.all[i]);
		t.nr_all = 0;
		t.tree->root = NULL;
	}
	if (!err)
		err = finish_tree(&t, &files, &nr);
	if (!err)
		err = hand_over(&t, files, nr, sink, pipeline);
	if (err == -ENOMEM)
		erofs_err("out of memory while reading %s", t.name ? t.name : "the tar");
	free(files);
	free(t.all);
	if (t.in_fd >= 0)
		close(t.in_fd);
	if (t.dump_fd >= 0 && close(t.dump_fd) && !err) {
		err = -errno;
		erofs_err("%s: %s", src->opts->tar_dump_file, strerror(-err));
	}
	return err;
}
