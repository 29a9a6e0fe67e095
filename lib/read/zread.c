// SPDX-License-Identifier: MIT
/*
 * Compressed files for the image reader: map headers, extent mapping and
 * decoding (see include/erofs/read/zread.h; the superblock's settings:
 * lib/read/zconfig.c, lcluster index entries: lib/read/zindexread.c, extent records:
 * lib/read/zextread.c).
 *
 * Written for erofs-forge from the on-disk format as Linux 6.1 reads it
 * (fs/erofs/zmap.c and decompressor.c were read to learn the format; no
 * code was taken from them).  The index decoding deliberately follows the
 * kernel's semantics, including its quirks, so that what fsck accepts is
 * what the kernel can read; on top of that, every extent mapped has all of
 * its index entries checked for consistency, which the kernel only trusts.
 *
 * Terms: an lcluster is one block of the file's logical bytes, with one
 * index entry each.  A HEAD entry (PLAIN for uncompressed, HEAD1/HEAD2 for
 * compressed) starts an extent at byte clusterofs of its lcluster; NONHEAD
 * entries continue it.  Each extent is stored in one pcluster of one or
 * more blocks (big pclusters: the count sits in the first NONHEAD, CBLKCNT),
 * except, with ztailpacking, the file's last extent: its pcluster is inline
 * in the inode's metadata right after the index (h_idata_size bytes).
 *
 * Fragments (6.1): a file's last extent may instead be a fragment, bytes of
 * the packed inode's decoded data from h_fragmentoff on (FULL indexes keep
 * the high 32 bits of the offset in the tail head's block address); or the
 * map header's bit 63 says the whole file is one, with no index at all.
 * As in 6.1, the tail extent is the one whose head the file's last byte
 * maps to, found when the inode is loaded; if that head is lcluster 0,
 * the whole file is read from the fragment.  Uncompressed pclusters may be
 * interlaced (advise INTERLACED): the block is a ring, byte p of the file
 * at p % blksz, as 6.1's plain transform copies it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "erofs/codec/zdecode.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/rmcache.h"
#include "erofs/read/zextread.h"
#include "erofs/read/zindexread.h"
#include "erofs/read/zpacked.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

/* The last extent mapped and the last decoded, for one kind of reader. */
struct zslot {
	/* the last extent mapped: sequential reads map each extent once */
	bool map_valid;
	uint64_t map_nid, map_index;
	struct erofs_map map;

	/* the last extent decoded */
	bool dec_valid;
	uint64_t dec_nid;
	struct erofs_map dec_map;
	uint8_t *dec;
	size_t dec_cap;

	/* 4-byte extent records: where the last record mapped starts */
	bool run_valid;
	uint64_t run_nid, run_idx, run_pa;
};

struct erofs_zcache {
	/* inline tail pclusters of inodes in the metabox */
	uint8_t ibuf[1u << EROFS_MAX_BLKSZBITS];

	/* [0] files, [1] the packed inode, [2] the metabox: a file's fragment
	 * and its metadata in the metabox are read between its own extents
	 * without evicting them */
	struct zslot slot[3];
	uint8_t *pbuf;			/* compressed input */
	size_t pbuf_cap;
	struct erofs_zdecoder *decoder;	/* lzma, deflate, zstd contexts */
};

static struct erofs_zcache *zcache(struct erofs_reader *r)
{
	if (!r->zc) {
		r->zc = calloc(1, sizeof(*r->zc));
		if (!r->zc) {
			fail(r, -ENOMEM, "out of memory");
			return NULL;
		}
	}
	return r->zc;
}

void erofs_z_release(struct erofs_reader *r)
{
	if (!r->zc)
		return;
	for (unsigned int i = 0; i < sizeof(r->zc->slot) / sizeof(r->zc->slot[0]); i++)
		free(r->zc->slot[i].dec);
	free(r->zc->pbuf);
	erofs_zdecoder_free(r->zc->decoder);
	free(r->zc);
	r->zc = NULL;
}

