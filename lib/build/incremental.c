// SPDX-License-Identifier: MIT
/* --incremental (see include/erofs/build/incremental.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/build/incremental.h"

/* The options of the first build: SOURCE alone, as plainly as it can be stored. */
static void layer_options(const struct erofs_build_options *opts, const char *path,
			  struct erofs_build_options *lo)
{
	*lo = *opts;
	lo->image = path;
	lo->incremental = false;
	lo->copy_up_from = opts->tar ? opts->image : NULL;
	lo->compressor = EROFS_COMPRESS_NONE;
	lo->nr_algorithms = 0;
	lo->nr_hints = 0;
	lo->fragments = lo->all_fragments = lo->dedupe = false;
	lo->share_pclusters = lo->share_identical_files = false;
	lo->chunkbits = 0;
	lo->chunk_form = EROFS_CHUNKS_AUTO;
	lo->blobdev = NULL;
	lo->block_list_file = NULL;
	lo->metabox = false;
	lo->compress_dirs = lo->mz_inodes = lo->mz_dirdata = false;
	lo->image_offset = 0;
	lo->fsalign_blocks = 0;
	lo->dsunit = 0;
	/* the whiteouts must reach the merge, which strips them if asked */
	lo->ovlfs_strip = false;
	lo->quiet = true;
	lo->show_progress = false;
}

/* The options of the merge: nothing about the tree applies twice. */
static void merge_options(const struct erofs_build_options *opts, const char *const *layers,
			  struct erofs_build_options *mo)
{
	*mo = *opts;
	mo->layers = layers;
	mo->nr_layers = 2;
	mo->source = layers[1];
	mo->tar = mo->aufs = false;
	mo->tar_decoder = EROFS_TAR_PLAIN;
	mo->tar_dump_file = NULL;
	mo->all_root = false;
	mo->force_uid = mo->force_gid = -1;
	mo->uid_offset = mo->gid_offset = 0;
	if (mo->time_policy == EROFS_TIME_FIXED && !mo->mkfs_time_set) {
		mo->mkfs_time_set = true;	/* -T: the build time still */
		mo->mkfs_time = mo->fixed_time;
	}
	mo->time_policy = EROFS_TIME_KEEP;
	mo->ignore_mtime = false;
	if (mo->xattr_tolerance < 0)	/* -x -1 was for the new layer: the base keeps its xattrs */
		mo->xattr_tolerance = 2;
	mo->mount_point = mo->product_out = mo->fs_config_file = NULL;
	mo->file_contexts = NULL;
	mo->nr_excludes = 0;
}

int erofs_mkfs_incremental(const struct erofs_build_options *opts, struct erofs_tree *tree,
			   struct erofs_build_result *result)
{
	size_t len = strlen(opts->image) + 48;
	char *layer_path = malloc(len), fd_path[48];
	const char *layers[2] = { opts->image, fd_path };
	struct erofs_build_options lo, mo;
	struct erofs_tree layer_tree = { .source_dirfd = -1 };
	struct erofs_build_result layer_result;
	int err, fd;

	memset(result, 0, sizeof(*result));	/* the caller frees its plan, whatever fails */
	if (!layer_path)
		return -ENOMEM;
	snprintf(layer_path, len, "%s.incremental-%ld", opts->image, (long)getpid());
	layer_options(opts, layer_path, &lo);
	err = erofs_mkfs(&lo, &layer_tree, &layer_result);
	erofs_plan_free(&layer_result.plan);
	erofs_tree_free(&layer_tree);
	if (err) {
		free(layer_path);
		return err;
	}
	/* read through its descriptor from now on: the name goes at once */
	fd = open(layer_path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (unlink(layer_path) && !err)
		err = -errno;
	if (err) {
		erofs_err("%s: the new layer: %s", layer_path, strerror(-err));
		if (fd >= 0)
			close(fd);
		free(layer_path);
		return err;
	}
	free(layer_path);
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
	merge_options(opts, layers, &mo);
	err = erofs_mkfs(&mo, tree, result);
	close(fd);
	return err;
}
