// SPDX-License-Identifier: MIT
/* --block-list-file: per-file block ranges (see include/erofs/build/blocklist.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/source/android.h"
#include "erofs/build/blocklist.h"
#include "erofs/build/chunk.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"

/* Prints the file's extents, merging those that continue each other. */
struct ranges {
	FILE *f;
	uint64_t start, count;		/* the pending range; count 0: none */
};

static void range_flush(struct ranges *r)
{
	if (!r->count)
		return;
	if (r->count == 1)
		fprintf(r->f, " %llu", (unsigned long long)r->start);
	else
		fprintf(r->f, " %llu-%llu", (unsigned long long)r->start,
			(unsigned long long)(r->start + r->count - 1));
	r->count = 0;
}

static void range_add(struct ranges *r, uint64_t start, uint64_t count)
{
	if (!count)
		return;
	if (r->count && r->start + r->count == start) {
		r->count += count;
		return;
	}
	range_flush(r);
	r->start = start;
	r->count = count;
}

/*
 * A file with several names (hard links) is listed once, under one of them.
 * erofs-utils (1.8, the last series that wrote this list: lib/block_list.c
 * prints inode->i_srcpath) names it after the path through which its scan
 * first met the inode (lib/inode.c, erofs_mkfs_handle_directory() and
 * erofs_mkfs_dump_tree()): the entries of a directory are read when its
 * parent is walked, the walk goes depth first with each directory's entries
 * in name order, and the entries of one directory are read in readdir order.
 * We follow that order across directories; readdir order is the staging
 * file system's (tmpfs: newest first, ext4: hash order), so within a
 * directory we take the last name in byte order instead, which is what
 * erofs-utils gives for a link made after the file under a name sorting
 * after it (hwtool, then hwtool2) on tmpfs.
 */
struct link_name {
	const struct erofs_inode *inode;
	char *name;			/* NULL until the walk meets it */
};

struct link_names {
	struct link_name *v;
	size_t count, named;
};

static int compare_link_inodes(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct link_name *)a)->inode;
	uintptr_t y = (uintptr_t)((const struct link_name *)b)->inode;

	return (x > y) - (x < y);
}

static struct link_name *find_link(const struct link_names *ln, const struct erofs_inode *inode)
{
	struct link_name key = { .inode = inode };

	return ln->count ? bsearch(&key, ln->v, ln->count, sizeof(key), compare_link_inodes)
			 : NULL;
}

static bool has_several_names(const struct erofs_inode *inode)
{
	return S_ISREG(inode->mode) && inode->nlink > 1;
}

/* What erofs-utils' scan of one directory names first, as said above. */
static int name_entries(struct link_names *ln, const struct erofs_inode *dir)
{
	char *dir_path = NULL;
	int err = 0;

	for (uint32_t i = dir->nr_children; i-- > 0 && ln->named < ln->count; ) {
		const struct erofs_dentry *d = &dir->children[i];
		struct link_name *l;

		if (!has_several_names(d->inode) || !(l = find_link(ln, d->inode)) || l->name)
			continue;
		if ((!dir_path && !(dir_path = erofs_inode_path(dir))) ||
		    asprintf(&l->name, "%s%s%s", dir_path, dir_path[0] ? "/" : "", d->name) < 0) {
			l->name = NULL;
			err = -ENOMEM;
			break;
		}
		ln->named++;
	}
	free(dir_path);
	return err;
}

static int name_links(const struct erofs_tree *tree, struct link_names *ln)
{
	const struct erofs_inode **stack;
	size_t depth = 0, nr_dirs = 0;
	int err = 0;

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		ln->count += has_several_names(tree->inodes[i]);
		nr_dirs += erofs_inode_is_dir(tree->inodes[i]);
	}
	if (!ln->count)
		return 0;
	ln->v = calloc(ln->count, sizeof(*ln->v));
	stack = malloc(nr_dirs * sizeof(*stack));
	if (!ln->v || !stack) {
		free(stack);
		ln->count = 0;
		return -ENOMEM;
	}
	ln->count = 0;
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		if (has_several_names(tree->inodes[i]))
			ln->v[ln->count++].inode = tree->inodes[i];
	qsort(ln->v, ln->count, sizeof(*ln->v), compare_link_inodes);

	/* the root is read first; then each directory walked (depth first)
	 * reads its subdirectories, in name order */
	err = name_entries(ln, tree->root);
	stack[depth++] = tree->root;
	while (!err && depth && ln->named < ln->count) {
		const struct erofs_inode *dir = stack[--depth];
		size_t first = depth;

		for (uint32_t i = 0; !err && i < dir->nr_children; i++) {
			const struct erofs_inode *child = dir->children[i].inode;

			if (erofs_inode_is_dir(child)) {
				err = name_entries(ln, child);
				stack[depth++] = child;
			}
		}
		/* the first subdirectory is walked next */
		for (size_t a = first, b = depth; a + 1 < b; a++, b--) {
			const struct erofs_inode *t = stack[a];

			stack[a] = stack[b - 1];
			stack[b - 1] = t;
		}
	}
	free(stack);
	return err;
}

