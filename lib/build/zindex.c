// SPDX-License-Identifier: MIT
/*
 * Lcluster indexes of compressed files: one entry per block of the file
 * (lcluster), saying whether an extent starts there (a HEAD, with the byte
 * offset of that start and its pcluster's block) or the lcluster continues
 * an earlier extent (NONHEAD, with the distances back to its head and on to
 * the next head).  Full indexes spend 8 bytes an entry; compact ones pack 2
 * entries into 8 bytes or 16 into 32 bytes, each pack carrying one block
 * address from which the kernel counts pclusters forward.
 */
#include <string.h>

#include "erofs/common/format.h"
#include "erofs/common/ondisk.h"
#include "erofs/build/zextent.h"
#include "erofs/build/zindex.h"

struct lcluster {
	uint8_t type;
	uint16_t clusterofs;	/* heads */
	uint16_t delta0, delta1;	/* nonheads */
	bool cblkcnt;		/* first nonhead of a multi-block pcluster: delta0 = count */
	uint32_t pblk;		/* heads: block of the pcluster, relative to the file */
	uint32_t head_pblk;	/* the pcluster this lcluster belongs to */
};

static bool full_index(const struct erofs_build_options *opts, const struct erofs_zinfo *zi)
{
	return opts->legacy_index || (zi && zi->full_index);
}

uint16_t erofs_zadvise(const struct erofs_build_options *opts, const struct erofs_zinfo *zi)
{
	uint32_t pcluster = zi && zi->pcluster_size ? zi->pcluster_size : opts->pcluster_size;
	uint16_t advise = 0;

	if (!full_index(opts, zi) && opts->compact_2b)
		advise |= EROFS_ZADVISE_COMPACTED_2B;
	/* compact indexes want both big-pcluster bits alike */
	if (pcluster > 1u << opts->blkszbits)
		advise |= EROFS_ZADVISE_BIG_PCLUSTER_1 | EROFS_ZADVISE_BIG_PCLUSTER_2;
	if (zi && zi->tail_size)
		advise |= EROFS_ZADVISE_INLINE_PCLUSTER;
	if (zi && zi->fragment)
		advise |= EROFS_ZADVISE_FRAGMENT;
	return advise;
}

static uint64_t nr_lclusters(const struct erofs_build_options *opts, uint64_t file_size)
{
	return (file_size + (1u << opts->blkszbits) - 1) >> opts->blkszbits;
}

/* Where compact indexes start, relative to the inode, and how they split. */
struct compact_split {
	uint32_t start;		/* after the map header */
	uint64_t initial_4b, packs_2b_entries, tail_4b;
};

static struct compact_split compact_split(const struct erofs_build_options *opts,
					  uint32_t meta_size, uint64_t total)
{
	struct compact_split s;
	uint32_t mod;

	s.start = ((meta_size + 7) & ~7u) + EROFS_ZMAP_HEADER_SIZE;
	/* 4-byte entries until the 2-byte packs can start 32-byte aligned */
	mod = s.start % 32;
	s.initial_4b = mod ? (32 - mod) / 4 : 0;
	if (s.initial_4b > total)
		s.initial_4b = total;
	s.packs_2b_entries = 0;
	if ((erofs_zadvise(opts, NULL) & EROFS_ZADVISE_COMPACTED_2B) && s.initial_4b < total)
		s.packs_2b_entries = (total - s.initial_4b) / 16 * 16;
	s.tail_4b = total - s.initial_4b - s.packs_2b_entries;
	return s;
}

