/* SPDX-License-Identifier: MIT */
/*
 * libcutils' built-in fs_config tables: what Android's fs_config() answers
 * for a path that no partition's etc/fs_config_dirs or etc/fs_config_files
 * names.  Our own transcription of the Android 15 tables
 * (system/core/libcutils/fs_config.cpp at android-15.0.0_r30); see
 * docs/android.md.
 */
#ifndef EROFS_FSCONFIG_TABLES_H
#define EROFS_FSCONFIG_TABLES_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

/* What a rule gives a path: owner, permission bits, capabilities. */
struct erofs_fsconfig_result {
	uint32_t uid, gid;
	uint16_t mode;			/* permission bits (07777), no file type */
	uint64_t capabilities;		/* the permitted (and effective) mask */
};

struct erofs_fsconfig_builtin {
	/*
	 * A shell pattern as the rule files write them: a directory rule
	 * covers the directory and everything below it; '*' also matches '/'.
	 */
	const char *pattern;
	struct erofs_fsconfig_result res;
};

/* The directory or the file table, in the order its rules are tried. */
const struct erofs_fsconfig_builtin *erofs_fsconfig_builtin_table(bool dir, size_t *count);

/* Which Android release the tables follow, for messages and docs. */
#define EROFS_FSCONFIG_BUILTIN_VERSION	"android-15.0.0_r30"

#endif
