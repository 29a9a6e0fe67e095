/* SPDX-License-Identifier: MIT */
/* The tools' --version line and their algorithms (lib/codec/version.c). */
#ifndef EROFS_VERSION_H
#define EROFS_VERSION_H

#include "erofs/common/cmdline.h"

/*
 * --version: "PROG (erofs-forge VERSION, compatible with erofs-utils) 1.9.4".
 * Build scripts probe erofs-utils by deleting everything up to
 * "erofs-utils) " with sed and comparing what is left with the release they
 * need, so the line ends as erofs-utils' own does.  Then, unless codecs_label is NULL, "LABEL: lz4, lz4hc, ..." with
 * the algorithms built in, which scripts grep for (erofs-utils prints
 * "available compressors:" from mkfs, "available decompressors:" from fsck).
 */
void erofs_print_version(const char *prog, const char *codecs_label);

#endif