uint32_t erofs_zindex_size(const struct erofs_build_options *opts, uint32_t meta_size,
			   uint64_t file_size, const struct erofs_zinfo *zi)
{
	uint64_t total = nr_lclusters(opts, file_size);
	uint32_t header_end = ((meta_size + 7) & ~7u) + EROFS_ZMAP_HEADER_SIZE;
	struct compact_split s;

	unsigned int recsz = erofs_zextent_recsz(opts, meta_size, file_size, zi);

	if (erofs_zinfo_whole_fragment(zi))	/* the header says it all */
		return header_end - meta_size;
	if (recsz)				/* -E48bit: encoded extents */
		return erofs_zextent_size(meta_size, recsz, zi->nr_extents);
	if (full_index(opts, zi))	/* 8 reserved bytes, then 8 bytes an entry */
		return (uint32_t)(header_end + 8 + total * EROFS_LCLUSTER_INDEX_SIZE - meta_size);
	s = compact_split(opts, meta_size, total);
	return (uint32_t)(s.start + (s.initial_4b + 1) / 2 * 8 + s.packs_2b_entries * 2 +
			  (s.tail_4b + 1) / 2 * 8 - meta_size);
}

/* Entry for lcluster lcn; extents are sorted and at most one starts per lcluster. */
static void describe(const struct erofs_build_options *opts, const struct erofs_zinfo *zi,
		     uint64_t total, uint64_t lcn, uint32_t *cursor, struct lcluster *lc)
{
	const unsigned int bits = opts->blkszbits;
	const struct erofs_zextent *e;
	uint64_t head, next_head;

	while (*cursor + 1 < zi->nr_extents && zi->extents[*cursor + 1].lofs >> bits <= lcn)
		(*cursor)++;
	e = &zi->extents[*cursor];
	head = e->lofs >> bits;
	next_head = *cursor + 1 < zi->nr_extents ? zi->extents[*cursor + 1].lofs >> bits : total;
	memset(lc, 0, sizeof(*lc));
	lc->head_pblk = e->pblk;
	if (head == lcn) {
		lc->type = e->raw ? EROFS_LCLUSTER_PLAIN : EROFS_LCLUSTER_HEAD1;
		lc->clusterofs = (uint16_t)(e->lofs & ((1u << bits) - 1));
		lc->pblk = e->pblk;
		return;
	}
	lc->type = EROFS_LCLUSTER_NONHEAD;
	lc->delta0 = (uint16_t)(lcn - head);
	lc->delta1 = (uint16_t)(next_head - lcn);
	lc->cblkcnt = lcn == head + 1 && (erofs_zadvise(opts, zi) & EROFS_ZADVISE_BIG_PCLUSTER_1);
	lc->pblk = e->nblks ? e->nblks : 1;	/* what cblkcnt records; inline tails say 1 */
}

static void encode_full(const struct erofs_build_options *opts, const struct erofs_zinfo *zi,
			uint64_t total, uint32_t blkaddr, uint8_t *out)
{
	uint32_t cursor = 0;

	memset(out, 0, 8);	/* reserved before the first entry */
	out += 8;
	for (uint64_t lcn = 0; lcn < total; lcn++, out += EROFS_LCLUSTER_INDEX_SIZE) {
		struct lcluster lc;

		describe(opts, zi, total, lcn, &cursor, &lc);
		put_le16(out, lc.type);
		if (lc.type == EROFS_LCLUSTER_NONHEAD) {
			put_le16(out + 2, 0);
			put_le16(out + 4, lc.cblkcnt ? (uint16_t)(EROFS_LI_D0_CBLKCNT | lc.pblk)
						     : lc.delta0);
			put_le16(out + 6, lc.delta1);
		} else {
			put_le16(out + 2, lc.clusterofs);
			/* an inline tail has no block: its address is unused; a
			 * fragment's holds the high half of its offset */
			if (zi->extents[cursor].nblks && zi->extents[cursor].owner)
				put_le32(out + 4, zi->extents[cursor].owner->blkaddr + lc.pblk);
			else if (zi->extents[cursor].nblks)
				put_le32(out + 4, blkaddr + lc.pblk);
			else if (zi->fragment)
				put_le32(out + 4, (uint32_t)(zi->frag_off >> 32));
		}
	}
}

