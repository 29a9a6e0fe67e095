// SPDX-License-Identifier: MIT
/* Per-file content digests (see include/erofs/build/filedigest.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "erofs/build/filedigest.h"
#include "erofs/common/diag.h"
#include "erofs/common/digest.h"
#include "erofs/common/io.h"
#include "erofs/source/xattr.h"

#define READ_SIZE	(256u << 10)

bool erofs_digest_wanted(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			 const struct erofs_inode *inode)
{
	/* as erofs-utils: empty files and files of no stored bytes get none */
	return opts->inode_digest && inode != tree->packed && erofs_inode_is_reg(inode) &&
	       inode->size;
}

int erofs_digest_prepare(const struct erofs_build_options *opts, struct erofs_inode *inode)
{
	int err = erofs_xattrs_add_digest(opts, &inode->xattrs);

	if (err)
		return err;
	inode->ibody_bound = erofs_xattr_ibody_max(inode->xattrs);
	return 0;
}

int erofs_digest_work(const struct erofs_work_ctx *ctx, const struct erofs_work *w,
		      struct erofs_dir_cache *dirs)
{
	struct erofs_xattr *x = erofs_xattrs_digest(w->inode->xattrs);
	const struct erofs_inode *inode = w->inode;
	struct erofs_sha256 sha;
	uint64_t base, done;
	uint8_t *buf;
	int fd, err = 0;

	if (!x || !w->first || w->packed)
		return 0;
	fd = erofs_tree_open_or_report(ctx->opts, ctx->tree, inode, dirs);
	if (fd < 0)
		return fd;
	buf = malloc(READ_SIZE);
	if (!buf) {
		close(fd);
		erofs_err("out of memory while hashing files");
		return -ENOMEM;
	}
	base = erofs_tree_data_base(ctx->tree, inode);
	erofs_sha256_begin(&sha);
	for (done = 0; !err && done < inode->size; done += READ_SIZE) {
		size_t len = inode->size - done < READ_SIZE ? (size_t)(inode->size - done)
							    : READ_SIZE;

		if (!(err = erofs_pread_all(fd, buf, len, base + done)))
			erofs_sha256_add(&sha, buf, len);
	}
	if (!err && !erofs_tree_size_unchanged(ctx->tree, inode, fd))
		err = -EAGAIN;
	if (err)
		erofs_report_source_error(ctx->opts, inode, err);
	else
		erofs_sha256_value(&sha, x->value);
	free(buf);
	close(fd);
	return err;
}