static struct zslot *zslot_of(const struct erofs_reader *r, struct erofs_zcache *zc,
			      const struct erofs_rd_inode *vi)
{
	if (r->mbox && vi->nid == r->mbox->nid)
		return &zc->slot[2];
	return &zc->slot[erofs_is_packed_inode(r, vi)];
}

/* A fragment needs the superblock feature, and the packed inode cannot be one. */
static int fragment_allowed(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			    const char *what)
{
	if (!(r->sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS))
		return fail(r, -EFSCORRUPTED,
			    "%s a fragment of the packed inode, but the superblock lacks the fragments feature",
			    what);
	if (vi->nid == r->sb.packed_nid)
		return fail(r, -EFSCORRUPTED,
			    "%s a fragment, but this is the packed inode itself (it would need itself to be read)",
			    what);
	return 0;
}

/* ------------------------------------------------------------------ */
/* map header                                                          */

static int setup_tail_fragment(struct erofs_reader *r, struct erofs_rd_inode *vi);

int erofs_z_setup_inode(struct erofs_reader *r, struct erofs_rd_inode *vi)
{
	const uint32_t incompat = r->sb.feature_incompat;
	const uint64_t limit = vi->in_mbox ? r->mbox->size : r->size;
	uint64_t hdr, total, bytes;
	uint8_t h[EROFS_ZMAP_HEADER_SIZE];
	int err;

	vi->z_blocks = vi->di.u;
	if (!vi->size)
		return 0;	/* nothing to map: the kernel never reads the header */
	hdr = (vi->meta_end + 7) & ~(uint64_t)7;
	if (hdr > limit || EROFS_ZMAP_HEADER_SIZE > limit - hdr)
		return fail(r, -EFSCORRUPTED,
			    "compression map header beyond the end of the %s",
			    vi->in_mbox ? "metabox" : "image");
	err = erofs_meta_read(r, vi->in_mbox, h, sizeof(h), hdr);
	if (err)
		return err;
	vi->z_header = hdr;

	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL &&
	    !(incompat & (EROFS_INCOMPAT_COMPR_CFGS | EROFS_INCOMPAT_ZTAILPACKING |
			  EROFS_INCOMPAT_FRAGMENTS | EROFS_INCOMPAT_48BIT))) {
		/* the kernel ignores this header: plain LZ4, one-block lclusters */
		vi->z_advise = 0;
		vi->z_algtype[0] = vi->z_algtype[1] = EROFS_COMPR_LZ4;
	} else {
		if (h[7] >> EROFS_ZFRAGMENT_INODE_BIT) {
			/* the 8 bytes are the offset, bit 63 set; no index */
			err = fragment_allowed(r, vi, "the whole file is");
			if (err)
				return err;
			vi->z_advise = EROFS_ZADVISE_FRAGMENT;
			vi->z_whole_fragment = true;
			vi->z_fragoff = get_le64(h) & ~(1ull << 63);
			vi->z_frag_la = 0;
			vi->z_lclusterbits = r->blkszbits;
			vi->meta_end = hdr + EROFS_ZMAP_HEADER_SIZE;
			return erofs_z_check_fragment(r, vi);
		}
		vi->z_advise = get_le16(h + 4);
		if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL &&
		    (vi->z_advise & EROFS_ZADVISE_EXTENTS))
			return erofs_zext_setup(r, vi, h, hdr);
		vi->z_algtype[0] = h[6] & 15;
		vi->z_algtype[1] = h[6] >> 4;
		for (unsigned int i = 0; i < 2; i++)
			if (vi->z_algtype[i] >= EROFS_COMPR_MAX)
				return fail(r, -EOPNOTSUPP, "unknown HEAD%u compression algorithm %u",
					    i + 1, vi->z_algtype[i]);
		if (h[7] & 7)
			return fail(r, -EOPNOTSUPP,
				    "lclusters of %u blocks are not supported (only one block)",
				    1u << (h[7] & 7));
		if (!(incompat & EROFS_INCOMPAT_COMPR_CFGS) &&
		    (vi->z_advise & (EROFS_ZADVISE_BIG_PCLUSTER_1 | EROFS_ZADVISE_BIG_PCLUSTER_2)))
			return fail(r, -EFSCORRUPTED,
				    "big pclusters (advise 0x%04x) without the superblock's big pcluster feature",
				    vi->z_advise);
		if (vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT &&
		    !(vi->z_advise & EROFS_ZADVISE_BIG_PCLUSTER_1) !=
		    !(vi->z_advise & EROFS_ZADVISE_BIG_PCLUSTER_2))
			return fail(r, -EFSCORRUPTED,
				    "compact index with only one of the two big pcluster bits (advise 0x%04x)",
				    vi->z_advise);
		/* h_fragmentoff and h_idata_size share the header's bytes */
		if ((vi->z_advise & EROFS_ZADVISE_FRAGMENT) &&
		    (vi->z_advise & EROFS_ZADVISE_INLINE_PCLUSTER))
			return fail(r, -EFSCORRUPTED,
				    "both an inline tail pcluster and a tail fragment (advise 0x%04x)",
				    vi->z_advise);
		if (vi->z_advise & EROFS_ZADVISE_INLINE_PCLUSTER) {
			vi->z_idata_size = get_le16(h + 2);
			if (!vi->z_idata_size)
				return fail(r, -EFSCORRUPTED,
					    "inline tail pcluster (ztailpacking) of 0 bytes");
		}
		if (vi->z_advise & EROFS_ZADVISE_FRAGMENT) {
			err = fragment_allowed(r, vi, "the tail is");
			if (err)
				return err;
			vi->z_fragoff = get_le32(h);
		}
	}
	vi->z_lclusterbits = r->blkszbits;
	total = ((vi->size - 1) >> vi->z_lclusterbits) + 1;
	vi->z_nlclusters = total;

	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL) {
		/* the header, 8 reserved bytes, then 8 bytes an lcluster */
		vi->z_index = hdr + EROFS_ZMAP_HEADER_SIZE + 8;
		bytes = total * EROFS_LCLUSTER_INDEX_SIZE;	/* total < 2^52 */
	} else {
		uint64_t n0, rest;

		vi->z_index = hdr + EROFS_ZMAP_HEADER_SIZE;
		/* 4-byte entries until the 2-byte packs can start 32-byte aligned */
		n0 = (32 - vi->z_index % 32) / 4;
		if (n0 == 8)
			n0 = 0;
		vi->z_initial_4b = n0;
		vi->z_compacted_2b = 0;
		if ((vi->z_advise & EROFS_ZADVISE_COMPACTED_2B) && n0 < total)
			vi->z_compacted_2b = (total - n0) / 16 * 16;
		if (total <= n0) {
			bytes = (total + 1) / 2 * EROFS_Z_COMPACT_4B_PACK;
		} else {
			rest = total - n0 - vi->z_compacted_2b;
			bytes = n0 * 4 + vi->z_compacted_2b * 2 + (rest + 1) / 2 * EROFS_Z_COMPACT_4B_PACK;
		}
	}
	if (vi->z_index > limit || bytes > limit - vi->z_index)
		return fail(r, -EFSCORRUPTED,
			    "lcluster index (%" PRIu64 " entries) beyond the end of the %s",
			    total, vi->in_mbox ? "metabox" : "image");
	vi->meta_end = vi->z_index + bytes;
	if (vi->z_idata_size) {
		/* right after the entry (or pack) of the last lcluster, which
		 * ends the index; it may not cross into the next block */
		vi->z_idataoff = vi->meta_end;
		if ((vi->z_idataoff & (r->blksz - 1)) + vi->z_idata_size > r->blksz)
			return fail(r, -EFSCORRUPTED,
				    "inline tail pcluster of %u bytes at offset %" PRIu64 " crosses a block boundary",
				    vi->z_idata_size, vi->z_idataoff & (r->blksz - 1));
		if (vi->z_idata_size > limit - vi->z_idataoff)
			return fail(r, -EFSCORRUPTED,
				    "inline tail pcluster beyond the end of the %s",
				    vi->in_mbox ? "metabox" : "image");
		vi->meta_end += vi->z_idata_size;
	}
	if (vi->z_advise & EROFS_ZADVISE_FRAGMENT)
		return setup_tail_fragment(r, vi);
	return 0;
}

