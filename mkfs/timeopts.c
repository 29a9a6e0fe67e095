// SPDX-License-Identifier: MIT
/* mkfs.erofs times: -T, --mkfs-time, --all-time, SOURCE_DATE_EPOCH (mkfs/timeopts.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "optvalues.h"
#include "timeopts.h"

int mkfs_resolve_times(struct erofs_build_options *opts, bool build_time_only)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");

	/*
	 * containerd's recommended "-T0 --mkfs-time": a reproducible image
	 * time, the layer's own mtimes.  An explicit --mkfs-time=SECONDS
	 * still wins over -T for the image time.  Without -T, erofs-utils'
	 * bare --mkfs-time changes nothing.
	 */
	if (build_time_only && opts->time_policy == EROFS_TIME_FIXED) {
		if (!opts->mkfs_time_set)
			opts->mkfs_time = opts->fixed_time;
		opts->mkfs_time_set = true;
		opts->time_policy = EROFS_TIME_KEEP;
		return 0;	/* -T was given: SOURCE_DATE_EPOCH does not clamp */
	}
	/* SOURCE_DATE_EPOCH clamps mtimes unless -T fixed them outright */
	if (!sde || !*sde || opts->time_policy == EROFS_TIME_FIXED)
		return 0;
	if (mkfs_parse_int64(sde, "SOURCE_DATE_EPOCH", 0, INT64_MAX, &opts->fixed_time))
		return -EINVAL;
	opts->time_policy = EROFS_TIME_CLAMP;
	return 0;
}
