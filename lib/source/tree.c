// SPDX-License-Identifier: MIT
/* Paths, source files and the life of the in-memory tree (see include/erofs/source/tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

char *erofs_inode_path(const struct erofs_inode *inode)
{
	size_t len = 0;
	char *path, *end;

	for (const struct erofs_inode *i = inode; i->dentry; i = i->parent)
		len += i->dentry->name_len + 1u;
	path = malloc(len ? len : 1);
	if (!path)
		return NULL;
	end = path + (len ? len - 1 : 0);
	*end = '\0';
	for (const struct erofs_inode *i = inode; i->dentry; i = i->parent) {
		end -= i->dentry->name_len;
		memcpy(end, i->dentry->name, i->dentry->name_len);
		if (end > path)
			*--end = '/';
	}
	return path;
}

static const char out_of_memory[] = "(out of memory)";

const char *erofs_shown_path(const struct erofs_inode *inode)
{
	char *path = erofs_inode_path(inode);

	return path ? path : out_of_memory;
}

void erofs_shown_path_free(const char *shown)
{
	if (shown != out_of_memory)
		free((char *)shown);
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

void erofs_set_mtime(const struct erofs_build_options *opts, struct erofs_inode *inode,
		     int64_t sec, uint32_t nsec)
{
	inode->mtime = sec;
	inode->mtime_nsec = nsec;
	if (opts->time_policy == EROFS_TIME_FIXED ||
	    (opts->time_policy == EROFS_TIME_CLAMP && inode->mtime >= opts->fixed_time)) {
		inode->mtime = opts->fixed_time;
		inode->mtime_nsec = 0;
	}
}

void erofs_dir_cache_init(struct erofs_dir_cache *cache)
{
	memset(cache, 0, sizeof(*cache));
	for (unsigned int i = 0; i < EROFS_DIR_CACHE_DEPTH; i++)
		cache->fd[i] = -1;
}

/* Closes the cached levels from `depth` down. */
static void cache_truncate(struct erofs_dir_cache *c, uint32_t depth)
{
	for (; c->depth > depth; c->depth--) {
		unsigned int slot = (c->depth - 1) % EROFS_DIR_CACHE_DEPTH;

		if (c->fd[slot] >= 0)
			close(c->fd[slot]);
		c->fd[slot] = -1;
		c->dir[slot] = NULL;
	}
}

void erofs_dir_cache_release(struct erofs_dir_cache *cache)
{
	cache_truncate(cache, 0);
}

static bool cached(const struct erofs_dir_cache *c, const struct erofs_inode *dir)
{
	unsigned int slot = dir->depth % EROFS_DIR_CACHE_DEPTH;

	return dir->depth < c->depth && c->dir[slot] == dir && c->fd[slot] >= 0;
}

