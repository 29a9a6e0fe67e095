// SPDX-License-Identifier: MIT
/*
 * The metabox (INCOMPAT_METABOX, Linux 6.17): metadata compression.  The
 * superblock's metabox_nid (first extension slot) names an ordinary inode,
 * usually compressed, whose decoded data holds inode slots: a nid with
 * EROFS_NID_METABOX_BIT (bit 63) is the inode at byte 32 * (nid & ~bit 63)
 * of that data, and every piece of metadata that follows such an inode
 * (xattrs, inline data, chunk table, map header and index, inline tail
 * pcluster) is read from the same data.  With COMPAT_SHARED_EA_IN_METABOX
 * the shared xattrs live there too, from byte xattr_blkaddr * blksz.
 *
 * Its data is read through erofs_meta_read() (lib/read/rmcache.c), which
 * reaches erofs_read_data() through the reader's read_inode_data hook.
 *
 * Written for erofs-forge from fs/erofs of Linux 6.17 (erofs_fs.h,
 * super.c, inode.c: read to learn the format, no code taken).  The data is
 * read through the reader's normal path (lib/read/zread.c keeps the metabox's
 * last mapped and decoded extents in a slot of their own, so metadata
 * reads do not evict a file's extent); a metabox that would need itself to
 * be read (its nid in the metabox, its fragment in a packed inode that
 * lives in the metabox) is refused, never followed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "erofs/read/rmetabox.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

int erofs_mbox_load(struct erofs_reader *r)
{
	const uint64_t nid = r->sb.metabox_nid;
	struct erofs_rd_inode *vi;
	char msg[EROFS_ERRMSG_LEN];
	int err;

	if (!(r->sb.feature_incompat & EROFS_INCOMPAT_METABOX))
		return 0;
	if (r->sb.sb_extslots < 1)
		return fail(r, -EFSCORRUPTED,
			    "superblock: the metabox feature, but no extension slot for its nid (sb_extslots 0)");
	if (nid & EROFS_NID_METABOX_BIT)
		return fail(r, -EFSCORRUPTED,
			    "superblock: metabox nid %" PRIu64 " lies in the metabox itself", nid);
	if ((r->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS) && r->sb.packed_nid == nid)
		return fail(r, -EFSCORRUPTED,
			    "superblock: metabox nid %" PRIu64 " is the packed inode", nid);
	vi = malloc(sizeof(*vi));
	if (!vi)
		return fail(r, -ENOMEM, "out of memory");
	err = erofs_read_inode(r, nid, vi);
	if (!err && !S_ISREG(vi->di.mode))
		err = fail(r, -EFSCORRUPTED, "not a regular file (mode 0%o)", vi->di.mode);
	if (err) {
		free(vi);
		snprintf(msg, sizeof(msg), "metabox inode (nid %" PRIu64 "): %.200s", nid, r->err);
		return fail(r, err, "%s", msg);
	}
	r->mbox = vi;
	/* fsck's map of metadata bytes puts the metabox's after the image's */
	r->mbox_vbase = (r->size + EROFS_SLOT_SIZE - 1) & ~(uint64_t)(EROFS_SLOT_SIZE - 1);
	return 0;
}

void erofs_mbox_free(struct erofs_reader *r)
{
	if (!r->devs_borrowed)	/* a clone shares its source's */
		free(r->mbox);
	r->mbox = NULL;
}