/* Packs vcnt entries starting at lcn into pack_size bytes. */
static void encode_pack(const struct erofs_build_options *opts, const struct erofs_zinfo *zi,
			uint64_t total, uint64_t lcn, unsigned int vcnt, uint32_t blkaddr,
			uint32_t *cursor, uint8_t *out)
{
	const unsigned int pack_size = vcnt == 2 ? 8 : 32;
	const unsigned int bits_each = (pack_size - 4) * 8 / vcnt;
	uint32_t base = 0;
	bool have_base = false;

	memset(out, 0, pack_size);
	for (unsigned int i = 0; i < vcnt && lcn + i < total; i++) {
		struct lcluster lc;
		unsigned int lo, bitpos = bits_each * i;
		uint32_t v;

		describe(opts, zi, total, lcn + i, cursor, &lc);
		if (!have_base) {
			/* the kernel counts pclusters on from the pack's first head */
			base = lc.type == EROFS_LCLUSTER_NONHEAD ? lc.head_pblk : lc.pblk;
			/* a pcluster is counted where its head, or in big-pcluster
			 * mode its block-count entry, lies inside the pack */
			if (lc.type == EROFS_LCLUSTER_NONHEAD && !lc.cblkcnt)
				base += (uint32_t)zi->extents[*cursor].nblks;
			have_base = true;
		}
		if (lc.type != EROFS_LCLUSTER_NONHEAD)
			lo = lc.clusterofs;
		else if (lc.cblkcnt)
			lo = EROFS_LI_D0_CBLKCNT | lc.pblk;
		else if (i == vcnt - 1)
			lo = lc.delta1;	/* the last entry of a pack looks ahead instead */
		else
			lo = lc.delta0;
		v = (lo | (uint32_t)lc.type << erofs_compact_lobits(opts->blkszbits)) << (bitpos & 7);
		for (unsigned int b = bitpos / 8; v; b++, v >>= 8)
			out[b] |= (uint8_t)v;
	}
	/* without big pclusters the kernel counts the head being mapped as
	 * well, so the pack records one block before its first pcluster */
	if (!(erofs_zadvise(opts, zi) & EROFS_ZADVISE_BIG_PCLUSTER_1))
		base--;
	put_le32(out + pack_size - 4, blkaddr + base);
}

void erofs_zindex_encode(const struct erofs_build_options *opts, uint32_t meta_size,
			 uint64_t file_size, const struct erofs_zinfo *zi, uint32_t blkaddr,
			 uint8_t *out)
{
	uint64_t total = nr_lclusters(opts, file_size);
	uint32_t header_at = ((meta_size + 7) & ~7u) - meta_size;
	uint8_t *p = out + header_at + EROFS_ZMAP_HEADER_SIZE;
	struct compact_split s;
	uint32_t cursor = 0;
	uint64_t lcn = 0;

	if (erofs_zextent_recsz(opts, meta_size, file_size, zi)) {
		erofs_zextent_encode(opts, meta_size, file_size, zi, blkaddr, out);
		return;
	}
	memset(out, 0, header_at + EROFS_ZMAP_HEADER_SIZE);
	if (erofs_zinfo_whole_fragment(zi)) {
		/* bit 63 marks a file held whole by the packed inode */
		put_le64(out + header_at, zi->frag_off | 1ull << 63);
		return;
	}
	/* map header: inline tail size or fragment offset, advise, the
	 * file's algorithm for HEAD1, lcluster = block */
	if (zi->fragment)
		put_le32(out + header_at, (uint32_t)zi->frag_off);
	else
		put_le16(out + header_at + 2, zi->tail_size);
	put_le16(out + header_at + 4, erofs_zadvise(opts, zi));
	out[header_at + 6] = zi->algorithm;
	out[header_at + 7] = 0;
	if (full_index(opts, zi)) {
		encode_full(opts, zi, total, blkaddr, p);
		return;
	}
	s = compact_split(opts, meta_size, total);
	for (; lcn < s.initial_4b; lcn += 2, p += 8)
		encode_pack(opts, zi, total, lcn, 2, blkaddr, &cursor, p);
	for (; lcn < s.initial_4b + s.packs_2b_entries; lcn += 16, p += 32)
		encode_pack(opts, zi, total, lcn, 16, blkaddr, &cursor, p);
	for (; lcn < total; lcn += 2, p += 8)
		encode_pack(opts, zi, total, lcn, 2, blkaddr, &cursor, p);
}
