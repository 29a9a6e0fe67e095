// SPDX-License-Identifier: MIT
/* The directory source (see include/erofs/source/scan.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "erofs/source/android.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/source/scan.h"
#include "erofs/source/xattr.h"

/* Files are handed to the pipeline this many at a time, or when a directory is done. */
#define HAND_OVER_BATCH	64

/* Hard-link lookup: (st_dev, st_ino) -> inode, open addressing. */
struct link_slot {
	dev_t dev;
	ino_t ino;
	struct erofs_inode *inode;
};

struct link_table {
	struct link_slot *slots;
	size_t mask, used;
};


struct scan {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	erofs_file_sink sink;
	void *pipeline;
	struct erofs_inode *found[HAND_OVER_BATCH];	/* files not handed over yet */
	size_t nr_found;
	struct erofs_android *android;
	struct link_table links;
	struct erofs_size_set sizes;
	bool sizes_wanted;		/* whole-file dedup is on */
	char *path;			/* the current entry's path, relative */
	size_t path_len, path_cap;
	size_t source_len;		/* strlen(opts->source) */
	/* the directory being scanned: its path is path[0, dir_len) */
	const struct erofs_inode *dir;
	size_t dir_len;
	const struct erofs_inode **chain;	/* scratch for moving between directories */
	size_t chain_cap;
	/* directories found and not scanned yet: the next to scan is on top */
	struct erofs_inode **pending;
	size_t nr_pending, pending_cap;
	struct erofs_dir_cache dirs;	/* opens them through their parents */
};

static size_t link_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev;

	return (size_t)(h ^ (h >> 29));
}

static struct link_slot *link_find(struct link_table *t, dev_t dev, ino_t ino)
{
	size_t i = link_hash(dev, ino) & t->mask;

	while (t->slots[i].inode && (t->slots[i].dev != dev || t->slots[i].ino != ino))
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static int link_grow(struct link_table *t)
{
	struct link_table bigger = { .mask = t->slots ? t->mask * 2 + 1 : 255 };

	bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++)
		if (t->slots[i].inode)
			*link_find(&bigger, t->slots[i].dev, t->slots[i].ino) = t->slots[i];
	bigger.used = t->used;
	free(t->slots);
	*t = bigger;
	return 0;
}

int erofs_size_seen(struct erofs_size_set *s, uint64_t size, bool *seen)
{
	size_t i;

	if ((s->used + 1) * 2 > s->mask) {
		struct erofs_size_set bigger = { .mask = s->slots ? s->mask * 2 + 1 : 4095,
					   .used = s->used };

		bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (size_t j = 0; s->slots && j <= s->mask; j++) {
			if (!s->slots[j])
				continue;
			for (i = link_hash(0, s->slots[j]) & bigger.mask; bigger.slots[i];
			     i = (i + 1) & bigger.mask)
				;
			bigger.slots[i] = s->slots[j];
		}
		free(s->slots);
		*s = bigger;
	}
	for (i = link_hash(0, size + 1) & s->mask; s->slots[i] && s->slots[i] != size + 1;
	     i = (i + 1) & s->mask)
		;
	*seen = s->slots[i] != 0;
	if (!*seen) {
		s->slots[i] = size + 1;
		s->used++;
	}
	return 0;
}

/* Sets the path buffer to the directory's path (len bytes) + "/" + name. */
static int set_path(struct scan *s, size_t len, const char *name)
{
	size_t nl = strlen(name), need = len + 1 + nl + 1;

	if (need > s->path_cap) {
		char *bigger = realloc(s->path, need * 2);

		if (!bigger)
			return -ENOMEM;
		s->path = bigger;
		s->path_cap = need * 2;
	}
	if (len)
		s->path[len++] = '/';
	memcpy(s->path + len, name, nl + 1);
	s->path_len = len + nl;
	return 0;
}

/* What a directory's name adds to the path of its parent ("/name", or "name" at the top). */
static size_t name_part(const struct erofs_inode *dir)
{
	return dir->dentry->name_len + (dir->depth > 1);
}

/*
 * Makes the path buffer hold dir's path, moving from the directory it held:
 * as many components change as lie between the two, so walking the tree in
 * order costs time linear in its size, however deep it is.
 */
