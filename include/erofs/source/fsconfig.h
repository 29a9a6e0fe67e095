/* SPDX-License-Identifier: MIT */
/*
 * Android fs_config: the owner, mode and capabilities the Android build gives
 * each path of a partition, from one of two sources:
 *
 *  - a canned file (--fs-config-file): "path uid gid mode [capabilities=N]"
 *    lines; the last line for a path wins and every path must be listed;
 *  - the rule files of --product-out (etc/fs_config_dirs, etc/fs_config_files
 *    of system, vendor, oem, odm, product and system_ext): binary records whose
 *    shell-style patterns are tried in order, then libcutils' built-in tables
 *    (fsconfig_tables.h), the first match winning, with root:root 0755
 *    (directories) or 0644 (files) when nothing matches: what Android's
 *    fs_config() answers.
 *
 * Lookup keys are paths as the Android build writes them: "system/bin/sh",
 * "vendor/etc", "" for the root of a canned file (a leading '/' is ignored).
 */
#ifndef EROFS_FSCONFIG_H
#define EROFS_FSCONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/source/fsconfig_tables.h"

struct erofs_fsconfig;

/* Reads a canned fs_config file; errors name the file and line. */
int erofs_fsconfig_load_canned(const char *file, struct erofs_fsconfig **out);

/*
 * Reads the rule files under product_out (a trailing "/" and then a trailing
 * "/system" are dropped first, as libcutils does) and adds the built-in
 * tables after them.  Missing files are skipped; a corrupt one is an error.
 */
int erofs_fsconfig_load_rules(const char *product_out, struct erofs_fsconfig **out);

/*
 * Looks key up (dir: whether it names a directory); the answer depends on
 * nothing but key and dir, so it may be asked per inode in any order.
 * Returns 0 and fills *res, or -ENOENT when a canned file has no line for
 * key (rules always answer, with the defaults if need be).
 */
int erofs_fsconfig_lookup(const struct erofs_fsconfig *fc, const char *key, bool dir,
			  struct erofs_fsconfig_result *res);

/* Where the configuration came from, for messages. */
const char *erofs_fsconfig_source(const struct erofs_fsconfig *fc);
bool erofs_fsconfig_is_canned(const struct erofs_fsconfig *fc);

void erofs_fsconfig_free(struct erofs_fsconfig *fc);

#endif
