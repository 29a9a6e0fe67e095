// SPDX-License-Identifier: MIT
/* Building an image (see include/erofs/build/mkfs.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erofs/build/blocklist.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/build/image.h"
#include "erofs/build/layout.h"
#include "erofs/build/mkfs.h"
#include "erofs/build/pipeline.h"
#include "erofs/source/imgbase.h"
#include "erofs/source/imgsrc.h"
#include "erofs/source/scan.h"
#include "erofs/build/tails.h"
#include "erofs/build/tarindex.h"
#include "erofs/source/tarsrc.h"
#include "erofs/build/writer.h"

/* -d 3 and up: how long each stage took, on stderr */
static void stage_done(const struct erofs_build_options *opts, const char *stage,
		       struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (opts->debug_level >= 3)
		fprintf(stderr, "mkfs.erofs: %-10s %.3f s\n", stage,
			(double)(now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9);
	*since = now;
}

/* A build failed after path (a blob, an image) was committed: a regular file goes. */
static void remove_output(const char *path)
{
	struct stat st;

	if (!stat(path, &st) && S_ISREG(st.st_mode) && unlink(path))
		erofs_err("%s: cannot remove the output of the failed build", path);
}

/* --tar=i: the tar itself is device 1; its size in blocks goes in the table. */
static int tar_device_blocks(const struct erofs_build_options *opts,
			     const struct erofs_tree *tree, uint32_t *blocks)
{
	struct stat st;
	uint64_t n;

	if (tree->data_fd < 0) {	/* read from a stream, to its end */
		st.st_size = (off_t)tree->tar_size;
	} else if (fstat(tree->data_fd, &st)) {
		erofs_err("%s: %s", opts->source, strerror(errno));
		return -errno;
	}
	n = ((uint64_t)st.st_size + (1u << opts->blkszbits) - 1) >> opts->blkszbits;
	if (n > UINT32_MAX) {
		erofs_err("%s: more than 2^32 blocks of %u bytes", opts->source,
			  1u << opts->blkszbits);
		return -EFBIG;
	}
	*blocks = (uint32_t)n;
	return 0;
}

int erofs_mkfs(const struct erofs_build_options *opts, struct erofs_tree *tree,
	       struct erofs_build_result *result)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	/* data starts after the superblock's block, whatever its config records;
	 * --incremental: after the blocks of the image added to */
	const uint32_t first_data_blk = opts->incremental ? opts->base_blocks :
		(erofs_devt_end(erofs_super_end((1u << EROFS_COMPR_MAX) - 1, opts->metabox),
				erofs_opts_nr_devices(opts)) + blksz - 1) / blksz;
	struct erofs_scan_source scan = { .opts = opts, .tree = tree };
	struct erofs_tar_source tar = { .opts = opts, .tree = tree };
	struct erofs_image_source layers = { .opts = opts, .tree = tree };
	struct erofs_source source = { .run = erofs_scan_run, .arg = &scan };
	struct erofs_image img, blob;
	struct erofs_tails tails;
	struct timespec stage;
	int err;

	memset(result, 0, sizeof(*result));
	if (opts->tar)
		source = (struct erofs_source){ .run = erofs_tar_source_run, .arg = &tar };
	else if (opts->nr_layers)
		source = (struct erofs_source){ .run = erofs_image_source_run, .arg = &layers };
	clock_gettime(CLOCK_MONOTONIC, &stage);
	err = opts->incremental
		? erofs_image_open_append(&img, opts->image, opts->blkszbits, first_data_blk)
		: erofs_image_open(&img, opts->image, opts->image_offset, opts->blkszbits,
				   first_data_blk);
	if (err)
		return err;
	if (opts->blobdev && (err = erofs_image_open(&blob, opts->blobdev, 0, opts->blkszbits, 0))) {
		erofs_image_abort(&img);
		return err;
	}
	img.blob = opts->blobdev ? &blob : NULL;
	if ((err = erofs_tails_open(&tails, opts->image))) {
		erofs_image_abort(&img);
		if (img.blob)
			erofs_image_abort(&blob);
		return err;
	}
	err = erofs_pipeline_run(opts, tree, &source, &img, &tails, &result->stats);
	/* --incremental in place: the new tree laid over the image's (its data is in) */
	if (!err && opts->in_place)
		err = erofs_base_graft(opts, tree);
	stage_done(opts, "data", &stage);
	if (!err)
		err = erofs_plan_image(opts, tree, img.next_blk, &result->plan);
	stage_done(opts, "plan", &stage);
	if (!err && img.blob) {
		result->plan.blob_blocks = blob.next_blk;
		err = erofs_image_resize(&blob, (uint64_t)blob.next_blk << opts->blkszbits);
	} else if (!err && opts->tar_index && !opts->tar_mapfile) {
		err = tar_device_blocks(opts, tree, &result->plan.blob_blocks);
	}
	if (!err)
		err = erofs_write_metadata(opts, tree, &result->plan, &img, &tails);
	erofs_tails_close(&tails);
	/* the blob first: an image is never left without its blob */
	if (!err && img.blob)
		err = erofs_image_commit(&blob);
	else if (img.blob)
		erofs_image_abort(&blob);
	if (!err && (err = erofs_image_commit(&img)) && img.blob)
		remove_output(opts->blobdev);
	else if (err)
		erofs_image_abort(&img);
	if (!err && opts->tar_mapfile && (err = erofs_tarindex_write_mapfile(opts, tree)))
		remove_output(opts->image);
	if (!err)
		err = erofs_blocklist_write(opts, tree, &result->plan);
	stage_done(opts, "metadata", &stage);
	return err;
}
