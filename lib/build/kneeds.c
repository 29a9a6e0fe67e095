// SPDX-License-Identifier: MIT
/*
 * What a build asks of the kernel: the features the options turn on, each
 * named by the option that asked for it first (the table of releases is
 * lib/common/kernel.c's; this is the build's half, as only a build knows
 * its options and codecs).
 */
#include <stdio.h>
#include <string.h>

#include "erofs/build/kneeds.h"
#include "erofs/codec/codec.h"

void erofs_kneeds_from_options(const struct erofs_build_options *opts,
			       struct erofs_kneeds *needs)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	/* --zD: directories are compressed inodes even without -z */
	const bool compressed = opts->compressor != EROFS_COMPRESS_NONE || opts->compress_dirs;
	char b[40], zb[40];

	memset(needs, 0, sizeof(*needs));
	snprintf(b, sizeof(b), opts->tar_index && !opts->tar_mapfile ? "--tar=i (%u-byte blocks)"
								     : "-b %u", blksz);
	snprintf(zb, sizeof(zb), opts->compressor != EROFS_COMPRESS_NONE ? "-z with -b %u"
						: "--zD with -b %u", blksz);
	erofs_kneeds_add_block_size(needs, opts->blkszbits, compressed, b, zb);
	if (opts->compress_dirs)	/* the directories' data is in the packed inode */
		erofs_kneeds_add(needs, EROFS_KF_FRAGMENTS, "--zD");
	if (opts->compressor != EROFS_COMPRESS_NONE) {
		/* each -z entry writes its own format (lib/codec/codec.c) */
		for (unsigned int i = 0; i < opts->nr_algorithms; i++)
			erofs_kneeds_add_algorithm(needs, erofs_codec_format(opts->algorithms[i].kind), "-z");
		if (opts->pcluster_size > blksz)
			erofs_kneeds_add(needs, EROFS_KF_BIG_PCLUSTER, "-C");
		if (opts->packed_pcluster_size > blksz)
			erofs_kneeds_add(needs, EROFS_KF_BIG_PCLUSTER, "-E fragments=BYTES");
		for (size_t i = 0; i < opts->nr_hints; i++)
			if (opts->hints[i].pcluster_size > blksz)
				erofs_kneeds_add(needs, EROFS_KF_BIG_PCLUSTER, "--compress-hints");
		if (opts->ztailpacking)
			erofs_kneeds_add(needs, EROFS_KF_ZTAILPACKING, "-E ztailpacking");
		if (opts->fragments)
			erofs_kneeds_add(needs, EROFS_KF_FRAGMENTS,
			     opts->all_fragments ? "-E all-fragments" : "-E fragments");
		/* whole pclusters only: this mkfs writes no partial references */
		if (opts->share_pclusters)
			erofs_kneeds_add(needs, EROFS_KF_SHARED_PCLUSTERS,
			     opts->dedupe ? "-E dedupe" : "-E fragments");
	}
	if (opts->nr_xattr_prefixes)
		erofs_kneeds_add(needs, EROFS_KF_XATTR_PREFIXES, "--xattr-prefix");
	/* the digest's own long prefix; COMPAT_ISHARE_XATTRS itself is optional
	 * (Linux 7.0 shares page cache by it, older ones ignore it) */
	if (opts->inode_digest)
		erofs_kneeds_add(needs, EROFS_KF_XATTR_PREFIXES, "--xattr-inode-digest");
	if ((opts->nr_xattr_prefixes || opts->inode_digest) && opts->plain_xattr_prefixes &&
	    opts->fragments)
		erofs_kneeds_add(needs, EROFS_KF_PLAIN_XATTR_PREFIXES, "-E plain-xattr-prefixes");
	if (opts->metabox)
		erofs_kneeds_add(needs, EROFS_KF_METABOX, "-m");
	if (opts->layout_48bit)
		erofs_kneeds_add(needs, EROFS_KF_48BIT, opts->metabox ? "-m" :
		     opts->dot_omitted ? "-E dot-omitted" : "-E48bit");
	if (opts->metabox && opts->metabox_alg >= 0 && opts->compressor == EROFS_COMPRESS_NONE)
		erofs_kneeds_add_algorithm(needs, erofs_codec_format(opts->algorithms[opts->metabox_alg].kind),
			       "-m");
	/* without -z, -E dedupe shares blocks through one-block chunks */
	if (opts->chunkbits)
		erofs_kneeds_add(needs, EROFS_KF_CHUNKS,
		     opts->dedupe && !compressed ? "-E dedupe" : "--chunksize");
	/* the blob, the tar of --tar=i: extra devices named by chunk indexes */
	if (opts->blobdev)
		erofs_kneeds_add(needs, EROFS_KF_DEVICES, "--blobdev");
	if (opts->tar_index)
		erofs_kneeds_add(needs, EROFS_KF_CHUNKS, "--tar=i");
	if (opts->tar_index && !opts->tar_mapfile)
		erofs_kneeds_add(needs, EROFS_KF_DEVICES, "--tar=i");
	/* files of zeros are chunk-based files of holes */
	if (opts->tar_headerball)
		erofs_kneeds_add(needs, EROFS_KF_CHUNKS, "--tar=headerball");
	/* rebuild mode's metadata-only image: chunk indexes into the layers */
	if (erofs_opts_layer_index(opts)) {
		erofs_kneeds_add(needs, EROFS_KF_CHUNKS, "rebuild mode");
		erofs_kneeds_add(needs, EROFS_KF_DEVICES, "rebuild mode");
	}
}
