// SPDX-License-Identifier: MIT
/*
 * Scanning the source tree into memory.  Directories are read relative to
 * open directory fds, so no path length limit applies and nothing the tree
 * contains is followed; every directory's children are sorted by name bytes,
 * so the image does not depend on readdir order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "erofs/chunk.h"
#include "erofs/compress.h"
#include "erofs/diag.h"
#include "erofs/format.h"
#include "erofs/tree.h"
#include "erofs/xattr.h"

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
	struct link_table links;
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

static char *join_path(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = malloc(dl + nl + 2);

	if (!p)
		return NULL;
	if (dl) {
		memcpy(p, dir, dl);
		p[dl++] = '/';
	}
	memcpy(p + dl, name, nl + 1);
	return p;
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

void erofs_set_owner(const struct erofs_build_options *opts, struct erofs_inode *inode,
		     uint32_t uid, uint32_t gid)
{
	inode->uid = uid + opts->uid_offset;
	inode->gid = gid + opts->gid_offset;
	if (opts->all_root)
		inode->uid = inode->gid = 0;
	if (opts->force_uid >= 0)
		inode->uid = (uint32_t)opts->force_uid;
	if (opts->force_gid >= 0)
		inode->gid = (uint32_t)opts->force_gid;
}

static void apply_owner_and_time(const struct erofs_build_options *opts,
				 struct erofs_inode *inode, const struct stat *st)
{
	erofs_set_owner(opts, inode, st->st_uid, st->st_gid);

	inode->mtime = st->st_mtim.tv_sec;
	inode->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	if (opts->time_policy == EROFS_TIME_FIXED ||
	    (opts->time_policy == EROFS_TIME_CLAMP && inode->mtime >= opts->fixed_time)) {
		inode->mtime = opts->fixed_time;
		inode->mtime_nsec = 0;
	}
}

static int read_symlink(int dirfd, const char *name, const char *path, off_t size,
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

		erofs_err("%s: cannot read symlink: %s", path, strerror(err));
		free(target);
		return -err;
	}
	target[n] = '\0';
	inode->symlink = target;
	inode->size = (uint64_t)n;
	return 0;
}

static int scan_dir(struct scan *s, int dirfd, struct erofs_inode *dir);

/* Creates (or, for a hard link, finds) the inode behind one directory entry. */
static int scan_entry(struct scan *s, int dirfd, struct erofs_inode *dir,
		      const char *name, struct erofs_dentry *dentry)
{
	const struct erofs_build_options *opts = s->opts;
	struct erofs_inode *inode;
	struct link_slot *slot = NULL;
	struct stat st;
	char xattr_path[64 + EROFS_NAME_LEN];
	char *path = join_path(dir->path, name);
	int err;

	if (!path)
		return -ENOMEM;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = errno;
		erofs_err("%s/%s: cannot stat: %s", opts->source, path, strerror(err));
		free(path);
		return -err;
	}
	dentry->name = strdup(name);
	dentry->name_len = (uint16_t)strlen(name);
	if (!dentry->name) {
		free(path);
		return -ENOMEM;
	}

	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && !opts->hard_dereference) {
		if (s->links.used * 2 >= s->links.mask && (err = link_grow(&s->links))) {
			free(path);
			return err;
		}
		slot = link_find(&s->links, st.st_dev, st.st_ino);
		if (slot->inode) {
			slot->inode->nlink++;
			dentry->inode = slot->inode;
			free(path);
			return 0;
		}
	}

	inode = calloc(1, sizeof(*inode));
	if (!inode) {
		free(path);
		return -ENOMEM;
	}
	dentry->inode = inode;
	inode->path = path;
	inode->parent = dir;
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
		break;
	case S_IFLNK:
		if ((err = read_symlink(dirfd, name, path, st.st_size, inode)))
			return err;
		break;
	case S_IFCHR:
	case S_IFBLK:
		inode->rdev_major = major(st.st_rdev);
		inode->rdev_minor = minor(st.st_rdev);
		break;
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFDIR:
		break;
	default:
		erofs_err("%s/%s: unsupported file type 0%o", opts->source, path,
			  (unsigned int)(st.st_mode & S_IFMT));
		return -EINVAL;
	}

	if (opts->xattr_tolerance >= 0) {
		/* the xattr calls have no *at form: name the entry through the dirfd */
		snprintf(xattr_path, sizeof(xattr_path), "/proc/self/fd/%d/%s", dirfd, name);
		if ((err = erofs_xattrs_read(xattr_path, path, &inode->xattrs)))
			return err;
	}

	if (S_ISDIR(st.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0) {
			err = errno;
			erofs_err("%s/%s: cannot open directory: %s", opts->source, path,
				  strerror(err));
			return -err;
		}
		s->tree->nr_dirs++;
		err = scan_dir(s, fd, inode);
		close(fd);
		if (err)
			return err;
		dir->nlink++;	/* the child's ".." */
	}
	return 0;
}

