// SPDX-License-Identifier: MIT
/* Building the tree by names (see include/erofs/source/namedtree.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/source/namedtree.h"
#include "erofs/source/scan.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

#define HAND_OVER_BATCH	64

/* A name in a directory being built: dir->children[idx]. */
struct erofs_name_slot {
	struct erofs_inode *dir;
	uint32_t idx;
	uint32_t hash;
};

static uint32_t name_hash(const struct erofs_inode *dir, const char *name, size_t len)
{
	uint64_t h = (uint64_t)(uintptr_t)dir * 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static struct erofs_name_slot *slot_find(struct erofs_tree_builder *b, struct erofs_inode *dir,
					 const char *name, size_t len, uint32_t hash)
{
	for (size_t i = hash & b->mask;; i = (i + 1) & b->mask) {
		struct erofs_name_slot *s = &b->slots[i];
		const struct erofs_dentry *d;

		if (!s->dir)
			return s;
		d = &s->dir->children[s->idx];
		if (s->hash == hash && s->dir == dir && d->name_len == len &&
		    !memcmp(d->name, name, len))
			return s;
	}
}

static int slots_grow(struct erofs_tree_builder *b)
{
	size_t mask = b->slots ? b->mask * 2 + 1 : 4095;
	struct erofs_name_slot *bigger = calloc(mask + 1, sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	for (size_t i = 0; b->slots && i <= b->mask; i++) {
		const struct erofs_name_slot *s = &b->slots[i];
		size_t j;

		if (!s->dir)
			continue;
		for (j = s->hash & mask; bigger[j].dir; j = (j + 1) & mask)
			;
		bigger[j] = *s;
	}
	free(b->slots);
	b->slots = bigger;
	b->mask = mask;
	return 0;
}

struct erofs_inode *erofs_builder_new_inode(struct erofs_tree_builder *b)
{
	struct erofs_inode *inode;

	if (b->nr_all == b->cap_all) {
		size_t cap = b->cap_all ? b->cap_all * 2 : 1024;
		struct erofs_inode **bigger = realloc(b->all, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		b->all = bigger;
		b->cap_all = cap;
	}
	inode = calloc(1, sizeof(*inode));
	if (inode)
		b->all[b->nr_all++] = inode;
	return inode;
}

struct erofs_dentry *erofs_builder_lookup(struct erofs_tree_builder *b, struct erofs_inode *dir,
					  const char *name, size_t len, bool create)
{
	uint32_t hash = name_hash(dir, name, len);
	struct erofs_name_slot *s;
	struct erofs_dentry *d;
	char *copy;

	if (!b->slots && slots_grow(b))
		return NULL;
	s = slot_find(b, dir, name, len, hash);
	if (s->dir)
		return &dir->children[s->idx];
	if (!create)
		return NULL;
	if ((b->used + 1) * 2 > b->mask) {
		if (slots_grow(b))
			return NULL;
		s = slot_find(b, dir, name, len, hash);
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
	*s = (struct erofs_name_slot){ .dir = dir, .idx = dir->nr_children++, .hash = hash };
	b->used++;
	return d;
}

bool erofs_xattrs_opaque(const struct erofs_xattr_set *set)
{
	for (uint32_t i = 0; set && i < set->count; i++)
		if (!strcmp(set->items[i].name, EROFS_XATTR_OVL_OPAQUE))
			return set->items[i].value_len == 1 && set->items[i].value[0] == 'y';
	return false;
}

static int compare_dentries(const void *a, const void *b)
{
	const struct erofs_dentry *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->name_len < y->name_len ? x->name_len : y->name_len);

	return c ? c : (int)x->name_len - (int)y->name_len;
}

/* A directory's final form: whiteouts stripped if asked, names sorted into one arena. */
static int seal_dir(struct erofs_tree_builder *b, struct erofs_inode *dir)
{
	size_t total = 0, used = 0;
	uint32_t kept = 0;
	char *arena;

	for (uint32_t i = 0; i < dir->nr_children; i++) {
		struct erofs_dentry *d = &dir->children[i];

		/* (--incremental in place: the whiteouts act on the image first) */
		if (b->opts->ovlfs_strip && !b->opts->in_place && erofs_inode_is_whiteout(d->inode)) {
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
	if ((inode->mode & 0170000) == 0120000)
		free(inode->symlink);
	erofs_xattrs_free(inode->xattrs);
	free(inode->chunks ? inode->chunks->blkaddr : NULL);
	free(inode->chunks);
	if (inode->z)		/* --incremental's kept compressed files */
		free(inode->z->extents);
	free(inode->z);
	free(inode);
}

/*
 * The regular files with data in the directory source's order (see
 * scan.h): a directory's files, then its subdirectories' subtrees, in name
 * order; a hard-linked file where its first name is met.  Every inode is
 * reached (nid 1) and dirs have room for all directories.  Returns the count.
 */
static size_t list_depth_first(struct erofs_inode *root, struct erofs_inode **dirs,
			       struct erofs_inode **regular)
{
	size_t nr_dirs = 0, nr = 0;

	dirs[nr_dirs++] = root;
	while (nr_dirs) {
		struct erofs_inode *dir = dirs[--nr_dirs];
		const size_t below = nr_dirs;

		for (uint32_t i = 0; i < dir->nr_children; i++) {
			struct erofs_inode *child = dir->children[i].inode;

			if (child->dentry != &dir->children[i])
				continue;	/* a dot entry, or a hard link's other name */
			if (erofs_inode_is_dir(child))
				dirs[nr_dirs++] = child;
			else if (erofs_inode_is_reg(child) && child->size)
				regular[nr++] = child;
		}
		erofs_inodes_reverse(dirs, below, nr_dirs);
	}
	return nr;
}

int erofs_builder_finish(struct erofs_tree_builder *b, struct erofs_inode ***files,
			 size_t *nr_files)
{
	struct erofs_tree *tree = b->tree;
	struct erofs_inode **queue = malloc((b->nr_all + 1) * sizeof(*queue));
	struct erofs_inode **regular = malloc((b->nr_all + 1) * sizeof(*regular));
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

		if ((err = seal_dir(b, dir)))
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
			}
		}
	}
	if (!err)
		nr = list_depth_first(tree->root, queue, regular);
	free(queue);
	for (size_t i = 0, n = b->nr_all, kept = b->nr_all = 0; i < n; i++) {
		struct erofs_inode *inode = b->all[i];

		if (!inode->nid) {
			free_unreached(inode);
			continue;
		}
		inode->nid = 0;
		if (b->opts->ovlfs_strip && !b->opts->in_place)
			erofs_xattrs_remove(&inode->xattrs, EROFS_XATTR_OVL_OPAQUE);
		erofs_xattrs_sort(inode->xattrs);
		inode->ibody_bound = erofs_xattr_ibody_max(inode->xattrs);
		b->all[kept++] = inode;
		b->nr_all = kept;
	}
	if (err) {
		free(regular);
		return err;
	}
	*files = regular;
	*nr_files = nr;
	return 0;
}

int erofs_builder_hand_over(struct erofs_tree_builder *b, struct erofs_inode **files, size_t nr,
			    erofs_file_sink sink, void *pipeline)
{
	const struct erofs_build_options *opts = b->opts;
	struct erofs_tree *tree = b->tree;
	struct erofs_size_set sizes = { 0 };
	bool sizes_wanted = opts->share_identical_files && !opts->chunkbits;
	size_t done = 0;
	int err = 0;

	for (size_t i = 0; i < b->nr_all; i++)
		if (erofs_inode_is_reg(b->all[i]))
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

void erofs_builder_release(struct erofs_tree_builder *b, bool discard)
{
	if (discard) {	/* the tree is half built: its names are not sealed yet */
		for (size_t i = 0; i < b->nr_all; i++)
			free_unreached(b->all[i]);
		b->tree->root = NULL;
	}
	free(b->slots);
	free(b->all);
	b->slots = NULL;
	b->all = NULL;
	b->nr_all = b->cap_all = b->used = 0;
}