static int chain_push(struct scan *s, size_t n, const struct erofs_inode *dir)
{
	if (n == s->chain_cap) {
		size_t cap = s->chain_cap ? s->chain_cap * 2 : 64;
		const struct erofs_inode **bigger = realloc(s->chain, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		s->chain = bigger;
		s->chain_cap = cap;
	}
	s->chain[n] = dir;
	return 0;
}

static int set_dir_path(struct scan *s, const struct erofs_inode *dir)
{
	const struct erofs_inode *from = s->dir, *to = dir;
	size_t len = s->dir_len, n = 0;
	int err;

	/* up to the deepest common ancestor, noting the way down to dir */
	while (from->depth > to->depth) {
		len -= name_part(from);
		from = from->parent;
	}
	while (to->depth > from->depth) {
		if ((err = chain_push(s, n++, to)))
			return err;
		to = to->parent;
	}
	while (from != to) {
		len -= name_part(from);
		from = from->parent;
		if ((err = chain_push(s, n++, to)))
			return err;
		to = to->parent;
	}
	while (n) {
		if ((err = set_path(s, len, s->chain[--n]->dentry->name)))
			return err;
		len = s->path_len;
	}
	if ((err = set_path(s, len, "")))	/* (makes room; a name of "" adds nothing) */
		return err;
	s->path[len] = '\0';
	s->path_len = s->dir_len = len;
	s->dir = dir;
	return 0;
}

static bool is_excluded(const struct erofs_build_options *opts, const char *relpath)
{
	for (size_t i = 0; i < opts->nr_excludes; i++) {
		const struct erofs_exclude *ex = &opts->excludes[i];

		if (ex->path ? !strcmp(ex->path, relpath)
			     : !regexec(&ex->regex, relpath, 0, NULL, 0))
			return true;
	}
	return false;
}

static void apply_owner_and_time(const struct erofs_build_options *opts,
				 struct erofs_inode *inode, const struct stat *st)
{
	erofs_set_owner(opts, inode, st->st_uid, st->st_gid);
	erofs_set_mtime(opts, inode, st->st_mtim.tv_sec, (uint32_t)st->st_mtim.tv_nsec);
}

static int read_symlink(const struct scan *s, int dirfd, const char *name, off_t size,
			struct erofs_inode *inode)
{
	/* Linux caps targets at PATH_MAX - 1; st_size can be 0 on procfs-likes */
	size_t cap = size > 0 ? (size_t)size + 1 : 4096;
	char *target = malloc(cap);
	ssize_t n;

	if (!target)
		return -ENOMEM;
	n = readlinkat(dirfd, name, target, cap);
	if (n < 0 || (size_t)n >= cap) {
		int err = n < 0 ? errno : EOVERFLOW;

		erofs_err("%s: cannot read symlink: %s", s->path, strerror(err));
		free(target);
		return -err;
	}
	target[n] = '\0';
	inode->symlink = target;
	inode->size = (uint64_t)n;
	return 0;
}

void erofs_choose_compression(const struct erofs_build_options *opts,
			      struct erofs_inode *inode, const char *path)
{
	inode->pcluster_size = 0;
	inode->algorithm = 0;
	if (opts->compressor == EROFS_COMPRESS_NONE || !inode->size ||
	    (inode->size <= 1u << opts->blkszbits && !opts->ztailpacking && !opts->fragments))
		return;
	for (size_t i = 0; i < opts->nr_hints; i++)
		if (!regexec(&opts->hints[i].regex, path, 0, NULL, 0)) {
			inode->pcluster_size = opts->hints[i].pcluster_size;
			inode->algorithm = (uint8_t)opts->hints[i].algorithm;
			return;
		}
	inode->pcluster_size = opts->pcluster_size;
}

static int compare_offsets(const void *a, const void *b, void *arena)
{
	return strcmp((const char *)arena + *(const size_t *)a,
		      (const char *)arena + *(const size_t *)b);
}

/* Reads a directory's names into one arena, sorted by bytes, without "." and "..". */
static int read_names(int dirfd, const char *display, char **arena_out,
		      size_t **offsets_out, size_t *count_out)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char *arena = NULL;
	size_t *offsets = NULL, count = 0, cap = 0, used = 0, arena_cap = 0;
	struct dirent *de;
	int err = 0;

	if (!d) {
		err = errno;
		if (fd >= 0)
			close(fd);
		erofs_err("%s: cannot read directory: %s", display, strerror(err));
		return -err;
	}
	errno = 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name) + 1;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (count == cap) {
			size_t *bigger = realloc(offsets, (cap = cap ? cap * 2 : 16) * sizeof(*offsets));

			if (!bigger) {
				err = ENOMEM;
				break;
			}
			offsets = bigger;
		}
		if (used + len > arena_cap) {
			char *bigger = realloc(arena, arena_cap = (used + len) * 2);

			if (!bigger) {
				err = ENOMEM;
				break;
			}
			arena = bigger;
		}
		memcpy(arena + used, de->d_name, len);
		offsets[count++] = used;
		used += len;
		errno = 0;
	}
	if (!err && errno) {
		err = errno;
		erofs_err("%s: cannot read directory: %s", display, strerror(err));
	}
	closedir(d);
	if (err) {
		free(arena);
		free(offsets);
		return -err;
	}
	/* by name bytes (strcmp compares unsigned bytes; names hold no NUL) */
	if (count > 1)	/* an empty directory has no array: qsort_r wants one */
		qsort_r(offsets, count, sizeof(*offsets), compare_offsets, arena);
	*arena_out = arena;
	*offsets_out = offsets;
	*count_out = count;
	return 0;
}

