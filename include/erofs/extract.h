/* SPDX-License-Identifier: MIT */
/*
 * Extraction of an image's tree into a host directory (fsck.erofs --extract).
 *
 * Safety contract: nothing is ever created, changed or followed outside the
 * target directory.  Every operation is relative to a directory descriptor
 * opened with O_DIRECTORY|O_NOFOLLOW (openat, mkdirat, symlinkat, linkat,
 * mknodat, ...); names are single components ('/' and "."/".." refused);
 * new files are created with O_EXCL|O_NOFOLLOW, so a symlink extracted
 * earlier (or planted beforehand) can never redirect a later write.  An
 * existing entry is replaced only with the overwrite option.
 *
 * Each function reports its own failures (erofs_err/erofs_warn naming the
 * path) and returns 0 or a negative errno; the counters in the extractor
 * tell how many errors and warnings were printed.
 */
#ifndef EROFS_EXTRACT_H
#define EROFS_EXTRACT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "erofs/reader.h"

struct erofs_extract_opts {
	bool force;		/* allow a non-empty target and "/" */
	bool overwrite;		/* replace entries that already exist */
	bool preserve_owner;	/* chown to the image's uid/gid */
	bool preserve_perms;	/* exact mode incl. suid/sgid/sticky; else & ~umask */
};

struct erofs_extractor {
	struct erofs_reader *r;
	struct erofs_extract_opts o;
	int rootfd;
	mode_t umask;
	uint8_t *buf;		/* data copy buffer */
	size_t bufsz;
	unsigned long errors, warnings;
};

/* Opens (creating it if missing) the target directory. */
int erofs_extract_open(struct erofs_extractor *x, struct erofs_reader *r,
		       const char *dir, const struct erofs_extract_opts *o);
void erofs_extract_close(struct erofs_extractor *x);

/* A new descriptor on the target directory, standing for the image root. */
int erofs_extract_root(struct erofs_extractor *x);

/* Creates (or, with overwrite, reuses) directory name under parentfd and
 * returns a descriptor on it; its metadata is applied by dir_end, after
 * its children.  path is the image path, for messages. */
int erofs_extract_dir_begin(struct erofs_extractor *x, int parentfd,
			    const char *name, const char *path);
/* Applies owner, xattrs, mode and mtime of vi to dirfd, then closes it. */
int erofs_extract_dir_end(struct erofs_extractor *x, int dirfd, const char *path,
			  const struct erofs_rd_inode *vi);

/* Regular file, symlink, device, fifo or socket, with all its metadata. */
int erofs_extract_node(struct erofs_extractor *x, int parentfd, const char *name,
		       const char *path, const struct erofs_rd_inode *vi);

/* Hard link name under parentfd to target, the path (relative to the
 * target directory) where the same inode was extracted first. */
int erofs_extract_hardlink(struct erofs_extractor *x, int parentfd, const char *name,
			   const char *path, const char *target);

#endif