/* ------------------------------------------------------------------ */
/* extents                                                             */

static const char *type_name(unsigned int type)
{
	switch (type) {
	case EROFS_LCLUSTER_PLAIN: return "uncompressed";
	case EROFS_LCLUSTER_HEAD1: return "HEAD1";
	case EROFS_LCLUSTER_HEAD2: return "HEAD2";
	default: return "non-head";
	}
}

/* Finds the head of the extent holding la: lcn itself, or a walk back
 * (every step goes back at least one lcluster).  Extents decode to at most
 * EROFS_Z_MAX_DSIZE bytes, so the walk stops there, except in files with a
 * tail fragment, whose tail extent is read from the packed inode in pieces
 * and may be longer (6.1 sets no limit on it either). */
static int find_head(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
		     struct erofs_lcluster *head)
{
	const unsigned int bits = vi->z_lclusterbits;
	const uint64_t lcn = la >> bits;
	const uint64_t reach = vi->z_advise & EROFS_ZADVISE_FRAGMENT ? UINT64_MAX :
			       (EROFS_Z_MAX_DSIZE >> bits) + 1;
	const unsigned int endoff = (unsigned int)(la & ((1u << bits) - 1));
	uint64_t cur = lcn;
	unsigned int dist;
	int err;

	err = erofs_z_load_lcluster(r, vi, lcn, false, head);
	if (err)
		return err;
	if (head->type != EROFS_LCLUSTER_NONHEAD) {
		if (endoff >= head->clusterofs)
			return 0;
		/* la lies before this head: it belongs to the previous extent */
		if (!lcn)
			return fail(r, -EFSCORRUPTED,
				    "lcluster 0: the first extent starts at byte %u, not 0",
				    head->clusterofs);
		dist = 1;
	} else {
		dist = head->delta[0];
	}
	for (;;) {
		if (!dist)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": lookback distance 0", cur);
		if (dist > cur)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": delta[0] %u points before lcluster 0",
				    cur, dist);
		if (lcn - (cur - dist) > reach)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": no extent head within %" PRIu64 " lclusters before it (extents decode to at most %u bytes)",
				    lcn, reach, EROFS_Z_MAX_DSIZE);
		cur -= dist;
		err = erofs_z_load_lcluster(r, vi, cur, false, head);
		if (err)
			return err;
		if (head->type != EROFS_LCLUSTER_NONHEAD)
			return 0;
		dist = head->delta[0];
	}
}