/*
 * A path the xattr calls (which have no *at form) can take for the entry:
 * the source's path and the entry's when that is short, which the kernel
 * resolves quickly, else the entry through its directory's fd in /proc.
 */
static const char *xattr_path_of(const struct scan *s, int dirfd, const char *name,
				 char buf[PATH_MAX])
{
	if (s->source_len + 1 + s->path_len < PATH_MAX) {
		memcpy(buf, s->opts->source, s->source_len);
		buf[s->source_len] = '/';
		memcpy(buf + s->source_len + 1, s->path, s->path_len + 1);
	} else {
		snprintf(buf, PATH_MAX, "/proc/self/fd/%d/%s", dirfd, name);
	}
	return buf;
}

static int hand_over(struct scan *s)
{
	int err = s->nr_found ? s->sink(s->pipeline, s->found, s->nr_found) : 0;

	s->nr_found = 0;
	return err;
}

/* Creates (or, for a hard link, finds) the inode behind one directory entry. */
static int scan_entry(struct scan *s, int dirfd, struct erofs_inode *dir, const char *name,
		      struct erofs_dentry *dentry, bool *descend)
{
	const struct erofs_build_options *opts = s->opts;
	struct erofs_inode *inode;
	struct link_slot *slot = NULL;
	struct stat st;
	char xattr_path[PATH_MAX];
	int err;

	*descend = false;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = errno;
		erofs_err("%s/%s: cannot stat: %s", opts->source, s->path, strerror(err));
		return -err;
	}
	dentry->name = name;
	dentry->name_len = (uint16_t)strlen(name);
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && !opts->hard_dereference) {
		if (s->links.used * 2 >= s->links.mask && (err = link_grow(&s->links)))
			return err;
		slot = link_find(&s->links, st.st_dev, st.st_ino);
		if (slot->inode) {
			slot->inode->nlink++;
			dentry->inode = slot->inode;
			return 0;
		}
	}

	inode = calloc(1, sizeof(*inode));
	if (!inode)
		return -ENOMEM;
	dentry->inode = inode;
	inode->parent = dir;
	inode->dentry = dentry;
	inode->depth = dir->depth + 1;
	inode->mode = (uint16_t)st.st_mode;
	inode->nlink = 1;
	apply_owner_and_time(opts, inode, &st);
	if (slot) {
		slot->dev = st.st_dev;
		slot->ino = st.st_ino;
		slot->inode = inode;
		s->links.used++;
	}

	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		inode->size = (uint64_t)st.st_size;
		s->tree->nr_files++;
		s->tree->data_bytes += inode->size;
		erofs_choose_compression(opts, inode, s->path);
		break;
	case S_IFLNK:
		if ((err = read_symlink(s, dirfd, name, st.st_size, inode)))
			return err;
		break;
	case S_IFCHR:
	case S_IFBLK:
		inode->rdev_major = major(st.st_rdev);
		inode->rdev_minor = minor(st.st_rdev);
		break;
	case S_IFDIR:
		s->tree->nr_dirs++;
		dir->nlink++;	/* the child's ".." */
		*descend = true;
		break;
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		erofs_err("%s/%s: unsupported file type 0%o", opts->source, s->path,
			  (unsigned int)(st.st_mode & S_IFMT));
		return -EINVAL;
	}

	if (opts->xattr_tolerance >= 0 &&
	    (err = erofs_xattrs_read(xattr_path_of(s, dirfd, name, xattr_path), s->path,
				     &inode->xattrs)))
		return err;
	if ((err = erofs_android_inode(s->android, inode, s->path)))
		return err;
	inode->ibody_bound = erofs_xattr_ibody_max(inode->xattrs);

	if (S_ISREG(st.st_mode) && inode->size) {
		if (s->sizes_wanted && inode->size > 1u << opts->blkszbits) {
			bool seen;

			if ((err = erofs_size_seen(&s->sizes, inode->size, &seen)))
				return err;
			inode->size_seen = seen;
		}
		s->found[s->nr_found++] = inode;
		if (s->nr_found == HAND_OVER_BATCH)
			return hand_over(s);
	}
	return 0;
}

