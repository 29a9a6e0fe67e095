/* SPDX-License-Identifier: MIT */
/* mkfs.erofs --vmdk-desc=FILE (mkfs/vmdk.c). */
#ifndef MKFS_VMDK_H
#define MKFS_VMDK_H

#include "erofs/common/build.h"
#include "erofs/build/layout.h"

/*
 * Writes a VMDK descriptor that joins the image and its extra device (the
 * tar of --tar=i, the --blobdev blob) into one flat disk, so a VM or
 * qemu-nbd sees them as Linux does with -o device=: the same text as
 * erofs-utils 1.9.4 writes.  0, or -errno after saying why.
 */
int mkfs_write_vmdk(const char *path, const struct erofs_build_options *opts,
		    const struct erofs_plan *plan);

#endif
