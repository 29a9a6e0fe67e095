/* SPDX-License-Identifier: MIT */
/*
 * nid -> the inode a build made for it: what finds a layer's hard links
 * and loops, and (--incremental added in place) the base image's inodes
 * already named once.  Open addressing, grown at half full.
 */
#ifndef EROFS_NIDMAP_H
#define EROFS_NIDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "erofs/source/inode.h"

struct erofs_nid_map {
	uint64_t *keys;			/* nid + 1; 0: free */
	struct erofs_inode **inodes;
	size_t mask, used;
};

/* NULL when nid has no inode yet. */
struct erofs_inode *erofs_nid_map_get(const struct erofs_nid_map *m, uint64_t nid);
/* 0, or -ENOMEM. */
int erofs_nid_map_put(struct erofs_nid_map *m, uint64_t nid, struct erofs_inode *inode);
void erofs_nid_map_free(struct erofs_nid_map *m);

#endif