static void free_link_names(struct link_names *ln)
{
	for (size_t i = 0; i < ln->count; i++)
		free(ln->v[i].name);
	free(ln->v);
}

static bool has_blocks(const struct erofs_inode *inode)
{
	if (inode->chunks) {
		for (uint32_t i = 0; i < inode->chunks->count; i++)
			if (inode->chunks->blkaddr[i] != EROFS_NULL_ADDR)
				return true;
		return false;
	}
	return inode->nr_blocks && inode->blkaddr != EROFS_NULL_ADDR;
}

static void write_ranges(const struct erofs_plan *plan, const struct erofs_inode *inode,
			 struct ranges *r)
{
	const struct erofs_chunks *ch = inode->chunks;
	const unsigned int bits = plan->blkszbits;

	if (!ch) {
		/* plain, inline (the tail is in the inode's block, not listed) and
		 * compressed files (their pclusters) are one run of blocks */
		range_add(r, inode->blkaddr, inode->nr_blocks);
		return;
	}
	for (uint32_t i = 0; i < ch->count; i++) {
		uint64_t pos = (uint64_t)i << ch->chunkbits;
		uint64_t len = inode->size - pos;

		if (ch->blkaddr[i] == EROFS_NULL_ADDR)
			continue;	/* a hole: no block */
		if (len > 1ull << ch->chunkbits)
			len = 1ull << ch->chunkbits;
		range_add(r, ch->blkaddr[i], (len + (1u << bits) - 1) >> bits);
	}
}

int erofs_blocklist_write(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			  const struct erofs_plan *plan)
{
	const char *file = opts->block_list_file;
	char *mp = NULL, *tmp = NULL;
	struct link_names links = { 0 };
	FILE *f = NULL;
	struct stat st;
	bool created = false;
	int fd = -1, err;

	if (!file)
		return 0;
	if ((err = erofs_android_mount_point(opts, &mp)))
		goto out;
	/* a symlink, device or pipe (/dev/stdout, /dev/null) is written through,
	 * in place: renaming over it would replace it */
	if (!lstat(file, &st) && !S_ISREG(st.st_mode)) {
		if (!(f = fopen(file, "w"))) {
			err = -errno;
			erofs_err("%s: cannot open the block list: %s", file, strerror(-err));
			goto out;
		}
	} else if (asprintf(&tmp, "%s.tmp-XXXXXX", file) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	if (tmp) {
		fd = mkstemp(tmp);
		created = fd >= 0;
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			err = -errno;
			erofs_err("%s: cannot create the block list: %s", file, strerror(-err));
			goto out;
		}
		fd = -1;
	}
	if ((err = name_links(tree, &links)))
		goto out;
	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		const struct erofs_inode *inode = tree->inodes[i];
		const struct link_name *link = find_link(&links, inode);
		struct ranges r = { .f = f };
		char *name, *path;

		if (!S_ISREG(inode->mode) || !has_blocks(inode))
			continue;
		path = link && link->name ? NULL : erofs_inode_path(inode);
		name = link && link->name ? erofs_android_device_path(mp, link->name)
			: path ? erofs_android_device_path(mp, path) : NULL;
		free(path);
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		fputs(name, f);
		free(name);
		write_ranges(plan, inode, &r);
		range_flush(&r);
		fputc('\n', f);
	}
	errno = 0;
	if (fflush(f) || ferror(f) || (tmp && fsync(fileno(f)))) {
		err = -(errno ? errno : EIO);
		erofs_err("%s: cannot write the block list: %s", file, strerror(-err));
		goto out;
	}
	/* mkstemp made it 0600: give it the usual mode for a new file */
	if (tmp) {
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fileno(f), 0666 & ~mask);
	}
	if (fclose(f)) {
		f = NULL;
		err = -errno;
		erofs_err("%s: cannot write the block list: %s", file, strerror(-err));
		goto out;
	}
	f = NULL;
	if (tmp && rename(tmp, file)) {
		err = -errno;
		erofs_err("%s: cannot create the block list: %s", file, strerror(-err));
	}
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (err && created)
		unlink(tmp);
	if (err == -ENOMEM)
		erofs_err("out of memory writing the block list");
	free_link_names(&links);
	free(tmp);
	free(mp);
	return err;
}