static int open_subdir(int at, const struct erofs_inode *dir)
{
	return openat(at, dir->dentry->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * The fd of directory `dir` (owned by the cache), opening the directories
 * between the deepest cached ancestor (or the source root) and it.
 */
static int cache_open_dir(const struct erofs_tree *tree, struct erofs_dir_cache *c,
			  const struct erofs_inode *dir)
{
	const struct erofs_inode *base = dir;
	int at;

	if (!dir->depth)
		return tree->source_dirfd;
	while (base->depth && !cached(c, base))
		base = base->parent;
	cache_truncate(c, base->depth + 1u);
	at = base->depth ? c->fd[base->depth % EROFS_DIR_CACHE_DEPTH] : tree->source_dirfd;
	/* down from base to dir, one level at a time: each step finds the
	 * next ancestor by walking up from dir (the cache window bounds it) */
	for (uint32_t level = base->depth + 1; level <= dir->depth; level++) {
		const struct erofs_inode *next = dir;
		unsigned int slot = level % EROFS_DIR_CACHE_DEPTH;
		int fd;

		while (next->depth > level)
			next = next->parent;
		fd = open_subdir(at, next);
		if (fd < 0)
			return -1;
		if (c->fd[slot] >= 0)	/* the level a window further up */
			close(c->fd[slot]);
		c->fd[slot] = fd;
		c->dir[slot] = next;
		c->depth = level + 1;
		at = fd;
	}
	return at;
}

int erofs_tree_open_dir(const struct erofs_tree *tree, const struct erofs_inode *dir,
			struct erofs_dir_cache *cache)
{
	return cache_open_dir(tree, cache, dir);
}

/*
 * The scan saw a regular file; what is there now may be anything.  fd is
 * what opening it gave, with O_NOFOLLOW (a symlink fails with ELOOP, as
 * nothing is followed on the way) and O_NONBLOCK (a FIFO does not block;
 * reads of a regular file ignore the flag, so it stays); returns fd if it
 * is still a regular file, else -1 with errno ESTALE.
 */
static int check_regular(int fd)
{
	struct stat st;
	int err;

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
	return fd;
}

int erofs_tree_open_file(const struct erofs_tree *tree, const struct erofs_inode *inode,
			 struct erofs_dir_cache *cache)
{
	struct erofs_dir_cache own;
	int at, fd;

	if (inode->data_layer)		/* rebuild mode: in place in its layer */
		return fcntl(tree->layer_fds[inode->data_layer - 1], F_DUPFD_CLOEXEC, 0);
	if (tree->data_in_one_file)	/* a tar source: one file holds every file's bytes */
		return fcntl(inode->data_pos & EROFS_DATA_SPOOLED ? tree->spool_fd : tree->data_fd,
			     F_DUPFD_CLOEXEC, 0);
	if (!cache) {
		erofs_dir_cache_init(&own);
		cache = &own;
	}
	at = cache_open_dir(tree, cache, inode->parent);
	if (at < 0) {
		fd = -1;
		if (errno == ELOOP || errno == ENOTDIR)	/* replaced by a symlink or a file */
			errno = ESTALE;
	} else {
		fd = check_regular(openat(at, inode->dentry->name,
					  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	}
	if (cache == &own) {
		int saved = errno;

		erofs_dir_cache_release(&own);
		errno = saved;
	}
	return fd;
}

bool erofs_tree_size_unchanged(const struct erofs_tree *tree, const struct erofs_inode *inode,
			       int fd)
{
	struct stat st;

	if (tree->data_in_one_file)	/* our own copy, or a tar checked while read */
		return true;
	return !fstat(fd, &st) && (uint64_t)st.st_size == inode->size;
}

const char *erofs_tree_open_error(int err)
{
	return err == ESTALE ? "replaced during the build: no longer a regular file"
			     : strerror(err);
}

int erofs_tree_open_or_report(const struct erofs_build_options *opts,
			      const struct erofs_tree *tree, const struct erofs_inode *inode,
			      struct erofs_dir_cache *cache)
{
	int fd = erofs_tree_open_file(tree, inode, cache);

	if (fd < 0) {
		int err = errno;
		const char *path = erofs_shown_path(inode);

		erofs_err("%s/%s: cannot open: %s", opts->source, path, erofs_tree_open_error(err));
		erofs_shown_path_free(path);
		return -err;
	}
	return fd;
}

void erofs_report_source_error(const struct erofs_build_options *opts,
			       const struct erofs_inode *inode, int err)
{
	const char *path = erofs_shown_path(inode);

	if (err == -ENODATA)
		erofs_err("%s/%s: file shrank during the build", opts->source, path);
	else if (err == -EAGAIN)
		erofs_err("%s/%s: file changed size during the build", opts->source, path);
	else
		erofs_err("%s/%s: cannot read: %s", opts->source, path, strerror(-err));
	erofs_shown_path_free(path);
}

int erofs_tree_list(struct erofs_tree *tree)
{
	struct erofs_inode **list;
	uint64_t head = 0, tail = 0, cap = 1024;

	if (tree->inodes)	/* listed already: the tree does not change */
		return 0;
	list = malloc(cap * sizeof(*list));
	if (!list)
		return -ENOMEM;
	list[tail++] = tree->root;
	tree->root->ino = 1;	/* ino doubles as "listed" mark until planned */
	while (head < tail) {
		struct erofs_inode *dir = list[head++];

		for (uint32_t i = 0; i < dir->nr_children; i++) {
			struct erofs_inode *child = dir->children[i].inode;

			if (child->ino)
				continue;
			if (tail == cap) {
				struct erofs_inode **bigger = realloc(list, 2 * cap * sizeof(*list));

				if (!bigger) {
					free(list);
					return -ENOMEM;
				}
				list = bigger;
				cap *= 2;
			}
			child->ino = 1;
			list[tail++] = child;
		}
	}
	if (tail > UINT32_MAX - 2) {
		free(list);
		erofs_err("the tree has more than 2^32 inodes");
		return -EFBIG;
	}
	free(tree->inodes);
	tree->inodes = list;
	tree->nr_inodes = (uint32_t)tail;
	return 0;
}

static void free_inode(struct erofs_inode *inode)
{
	free(inode->children);
	free(inode->names);
	if ((inode->mode & S_IFMT) == S_IFLNK)
		free(inode->symlink);
	erofs_xattrs_free(inode->xattrs);
	if (inode->chunks)
		free(inode->chunks->blkaddr);
	free(inode->chunks);
	if (inode->z && !inode->same_data) {	/* a duplicate borrows its original's */
		free(inode->z->extents);
		free(inode->z);
	}
	free(inode);
}

/*
 * Frees every inode reachable from the root, each once (a hard-linked one
 * at its last name), depth first with an explicit stack: trees may
 * be far deeper than the C stack allows.
 */
static void free_reachable(struct erofs_inode *root)
{
	struct frame {
		struct erofs_inode *dir;
		uint32_t next;
	} *stack = NULL;
	size_t depth = 0, cap = 0;
	struct erofs_inode *dir = root;
	uint32_t next = 0;

	for (;;) {
		if (next < dir->nr_children) {
			struct erofs_dentry *d = &dir->children[next++];
			struct erofs_inode *child = d->inode;

			/* a file goes at its last name (nlink counts its names in
			 * the tree), so no name reads a freed inode */
			if (!erofs_inode_is_dir(child)) {
				if (!--child->nlink)
					free_inode(child);
				continue;
			}
			if (child->dentry != d)
				continue;
			if (depth == cap) {
				struct frame *bigger = realloc(stack, (cap = cap ? 2 * cap : 64) *
								      sizeof(*stack));

				if (!bigger)
					break;	/* leak the rest rather than crash */
				stack = bigger;
			}
			stack[depth++] = (struct frame){ dir, next };
			dir = child;
			next = 0;
			continue;
		}
		free_inode(dir);
		if (!depth)
			break;
		depth--;
		dir = stack[depth].dir;
		next = stack[depth].next;
	}
	free(stack);
}

void erofs_tree_free(struct erofs_tree *tree)
{
	if (tree->root)
		free_reachable(tree->root);
	free(tree->inodes);
	if (tree->packed)
		free_inode(tree->packed);
	if (tree->source_dirfd >= 0)
		close(tree->source_dirfd);
	if (tree->data_in_one_file && tree->data_fd >= 0)
		close(tree->data_fd);
	if (tree->data_in_one_file && tree->spool_fd >= 0)
		close(tree->spool_fd);
	if (tree->pending_packed && tree->pending_packed_fd >= 0)
		close(tree->pending_packed_fd);
	free(tree->devices);
	free(tree->base);
	for (uint16_t i = 0; i < tree->nr_layer_fds; i++)
		if (tree->layer_fds[i] >= 0)
			close(tree->layer_fds[i]);
	free(tree->layer_fds);
	memset(tree, 0, sizeof(*tree));
	tree->source_dirfd = -1;
}

int erofs_inode_make_hole(struct erofs_inode *inode, uint64_t size, unsigned int blkszbits)
{
	unsigned int chunkbits = blkszbits;
	struct erofs_chunks *ch = calloc(1, sizeof(*ch));

	while (chunkbits < blkszbits + 31 && 1ull << chunkbits < size)
		chunkbits++;
	if (!ch)
		return -ENOMEM;
	ch->chunkbits = (uint8_t)chunkbits;
	ch->count = (uint32_t)((size + (1ull << chunkbits) - 1) >> chunkbits);
	/* past 2^31 blocks a chunk each: a few more holes */
	if (!(ch->blkaddr = malloc((ch->count ? ch->count : 1) * sizeof(*ch->blkaddr)))) {
		free(ch);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ch->count; i++)
		ch->blkaddr[i] = EROFS_NULL_ADDR;
	inode->chunks = ch;
	inode->blkaddr = EROFS_NULL_ADDR;
	return 0;
}
