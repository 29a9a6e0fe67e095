// SPDX-License-Identifier: MIT
/*
 * fsck.erofs --path: the inode at a path of the image, found one
 * component at a time through the directories, with every check the
 * reader makes of them.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/read/lookup.h"

struct lookup {
	const char *name;
	size_t len;
	uint64_t nid;
	bool found;
};

static int match(void *arg, const struct erofs_rd_dentry *de)
{
	struct lookup *l = arg;

	if (de->namelen != l->len || memcmp(de->name, l->name, l->len))
		return 0;
	l->nid = de->nid;
	l->found = true;
	return 1;	/* stop */
}

int erofs_lookup_path(struct erofs_reader *r, const char *path, uint64_t *nid, uint64_t *parent)
{
	/* the directories above the current one, for ".." */
	uint64_t up[EROFS_LOOKUP_MAXDEPTH];
	size_t depth = 0;
	uint64_t cur = r->root_nid, par = cur;

	while (*path) {
		struct erofs_rd_inode vi;
		struct lookup l = { path, strcspn(path, "/"), 0, false };
		int err;

		path += l.len;
		while (*path == '/')
			path++;
		if (!l.len || (l.len == 1 && l.name[0] == '.'))
			continue;
		if (l.len == 2 && !memcmp(l.name, "..", 2)) {
			if (depth) {
				cur = par;
				par = --depth ? up[depth - 1] : r->root_nid;
			}
			continue;
		}
		err = erofs_read_inode(r, cur, &vi);
		if (err)
			return err;
		if (!S_ISDIR(vi.di.mode))
			return -ENOTDIR;
		err = erofs_dir_iterate(r, &vi, par, match, &l);
		if (err < 0)
			return err;
		if (!l.found)
			return -ENOENT;
		if (depth == EROFS_LOOKUP_MAXDEPTH)
			return -ENAMETOOLONG;
		up[depth++] = cur;
		par = cur;
		cur = l.nid;
	}
	*nid = cur;
	*parent = par;
	return 0;
}