static int push_pending(struct scan *s, struct erofs_inode *dir)
{
	if (s->nr_pending == s->pending_cap) {
		size_t cap = s->pending_cap ? s->pending_cap * 2 : 256;
		struct erofs_inode **bigger = realloc(s->pending, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		s->pending = bigger;
		s->pending_cap = cap;
	}
	s->pending[s->nr_pending++] = dir;
	return 0;
}

/* Scans one directory: its entries become inodes, its subdirectories are pushed. */
static int scan_dir(struct scan *s, struct erofs_inode *dir)
{
	char *arena = NULL;
	size_t *offsets = NULL, count = 0;
	int dirfd, err;

	if ((err = set_dir_path(s, dir)))
		return err;
	dirfd = erofs_tree_open_dir(s->tree, dir, &s->dirs);
	if (dirfd < 0) {
		err = -errno;
		erofs_err("%s/%s: cannot open directory: %s", s->opts->source, s->path,
			  strerror(-err));
		return err;
	}
	err = read_names(dirfd, s->dir_len ? s->path : s->opts->source, &arena, &offsets, &count);
	if (err)
		return err;
	dir->names = arena;
	dir->nlink = 2;
	dir->children = calloc(count ? count : 1, sizeof(*dir->children));
	if (!dir->children) {
		free(offsets);
		return -ENOMEM;
	}
	/* scan_entry() fills in, in order, the entries it keeps */
	for (size_t i = 0; i < count && !err; i++) {
		const char *name = arena + offsets[i];
		struct erofs_dentry *dentry = &dir->children[dir->nr_children];
		bool descend;

		if ((err = set_path(s, s->dir_len, name)))
			break;
		if (s->opts->nr_excludes && is_excluded(s->opts, s->path))
			continue;
		err = scan_entry(s, dirfd, dir, name, dentry, &descend);
		if (dentry->inode)
			dir->nr_children++;
		if (!err && descend)
			err = push_pending(s, dentry->inode);
	}
	free(offsets);
	return err ? err : hand_over(s);
}

/*
 * Depth first, the data's order: a directory's files, then the subtree of
 * each subdirectory in name order.  Neighbours in a directory tend to look
 * alike, and the packed inode compresses what lands side by side: against
 * breadth first (where a directory's subdirectories waited for all of its
 * cousins), the rootfs sample's -C131072 -Efragments images came out
 * 0.4-0.7% smaller with zstd and lzma.  erofs-utils 1.9.4 packs files in
 * this order too.  The planner still numbers inodes breadth first
 * (erofs_tree_list()).
 */
static int scan_tree(struct scan *s)
{
	int err = 0;

	while (s->nr_pending && !err) {
		const size_t below = --s->nr_pending;

		err = scan_dir(s, s->pending[below]);
		erofs_inodes_reverse(s->pending, below, s->nr_pending);
	}
	return err;
}

static int scan_root(struct scan *s)
{
	const struct erofs_build_options *opts = s->opts;
	struct erofs_tree *tree = s->tree;
	struct erofs_inode *root;
	struct stat st;
	int err;

	tree->source_dirfd = open(opts->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tree->source_dirfd < 0) {
		err = errno;
		erofs_err("%s: cannot open source directory: %s", opts->source,
			  err == ENOTDIR ? "not a directory" : strerror(err));
		return -err;
	}
	if (fstat(tree->source_dirfd, &st)) {
		err = errno;
		erofs_err("%s: cannot stat: %s", opts->source, strerror(err));
		return -err;
	}
	root = calloc(1, sizeof(*root));
	if (!root)
		return -ENOMEM;
	tree->root = root;
	root->parent = root;
	root->mode = (uint16_t)st.st_mode;
	apply_owner_and_time(opts, root, &st);
	tree->nr_dirs = 1;
	if (opts->xattr_tolerance >= 0 &&
	    (err = erofs_xattrs_read(opts->source, "/", &root->xattrs)))
		return err;
	if ((err = set_path(s, 0, "")) || (err = erofs_android_inode(s->android, root, "")))
		return err;
	root->ibody_bound = erofs_xattr_ibody_max(root->xattrs);
	s->dir = root;
	s->dir_len = 0;
	return push_pending(s, root);
}

int erofs_scan_run(void *arg, erofs_file_sink sink, void *pipeline)
{
	struct erofs_scan_source *src = arg;
	struct scan s = {
		.opts = src->opts, .tree = src->tree, .sink = sink, .pipeline = pipeline,
		.sizes_wanted = src->opts->share_identical_files && !src->opts->chunkbits,
		.source_len = strlen(src->opts->source),
	};
	int err;

	erofs_dir_cache_init(&s.dirs);
	err = erofs_android_begin(s.opts, &s.android);

	if (!err)
		err = scan_root(&s);
	if (!err)
		err = scan_tree(&s);
	if (err == -ENOMEM)
		erofs_err("out of memory while scanning the source");
	{
		int end_err = erofs_android_end(s.android, !err);

		if (!err)
			err = end_err;
	}
	free(s.links.slots);
	free(s.sizes.slots);
	free(s.path);
	free(s.chain);
	free(s.pending);
	erofs_dir_cache_release(&s.dirs);
	return err;
}
