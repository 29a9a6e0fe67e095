// SPDX-License-Identifier: MIT
/*
 * Lcluster index entries of compressed files, full (8 bytes each) and
 * compact (packs of 2-byte or 4-byte entries), decoded one at a time as
 * Linux 6.1's zmap.c decodes them, quirks included (see lib/read/zread.c for
 * the terms; include/erofs/read/zread.h for erofs_z_load_lcluster()).
 *
 * Written for erofs-forge from the on-disk format; fs/erofs/zmap.c was
 * read to learn it, no code was taken.  Entries are read through the
 * reader's metadata cache (lib/read/rmcache.c), a pack at a time.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rmcache.h"
#include "erofs/read/zindexread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

/* len (<= EROFS_META_AT_MAX) bytes of vi's index at pos, or NULL. */
static const uint8_t *meta_at(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			      uint64_t pos, unsigned int len)
{
	const uint8_t *p;

	if (!vi->in_mbox && (pos > r->size || len > r->size - pos)) {
		fail(r, -EFSCORRUPTED, "index read at byte %" PRIu64 " beyond the end of the image",
		     pos);
		return NULL;
	}
	return erofs_meta_at(r, vi->in_mbox, pos, len, &p) ? NULL : p;
}

static int load_full(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		     uint64_t lcn, struct erofs_lcluster *lc)
{
	const uint8_t *e = meta_at(r, vi, vi->z_index + lcn * EROFS_LCLUSTER_INDEX_SIZE,
				   EROFS_LCLUSTER_INDEX_SIZE);
	unsigned int advise;

	if (!e)
		return -EIO;
	advise = get_le16(e);
	lc->type = advise & 3;
	if (lc->type == EROFS_LCLUSTER_NONHEAD) {
		lc->clusterofs = 1u << vi->z_lclusterbits;
		lc->delta[0] = get_le16(e + 4);
		lc->delta[1] = get_le16(e + 6);
		if (lc->delta[0] & EROFS_LI_D0_CBLKCNT) {
			if (!(vi->z_advise & (EROFS_ZADVISE_BIG_PCLUSTER_1 |
					      EROFS_ZADVISE_BIG_PCLUSTER_2)))
				return fail(r, -EFSCORRUPTED,
					    "lcluster %" PRIu64 ": block count (CBLKCNT) without big pclusters",
					    lcn);
			lc->cblkcnt = lc->delta[0] & ~EROFS_LI_D0_CBLKCNT;
			lc->has_cblkcnt = true;
			lc->delta[0] = 1;
		}
		return 0;
	}
	lc->partialref = advise & EROFS_LI_PARTIAL_REF;
	lc->clusterofs = get_le16(e + 2);
	if (lc->clusterofs >= 1u << vi->z_lclusterbits)
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 ": clusterofs %u beyond the lcluster (%u bytes)",
			    lcn, lc->clusterofs, 1u << vi->z_lclusterbits);
	lc->pblk = get_le32(e + 4);
	return 0;
}

/* Entry at bit pos of a pack: lobits of lo, then 2 bits of type. */
static unsigned int cdecode(const uint8_t *in, unsigned int pos, unsigned int lobits,
			    unsigned int *type)
{
	uint32_t v = get_le32(in + pos / 8) >> (pos & 7);

	*type = (v >> lobits) & 3;
	return v & ((1u << lobits) - 1);
}

/* Distance from entry i on to the next head, the kernel's way: counted
 * inside the pack, then from the look-ahead kept in its last entry. */
static unsigned int lookahead_distance(const uint8_t *in, unsigned int bits_each,
				       unsigned int vcnt, unsigned int lobits, unsigned int i)
{
	unsigned int lo = 0, type, d1 = 0;

	do {
		lo = cdecode(in, bits_each * i, lobits, &type);
		if (type != EROFS_LCLUSTER_NONHEAD)
			return d1;
		++d1;
	} while (++i < vcnt);
	if (!(lo & EROFS_LI_D0_CBLKCNT))
		d1 += lo - 1;	/* unsigned: lo == 0 takes one back */
	return d1;
}

