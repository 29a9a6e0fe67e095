/* SPDX-License-Identifier: MIT */
/*
 * Extended attributes: read from the source, mapped to EROFS name indexes,
 * shared when a key/value pair occurs on more inodes than -x allows, and
 * encoded as the inline ibody and the shared area.
 */
#ifndef EROFS_XATTR_H
#define EROFS_XATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/common/build.h"

struct erofs_inode;
struct erofs_tree;

struct erofs_xattr {
	char *name;			/* full name, e.g. "user.foo" */
	uint8_t *value;
	uint16_t name_len, value_len;
	uint8_t index;			/* EROFS_XATTR_INDEX_*, or 0x80 | long prefix */
	uint8_t prefix_len;		/* bytes of name covered by the index */
	uint8_t base_index, base_len;	/* the short prefix's (set by planning) */
	int32_t shared_id;		/* id in the shared area, or -1 for inline */
	bool digest;			/* --xattr-inode-digest's: never shared, its
					 * long prefix covers the whole name */
};

struct erofs_xattr_set {
	uint32_t count;
	struct erofs_xattr items[];	/* sorted by name, then value */
};

/* The shared area, in the order it is written. */
struct erofs_xattr_table {
	const struct erofs_xattr **entries;	/* points into inode sets */
	uint32_t count;
	uint32_t size;				/* bytes, a multiple of 4 */
	uint32_t xattr_inodes;			/* inodes with an xattr ibody */
};

/*
 * Reads the xattrs of `fs_path` (not following a final symlink); names that
 * EROFS cannot index are skipped with a warning naming `display_path`.
 * Sets *out to NULL when there are none.
 */
int erofs_xattrs_read(const char *fs_path, const char *display_path,
		      struct erofs_xattr_set **out);
void erofs_xattrs_free(struct erofs_xattr_set *set);

/*
 * Building a set from pairs given one by one (the tar source): puts
 * name=value, replacing a pair of that name; a name EROFS cannot index is
 * skipped with a warning naming display.  0, -E2BIG (reported) or -ENOMEM.
 */
int erofs_xattrs_put(struct erofs_xattr_set **set, const char *name, const void *value,
		     size_t len, const char *display);
/* Removes the pair of that name, if any; an empty set becomes NULL. */
void erofs_xattrs_remove(struct erofs_xattr_set **set, const char *name);
/* Orders a set built by erofs_xattrs_put() as erofs_xattrs_read() does. */
void erofs_xattrs_sort(struct erofs_xattr_set *set);
/* The largest ibody the set can need (every pair inline), known before planning. */
uint32_t erofs_xattr_ibody_max(const struct erofs_xattr_set *set);

/*
 * Decides which pairs go to the shared area, gives them ids counted from
 * first_id (the area's byte offset from xattr_blkaddr, over 4) and sizes every
 * inode's ibody (inode->xattr_icount, inode->xattr_size).  -E2BIG: *too_big's
 * xattrs do not fit an inode (not reported).
 */
int erofs_xattr_plan(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     uint32_t first_id, struct erofs_xattr_table *table,
		     struct erofs_inode **too_big);
void erofs_xattr_table_free(struct erofs_xattr_table *table);

/*
 * A --xattr-prefix argument: 0 with its base prefix's index in *base when
 * it extends user., trusted. or security.; else -EINVAL (not reported).
 */
int erofs_xattr_prefix_base(const char *prefix, uint8_t *base);
/*
 * A --xattr-inode-digest name: 0 with the index of the short prefix it
 * starts with (0: none, the whole name is the long prefix's infix) and that
 * prefix's length; -EINVAL when empty or longer than 255 bytes.
 */
int erofs_xattr_digest_name(const char *name, uint8_t *base, size_t *base_len);
/* Long prefixes in the table: --xattr-prefix ones, then the digest's. */
uint32_t erofs_xattr_prefix_count(const struct erofs_build_options *opts);
/*
 * Adds the digest pair to a set (replacing a pair of that name), its value
 * zeros for now; the pipeline fills it in.  0 or -ENOMEM.
 */
int erofs_xattrs_add_digest(const struct erofs_build_options *opts, struct erofs_xattr_set **set);
/* The set's digest pair, or NULL. */
struct erofs_xattr *erofs_xattrs_digest(struct erofs_xattr_set *set);
/* The long prefix table's bytes, and the table itself. */
uint32_t erofs_xattr_prefix_table_size(const struct erofs_build_options *opts);
void erofs_xattr_prefix_table_encode(const struct erofs_build_options *opts, uint8_t *out);

void erofs_xattr_table_encode(const struct erofs_xattr_table *table, uint8_t *out);
/* name_filter: fill in the header's name filter (-E xattr-name-filter, the default). */
void erofs_xattr_ibody_encode(const struct erofs_inode *inode, bool name_filter, uint8_t *out);

#endif
