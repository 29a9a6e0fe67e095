// SPDX-License-Identifier: MIT
/*
 * The reader's metadata block cache: a few whole blocks of the image, so
 * that an inode core, its xattrs, its map header and its index, read one
 * field after another, cost one pread() per block rather than one per
 * field: fsck.erofs --extract of linux-6.1's -zlz4hc image made 301k
 * preads for 84k inodes before, 203k with it.
 *
 * Each reader (and each clone, one per thread) has its own cache, so no
 * lock is needed.  The image does not change under a reader, so nothing
 * is ever invalidated.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/read/rmcache.h"

#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

/* Blocks kept: an inode's block, the block its index runs into, a
 * directory's block and a shared-xattr block, with room to spare. */
#define MCACHE_SLOTS	8

struct erofs_mcache {
	uint64_t blk[MCACHE_SLOTS];	/* UINT64_MAX: empty */
	unsigned int next;		/* the slot to refill next (round robin) */
	uint8_t *buf;			/* MCACHE_SLOTS blocks */
	uint8_t tmp[EROFS_META_AT_MAX];		/* erofs_meta_at() across blocks */
	/* erofs_meta_at() in the metabox: reading its data may need tmp */
	uint8_t mtmp[EROFS_META_AT_MAX];
};

void erofs_mcache_free(struct erofs_reader *r)
{
	if (!r->mc)
		return;
	free(r->mc->buf);
	free(r->mc);
	r->mc = NULL;
}

static struct erofs_mcache *mcache(struct erofs_reader *r)
{
	struct erofs_mcache *mc;

	if (r->mc)
		return r->mc;
	mc = malloc(sizeof(*mc));
	if (!mc)
		return NULL;
	mc->buf = malloc((size_t)MCACHE_SLOTS << r->blkszbits);
	if (!mc->buf) {
		free(mc);
		return NULL;
	}
	for (unsigned int i = 0; i < MCACHE_SLOTS; i++)
		mc->blk[i] = UINT64_MAX;
	mc->next = 0;
	r->mc = mc;
	return mc;
}

/* Points *out at block blk of the image (the last one may be short). */
static int cached_block(struct erofs_reader *r, struct erofs_mcache *mc, uint64_t blk,
			const uint8_t **out)
{
	uint64_t start = blk << r->blkszbits;
	unsigned int i;
	uint8_t *p;
	int err;

	for (i = 0; i < MCACHE_SLOTS; i++)
		if (mc->blk[i] == blk) {
			*out = mc->buf + ((size_t)i << r->blkszbits);
			return 0;
		}
	i = mc->next;
	mc->next = (i + 1) % MCACHE_SLOTS;
	p = mc->buf + ((size_t)i << r->blkszbits);
	mc->blk[i] = UINT64_MAX;
	err = erofs_dev_read(r, p, r->size - start < r->blksz ? (size_t)(r->size - start) : r->blksz,
			     start);
	if (err)
		return err;
	mc->blk[i] = blk;
	*out = p;
	return 0;
}

int erofs_mcache_at(struct erofs_reader *r, uint64_t pos, size_t len, const uint8_t **out)
{
	size_t off = (size_t)(pos & (r->blksz - 1));
	struct erofs_mcache *mc;
	int err;

	if (pos > r->size || len > r->size - pos)
		return erofs_reader_fail(r, -EUCLEAN,
					 "read of %zu bytes at %" PRIu64 " beyond the end of the image (%" PRIu64 " bytes)",
					 len, pos, r->size);
	if (r->mem) {
		*out = r->mem + pos;
		return 0;
	}
	if (off + len > r->blksz)
		return erofs_reader_fail(r, -EINVAL, "internal: a cached read across blocks");
	mc = mcache(r);
	if (!mc)
		return erofs_reader_fail(r, -ENOMEM, "out of memory");
	err = cached_block(r, mc, pos >> r->blkszbits, out);
	if (!err)
		*out += off;
	return err;
}

int erofs_mcache_read(struct erofs_reader *r, void *buf, size_t len, uint64_t pos)
{
	uint8_t *dst = buf;

	/* big reads (directory blocks, chunk tables) and bad ones: straight */
	if (r->mem || len > r->blksz || pos > r->size || len > r->size - pos)
		return erofs_dev_read(r, buf, len, pos);
	while (len) {
		size_t n = r->blksz - (size_t)(pos & (r->blksz - 1));
		const uint8_t *p;
		int err;

		if (n > len)
			n = len;
		err = erofs_mcache_at(r, pos, n, &p);
		if (err)
			return err;
		memcpy(dst, p, n);
		dst += n;
		pos += n;
		len -= n;
	}
	return 0;
}

int erofs_meta_at(struct erofs_reader *r, bool in_mbox, uint64_t pos, size_t len,
		  const uint8_t **out)
{
	struct erofs_mcache *mc;
	int err;

	if (len > EROFS_META_AT_MAX)
		return erofs_reader_fail(r, -EINVAL, "internal: metadata read of %zu bytes", len);
	if (!in_mbox && (r->mem || (pos & (r->blksz - 1)) + len <= r->blksz))
		return erofs_mcache_at(r, pos, len, out);
	mc = mcache(r);
	if (!mc)
		return erofs_reader_fail(r, -ENOMEM, "out of memory");
	if (in_mbox) {
		err = erofs_meta_read(r, true, mc->mtmp, len, pos);
		*out = mc->mtmp;
	} else {
		err = erofs_dev_read(r, mc->tmp, len, pos);
		*out = mc->tmp;
	}
	return err;
}

int erofs_meta_read(struct erofs_reader *r, bool in_mbox, void *buf, size_t len, uint64_t pos)
{
	char msg[EROFS_ERRMSG_LEN];
	int err;

	if (!in_mbox)
		return erofs_mcache_read(r, buf, len, pos);
	if (!r->mbox)
		return fail(r, -EFSCORRUPTED, "metadata in the metabox, but the image has none loaded");
	if (pos > r->mbox->size || len > r->mbox->size - pos)
		return fail(r, -EFSCORRUPTED,
			    "read of %zu bytes at %" PRIu64 " beyond the end of the metabox (%" PRIu64 " bytes)",
			    len, pos, r->mbox->size);
	if (r->mbox_depth)
		return fail(r, -EFSCORRUPTED,
			    "metabox (nid %" PRIu64 "): reading its data needs the metabox itself",
			    r->mbox->nid);
	r->mbox_depth++;
	err = r->read_inode_data(r, r->mbox, buf, len, pos);
	r->mbox_depth--;
	if (err) {
		snprintf(msg, sizeof(msg), "metabox (nid %" PRIu64 "): %.200s", r->mbox->nid, r->err);
		memcpy(r->err, msg, sizeof(r->err));
	}
	return err;
}
