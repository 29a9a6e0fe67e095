/* SPDX-License-Identifier: MIT */
/*
 * A walk's table of nids (lib/read/nidtab.c): what fsck.erofs and
 * dump.erofs know of each inode they reached, and the names that make its
 * path when a message needs one.
 */
#ifndef EROFS_NIDTAB_H
#define EROFS_NIDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	bool no_device;			/* its data is on an extra device not given
					 * (fsck --no-devices): never extracted */
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

#endif
