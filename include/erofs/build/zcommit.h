/* SPDX-License-Identifier: MIT */
/*
 * Compressed files, the committer's side: a compressed segment's pclusters
 * go into the image (or, with -E dedupe, point at identical ones stored
 * before), its last pcluster inline (-E ztailpacking) and its tail into the
 * packed inode (-E fragments); a file whose compressed form does not gain
 * is stored plain, and one identical to an earlier file shares its data.
 */
#ifndef EROFS_ZCOMMIT_H
#define EROFS_ZCOMMIT_H

#include "erofs/source/work.h"

int erofs_zcommit(struct erofs_commit *cc, struct erofs_work *w);

#endif
