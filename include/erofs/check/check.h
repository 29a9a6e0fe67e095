/* SPDX-License-Identifier: MIT */
/*
 * The image check behind fsck.erofs: a walk of every inode reachable from
 * the root, over an explicit stack, checking inodes, directories, xattrs,
 * symlinks and data, then link counts and overlapping metadata; with an
 * extractor, the tree is recreated as it is walked (fsck --extract=DIR).
 * Problems are printed with erofs_err() (errors) and, at debug level 1 and
 * up, erofs_warn() (warnings), and counted.
 *
 * The nid table with its names and paths (lib/read/nidtab.c) and the ACL value
 * check are exported too: the fuzz harnesses' own walk
 * (tests/fuzz/fuzz-walk.h) uses them.
 */
#ifndef EROFS_CHECK_H
#define EROFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/check/extract.h"
#include "erofs/read/reader.h"

/* Exit status when memory runs out in the middle of the walk. */
#define EROFS_CHECK_EXIT_NOMEM	2

struct erofs_check_opts {
	int debug;			/* warnings at >= 1, each inode at >= 7 */
	struct erofs_extractor *x;	/* NULL: check only */
	unsigned int workers;		/* threads for file data; <= 1: none */
	bool has_start;			/* --nid/--path: walk from start_nid */
	uint64_t start_nid;
	uint64_t start_parent;		/* its parent, or EROFS_NID_UNKNOWN */
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

/*
 * fsck --path: the nid at path (components separated by '/', "." and ".."
 * as usual, at most EROFS_LOOKUP_MAXDEPTH deep) and the nid of the
 * directory holding it (the root's: itself).  -ENOENT or -ENOTDIR when
 * there is no such entry, else what the reader said (erofs_reader_error()).
 */
#define EROFS_LOOKUP_MAXDEPTH	2048
int erofs_lookup_path(struct erofs_reader *r, const char *path, uint64_t *nid, uint64_t *parent);

/* ---- pieces of the walk ---- */

/*
 * What the walk knows of one nid.  No path is kept: each node records the
 * directory it is named in (where it was extracted, for a hard link) and
 * its name there, so that paths cost O(inodes) memory in all, whatever the
 * depth, and are built only when a message names one.
 */
struct erofs_check_node {
	uint64_t nid;
	uint64_t parent;		/* directory naming it; the root: its own nid */
	size_t name;			/* its name: offset in the table's name store */
	uint8_t namelen;
	uint8_t used;
	uint16_t mode;
	bool bad;			/* inode could not be loaded */
	bool extracted;			/* exists below the target, at parent/name */
	bool overlap_reported;
	bool packed;			/* the packed inode: no directory names it */
	bool mbox;			/* the metabox inode: no directory names it either */
	bool pending;			/* its first copy is being extracted (a job) */
	uint32_t nlink;
	uint32_t refs;			/* dirents (other than . and ..) naming it */
	uint32_t frame;			/* a directory being walked: 1 + its stack slot */
	uint64_t iloc, meta_end;
};

/* Open addressing, power-of-two size; zero-initialise before use. */
struct erofs_nidtab {
	struct erofs_check_node *tab;
	size_t cap, count;
	char *names;			/* every node's name, back to back */
	size_t names_len, names_cap;
};

struct erofs_check_node *erofs_nidtab_find(const struct erofs_nidtab *t, uint64_t nid);
/* A new, zeroed node for nid (not already in t); NULL when out of memory. */
struct erofs_check_node *erofs_nidtab_add(struct erofs_nidtab *t, uint64_t nid);
/* Records that n is entry name (len bytes) of directory parent (the root:
 * its own nid, name ""); false when out of memory. */
bool erofs_nidtab_name(struct erofs_nidtab *t, struct erofs_check_node *n, uint64_t parent,
		       const char *name, size_t len);
void erofs_nidtab_free(struct erofs_nidtab *t);

/*
 * The image path of entry name (len bytes) of directory dir, or with name
 * NULL of dir itself, from the names in t, escaped as erofs_escape() does.
 * A path longer than out keeps its last components behind "/...".  Costs
 * O(depth); nothing is kept.
 */
const char *erofs_nidtab_path(const struct erofs_nidtab *t, uint64_t dir, const char *name,
			      size_t len, char *out, size_t outlen);
/* The same for a node of t ("(packed inode)" for the packed inode). */
const char *erofs_nidtab_node_path(const struct erofs_nidtab *t, const struct erofs_check_node *n,
				   char *out, size_t outlen);

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
