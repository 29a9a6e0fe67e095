// SPDX-License-Identifier: MIT
/*
 * The packed inode (INCOMPAT_FRAGMENTS, Linux 6.1): a regular file no
 * directory names, whose decoded data holds other files' fragments.  It is
 * loaded and checked once, on first use, through the reader's load_inode
 * hook (erofs_read_inode(), which sits above this file: loading it may need
 * the compressed map, which checks fragments here); a packed inode that is
 * unusable stays so, with the same message each time it is asked for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/read/zpacked.h"


#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

enum { PACKED_UNKNOWN, PACKED_LOADING, PACKED_OK, PACKED_BAD };

struct erofs_rd_packed {
	int state;
	int err;
	struct erofs_rd_inode inode;
	char msg[EROFS_ERRMSG_LEN];
};

static struct erofs_rd_packed *packed_state(struct erofs_reader *r)
{
	if (!r->pk) {
		r->pk = calloc(1, sizeof(*r->pk));
		if (!r->pk) {
			fail(r, -ENOMEM, "out of memory");
			return NULL;
		}
	}
	return r->pk;
}

void erofs_packed_free(struct erofs_reader *r)
{
	free(r->pk);
	r->pk = NULL;
}

bool erofs_is_packed_inode(const struct erofs_reader *r, const struct erofs_rd_inode *vi)
{
	return r->pk && r->pk->state == PACKED_OK && vi->nid == r->pk->inode.nid;
}

int erofs_packed_inode(struct erofs_reader *r, const struct erofs_rd_inode **out)
{
	const uint64_t nid = r->sb.packed_nid;
	struct erofs_rd_packed *pk;
	int err;

	*out = NULL;
	if (!(r->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS) || !nid)
		return 0;	/* 6.1 looks for it only then */
	pk = packed_state(r);
	if (!pk)
		return -ENOMEM;
	switch (pk->state) {
	case PACKED_OK:
		*out = &pk->inode;
		return 1;
	case PACKED_BAD:
		return fail(r, pk->err, "%s", pk->msg);
	case PACKED_LOADING:	/* cannot happen: a fragment of it is refused first */
		return fail(r, -EFSCORRUPTED,
			    "packed inode (nid %" PRIu64 "): needs itself to be read", nid);
	}
	pk->state = PACKED_LOADING;
	err = r->load_inode(r, nid, &pk->inode);
	if (!err && !S_ISREG(pk->inode.di.mode))
		err = fail(r, -EFSCORRUPTED, "not a regular file (mode 0%o)",
			   pk->inode.di.mode);
	if (err) {
		pk->state = PACKED_BAD;
		pk->err = err;
		snprintf(pk->msg, sizeof(pk->msg), "packed inode (nid %" PRIu64 "): %.200s",
			 nid, r->err);
		return fail(r, err, "%s", pk->msg);
	}
	pk->state = PACKED_OK;
	*out = &pk->inode;
	return 1;
}

/* The fragment must lie inside the packed inode, whatever the i_size. */
int erofs_z_check_fragment(struct erofs_reader *r, const struct erofs_rd_inode *vi)
{
	const uint64_t len = vi->size - vi->z_frag_la;
	const struct erofs_rd_inode *pk;
	int ret = erofs_packed_inode(r, &pk);

	if (ret < 0) {
		char msg[EROFS_ERRMSG_LEN];

		memcpy(msg, r->err, sizeof(msg));
		return fail(r, ret, "its fragment is in an unusable %.220s", msg);
	}
	if (!ret)
		return fail(r, -EFSCORRUPTED,
			    "fragment of %" PRIu64 " bytes, but the superblock names no packed inode (packed_nid 0)",
			    len);
	if (vi->z_fragoff > pk->size || len > pk->size - vi->z_fragoff)
		return fail(r, -EFSCORRUPTED,
			    "fragment of %" PRIu64 " bytes at offset %" PRIu64 " beyond the end of the packed inode (nid %" PRIu64 ", %" PRIu64 " bytes)",
			    len, vi->z_fragoff, pk->nid, pk->size);
	return 0;
}
