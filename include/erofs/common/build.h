/* SPDX-License-Identifier: MIT */
/*
 * The build context of mkfs.erofs: what the user asked for (options), filled
 * in by the front end and passed down, read-only, through scan, plan and write.
 */
#ifndef EROFS_BUILD_H
#define EROFS_BUILD_H

#include <regex.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a tar stream is decoded (--ungzip, --unxz, --unzstd). */
enum erofs_tar_decoder {
	EROFS_TAR_PLAIN,	/* refuses a compressed stream, naming its format */
	EROFS_TAR_GZIP,		/* --ungzip (zlib) */
	EROFS_TAR_XZ,		/* --unxz (liblzma: xz and lzma) */
	EROFS_TAR_ZSTD,		/* --unzstd (libzstd) */
};

enum erofs_time_policy {
	EROFS_TIME_KEEP,	/* keep every mtime; epoch = the most common one */
	EROFS_TIME_FIXED,	/* -T: every mtime and the epoch are fixed_time */
	EROFS_TIME_CLAMP,	/* SOURCE_DATE_EPOCH: mtimes clamped to fixed_time */
};

enum erofs_inode_form {
	EROFS_FORM_AUTO,	/* compact where the inode fits, extended otherwise */
	EROFS_FORM_COMPACT,	/* -E force-inode-compact (mtimes then follow the epoch) */
	EROFS_FORM_EXTENDED,	/* -E force-inode-extended */
};

enum erofs_compressor_kind {
	EROFS_COMPRESS_NONE,
	EROFS_COMPRESS_LZ4,
	EROFS_COMPRESS_LZ4HC,
	EROFS_COMPRESS_LZMA,
	EROFS_COMPRESS_DEFLATE,
	EROFS_COMPRESS_ZSTD,
};

/* one line of --compress-hints: files matching regex get this pcluster size */
struct erofs_compress_hint {
	regex_t regex;
	uint32_t pcluster_size;		/* 0: store uncompressed */
	unsigned int algorithm;		/* index into the -z list */
};

/* one algorithm of -z A[:B...] (lib/codec/codec.c) */
#define EROFS_MAX_ALGORITHMS	4
struct erofs_algorithm {
	enum erofs_compressor_kind kind;
	int level;			/* the codec's own scale, default filled in */
	uint32_t dict_size;		/* lzma, deflate, zstd: bytes; 0 until resolved */
	/* -z lzma,lc=N,lp=N,pb=N: liblzma's literal context, literal position
	 * and position bits instead of the level's; the stream's first byte
	 * records them, so readers need nothing more */
	uint8_t lzma_bits_given;	/* EROFS_LZMA_LC | _LP | _PB */
	uint8_t lzma_lc, lzma_lp, lzma_pb;
};
#define EROFS_LZMA_LC	1u
#define EROFS_LZMA_LP	2u
#define EROFS_LZMA_PB	4u

/* -E force-inode-blockmap / force-chunk-indexes (the later one wins) */
enum erofs_chunk_form {
	EROFS_CHUNKS_AUTO,	/* 4-byte block maps, 8-byte indexes with an extra device */
	EROFS_CHUNKS_BLOCKMAP,	/* block maps: refused with an extra device */
	EROFS_CHUNKS_INDEXES,	/* 8-byte indexes (device id, block) everywhere */
};

/* -E fragdedupe[=inode|full], ^fragdedupe: which fragments are stored once */
enum erofs_fragdedupe {
	EROFS_FRAGDEDUPE_FULL,	/* the default: a fragment that ends a stored one points there */
	EROFS_FRAGDEDUPE_INODE,	/* only a whole file's fragment equal to a stored one */
	EROFS_FRAGDEDUPE_OFF,	/* every fragment stored */
};

struct erofs_exclude {
	char *path;		/* relative to the source root, or NULL */
	regex_t regex;		/* used when path is NULL */
};

/* Rebuild mode: where the merged image's file data comes from (--clean=MODE). */
enum erofs_layer_data {
	EROFS_LAYER_DATA_INDEX,		/* default: chunk indexes into the layer images */
	EROFS_LAYER_DATA_COPY,		/* --clean=data: copied in (and recompressed) */
	EROFS_LAYER_DATA_RESERVE,	/* --clean=rvsp: blocks reserved, left unwritten */
};

struct erofs_build_options {
	const char *source;		/* directory to image */
	const char *source_shown;	/* what messages call it (NULL: source, or
					 * "(stdin)"): --incremental reads a piped
					 * tar from a copy */
	const char *image;		/* output path */
	uint64_t image_offset;		/* --offset: bytes before the image in it */
	unsigned int blkszbits;
	int debug_level;
	bool quiet;
	bool show_progress;		/* a terminal, and not --quiet */

