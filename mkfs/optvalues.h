/* SPDX-License-Identifier: MIT */
/*
 * mkfs.erofs option values (mkfs/optvalues.c).  Each returns 0 or a
 * negative errno after printing why the value is refused.
 */
#ifndef MKFS_OPTVALUES_H
#define MKFS_OPTVALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/build.h"

/* A whole number from min to max ("invalid WHAT 'ARG' ..." otherwise). */
int mkfs_parse_int64(const char *arg, const char *what, int64_t min, int64_t max,
		     int64_t *out);
/* -b: a block size Linux mounts. */
int mkfs_parse_block_size(const char *arg, struct erofs_build_options *opts);
/* -E: a comma-separated list of extended options (list is cut up). */
int mkfs_parse_extended(char *list, struct erofs_build_options *opts);
/* --zfeature-bits=N: bit n turns on the n-th of erofs-utils' -E words. */
int mkfs_parse_zfeature_bits(const char *arg, struct erofs_build_options *opts);
/* One -z entry: ALG[,level=N|,N][,dictsize=BYTES]. */
int mkfs_parse_algorithm(const char *arg, size_t len, struct erofs_algorithm *alg);
/* -z: entries separated by ':', the first for HEAD1, the next for HEAD2. */
int mkfs_parse_compressor(const char *arg, struct erofs_build_options *opts);
/* --compress-hints=FILE: lines of BYTES [ALGORITHM-INDEX] REGEX, read after -b and -C. */
int mkfs_read_compress_hints(const char *file, struct erofs_build_options *opts);
/* -U: a UUID, "clear" or "random". */
int mkfs_parse_uuid(const char *arg, struct erofs_build_options *opts);
/* --xattr-prefix: one long xattr name prefix more. */
int mkfs_add_xattr_prefix(struct erofs_build_options *opts, const char *prefix);
/* --max-extent-bytes=-N: the combination checks; 0 or -EINVAL (reported). */
int mkfs_check_fixed_extents(const struct erofs_build_options *opts);
/* --xattr-inode-digest[=NAME]; name NULL or empty: the default name. */
int mkfs_set_inode_digest(struct erofs_build_options *opts, const char *name);
/* --exclude-path / --exclude-regex. */
int mkfs_add_exclude(struct erofs_build_options *opts, const char *arg, bool regex);

#endif
