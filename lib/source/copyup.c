// SPDX-License-Identifier: MIT
/* --incremental's look at the image it adds to (see include/erofs/source/copyup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/read/lookup.h"
#include "erofs/source/copyup.h"
#include "erofs/source/imglayer.h"

struct erofs_copy_up {
	struct erofs_layer l;
	struct erofs_rd_inode vi;	/* what erofs_copy_up_find() found */
};

int erofs_copy_up_open(const struct erofs_build_options *opts, const char *image,
		       struct erofs_copy_up **out)
{
	struct erofs_copy_up *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	if ((err = erofs_layer_open(&c->l, opts, image))) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

int erofs_copy_up_find(struct erofs_copy_up *c, const char *path, uint64_t *size)
{
	uint64_t nid, parent;
	size_t mark;
	int err;

	c->l.path_len = 0;
	if ((err = erofs_layer_path_push(&c->l, path, strlen(path), &mark)))
		return err;
	err = erofs_lookup_path(&c->l.r, path, &nid, &parent);
	if (err == -ENOENT || err == -ENOTDIR)
		return 0;
	if (!err)
		err = erofs_read_inode(&c->l.r, nid, &c->vi);
	if (err)
		return erofs_layer_reader_failed(&c->l, err);
	if (S_ISDIR(c->vi.di.mode))
		return 0;
	*size = c->vi.size;
	return 1;
}

int erofs_copy_up_fill(struct erofs_copy_up *c, struct erofs_inode *inode, int fd, uint64_t pos)
{
	const struct erofs_rd_inode *vi = &c->vi;
	bool opaque;
	int err;

	if ((err = erofs_layer_xattrs(&c->l, vi, &inode->xattrs, &opaque)) ||
	    (err = erofs_layer_leaf(&c->l, vi, inode)))
		return err;
	/* as the image has it: the options about owners and times applied when it was made */
	inode->mode = vi->di.mode;
	inode->uid = vi->di.uid;
	inode->gid = vi->di.gid;
	inode->mtime = vi->mtime;
	inode->mtime_nsec = vi->mtime_nsec;
	if (!S_ISREG(vi->di.mode) || !vi->size)
		return 0;
	return erofs_layer_copy(&c->l, vi, 0, vi->size, fd, pos);
}

void erofs_copy_up_close(struct erofs_copy_up *c)
{
	if (!c)
		return;
	erofs_layer_release(&c->l);
	free(c);
}

int erofs_base_info_read(const char *path, struct erofs_base_info *info)
{
	struct erofs_build_options none = { 0 };
	struct erofs_layer l = { 0 };
	uint64_t file_blocks;
	int err;

	memset(info, 0, sizeof(*info));
	if ((err = erofs_layer_open(&l, &none, path)))
		return err;
	info->blkszbits = l.r.blkszbits;
	file_blocks = (l.src.image_bytes + l.r.blksz - 1) >> l.r.blkszbits;
	info->blocks = l.r.blocks > file_blocks ? l.r.blocks : file_blocks;
	memcpy(info->uuid, l.r.sb.uuid, sizeof(info->uuid));
	memcpy(info->label, l.r.sb.volume_name, sizeof(l.r.sb.volume_name));
	info->layout_48bit = l.r.sb.feature_incompat & EROFS_INCOMPAT_48BIT;
	if (l.r.nr_devs)
		err = erofs_layer_error(&l, -EOPNOTSUPP, "--incremental: an image with extra "
					"devices cannot take a layer here");
	erofs_layer_release(&l);
	return err;
}
