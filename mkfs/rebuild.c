// SPDX-License-Identifier: MIT
/* Rebuild mode on the command line (see mkfs/rebuild.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/source/copyup.h"
#include "erofs/source/imglayer.h"
#include "rebuild.h"

/* The image would replace a layer the build still reads (or points at). */
static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int mkfs_rebuild_detect(int argc, char **argv, int first, struct erofs_build_options *opts,
			bool block_size_given)
{
	unsigned int bits = 0;
	struct stat st;

	if (opts->tar || argc - first < 2)
		return 0;
	/* a directory is the ordinary build; anything else must be a layer */
	if (argc - first == 2 && (stat(argv[first + 1], &st) || S_ISDIR(st.st_mode)))
		return 0;
	for (int i = first + 1; i < argc; i++) {
		unsigned int layer_bits;
		int is_image = erofs_layer_probe(argv[i], &layer_bits);

		if (is_image < 0)
			return is_image;
		if (!is_image && argc - first == 2)
			return 0;	/* one source, not an image: the directory build says why */
		if (!is_image) {
			erofs_err("%s: neither a directory nor an EROFS image (rebuild mode "
				  "merges EROFS images; a directory comes alone)", argv[i]);
			return -EINVAL;
		}
		if (same_file(argv[first], argv[i])) {
			erofs_err("%s: the image would overwrite its own layer", argv[first]);
			return -EINVAL;
		}
		if (i == first + 1)
			bits = layer_bits;
	}
	opts->image = argv[first];
	opts->source = argv[first + 1];
	opts->layers = (const char *const *)(argv + first + 1);
	opts->nr_layers = (unsigned int)(argc - first - 1);
	if (!block_size_given) {
		if (bits < EROFS_MIN_BLKSZBITS || bits > EROFS_MAX_BLKSZBITS) {
			erofs_err("%s: a block size of 2^%u bytes: not a layer to merge (give -b to "
				  "choose the merged image's)", argv[first + 1], bits);
			return -EINVAL;
		}
		opts->blkszbits = bits;
	}
	return 1;
}

int mkfs_rebuild_clean(const char *clean, struct erofs_build_options *opts)
{
	if (!clean)
		return 0;
	if (!strcmp(clean, "data")) {
		opts->layer_data = EROFS_LAYER_DATA_COPY;
		return 0;
	}
	if (!strcmp(clean, "rvsp") && opts->nr_layers) {
		opts->layer_data = EROFS_LAYER_DATA_RESERVE;
		return 0;
	}
	if (!strcmp(clean, "rvsp") || !strcmp(clean, "0")) {
		/* erofs-utils ignores these for directories, and rebuild mode
		 * refuses 0; a build here never silently drops what was asked */
		erofs_err("--clean=%s: %s", clean, opts->nr_layers
			  ? "rebuild mode takes --clean=data or --clean=rvsp"
			  : "only rebuild mode (EROFS images as SOURCE) takes it; a directory or "
			    "tar build always copies its data (--clean=data)");
		return -EOPNOTSUPP;
	}
	erofs_err("--clean=%s: expected data, rvsp or 0", clean);
	return -EINVAL;
}

int mkfs_rebuild_check(struct erofs_build_options *opts)
{
	const char *what = NULL;

	if (!opts->nr_layers)
		return 0;
	if (opts->mount_point || opts->product_out || opts->fs_config_file ||
	    opts->file_contexts || opts->block_list_file || opts->nr_excludes) {
		erofs_err("rebuild mode: the Android options and --exclude-* apply to "
			  "directories only");
		return -EINVAL;
	}
	if (opts->blobdev)
		what = "--blobdev";
	else if (opts->layer_data == EROFS_LAYER_DATA_COPY)
		return 0;
	else if (opts->compressor != EROFS_COMPRESS_NONE)
		what = "-z";
	else if (opts->chunkbits)
		what = "--chunksize";
	else if (opts->fragments || opts->dedupe)
		what = "-E fragments or dedupe";
	else if (opts->chunk_form == EROFS_CHUNKS_BLOCKMAP)
		what = "-E force-inode-blockmap";
	if (what) {
		erofs_err("rebuild mode: %s %s; use --clean=data to copy the layers' data in",
			  what, opts->layer_data == EROFS_LAYER_DATA_RESERVE
			  ? "does not apply to --clean=rvsp, which reserves plain blocks"
			  : "does not apply to a metadata-only image, whose chunk indexes "
			    "point into the layers (8-byte indexes name the device)");
		return -EINVAL;
	}
	if (opts->layer_data == EROFS_LAYER_DATA_RESERVE) {
		/* every file gets its own blocks, to be filled in later */
		opts->inline_data = false;
		opts->share_identical_files = false;
	}
	return 0;
}

int mkfs_incremental_setup(int argc, char **argv, int first, struct erofs_build_options *opts,
			   const char *mode, bool block_size_given, bool uuid_given)
{
	struct erofs_base_info base;
	unsigned int bits;
	struct stat st;
	int is_image;

	if (!mode)
		return 0;
	if (strcmp(mode, "data") && strcmp(mode, "rvsp")) {
		erofs_err("--incremental=%s: expected data or rvsp", mode);
		return -EINVAL;
	}
	if (opts->nr_layers) {
		/* erofs-utils 1.9.4 takes only rvsp there, and refuses it later */
		erofs_err("--incremental: rebuild mode's EROFS sources cannot be added to an "
			  "image; merge them with it instead (mkfs.erofs NEW IMAGE LAYER...)");
		return -EINVAL;
	}
	if (argc - first < 1 || stat(argv[first], &st) || !S_ISREG(st.st_mode)) {
		erofs_err("--incremental: %s: expected an existing EROFS image file to add to",
			  argc - first < 1 ? "(none)" : argv[first]);
		return -EINVAL;
	}
	if ((is_image = erofs_layer_probe(argv[first], &bits)) <= 0) {
		if (!is_image)
			erofs_err("--incremental: %s: not an EROFS image", argv[first]);
		return -EINVAL;
	}
	if (opts->image_offset || opts->blobdev || opts->tar_index || opts->block_list_file) {
		erofs_err("--incremental: --offset, --blobdev, --tar=i and --block-list-file "
			  "do not apply to adding a layer");
		return -EINVAL;
	}
	if (erofs_base_info_read(argv[first], &base))
		return -EINVAL;
	if (block_size_given && opts->blkszbits != base.blkszbits) {
		erofs_err("--incremental: %s has %u-byte blocks; -b must agree", argv[first],
			  1u << base.blkszbits);
		return -EINVAL;
	}
	if (base.blocks >= UINT32_MAX && !base.layout_48bit) {
		erofs_err("--incremental: %s already has 2^32 blocks: nothing can be added",
			  argv[first]);
		return -EFBIG;
	}
	opts->blkszbits = base.blkszbits;
	opts->base_blocks = (uint32_t)base.blocks;
	opts->layout_48bit |= base.layout_48bit;
	if (!uuid_given)
		memcpy(opts->uuid, base.uuid, sizeof(opts->uuid));
	if (!opts->label[0])
		memcpy(opts->label, base.label, sizeof(opts->label) - 1);
	opts->incremental = true;
	opts->layer_data = strcmp(mode, "rvsp") ? EROFS_LAYER_DATA_COPY : EROFS_LAYER_DATA_RESERVE;
	if (opts->layer_data == EROFS_LAYER_DATA_RESERVE) {
		opts->inline_data = false;
		opts->share_identical_files = false;
	}
	return 0;
}