/*
 * The tail fragment, found as 6.1 finds it when it first maps the file:
 * the head of the extent holding the last byte.  That head must be HEAD1
 * or HEAD2 with an algorithm the superblock lists (6.1 refuses a PLAIN
 * one: its extent would be longer than its pcluster of no bytes); a FULL
 * index keeps the high half of the fragment's offset in its block address.
 */
static int setup_tail_fragment(struct erofs_reader *r, struct erofs_rd_inode *vi)
{
	struct erofs_lcluster head;
	unsigned int alg;
	int err;

	err = find_head(r, vi, vi->size - 1, &head);
	if (err)
		return err;
	if (head.type == EROFS_LCLUSTER_PLAIN)
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 ": the tail extent is a fragment, but its head is uncompressed",
			    head.lcn);
	alg = vi->z_algtype[head.type == EROFS_LCLUSTER_HEAD2];
	if (!(r->available_compr_algs & (1u << alg)))
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 ": %s tail extent with algorithm %u, which the superblock does not list (0x%x)",
			    head.lcn, type_name(head.type), alg, r->available_compr_algs);
	vi->z_tail_lcn = head.lcn;
	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL)
		vi->z_fragoff |= (uint64_t)head.pblk << 32;
	/* 6.1: a tail head in lcluster 0 makes the whole file the fragment */
	vi->z_frag_la = head.lcn ? (head.lcn << vi->z_lclusterbits) + head.clusterofs : 0;
	return erofs_z_check_fragment(r, vi);
}

