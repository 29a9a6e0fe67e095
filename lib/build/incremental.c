// SPDX-License-Identifier: MIT
/* --incremental (see include/erofs/build/incremental.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/io.h"
#include "erofs/build/incremental.h"
#include "erofs/source/imgbase.h"

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

/* All the metadata rewritten: SOURCE built alone, then merged over the image. */
static int rewrite_all(const struct erofs_build_options *opts, struct erofs_tree *tree,
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

/* Copies in, to its end, into the empty file out. */
static int copy_stream(int in, int out)
{
	char buf[1 << 16];
	uint64_t pos = 0;

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		int err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : 0;
		if ((err = erofs_pwrite_all(out, buf, (size_t)n, pos)))
			return err;
		pos += (uint64_t)n;
	}
}

/*
 * A tar read from a pipe is read once: kept in a scratch file beside the
 * image, so that a build that cannot stay in place can read it again.
 * *fd: the file (-1 when the tar is a regular file already).
 */
static int keep_stream(const struct erofs_build_options *opts, int *fd)
{
	struct stat st;
	int in, err = 0;

	*fd = -1;
	if (!opts->tar || (opts->source && !stat(opts->source, &st) && S_ISREG(st.st_mode)))
		return 0;
	if ((*fd = erofs_scratch_open(opts->image)) < 0)
		return *fd;
	in = opts->source ? open(opts->source, O_RDONLY | O_CLOEXEC) : 0;
	if (in < 0) {
		err = -errno;
		erofs_err("%s: cannot open: %s", opts->source, strerror(-err));
	} else {
		err = copy_stream(in, *fd);
		if (err)
			erofs_err("%s: %s", opts->source ? opts->source : "(stdin)", strerror(-err));
		if (in)
			close(in);
	}
	if (err) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

int erofs_mkfs_incremental(const struct erofs_build_options *opts, struct erofs_tree *tree,
			   struct erofs_build_result *result)
{
	struct erofs_build_options io = *opts;
	char tar_path[48];
	int err, tar_fd;

	memset(result, 0, sizeof(*result));
	if ((err = keep_stream(opts, &tar_fd)))
		return err;
	if (tar_fd >= 0) {
		snprintf(tar_path, sizeof(tar_path), "/proc/self/fd/%d", tar_fd);
		io.source_shown = opts->source ? opts->source : "(stdin)";
		io.source = tar_path;
	}
	/* the image's metadata stays where the new layer lets it */
	io.in_place = true;
	io.copy_up_from = opts->tar ? opts->image : NULL;
	err = erofs_base_options_allow(opts) ? erofs_mkfs(&io, tree, result) : EROFS_REWRITE_ALL;
	if (err == EROFS_REWRITE_ALL) {
		if (opts->debug_level >= 3)
			fprintf(stderr, "mkfs.erofs: %s: cannot be added to in place; "
				"rewriting all its metadata\n", opts->image);
		erofs_plan_free(&result->plan);
		erofs_tree_free(tree);
		io.in_place = false;
		err = rewrite_all(&io, tree, result);
	}
	if (tar_fd >= 0)
		close(tar_fd);
	return err;
}
