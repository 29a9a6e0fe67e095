/* SPDX-License-Identifier: MIT */
/*
 * The Android image step: after the scan, fs_config (owners, modes,
 * capabilities) and SELinux labels are applied to every inode, keyed by the
 * path the file will have on the device (--mount-point + its path).
 * See docs/android.md.
 */
#ifndef EROFS_ANDROID_H
#define EROFS_ANDROID_H

#include "erofs/build.h"

struct erofs_tree;

/*
 * The mount point as the lookups use it: leading and trailing slashes
 * dropped, so "/vendor/" and "vendor" give "vendor" and "/" gives "".
 * *out is NULL without --mount-point; otherwise malloc'd.
 */
int erofs_android_mount_point(const struct erofs_build_options *opts, char **out);

/*
 * "/" + mount point + "/" + path with "//" collapsed: the path a file of the
 * tree has on the device ("/vendor/bin/foo", "/system/bin/sh" for mount
 * point "/", "/vendor/" for vendor's root).  mp as erofs_android_mount_point
 * gives it (NULL: none).  malloc'd; NULL when out of memory.
 */
char *erofs_android_device_path(const char *mp, const char *path);

/*
 * Applies --fs-config-file (or the rules of --product-out) and
 * --file-contexts to the scanned tree: uid, gid and permission bits,
 * security.capability (v2, when the mask is not zero) and security.selinux
 * (the context without a trailing NUL), replacing those read from the host.
 * A no-op without these options.  Errors name the path.
 */
int erofs_android_apply(const struct erofs_build_options *opts, struct erofs_tree *tree);

#endif