static int compare_dentries(const void *a, const void *b)
{
	const struct erofs_dentry *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (int)x->name_len - (int)y->name_len;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads all names of a directory, sorted, without "." and "..". */
static int read_names(int dirfd, const char *display, char ***names_out, size_t *count_out)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **names = NULL;
	size_t count = 0, cap = 0;
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
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (count == cap) {
			char **bigger = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));

			if (!bigger) {
				err = ENOMEM;
				break;
			}
			names = bigger;
		}
		if (!(names[count] = strdup(de->d_name))) {
			err = ENOMEM;
			break;
		}
		count++;
		errno = 0;
	}
	if (!err && errno) {
		err = errno;
		erofs_err("%s: cannot read directory: %s", display, strerror(err));
	}
	closedir(d);
	if (err) {
		while (count)
			free(names[--count]);
		free(names);
		return -err;
	}
	qsort(names, count, sizeof(*names), compare_names);
	*names_out = names;
	*count_out = count;
	return 0;
}

static int scan_dir(struct scan *s, int dirfd, struct erofs_inode *dir)
{
	const struct erofs_build_options *opts = s->opts;
	char **names = NULL;
	size_t count = 0, kept = 0;
	int err;

	dir->nlink = 2;
	if ((err = read_names(dirfd, dir->path[0] ? dir->path : opts->source, &names, &count)))
		return err;
	dir->children = calloc(count ? count : 1, sizeof(*dir->children));
	if (!dir->children)
		err = -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		if (!err && opts->nr_excludes) {
			char *rel = join_path(dir->path, names[i]);

			if (!rel) {
				err = -ENOMEM;
			} else if (is_excluded(opts, rel)) {
				free(rel);
				free(names[i]);
				continue;
			}
			free(rel);
		}
		if (!err) {
			err = scan_entry(s, dirfd, dir, names[i], &dir->children[kept]);
			if (dir->children[kept].name)
				kept++;
		}
		free(names[i]);
	}
	free(names);
	dir->nr_children = (uint32_t)kept;
	/* strcmp order equals byte order for NUL-free names; sort again to be sure */
	qsort(dir->children, kept, sizeof(*dir->children), compare_dentries);
	return err;
}

/* Lists inodes breadth-first, each directory's children in name order;
 * a hard-linked inode appears once, where it is first named. */
static int list_breadth_first(struct erofs_tree *tree, uint32_t nr_inodes_max)
{
	struct erofs_inode **list = malloc(nr_inodes_max * sizeof(*list));
	uint32_t head = 0, tail = 0;

	if (!list)
		return -ENOMEM;
	list[tail++] = tree->root;
	tree->root->ino = 1;	/* ino doubles as "listed" mark until planned */
	while (head < tail) {
		struct erofs_inode *dir = list[head++];

		for (uint32_t i = 0; i < dir->nr_children; i++) {
			struct erofs_inode *child = dir->children[i].inode;

			if (!child->ino) {
				child->ino = 1;
				list[tail++] = child;
			}
		}
	}
	tree->inodes = list;
	tree->nr_inodes = tail;
	return 0;
}

static uint32_t count_dentries(const struct erofs_inode *dir)
{
	uint32_t n = dir->nr_children;

	for (uint32_t i = 0; i < dir->nr_children; i++)
		if (erofs_inode_is_dir(dir->children[i].inode))
			n += count_dentries(dir->children[i].inode);
	return n;
}

