// SPDX-License-Identifier: MIT
/* --tar=i: index images of a tar (see include/erofs/build/tarindex.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/image.h"
#include "erofs/build/tarindex.h"
#include "erofs/source/tree.h"

static int report(const struct erofs_build_options *opts, const struct erofs_inode *inode,
		  int err, const char *why)
{
	const char *path = erofs_shown_path(inode);

	erofs_err("%s: %s: %s", opts->source ? opts->source : "(stdin)", path, why);
	erofs_shown_path_free(path);
	return err;
}

int erofs_tarindex_commit(struct erofs_commit *cc, struct erofs_work *w)
{
	const struct erofs_build_options *opts = cc->opts;
	const unsigned int bits = opts->blkszbits;
	struct erofs_inode *inode = w->inode;
	uint64_t blocks = (inode->size + (1u << bits) - 1) >> bits;
	unsigned int chunkbits = bits;
	struct erofs_chunks *ch;
	uint32_t blk;
	int err;

	if (!w->first || !inode->size)
		return 0;
	/* one chunk for the whole file: its data is one run of the tar */
	while (chunkbits < 63 && 1ull << chunkbits < inode->size)
		chunkbits++;
	if (chunkbits > bits + 31)
		return report(opts, inode, -EFBIG, "too large for one chunk of the index");
	/* a GNU sparse entry's data is spooled, not one run of the tar */
	if (inode->data_pos & EROFS_DATA_SPOOLED)
		return report(opts, inode, -EINVAL,
			      "a sparse entry: its data is not one run of the tar to point at");
	if (opts->tar_mapfile) {
		if (blocks > UINT32_MAX || (err = erofs_image_alloc(cc->img, (uint32_t)blocks, &blk)))
			return blocks > UINT32_MAX ? -EFBIG : err;
	} else {
		/* the tar is device 1: the data's own block there */
		if (inode->data_pos & ((1u << bits) - 1))
			return report(opts, inode, -EINVAL,
				      "data not on a 512-byte boundary of the tar");
		if ((inode->data_pos >> bits) + blocks > UINT32_MAX)
			return report(opts, inode, -EFBIG, "data past 2^32 blocks of the tar");
		blk = (uint32_t)(inode->data_pos >> bits);
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch || !(ch->blkaddr = malloc(sizeof(*ch->blkaddr)))) {
		free(ch);
		return -ENOMEM;
	}
	ch->chunkbits = (uint8_t)chunkbits;
	ch->count = 1;
	ch->blkaddr[0] = blk;
	inode->chunks = ch;
	inode->blkaddr = EROFS_NULL_ADDR;
	return 0;
}

static int by_blkaddr(const void *a, const void *b)
{
	const struct erofs_inode *x = *(const struct erofs_inode *const *)a;
	const struct erofs_inode *y = *(const struct erofs_inode *const *)b;

	return x->chunks->blkaddr[0] < y->chunks->blkaddr[0] ? -1
	       : x->chunks->blkaddr[0] > y->chunks->blkaddr[0];
}

static int put_lines(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		     FILE *f)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	struct erofs_inode **files = malloc((tree->nr_inodes + 1) * sizeof(*files));
	size_t n = 0;

	if (!files)
		return -ENOMEM;
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		if (erofs_inode_is_reg(tree->inodes[i]) && tree->inodes[i]->chunks)
			files[n++] = tree->inodes[i];
	qsort(files, n, sizeof(*files), by_blkaddr);
	for (size_t i = 0; i < n; i++) {
		const struct erofs_inode *inode = files[i];
		uint64_t blocks = (inode->size + blksz - 1) / blksz;
		uint32_t zeroed = (uint32_t)(blocks * blksz - inode->size);

		fprintf(f, "%08" PRIx32 " %8" PRIx64 " %08" PRIx64, inode->chunks->blkaddr[0],
			blocks, inode->data_pos);
		if (zeroed)
			fprintf(f, " %08" PRIu32, zeroed);
		fputc('\n', f);
	}
	free(files);
	return 0;
}

int erofs_tarindex_write_mapfile(const struct erofs_build_options *opts,
				 const struct erofs_tree *tree)
{
	size_t len = strlen(opts->tar_mapfile);
	char *tmp = malloc(len + 16);
	FILE *f;
	int err;

	if (!tmp)
		return -ENOMEM;
	/* complete or not at all: written beside, then renamed */
	snprintf(tmp, len + 16, "%s.tmp%ld", opts->tar_mapfile, (long)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		err = -errno;
		erofs_err("%s: cannot create the map file: %s", opts->tar_mapfile, strerror(-err));
		free(tmp);
		return err;
	}
	err = put_lines(opts, tree, f);
	if ((fflush(f) || ferror(f)) && !err)
		err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
	if (!err && rename(tmp, opts->tar_mapfile))
		err = -errno;
	if (err) {
		erofs_err("%s: cannot write the map file: %s", opts->tar_mapfile, strerror(-err));
		unlink(tmp);
	}
	free(tmp);
	return err;
}