	/* ownership and time */
	bool all_root;
	int64_t force_uid, force_gid;	/* -1: keep */
	uint32_t uid_offset, gid_offset;
	enum erofs_time_policy time_policy;
	int64_t fixed_time;		/* -T / SOURCE_DATE_EPOCH */
	bool mkfs_time_set;		/* --mkfs-time: epoch given explicitly */
	int64_t mkfs_time;
	bool ignore_mtime;		/* --ignore-mtime: mtimes follow the epoch */
	enum erofs_inode_form inode_form;
	bool hard_dereference;		/* --hard-dereference: no hard links */
	/*
	 * -E48bit (Linux 6.15): compact inodes keep their own mtime (seconds
	 * from the epoch), the root nid may pass 16 bits, compressed files may
	 * use encoded extents.  -m (6.17, implies 48bit): inode records live in
	 * the data of a hidden metabox inode, compressed with metabox_alg
	 * (an index into algorithms[], or -1: stored plain).
	 */
	bool layout_48bit;
	bool dot_omitted;		/* -E dot-omitted (implies 48bit): no "." entries */
	bool metabox;
	int metabox_alg;
	uint32_t metabox_pcluster_size;	/* bytes */

	/* layout */
	bool inline_data;		/* tails inline with the inode (default) */
	/* --zD: every directory's entries are a whole fragment of the packed
	 * inode (COMPRESSED_FULL), which the writer compresses after them */
	bool compress_dirs;
	/* --MZ=i: the inode records in a zone of their own after everything
	 * else, meta_blkaddr pointing into it; --MZ=id: the directories'
	 * blocks in that zone too, after the records */
	bool mz_inodes, mz_dirdata;
	bool xattr_name_filter;		/* per-inode xattr name filters (default) */
	bool sb_checksum;		/* COMPAT_SB_CHKSUM and its CRC (default; -E nosbcrc) */
	bool plain_xattr_prefixes;	/* -E plain-xattr-prefixes: the long prefix table
					 * in the image even with a packed inode */
	const char **xattr_prefixes;	/* --xattr-prefix: long name prefixes, in order */
	uint32_t nr_xattr_prefixes;
	/* --xattr-inode-digest: every non-empty regular file gets this xattr,
	 * "sha256:" and the SHA-256 of its bytes, under a long prefix of its own
	 * (after the --xattr-prefix ones) named by ishare_xattr_prefix_id */
	const char *inode_digest;	/* NULL: off */
	int xattr_tolerance;		/* -x: share values seen on more inodes; <0: no xattrs */
	uint32_t root_xattr_isize;	/* --root-xattr-isize: the root's inline xattrs
					 * take at least these bytes (zero padded) */

	/* compression (-z, -C, -E legacy-compress) */
	enum erofs_compressor_kind compressor;	/* the first -z algorithm; NONE: no -z */
	int compress_level;		/* its lz4hc level */
	struct erofs_algorithm algorithms[EROFS_MAX_ALGORITHMS];	/* [0] is the above */
	unsigned int nr_algorithms;
	uint32_t pcluster_size;		/* bytes, a multiple of the block size */
	bool legacy_index;		/* full 8-byte lcluster indexes */
	bool compact_2b;		/* compact indexes may use 2-byte packs */
	bool ztailpacking;		/* -E ztailpacking: inline compressed tails */
	bool fragments;			/* -E fragments: tails into the packed inode */
	bool all_fragments;		/* -E all-fragments: whole files into it */
	uint32_t packed_pcluster_size;	/* the packed inode's pclusters; 0: -C */
	enum erofs_fragdedupe fragdedupe;
	bool dedupe;			/* -E dedupe: identical pclusters (with -z) or
					 * blocks (without: --chunksize of one block)
					 * stored once */
	bool dedupe_declined;		/* -E ^dedupe: not even as -E fragments implies */
	/*
	 * Identical pclusters stored once: -E dedupe with -z, or implied by
	 * -E fragments, which shares the pclusters of a file that begins as
	 * an earlier one did, without dedupe's content-defined cut points.
	 */
	bool share_pclusters;
	/*
	 * Whole-file dedup: identical files share their data.  On, except
	 * with --block-list-file and no explicit -E dedupe or --chunksize:
	 * Android's block-map readers refuse a block listed under two files
	 * unless the board asked for shared blocks.
	 */
	bool share_identical_files;
	unsigned int chunkbits;		/* --chunksize: log2 of the chunk size; 0 = off */
	enum erofs_chunk_form chunk_form;
	const char *blobdev;		/* --blobdev: every chunk goes to this extra device */
	unsigned int workers;		/* compression threads */
	uint32_t fsalign_blocks;	/* --fsalignblks: image size a multiple of it; 0: off */
	/* --max-extent-bytes: no extent decodes to more; 0: no limit of ours */
	uint32_t max_extent_bytes;
	/* --max-extent-bytes=-N (-E48bit): every extent takes exactly N input
	 * bytes (max_extent_bytes), compressed whole or stored raw, and a
	 * file's extents are packed byte after byte (unaligned) */
	bool fixed_extents;
	/* --dsunit: each file's data (a block or more of it) starts on a
	 * multiple of this many blocks, as on a RAID stripe; 0 or 1: off */
	uint32_t dsunit;
	struct erofs_compress_hint *hints;	/* first match wins */
	size_t nr_hints;