static int z_map_extent(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			uint64_t la, struct erofs_map *map)
{
	const unsigned int bits = vi->z_lclusterbits;
	const uint64_t total = vi->z_nlclusters;
	struct erofs_lcluster head, lc, first = { 0 };
	uint64_t hlcn, cur, start, end, next = total, reach = 0, reach_lcn = 0;
	unsigned int reach_d1 = 0, alg = 0;
	uint32_t nblks, plen;
	bool have_first = false, inline_tail, frag_tail;
	int err;

	err = find_head(r, vi, la, &head);
	if (err)
		return err;
	hlcn = head.lcn;
	start = (hlcn << bits) + head.clusterofs;
	end = vi->size;
	/* the tail extent, in the packed inode (lcluster 0 never comes here) */
	frag_tail = (vi->z_advise & EROFS_ZADVISE_FRAGMENT) && hlcn == vi->z_tail_lcn;

	/* walk on to the next head, checking every entry of the extent */
	for (cur = hlcn + 1; cur < total; cur++) {
		uint64_t k = cur - hlcn;

		if (!frag_tail && (cur << bits) - start > EROFS_Z_MAX_DSIZE)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": extent decodes to more than %u bytes",
				    hlcn, EROFS_Z_MAX_DSIZE);
		err = erofs_z_load_lcluster(r, vi, cur, true, &lc);
		if (err)
			return err;
		if (lc.type != EROFS_LCLUSTER_NONHEAD) {
			next = cur;
			end = (cur << bits) + lc.clusterofs;
			break;
		}
		if (k == 1) {
			first = lc;
			have_first = true;
		} else if (lc.has_cblkcnt) {
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": block count (CBLKCNT) %" PRIu64 " lclusters after its head at lcluster %" PRIu64 " (it belongs right after it)",
				    cur, k, hlcn);
		}
		if (!lc.delta[0] || lc.delta[0] > k)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": delta[0] %u does not lead back to its head at lcluster %" PRIu64,
				    cur, lc.delta[0], hlcn);
		if (!lc.delta[1])
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": delta[1] is 0", cur);
		if (cur + lc.delta[1] > reach) {
			reach = cur + lc.delta[1];
			reach_lcn = cur;
			reach_d1 = lc.delta[1];
		}
	}
	if (next < total) {
		if (end > vi->size)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": an extent starts at byte %" PRIu64 ", beyond i_size %" PRIu64,
				    next, end, vi->size);
		if (reach > next)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": delta[1] %u jumps past the next head at lcluster %" PRIu64,
				    reach_lcn, reach_d1, next);
	}
	if (la >= end)
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 ": the walk back to its head at lcluster %" PRIu64 " skips the head at lcluster %" PRIu64,
			    la >> bits, hlcn, next);
	if (frag_tail) {
		/*
		 * It runs to the end of the file.  The one head that may follow
		 * starts exactly at i_size, in the last lcluster: erofs-utils
		 * ends every index whose file ends inside an lcluster that way
		 * (a PLAIN entry, clusterofs = i_size's offset in it), and 6.1
		 * never maps it, as no byte of the file lies at or after it.
		 * Any earlier head would own bytes that the tail claims too.
		 */
		if (next < total && end < vi->size)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": an extent starts after the tail extent (a fragment) at lcluster %" PRIu64,
				    next, hlcn);
		if (start != vi->z_frag_la)	/* cannot happen: setup found this head */
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": the tail extent moved", hlcn);
		map->la = start;
		map->llen = vi->size - start;
		map->pa = vi->z_fragoff;
		map->plen = map->llen;
		map->flags = EROFS_MAP_MAPPED | EROFS_MAP_FRAGMENT;
		return 0;
	}
	if (end - start > EROFS_Z_MAX_DSIZE)
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 ": extent of %" PRIu64 " bytes (at most %u)",
			    hlcn, end - start, EROFS_Z_MAX_DSIZE);

	/* ztailpacking: the extent holding the last byte is inline */
	inline_tail = vi->z_idata_size && end == vi->size;
	plen = inline_tail ? vi->z_idata_size : 1u << bits;

	/* the pcluster: one block, or the block count after the head */
	if (head.type == EROFS_LCLUSTER_PLAIN) {
		if (have_first)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": uncompressed extent continues into lcluster %" PRIu64 " (one block at most)",
				    hlcn, hlcn + 1);
		if (end - start > plen)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": uncompressed %sextent of %" PRIu64 " bytes (%u at most)",
				    hlcn, inline_tail ? "inline " : "", end - start, plen);
		nblks = 1;
	} else if (inline_tail) {
		alg = vi->z_algtype[head.type == EROFS_LCLUSTER_HEAD2];
		if (!(r->available_compr_algs & (1u << alg)))
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": %s extent with algorithm %u, which the superblock does not list (0x%x)",
				    hlcn, type_name(head.type), alg, r->available_compr_algs);
		nblks = 0;	/* no blocks: the head's block address is unused */
	} else {
		bool big = head.type == EROFS_LCLUSTER_HEAD1 ?
			   vi->z_advise & EROFS_ZADVISE_BIG_PCLUSTER_1 :
			   vi->z_advise & EROFS_ZADVISE_BIG_PCLUSTER_2;
		uint32_t most;

		alg = vi->z_algtype[head.type == EROFS_LCLUSTER_HEAD2];
		if (!(r->available_compr_algs & (1u << alg)))
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": %s extent with algorithm %u, which the superblock does not list (0x%x)",
				    hlcn, type_name(head.type), alg, r->available_compr_algs);
		if (!big) {
			nblks = 1;
		} else if (hlcn + 1 >= total) {
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": big-pcluster head in the last lcluster (no block count can follow)",
				    hlcn);
		} else if (!have_first) {
			nblks = 1;	/* another head follows: a one-block pcluster */
		} else if (!first.has_cblkcnt) {
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": no block count (CBLKCNT) after the head of a big pcluster at lcluster %" PRIu64,
				    hlcn + 1, hlcn);
		} else {
			nblks = first.cblkcnt;
			if (!nblks)
				return fail(r, -EFSCORRUPTED,
					    "lcluster %" PRIu64 ": block count 0", hlcn + 1);
		}
		most = alg == EROFS_COMPR_LZ4 ? r->lz4_max_pclusterblks : EROFS_Z_MAX_PCLUSTER_BLKS;
		if (most > EROFS_Z_MAX_PCLUSTER_BLKS)
			most = EROFS_Z_MAX_PCLUSTER_BLKS;
		if (nblks > most)
			return fail(r, -EFSCORRUPTED,
				    "lcluster %" PRIu64 ": pcluster of %u blocks (the superblock allows %u)",
				    hlcn, nblks, most);
	}
	if (!inline_tail && (uint64_t)head.pblk + nblks > r->size >> bits)
		return fail(r, -EFSCORRUPTED,
			    "lcluster %" PRIu64 ": pcluster at block %u (%u blocks) beyond the end of the image (%" PRIu64 " blocks)",
			    hlcn, head.pblk, nblks, r->size >> bits);

	map->la = start;
	map->llen = end - start;
	map->pa = (uint64_t)head.pblk << bits;
	map->plen = (uint64_t)nblks << bits;
	map->flags = EROFS_MAP_MAPPED;
	map->alg = alg;
	if (inline_tail) {
		map->pa = vi->z_idataoff;
		map->plen = vi->z_idata_size;
		map->flags |= EROFS_MAP_META | (vi->in_mbox ? EROFS_MAP_MBOX : 0);
	}
	if (head.type != EROFS_LCLUSTER_PLAIN) {
		map->flags |= EROFS_MAP_ENCODED;
		if (head.partialref)
			map->flags |= EROFS_MAP_PARTIAL;
	} else if ((vi->z_advise & EROFS_ZADVISE_INTERLACED) && !inline_tail) {
		/* 6.1 copies an inline tail shifted whatever the advise says */
		map->flags |= EROFS_MAP_INTERLACED;
	}
	return 0;
}

