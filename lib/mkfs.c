// SPDX-License-Identifier: MIT
/* Building an image (see include/erofs/mkfs.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "erofs/blocklist.h"
#include "erofs/format.h"
#include "erofs/image.h"
#include "erofs/layout.h"
#include "erofs/mkfs.h"
#include "erofs/pipeline.h"
#include "erofs/scan.h"
#include "erofs/tails.h"
#include "erofs/writer.h"

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

int erofs_mkfs(const struct erofs_build_options *opts, struct erofs_tree *tree,
	       struct erofs_build_result *result)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	/* data starts after the superblock's block, whatever its config records */
	const uint32_t first_data_blk = (erofs_super_end((1u << EROFS_COMPR_MAX) - 1) + blksz - 1) / blksz;
	struct erofs_scan_source scan = { .opts = opts, .tree = tree };
	struct erofs_source source = { .run = erofs_scan_run, .arg = &scan };
	struct erofs_image img;
	struct erofs_tails tails;
	struct timespec stage;
	int err;

	memset(result, 0, sizeof(*result));
	clock_gettime(CLOCK_MONOTONIC, &stage);
	if ((err = erofs_image_open(&img, opts->image, opts->blkszbits, first_data_blk)))
		return err;
	if ((err = erofs_tails_open(&tails, opts->image))) {
		erofs_image_abort(&img);
		return err;
	}
	err = erofs_pipeline_run(opts, tree, &source, &img, &tails, &result->stats);
	stage_done(opts, "data", &stage);
	if (!err)
		err = erofs_plan_image(opts, tree, img.next_blk, &result->plan);
	stage_done(opts, "plan", &stage);
	if (!err)
		err = erofs_write_metadata(opts, tree, &result->plan, &img, &tails);
	erofs_tails_close(&tails);
	if (!err)
		err = erofs_image_commit(&img);
	else
		erofs_image_abort(&img);
	if (!err)
		err = erofs_blocklist_write(opts, tree, &result->plan);
	stage_done(opts, "metadata", &stage);
	return err;
}
