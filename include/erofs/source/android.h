/* SPDX-License-Identifier: MIT */
/*
 * The Android image step: as the scan finds them, fs_config (owners, modes,
 * capabilities) and SELinux labels are applied to every inode, keyed by the
 * path the file will have on the device (--mount-point + its path).
 * See docs/android.md.
 */
#ifndef EROFS_ANDROID_H
#define EROFS_ANDROID_H

#include <stdbool.h>

#include "erofs/common/build.h"

struct erofs_inode;

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
 * --fs-config-file (or the rules of --product-out) and --file-contexts:
 * erofs_android_begin() loads them (*out stays NULL without these options),
 * erofs_android_inode() applies them to one inode as the scan finds it
 * (uid, gid and permission bits, security.capability (v2) when the mask is
 * not zero, security.selinux without a trailing NUL, replacing those read
 * from the host), and erofs_android_end() reports the paths a canned file
 * lacked (complete: the whole tree was seen) and frees it all.  path is
 * relative to the source root ("" for the root).  Errors name the path.
 */
struct erofs_android;
int erofs_android_begin(const struct erofs_build_options *opts, struct erofs_android **out);
int erofs_android_inode(struct erofs_android *a, struct erofs_inode *inode, const char *path);
int erofs_android_end(struct erofs_android *a, bool complete);

#endif