int erofs_z_map(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint64_t la,
		struct erofs_map *map)
{
	struct erofs_zcache *zc = zcache(r);
	struct zslot *zs;
	int err;

	if (!zc)
		return -ENOMEM;
	if (vi->layout != EROFS_LAYOUT_COMPRESSED_FULL &&
	    vi->layout != EROFS_LAYOUT_COMPRESSED_COMPACT)
		return fail(r, -EINVAL, "not a compressed layout (%u)", vi->layout);
	if (la >= vi->size)
		return fail(r, -EINVAL, "offset %" PRIu64 " beyond i_size %" PRIu64, la, vi->size);
	if ((vi->z_advise & EROFS_ZADVISE_FRAGMENT) && !vi->z_frag_la) {
		/* a whole-file fragment, or a tail that starts in lcluster 0 */
		map->la = 0;
		map->llen = vi->size;
		map->pa = vi->z_fragoff;
		map->plen = vi->size;
		map->flags = EROFS_MAP_MAPPED | EROFS_MAP_FRAGMENT;
		map->alg = 0;
		return 0;
	}
	zs = zslot_of(r, zc, vi);
	if (vi->z_recsz) {
		if (!zs->run_valid || zs->run_nid != vi->nid) {
			zs->run_valid = false;
			zs->run_nid = vi->nid;
		}
		return erofs_zext_map_inode(r, vi, la, map, &zs->run_idx, &zs->run_pa,
					    &zs->run_valid);
	}
	if (!vi->z_nlclusters)
		return fail(r, -EINVAL, "offset %" PRIu64 " beyond i_size %" PRIu64, la, vi->size);
	if (zs->map_valid && zs->map_nid == vi->nid && zs->map_index == vi->z_index &&
	    la >= zs->map.la && la - zs->map.la < zs->map.llen) {
		*map = zs->map;
		return 0;
	}
	zs->map_valid = false;
	err = z_map_extent(r, vi, la, map);
	if (err)
		return err;
	zs->map = *map;
	zs->map_nid = vi->nid;
	zs->map_index = vi->z_index;
	zs->map_valid = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* decoding                                                            */

static int grow(struct erofs_reader *r, uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *p;

	if (*cap >= want)
		return 0;
	p = realloc(*buf, want);
	if (!p)
		return fail(r, -ENOMEM, "out of memory for a %zu-byte extent", want);
	*buf = p;
	*cap = want;
	return 0;
}

int erofs_decode_extent(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			const struct erofs_map *map, const uint8_t **out)
{
	struct erofs_zcache *zc = zcache(r);
	const bool zero_padding = r->sb.feature_incompat & EROFS_INCOMPAT_ZERO_PADDING;
	const uint64_t blk = map->pa >> r->blkszbits;
	size_t insize, skip = 0;
	struct erofs_zdecode_req req;
	const uint8_t *src;
	struct zslot *zs;
	char why[96];
	int err;

	if (!zc)
		return -ENOMEM;
	if (!(map->flags & EROFS_MAP_ENCODED))
		return fail(r, -EINVAL, "extent at byte %" PRIu64 " is not compressed", map->la);
	zs = zslot_of(r, zc, vi);
	if (zs->dec_valid && zs->dec_nid == vi->nid && zs->dec_map.la == map->la &&
	    zs->dec_map.llen == map->llen && zs->dec_map.pa == map->pa &&
	    zs->dec_map.plen == map->plen && zs->dec_map.flags == map->flags &&
	    zs->dec_map.alg == map->alg) {
		*out = zs->dec;
		return 0;
	}
	zs->dec_valid = false;
	if (map->alg >= EROFS_COMPR_MAX)	/* the superblock cannot have listed it */
		return fail(r, -EOPNOTSUPP,
			    "extent at byte %" PRIu64 ": unknown compression algorithm %u", map->la,
			    map->alg);
	if (!map->llen || map->llen > EROFS_Z_MAX_DSIZE || !map->plen ||
	    map->plen > EROFS_PCLUSTER_MAX_SIZE ||
	    ((map->flags & EROFS_MAP_MBOX) ? !vi->in_mbox : map->pa > r->size))
		return fail(r, -EINVAL, "bad compressed extent (%" PRIu64 " bytes from %" PRIu64 ")",
			    map->llen, map->plen);
	if ((map->flags & EROFS_MAP_MBOX) && map->plen > sizeof(zc->ibuf))
		return fail(r, -EINVAL, "inline tail pcluster of %" PRIu64 " bytes", map->plen);
	err = grow(r, &zs->dec, &zs->dec_cap, (size_t)map->llen);
	if (!err && !(map->flags & EROFS_MAP_MBOX))
		err = grow(r, &zc->pbuf, &zc->pbuf_cap, (size_t)map->plen);
	if (err)
		return err;
	/* the metabox's own extents go through pbuf: its inline tails do not */
	src = (map->flags & EROFS_MAP_MBOX) ? zc->ibuf : zc->pbuf;
	err = erofs_meta_read(r, map->flags & EROFS_MAP_MBOX, (uint8_t *)src, (size_t)map->plen,
			      map->pa);
	if (err)
		return err;
	insize = (size_t)map->plen;
	/* other algorithms than LZ4 are always right-aligned, as the kernel reads them */
	if (zero_padding || map->alg != EROFS_COMPR_LZ4) {
		/* the stream is right-aligned behind zeros within its first block */
		size_t scan = r->blksz - (size_t)(map->pa & (r->blksz - 1));

		if (scan > insize)
			scan = insize;
		while (skip < scan && !src[skip])
			skip++;
		if (skip == scan && (map->flags & EROFS_MAP_META))
			return fail(r, -EFSCORRUPTED,
				    "inline tail pcluster at byte %" PRIu64 ": all zeros (no %s data)",
				    map->pa, erofs_zdecode_name(map->alg));
		if (skip == scan)
			return fail(r, -EFSCORRUPTED,
				    "pcluster at block %" PRIu64 ": its first block is all zeros (no %s data)",
				    blk, erofs_zdecode_name(map->alg));
		src += skip;
		insize -= skip;
	}
	req = (struct erofs_zdecode_req){
		.alg = map->alg, .src = src, .insize = insize, .dst = zs->dec, .llen = map->llen,
		.partial = (map->flags & EROFS_MAP_PARTIAL) || !zero_padding,
		.dict_size = r->lzma_dict_size, .window_log = r->zstd_window_log,
	};
	err = erofs_zdecode(&zc->decoder, &req, why, sizeof(why));
	if (err == -ENOMEM)
		return fail(r, err, "out of memory decoding the extent at byte %" PRIu64, map->la);
	if (err) {
		char where[64];

		if (map->flags & EROFS_MAP_META)
			snprintf(where, sizeof(where), "inline tail pcluster at byte %" PRIu64, map->pa);
		else
			snprintf(where, sizeof(where), "pcluster at block %" PRIu64, blk);
		return fail(r, err, "%s: %s for the %" PRIu64 "-byte extent at byte %" PRIu64,
			    where, why, map->llen, map->la);
	}
	zs->dec_map = *map;
	zs->dec_nid = vi->nid;
	zs->dec_valid = true;
	*out = zs->dec;
	return 0;
}