static int load_compact(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			uint64_t lcn, bool lookahead, struct erofs_lcluster *lc)
{
	const unsigned int lobits = erofs_compact_lobits(vi->z_lclusterbits);
	const bool big = vi->z_advise & EROFS_ZADVISE_BIG_PCLUSTER_1;
	unsigned int amortshift, vcnt, packsize, bits_each, lo, type, nblk;
	uint64_t pos = vi->z_index, idx = lcn, pack;
	uint8_t in[EROFS_Z_COMPACT_2B_PACK + 4];
	const uint8_t *p;
	int i;

	if (idx < vi->z_initial_4b) {
		amortshift = 2;
	} else {
		pos += vi->z_initial_4b * 4;
		idx -= vi->z_initial_4b;
		if (idx < vi->z_compacted_2b) {
			amortshift = 1;
		} else {
			pos += vi->z_compacted_2b * 2;
			idx -= vi->z_compacted_2b;
			amortshift = 2;
		}
	}
	pos += idx << amortshift;
	vcnt = amortshift == 2 ? 2 : 16;
	packsize = vcnt << amortshift;
	bits_each = (packsize - 4) * 8 / vcnt;
	/* packs are aligned to their size (the regions start aligned) */
	pack = pos & ~(uint64_t)(packsize - 1);
	i = (int)((pos - pack) >> amortshift);
	p = meta_at(r, vi, pack, packsize);
	if (!p)
		return -EIO;
	memcpy(in, p, packsize);
	memset(in + packsize, 0, 4);

	lo = cdecode(in, bits_each * (unsigned int)i, lobits, &type);
	lc->type = type;
	if (type == EROFS_LCLUSTER_NONHEAD) {
		lc->clusterofs = 1u << vi->z_lclusterbits;
		if (lookahead)
			lc->delta[1] = lookahead_distance(in, bits_each, vcnt, lobits,
							  (unsigned int)i);
		if (lo & EROFS_LI_D0_CBLKCNT) {
			if (!big)
				return fail(r, -EFSCORRUPTED,
					    "lcluster %" PRIu64 ": block count (CBLKCNT) without big pclusters",
					    lcn);
			lc->cblkcnt = lo & ~EROFS_LI_D0_CBLKCNT;
			lc->has_cblkcnt = true;
			lc->delta[0] = 1;
			return 0;
		}
		if ((unsigned int)i + 1 != vcnt) {
			lc->delta[0] = lo;
			return 0;
		}
		/* the last entry keeps the look-ahead: delta[0] comes from the one before */
		lo = cdecode(in, bits_each * (unsigned int)(i - 1), lobits, &type);
		if (type != EROFS_LCLUSTER_NONHEAD)
			lo = 0;
		else if (lo & EROFS_LI_D0_CBLKCNT)
			lo = 1;
		lc->delta[0] = lo + 1;
		return 0;
	}
	lc->clusterofs = lo;
	/* the head's block: the pack's base plus the pclusters counted before it */
	if (!big) {
		nblk = 1;
		while (i > 0) {
			--i;
			lo = cdecode(in, bits_each * (unsigned int)i, lobits, &type);
			if (type == EROFS_LCLUSTER_NONHEAD)
				i -= (int)lo;	/* jump to its head */
			if (i >= 0)
				++nblk;
		}
	} else {
		nblk = 0;
		while (i > 0) {
			--i;
			lo = cdecode(in, bits_each * (unsigned int)i, lobits, &type);
			if (type == EROFS_LCLUSTER_NONHEAD) {
				if (lo & EROFS_LI_D0_CBLKCNT) {
					--i;	/* its head, counted here */
					nblk += lo & ~EROFS_LI_D0_CBLKCNT;
					continue;
				}
				if (lo <= 1)
					return fail(r, -EFSCORRUPTED,
						    "lcluster %" PRIu64 ": delta[0] %u before it in a big-pcluster pack (the first nonhead must hold the block count)",
						    lcn, lo);
				i -= (int)lo - 2;
				continue;
			}
			++nblk;
		}
	}
	lc->pblk = get_le32(in + packsize - 4) + nblk;	/* 32-bit, as the kernel's */
	return 0;
}

int erofs_z_load_lcluster(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			  uint64_t lcn, bool lookahead, struct erofs_lcluster *lc)
{
	memset(lc, 0, sizeof(*lc));
	lc->lcn = lcn;
	if (lcn >= vi->z_nlclusters)
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 " beyond the index (%" PRIu64 " entries)",
			    lcn, vi->z_nlclusters);
	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL)
		return load_full(r, vi, lcn, lc);
	if (vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT)
		return load_compact(r, vi, lcn, lookahead, lc);
	return fail(r, -EINVAL, "not a compressed layout (%u)", vi->layout);
}