int erofs_tree_scan(const struct erofs_build_options *opts, struct erofs_tree *tree)
{
	struct scan s = { .opts = opts, .tree = tree };
	struct erofs_inode *root;
	struct stat st;
	int err;

	memset(tree, 0, sizeof(*tree));
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
	if (!root || !(root->path = strdup("")))
		return -ENOMEM;
	tree->root = root;
	root->parent = root;
	root->mode = (uint16_t)st.st_mode;
	apply_owner_and_time(opts, root, &st);
	tree->nr_dirs = 1;
	if (opts->xattr_tolerance >= 0 &&
	    (err = erofs_xattrs_read(opts->source, "/", &root->xattrs)))
		return err;
	err = scan_dir(&s, tree->source_dirfd, root);
	free(s.links.slots);
	if (err)
		return err;
	return list_breadth_first(tree, count_dentries(root) + 1);
}

static void free_inode_tree(struct erofs_inode *dir)
{
	for (uint32_t i = 0; i < dir->nr_children; i++)
		free(dir->children[i].name);
	free(dir->children);
}

void erofs_tree_free(struct erofs_tree *tree)
{
	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		free_inode_tree(inode);
		free(inode->path);
		free(inode->symlink);
		erofs_xattrs_free(inode->xattrs);
		erofs_chunks_free(inode->chunks);
		if (!inode->same_data)
			erofs_zinfo_free(inode->z);	/* a duplicate borrows its original's */
		free(inode);
	}
	free(tree->inodes);
	if (tree->packed) {
		free(tree->packed->path);
		erofs_zinfo_free(tree->packed->z);
		free(tree->packed);
	}
	if (tree->source_dirfd >= 0)
		close(tree->source_dirfd);
	memset(tree, 0, sizeof(*tree));
	tree->source_dirfd = -1;
}

/* Opens path (relative to dirfd) component by component with O_NOFOLLOW. */
static int open_beneath(int dirfd, const char *path, bool directory)
{
	const char *p = path;
	int at = dirfd;

	for (;;) {
		const char *slash = strchr(p, '/');
		char name[EROFS_NAME_LEN + 1];
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		int fd;

		if (len > EROFS_NAME_LEN) {
			errno = ENAMETOOLONG;
			fd = -1;
		} else {
			memcpy(name, p, len);
			name[len] = '\0';
			fd = openat(at, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
				    (slash || directory ? O_DIRECTORY : O_NONBLOCK));
		}
		if (at != dirfd) {
			int saved = errno;

			close(at);
			errno = saved;
		}
		if (fd < 0 || !slash)
			return fd;
		at = fd;
		p = slash + 1;
	}
}

/*
 * The scan saw a regular file; what is there now may be anything.  fd is
 * what opening it gave, with O_NOFOLLOW (a symlink fails with ELOOP, as
 * nothing is followed on the way) and O_NONBLOCK (a FIFO does not block);
 * returns fd if it is still a regular file, else -1 with errno ESTALE.
 */
static int check_regular(int fd)
{
	struct stat st;
	int err, flags;

	if (fd < 0) {
		if (errno == ELOOP || errno == ENXIO)	/* a symlink; a socket */
			errno = ESTALE;
		return -1;
	}
	err = fstat(fd, &st) ? errno : S_ISREG(st.st_mode) ? 0 : ESTALE;
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	/* blocking reads from here on (a regular file ignores it anyway) */
	if ((flags = fcntl(fd, F_GETFL)) >= 0 && (flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

int erofs_tree_open_file(const struct erofs_tree *tree, const struct erofs_inode *inode,
			 struct erofs_dir_cache *cache)
{
	const struct erofs_inode *dir = inode->parent;
	const char *name = strrchr(inode->path, '/');

	if (!cache)
		return check_regular(open_beneath(tree->source_dirfd, inode->path, false));
	if (cache->dir != dir) {
		erofs_dir_cache_release(cache);
		cache->fd = dir->path[0] ? open_beneath(tree->source_dirfd, dir->path, true)
					 : dup(tree->source_dirfd);
		if (cache->fd < 0)
			return check_regular(-1);	/* a symlink on the way: ESTALE */
		cache->dir = dir;
	}
	return check_regular(openat(cache->fd, name ? name + 1 : inode->path,
				    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
}

const char *erofs_tree_open_error(int err)
{
	return err == ESTALE ? "replaced during the build: no longer a regular file"
			     : strerror(err);
}

void erofs_dir_cache_release(struct erofs_dir_cache *cache)
{
	if (cache->dir && cache->fd >= 0)
		close(cache->fd);
	cache->dir = NULL;
	cache->fd = -1;
}
