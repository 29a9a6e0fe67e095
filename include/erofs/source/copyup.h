/* SPDX-License-Identifier: MIT */
/*
 * What --incremental needs of the image it adds to, besides the merge
 * (imgsrc.h): its identity, and copies of its files for a tar's hard links.
 */
#ifndef EROFS_COPYUP_H
#define EROFS_COPYUP_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/inode.h"

/*
 * The first build, of a tar: a hard link whose target only the image has
 * copies that file up into the new layer (as overlayfs copies a lower file
 * up before linking it), so the link and the target stay one inode.
 */
struct erofs_copy_up;
int erofs_copy_up_open(const struct erofs_build_options *opts, const char *image,
		       struct erofs_copy_up **out);
/* Looks path up: 1 and *size when a non-directory is there, 0 when not,
 * or -errno (reported). */
int erofs_copy_up_find(struct erofs_copy_up *c, const char *path, uint64_t *size);
/* Fills inode as the file found is in the image (owner, mode, times,
 * xattrs, target, device); a regular file's bytes go to fd at pos. */
int erofs_copy_up_fill(struct erofs_copy_up *c, struct erofs_inode *inode, int fd, uint64_t pos);
void erofs_copy_up_close(struct erofs_copy_up *c);

/* What --incremental keeps of the image it adds to. */
struct erofs_base_info {
	unsigned int blkszbits;
	uint64_t blocks;		/* the superblock's, or the file's if larger */
	uint8_t uuid[16];
	char label[17];
	bool layout_48bit;
};

/* Opens path through the reader's checks: 0, or -errno (reported). */
int erofs_base_info_read(const char *path, struct erofs_base_info *info);

#endif
