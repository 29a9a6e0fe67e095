/* SPDX-License-Identifier: MIT */
/*
 * The image check behind fsck.erofs: a walk of every inode reachable from
 * the root, over an explicit stack, checking inodes, directories, xattrs,
 * symlinks and data, then link counts and overlapping metadata; with an
 * extractor, the tree is recreated as it is walked (fsck --extract=DIR).
 * Problems are printed with erofs_err() (errors) and, at debug level 1 and
 * up, erofs_warn() (warnings), and counted.
 *
 * The nid table, the ACL value check and the path join are exported too:
 * the fuzz harnesses' own walk (tests/fuzz/fuzz-walk.h) uses them.
 */
#ifndef EROFS_CHECK_H
#define EROFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/extract.h"
#include "erofs/reader.h"

/* Exit status when memory runs out in the middle of the walk. */
#define EROFS_CHECK_EXIT_NOMEM	2

struct erofs_check_opts {
	int debug;			/* warnings at >= 1, each inode at >= 7 */
	struct erofs_extractor *x;	/* NULL: check only */
};

struct erofs_check_stats {
	uint64_t ndirs, nfiles, nsymlinks, nspecial, nlinks_extra, data_bytes;
	uint64_t nzfiles, zlogical, zphysical;	/* compressed regular files */
	uint64_t nfragfiles, fragbytes;		/* files with data in the packed inode */
	bool has_packed;
	uint64_t packed_size, packed_physical;
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

/* ---- pieces of the walk ---- */

/* What the walk knows of one nid. */
struct erofs_check_node {
	uint64_t nid;
	uint16_t mode;
	uint8_t used;
	bool bad;			/* inode could not be loaded */
	bool extracted;			/* first_path exists below the target */
	bool overlap_reported;
	bool packed;			/* the packed inode: no directory names it */
	uint32_t nlink;
	uint32_t refs;			/* dirents (other than . and ..) naming it */
	uint64_t iloc, meta_end;
	char *first_path;		/* malloc'ed; freed by erofs_nidtab_free */
};

/* Open addressing, power-of-two size; zero-initialise before use. */
struct erofs_nidtab {
	struct erofs_check_node *tab;
	size_t cap, count;
};

struct erofs_check_node *erofs_nidtab_find(const struct erofs_nidtab *t, uint64_t nid);
/* A new, zeroed node for nid (not already in t); NULL when out of memory. */
struct erofs_check_node *erofs_nidtab_add(struct erofs_nidtab *t, uint64_t nid);
void erofs_nidtab_free(struct erofs_nidtab *t);

/* A POSIX ACL xattr value as the kernel accepts it (version 2, known tags). */
bool erofs_acl_value_ok(const uint8_t *v, unsigned int size);

/* dir + "/" + name (one slash), malloc'ed; NULL when out of memory. */
char *erofs_path_join(const char *dir, const char *name);

#endif
