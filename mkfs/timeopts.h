/* SPDX-License-Identifier: MIT */
/*
 * mkfs.erofs times (mkfs/timeopts.c): -T, --mkfs-time[=SECONDS],
 * --all-time and SOURCE_DATE_EPOCH, resolved once the whole command line
 * is read, since erofs-utils lets --mkfs-time come before or after -T.
 */
#ifndef MKFS_TIMEOPTS_H
#define MKFS_TIMEOPTS_H

#include <stdbool.h>

#include "erofs/common/build.h"

/*
 * build_time_only: a bare --mkfs-time came after the last --all-time, so
 * -T's time is the image's build time only and files keep their mtimes.
 * Returns 0, or -EINVAL after saying why SOURCE_DATE_EPOCH is refused.
 */
int mkfs_resolve_times(struct erofs_build_options *opts, bool build_time_only);

#endif
