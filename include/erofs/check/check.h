/* SPDX-License-Identifier: MIT */
/*
 * The image check behind fsck.erofs: a walk of every inode reachable from
 * the root, over an explicit stack, checking inodes, directories, xattrs,
 * symlinks and data, then link counts and overlapping metadata; with an
 * extractor, the tree is recreated as it is walked (fsck --extract=DIR).
 * Problems are printed with erofs_err() (errors) and, at debug level 1 and
 * up, erofs_warn() (warnings), and counted.
 *
 * The nid table with its names and paths is the read layer's
 * (read/nidtab.h), shared with dump.erofs; the ACL value check is exported
 * too: the fuzz harnesses' own walk (tests/fuzz/fuzz-walk.c) uses it.
 */
#ifndef EROFS_CHECK_H
#define EROFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "erofs/check/extract.h"
#include "erofs/read/lookup.h"
#include "erofs/read/nidtab.h"
#include "erofs/read/reader.h"

/* Exit status when memory runs out in the middle of the walk. */
#define EROFS_CHECK_EXIT_NOMEM	2

struct erofs_check_opts {
	int debug;			/* warnings at >= 1, each inode at >= 7 */
	struct erofs_extractor *x;	/* NULL: check only */
	unsigned int workers;		/* threads for file data; <= 1: none */
	bool has_start;			/* --nid/--path: walk from start_nid */
	/*
	 * --no-devices: a regular file's data on an extra device that was not
	 * given is mapped (each chunk's device and bounds checked against the
	 * device table) but not read, and the file is counted as unverified;
	 * with an extractor, such a file is not created, and said so.
	 * Without it, that data fails to read like any other.
	 */
	bool no_devices;
	uint64_t start_nid;
	uint64_t start_parent;		/* its parent, or EROFS_NID_UNKNOWN */
};

struct erofs_check_stats {
	uint64_t ndirs, nfiles, nsymlinks, nspecial, nlinks_extra, data_bytes;
	uint64_t nzfiles, zlogical, zphysical;	/* compressed regular files */
	uint64_t nfragfiles, fragbytes;		/* files with data in the packed inode */
	bool has_packed;
	uint64_t packed_size, packed_physical;
	/* no_devices: regular files with data on extra devices not given,
	 * and the bytes of theirs that lie there (not read); with an
	 * extractor, the names (hard links too) not created for that */
	uint64_t nunverified, unverified_bytes, nnot_extracted;
};

struct erofs_check_result {
	unsigned long errors, warnings;	/* the extractor's not included */
	struct erofs_check_stats st;
};

/*
 * Checks the image open in r.  Returns 0 once the walk is done (res says
 * what it found) or -ENOMEM when its bookkeeping cannot be set up; memory
 * running out later ends the process (EROFS_CHECK_EXIT_NOMEM).
 */
int erofs_check_image(struct erofs_reader *r, const struct erofs_check_opts *o,
		      struct erofs_check_result *res);

/* ---- fsck.erofs on an image opened through liberofs-forge ---- */

struct eforge_image;

/* start_parent when the start's directory is not known (--nid) */
#define EROFS_CHECK_PARENT_UNKNOWN	EROFS_NID_UNKNOWN

/* erofs_check_image() on the image open in img. */
int erofs_check_image_handle(struct eforge_image *img, const struct erofs_check_opts *o,
			     struct erofs_check_result *res);
/* --path: the start and its parent in o; -ENOENT or -ENOTDIR when path
 * names nothing, another negative errno (eforge_error() says why) when
 * the image is damaged on the way. */
int erofs_check_start_path(struct eforge_image *img, const char *path,
			   struct erofs_check_opts *o);
/* --nid: the start in o (its parent known only for the root). */
void erofs_check_start_nid(struct eforge_image *img, uint64_t nid, struct erofs_check_opts *o);
/* Opens the extraction target DIR for o's walk: the tree (or a start's
 * subtree) below DIR, or a non-directory start as DIR itself. */
int erofs_check_extract_open(struct erofs_extractor *x, struct eforge_image *img,
			     const struct erofs_check_opts *o, const char *dir,
			     const struct erofs_extract_opts *xo);
/* What fsck.erofs -d 3 says of the superblock, on out. */
void erofs_check_print_super(FILE *out, struct eforge_image *img);
/* The image's bytes (file size less the offset) and filesystem blocks. */
void erofs_check_image_size(struct eforge_image *img, uint64_t *bytes, uint64_t *blocks);

/* ---- pieces of the walk ---- */

/* An extractor's name for entry name of directory dir (name NULL: dir
 * itself), shown through erofs_nidtab_path() when a message needs it. */
struct erofs_check_xpath {
	struct erofs_xpath base;
	const struct erofs_nidtab *t;
	uint64_t dir;
	const char *name;
	size_t len;
};

const struct erofs_xpath *erofs_check_xpath(struct erofs_check_xpath *p,
					    const struct erofs_nidtab *t, uint64_t dir,
					    const char *name, size_t len);

/* Opens, below the extraction target, directory dir where the walk made it
 * (an ancestor's descriptor may be given: from, standing for directory
 * from_nid; else -1), walking down by the names in t, never following a
 * symlink.  A descriptor, or a negative errno. */
int erofs_nidtab_open_dir(const struct erofs_nidtab *t, struct erofs_extractor *x, uint64_t dir,
			  int from, uint64_t from_nid);

/* A POSIX ACL xattr value as the kernel accepts it (version 2, known tags). */
bool erofs_acl_value_ok(const uint8_t *v, unsigned int size);

#endif