	/* superblock identity */
	uint8_t uuid[16];
	char label[16];

	struct erofs_exclude *excludes;
	size_t nr_excludes;

	/* the Android image step (lib/source/android.c, docs/android.md); NULL: not given */
	const char *mount_point;	/* --mount-point, as given ("/", "vendor", "/product") */
	const char *product_out;	/* --product-out: rule-based fs_config files */
	const char *fs_config_file;	/* --fs-config-file: canned fs_config */
	const char *file_contexts;	/* --file-contexts: SELinux labels */
	const char *block_list_file;	/* --block-list-file: each file's blocks */

	/* tar input (lib/source/tarsrc.c): --tar=f; source is the tar file, NULL: stdin */
	bool tar;
	enum erofs_tar_decoder tar_decoder;	/* --ungzip, --unxz, --unzstd */
	const char *tar_dump_file;	/* --ungzip=FILE...: the decoded tar written there too */
	bool aufs;			/* --aufs: .wh. files become overlayfs whiteouts */
	bool ovlfs_strip;		/* --ovlfs-strip=1: no whiteouts, no opaque xattrs */
	bool tar_sort_none;		/* --sort=none: data in the tar's order */
	/* --tar=i (lib/build/tarindex.c): metadata only, file data left in the tar */
	bool tar_index;
	const char *tar_mapfile;	/* --tar=i,FILE: the tar mapped by FILE, else a device */
	/* --tar=headerball: the stream has the headers only, no file data:
	 * every regular file is as long as its header says, and all zeros */
	bool tar_headerball;

	/* rebuild mode (lib/source/imgsrc.c): SOURCE is EROFS images, merged */
	const char *const *layers;	/* bottom first */
	unsigned int nr_layers;		/* 0: not rebuild mode */
	enum erofs_layer_data layer_data;	/* --clean=MODE, --incremental=MODE */
	/*
	 * --incremental: image is an EROFS image that SOURCE is added to as a
	 * new top layer.  mkfs first builds SOURCE alone, then merges it over
	 * the image as its first layer, whose data stays where it is
	 * (lib/build/incremental.c); base_blocks is where new blocks start.
	 */
	bool incremental;
	uint32_t base_blocks;
	/* and the image's metadata stays where it is: only the directories the
	 * new layer changes are rewritten, over their own records, the rest is
	 * appended (lib/source/imgbase.c); where that cannot be, the build
	 * fails with EROFS_REWRITE_ALL and runs again without it */
	bool in_place;
	/* its first build, of a tar: a hard link to a file only this image
	 * has copies that file up (lib/source/imgsrc.h) */
	const char *copy_up_from;
};

/* --incremental in place cannot be: build again with in_place off (never reported) */
#define EROFS_REWRITE_ALL	(-ECANCELED)

/* The packed inode's pcluster size: -E fragments=SIZE's, else -C's. */
static inline uint32_t erofs_opts_packed_pcluster(const struct erofs_build_options *opts)
{
	return opts->packed_pcluster_size ? opts->packed_pcluster_size : opts->pcluster_size;
}

/*
 * How far back the packed inode's codec finds a match: beyond it, bytes
 * stored twice in the packed data are compressed twice.  LZMA and zstd
 * (UINT64_MAX) reach so far that a cut file's neighbours lose more than it
 * saves: cut only beyond their windows, images still grew up to 2.3 times
 * (the QEMU suite's dup tree and tests/mkfs-extended-compat.sh's files),
 * so fragments are never cut for them (lib/build/zcommit.c).
 */
static inline uint64_t erofs_opts_packed_window(const struct erofs_build_options *opts)
{
	switch (opts->algorithms[0].kind) {
	case EROFS_COMPRESS_LZ4:
	case EROFS_COMPRESS_LZ4HC:
		return 65535;
	case EROFS_COMPRESS_DEFLATE:
		return 32768;
	default:
		return UINT64_MAX;
	}
}

/* Rebuild mode: the merged image holds only metadata, pointing into the layers. */
static inline bool erofs_opts_layer_index(const struct erofs_build_options *opts)
{
	return opts->nr_layers && opts->layer_data == EROFS_LAYER_DATA_INDEX;
}

/* Whether the image has extra devices: the blob, the tar of --tar=i, the layers. */
static inline bool erofs_opts_extra_device(const struct erofs_build_options *opts)
{
	return opts->blobdev || (opts->tar_index && !opts->tar_mapfile) ||
	       erofs_opts_layer_index(opts);
}

/* The slots of its device table: one per layer, or the blob's or tar's. */
static inline unsigned int erofs_opts_nr_devices(const struct erofs_build_options *opts)
{
	return erofs_opts_layer_index(opts) ? opts->nr_layers : erofs_opts_extra_device(opts);
}

/* Whether chunk-based files get 8-byte indexes rather than 4-byte block maps. */
static inline bool erofs_opts_chunk_indexes(const struct erofs_build_options *opts)
{
	return erofs_opts_extra_device(opts) || opts->chunk_form == EROFS_CHUNKS_INDEXES;
}

#endif
