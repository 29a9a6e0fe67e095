/* SPDX-License-Identifier: MIT */
/*
 * SELinux labels from a file_contexts file (--file-contexts), text or
 * compiled (file_contexts.bin), looked up through libselinux's labeling API.
 * Without libselinux at build time, opening fails with a clear error.
 */
#ifndef EROFS_SELINUX_H
#define EROFS_SELINUX_H

#include <sys/types.h>

struct erofs_selabel;

/* Opens file (errors name it); -EOPNOTSUPP when built without libselinux. */
int erofs_selabel_open(const char *file, struct erofs_selabel **out);

/*
 * Looks up the label of key (an absolute path such as "/vendor/bin/foo") for
 * a file of the given mode.  Sets *label to a malloc'd context, or to NULL
 * when the file stays unlabelled (<<none>>, or no spec matches).  Any other
 * failure is an error naming display_path.
 */
int erofs_selabel_lookup(struct erofs_selabel *h, const char *key, mode_t mode,
			 const char *display_path, char **label);

void erofs_selabel_close(struct erofs_selabel *h);

#endif
