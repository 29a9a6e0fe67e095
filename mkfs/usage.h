/* SPDX-License-Identifier: MIT */
/* mkfs.erofs --help (mkfs/usage.c). */
#ifndef MKFS_USAGE_H
#define MKFS_USAGE_H

#include <stdio.h>

void mkfs_usage(FILE *out);

#endif
