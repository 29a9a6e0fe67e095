// SPDX-License-Identifier: MIT
/* --zD: directories as whole fragments of the packed inode (see include/erofs/build/zdir.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/build/dir.h"
#include "erofs/build/metabox.h"
#include "erofs/build/zdir.h"
#include "erofs/codec/codec.h"
#include "erofs/common/diag.h"
#include "erofs/common/io.h"

int erofs_zdir_plan(const struct erofs_build_options *opts, struct erofs_tree *tree)
{
	uint64_t end = tree->pending_packed ? tree->pending_packed_size : 0;
	struct erofs_inode *packed;
	struct erofs_zinfo *pz = NULL;

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];
		struct erofs_zinfo *zi;

		if (!erofs_inode_is_dir(inode))
			continue;
		inode->size = erofs_dir_data_size(inode, opts->blkszbits, opts->dot_omitted);
		if (!(zi = calloc(1, sizeof(*zi))))
			return -ENOMEM;
		/* no pclusters of its own: pcluster_size 0 says so to the planner */
		zi->fragment = true;
		zi->frag_off = end;
		zi->full_index = true;
		inode->z = zi;
		inode->blkaddr = EROFS_NULL_ADDR;
		end += inode->size;
	}
	if (opts->compressor != EROFS_COMPRESS_NONE) {
		if (!(pz = calloc(1, sizeof(*pz))))
			return -ENOMEM;
		pz->full_index = true;
		pz->no_extents = true;
		pz->pcluster_size = erofs_opts_packed_pcluster(opts);
		pz->algorithm = (uint8_t)erofs_codec_format(opts->algorithms[0].kind);
	}
	if (!(packed = calloc(1, sizeof(*packed)))) {
		free(pz);
		return -ENOMEM;
	}
	packed->mode = S_IFREG | 0600;
	packed->nlink = 1;
	packed->size = end;
	packed->parent = packed;
	packed->z = pz;
	packed->blkaddr = EROFS_NULL_ADDR;
	tree->packed = packed;
	return 0;
}

int erofs_zdir_write(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		     unsigned int bits, uint32_t *image_blocks, uint8_t **blocks)
{
	struct erofs_inode *packed = tree->packed;
	uint64_t padded = (packed->size + (1u << bits) - 1) & ~((1ull << bits) - 1);
	uint8_t *data = calloc(1, padded ? padded : 1);
	uint64_t nr_blocks;
	int err = 0;

	*blocks = NULL;
	if (!data)
		return -ENOMEM;
	if (tree->pending_packed &&
	    (err = erofs_pread_all(tree->pending_packed_fd, data, tree->pending_packed_size, 0))) {
		erofs_err("temporary packed-inode file: read failed: %s", strerror(-err));
		free(data);
		return err;
	}
	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		const struct erofs_inode *inode = tree->inodes[i];

		if (erofs_inode_is_dir(inode) && inode->z)
			erofs_dir_encode(inode, bits, opts->dot_omitted, data + inode->z->frag_off);
	}
	if (packed->z) {
		err = erofs_buffer_compress(opts, 0, data, packed->size, packed->z, blocks);
		free(data);
		if (err)
			return err;
		nr_blocks = packed->z->nr_blocks;
	} else {
		*blocks = data;
		nr_blocks = padded >> bits;
	}
	if (*image_blocks + nr_blocks > UINT32_MAX) {
		erofs_err("the image needs more than 2^32 blocks of %u bytes", 1u << bits);
		free(*blocks);
		*blocks = NULL;
		return -EFBIG;
	}
	packed->blkaddr = nr_blocks ? *image_blocks : EROFS_NULL_ADDR;
	packed->nr_blocks = (uint32_t)nr_blocks;
	*image_blocks += (uint32_t)nr_blocks;
	return 0;
}
