// SPDX-License-Identifier: MIT
/*
 * Hostile EROFS lcluster indexes: a fixed layout of four extents (full or
 * compact index, with and without big pclusters) is encoded by the
 * writer's erofs_zindex_encode() into an in-memory image (zindex-img.c),
 * must map cleanly as made, and then, damaged by hand in one place each,
 * must be refused by the reader (lib/read/zread.c) with the right return
 * code and message.  test-zindex.c cross-checks random layouts and random
 * damage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"

#include "unit.h"
#include "zindex-img.h"

/* ------------------------------------------------------------------ */
/* hostile indexes                                                     */

/* A fixed layout: full or compact, big pclusters, four extents. */
static void fixed_layout(struct layout *l, bool full, bool big)
{
	uint32_t cap = 0;

	memset(l, 0, sizeof(*l));
	l->opts.blkszbits = 12;
	l->opts.legacy_index = full;
	l->opts.compact_2b = true;
	l->big = big;
	l->maxblks = big ? 4 : 1;
	l->opts.pcluster_size = l->maxblks * BLK;
	l->core = EROFS_COMPACT_INODE_SIZE;
	l->nlc = 40;
	l->size = 39 * BLK + 100;
	add_extent(l, &cap, 0, big ? 3 : 1, false);		/* lclusters 0..9 */
	add_extent(l, &cap, 10 * BLK + 500, 1, true);		/* 10, to 11 + 300 */
	add_extent(l, &cap, 11 * BLK + 300, big ? 2 : 1, false);	/* 11..29 */
	add_extent(l, &cap, 30 * BLK + 7, 1, false);		/* 30..39 */
	snprintf(l->desc, sizeof(l->desc), "fixed %s%s", full ? "full" : "compact",
		 big ? " big" : "");
}

/* Offset of the entry of lcluster lcn in a full index, from the image start. */
static size_t full_entry(const struct img *m, uint64_t lcn)
{
	return ((NID * 32 + m->meta + 7) & ~7u) + 16 + lcn * 8;
}

struct hostile {
	const char *what;
	bool full, big;
	void (*edit)(struct img *m);
	int err;
	const char *words;
};

static void h_type_nonhead0(struct img *m)	/* lcluster 0 a non-head */
{
	put_le16(m->b + full_entry(m, 0), EROFS_LCLUSTER_NONHEAD);
	put_le16(m->b + full_entry(m, 0) + 4, 1);
}

static void h_delta0_zero(struct img *m)
{
	put_le16(m->b + full_entry(m, 5) + 4, 0);
}

static void h_delta0_far(struct img *m)
{
	put_le16(m->b + full_entry(m, 5) + 4, 100);
}

static void h_delta0_skip(struct img *m)	/* lcluster 12 looks back past the head at 11 */
{
	put_le16(m->b + full_entry(m, 12) + 4, 5);
}

static void h_delta1_zero(struct img *m)
{
	put_le16(m->b + full_entry(m, 5) + 6, 0);
}

static void h_delta1_past(struct img *m)
{
	put_le16(m->b + full_entry(m, 5) + 6, 30);
}

static void h_cblkcnt_nobig(struct img *m)
{
	put_le16(m->b + full_entry(m, 1) + 4, EROFS_LI_D0_CBLKCNT | 2);
}

static void h_cblkcnt_late(struct img *m)
{
	put_le16(m->b + full_entry(m, 3) + 4, EROFS_LI_D0_CBLKCNT | 2);
}

static void h_cblkcnt_missing(struct img *m)
{
	put_le16(m->b + full_entry(m, 1) + 4, 1);
}

static void h_cblkcnt_huge(struct img *m)
{
	put_le16(m->b + full_entry(m, 1) + 4, EROFS_LI_D0_CBLKCNT | 200);
}

static void h_blkaddr(struct img *m)
{
	put_le32(m->b + full_entry(m, 11) + 4, 99999);
}

static void h_blkaddr_wrap(struct img *m)
{
	put_le32(m->b + full_entry(m, 11) + 4, 0xFFFFFFFFu);
}

static void h_clusterofs(struct img *m)
{
	put_le16(m->b + full_entry(m, 11) + 2, 4096);
}

static void h_first_ofs(struct img *m)
{
	put_le16(m->b + full_entry(m, 0) + 2, 10);
}

static void h_raw_long(struct img *m)		/* the raw extent now covers lcluster 11 */
{
	put_le16(m->b + full_entry(m, 11), EROFS_LCLUSTER_NONHEAD);
	put_le16(m->b + full_entry(m, 11) + 4, 1);
	put_le16(m->b + full_entry(m, 11) + 6, 1);
}

static void h_raw_grows(struct img *m)		/* the next head after the raw one moves later */
{
	put_le16(m->b + full_entry(m, 11) + 2, 900);
}

static void h_head_past_eof(struct img *m)
{
	put_le16(m->b + full_entry(m, 39), EROFS_LCLUSTER_HEAD1);
	put_le16(m->b + full_entry(m, 39) + 2, 200);
}

static void h_alg(struct img *m)		/* HEAD2 with an algorithm the sb lacks */
{
	put_le16(m->b + full_entry(m, 30), EROFS_LCLUSTER_HEAD2);
	m->b[((NID * 32 + m->meta + 7) & ~7u) + 6] = 0x10;
}

static void h_header_alg(struct img *m)
{
	m->b[((NID * 32 + m->meta + 7) & ~7u) + 6] = 0x05;
}

static void h_header_unknown_alg(struct img *m)
{
	m->b[((NID * 32 + m->meta + 7) & ~7u) + 6] = 0x50;	/* HEAD2: no such algorithm */
}

static void h_header_clusterbits(struct img *m)
{
	m->b[((NID * 32 + m->meta + 7) & ~7u) + 7] = 1;
}

static void h_header_fragment_inode(struct img *m)
{
	m->b[((NID * 32 + m->meta + 7) & ~7u) + 7] = 0x80;
}

static void h_header_ztail(struct img *m)
{
	put_le16(m->b + ((NID * 32 + m->meta + 7) & ~7u) + 4,
		 EROFS_ZADVISE_INLINE_PCLUSTER | EROFS_ZADVISE_BIG_PCLUSTER_1 |
		 EROFS_ZADVISE_BIG_PCLUSTER_2);
}

static void h_ztail_cross(struct img *m)
{
	h_header_ztail(m);
	put_le16(m->b + ((NID * 32 + m->meta + 7) & ~7u) + 2, 4000);
}

static void h_header_fragment(struct img *m)
{
	put_le16(m->b + ((NID * 32 + m->meta + 7) & ~7u) + 4,
		 EROFS_ZADVISE_FRAGMENT | EROFS_ZADVISE_BIG_PCLUSTER_1 |
		 EROFS_ZADVISE_BIG_PCLUSTER_2);
}

static void h_header_big_half(struct img *m)
{
	put_le16(m->b + ((NID * 32 + m->meta + 7) & ~7u) + 4,
		 EROFS_ZADVISE_COMPACTED_2B | EROFS_ZADVISE_BIG_PCLUSTER_1);
}

static void h_sb_nobig(struct img *m)		/* big advise, no sb feature */
{
	struct erofs_super sb;

	erofs_super_decode(m->b + EROFS_SUPER_OFFSET, EROFS_SUPER_SIZE, &sb);
	sb.feature_incompat &= ~EROFS_INCOMPAT_COMPR_CFGS;
	sb.u1 = 0;
	erofs_super_encode(&sb, m->b + EROFS_SUPER_OFFSET);
}

static void h_sb_maxblks(struct img *m)		/* config allows 2 blocks, a pcluster has 3 */
{
	put_le16(m->b + 1156, 2);
}

static void h_sb_cfg_short(struct img *m)
{
	put_le16(m->b + 1152, 6);
}

static void h_sb_algs(struct img *m)
{
	struct erofs_super sb;

	erofs_super_decode(m->b + EROFS_SUPER_OFFSET, EROFS_SUPER_SIZE, &sb);
	sb.u1 = 0x11;
	erofs_super_encode(&sb, m->b + EROFS_SUPER_OFFSET);
}

static void h_isize_huge(struct img *m)		/* the index would run past the image */
{
	put_le32(m->b + NID * 32 + 8, 0xFFFFFFF0u);
}

/* compact: find the 2-byte-pack entry of lcluster lcn and rewrite its lo/type */
static void compact_set(struct img *m, uint64_t lcn, unsigned int lo, unsigned int type)
{
	uint64_t ebase = ((NID * 32 + m->meta + 7) & ~7u) + 8, pos, pack;
	uint64_t n0 = (32 - ebase % 32) / 4 % 8, idx = lcn;
	unsigned int shift = 2, vcnt, bits, bit;
	uint32_t v, mask;

	if (idx >= n0) {
		/* the fixed file has 40 lclusters: all in 2B packs after n0, tail in 4B */
		uint64_t n2b = (40 - n0) / 16 * 16;

		pos = ebase + n0 * 4;
		idx -= n0;
		if (idx < n2b) {
			shift = 1;
		} else {
			pos += n2b * 2;
			idx -= n2b;
		}
	} else {
		pos = ebase;
	}
	pos += idx << shift;
	vcnt = shift == 2 ? 2 : 16;
	pack = pos & ~(uint64_t)((vcnt << shift) - 1);
	bits = ((vcnt << shift) - 4) * 8 / vcnt;
	bit = (unsigned int)((pos - pack) >> shift) * bits;
	mask = ((1u << bits) - 1) << (bit & 7);
	v = get_le32(m->b + pack + bit / 8);
	v = (v & ~mask) | (((lo | type << 12) << (bit & 7)) & mask);
	put_le32(m->b + pack + bit / 8, v);
}

static void hc_delta0_zero(struct img *m)
{
	compact_set(m, 14, 0, EROFS_LCLUSTER_NONHEAD);
}

static void hc_cblkcnt_nobig(struct img *m)
{
	compact_set(m, 12, EROFS_LI_D0_CBLKCNT | 1, EROFS_LCLUSTER_NONHEAD);
}

static void hc_plain_d0_big(struct img *m)	/* before the head at 30, in its pack */
{
	compact_set(m, 29, 1, EROFS_LCLUSTER_NONHEAD);
}

static void hc_base(struct img *m)		/* a pack's base block far away */
{
	uint64_t ebase = ((NID * 32 + m->meta + 7) & ~7u) + 8;

	/* the first pack (4B at ebase when ebase is not 32-aligned) */
	put_le32(m->b + ebase + (ebase % 32 ? 4 : 28), 0x7FFFFFF0u);
}

static const struct hostile hostile[] = {
	{ "lcluster 0 a non-head", true, true, h_type_nonhead0, -EUCLEAN, "points before lcluster 0" },
	{ "delta[0] 0", true, true, h_delta0_zero, -EUCLEAN, "lcluster 5: delta[0] 0 does not lead back" },
	{ "delta[0] past lcluster 0", true, true, h_delta0_far, -EUCLEAN, "lcluster 5: delta[0] 100" },
	{ "delta[0] skipping a head", true, true, h_delta0_skip, -EUCLEAN, "lcluster 12: delta[0] 5 does not lead back to its head at lcluster 11" },
	{ "delta[1] 0", true, true, h_delta1_zero, -EUCLEAN, "lcluster 5: delta[1] is 0" },
	{ "delta[1] past the next head", true, true, h_delta1_past, -EUCLEAN, "lcluster 5: delta[1] 30 jumps past the next head at lcluster 10" },
	{ "CBLKCNT without big pclusters", true, false, h_cblkcnt_nobig, -EUCLEAN, "lcluster 1: block count (CBLKCNT) without big pclusters" },
	{ "CBLKCNT late", true, true, h_cblkcnt_late, -EUCLEAN, "lcluster 3: block count (CBLKCNT) 3 lclusters after its head" },
	{ "CBLKCNT missing", true, true, h_cblkcnt_missing, -EUCLEAN, "lcluster 1: no block count (CBLKCNT)" },
	{ "CBLKCNT beyond max_pclusterblks", true, true, h_cblkcnt_huge, -EUCLEAN, "pcluster of 200 blocks (the superblock allows 4)" },
	{ "blkaddr beyond the image", true, true, h_blkaddr, -EUCLEAN, "lcluster 11: pcluster at block 99999 (2 blocks) beyond the end of the image" },
	{ "blkaddr 0xFFFFFFFF", true, true, h_blkaddr_wrap, -EUCLEAN, "pcluster at block 4294967295" },
	{ "clusterofs 4096", true, true, h_clusterofs, -EUCLEAN, "lcluster 11: clusterofs 4096 beyond the lcluster" },
	{ "first extent not at 0", true, true, h_first_ofs, -EUCLEAN, "lcluster 0: the first extent starts at byte 10, not 0" },
	{ "raw extent over a non-head", true, false, h_raw_long, -EUCLEAN, "lcluster 10: uncompressed extent continues into lcluster 11" },
	{ "raw extent longer than a block", true, true, h_raw_grows, -EUCLEAN, "lcluster 10: uncompressed extent of 4496 bytes" },
	{ "head past EOF", true, true, h_head_past_eof, -EUCLEAN, "lcluster 39: an extent starts at byte 159944, beyond i_size 159844" },
	{ "HEAD2 algorithm not in the sb", true, true, h_alg, -EUCLEAN, "lcluster 30: HEAD2 extent with algorithm 1, which the superblock does not list" },
	{ "unknown algorithm in the header", true, true, h_header_alg, -EOPNOTSUPP, "unknown HEAD1 compression algorithm 5" },
	{ "unknown algorithm in the header", true, true, h_header_unknown_alg, -EOPNOTSUPP, "unknown HEAD2 compression algorithm 5" },
	{ "lclusters of 2 blocks", true, true, h_header_clusterbits, -EOPNOTSUPP, "lclusters of 2 blocks are not supported" },
	{ "whole-file fragment without the sb feature", true, true, h_header_fragment_inode, -EUCLEAN, "the whole file is a fragment of the packed inode, but the superblock lacks the fragments feature" },
	{ "ztailpacking with 0 inline bytes", false, true, h_header_ztail, -EUCLEAN, "inline tail pcluster (ztailpacking) of 0 bytes" },
	{ "inline tail crossing a block", false, true, h_ztail_cross, -EUCLEAN, "inline tail pcluster of 4000 bytes at offset" },
	{ "fragment tail without the sb feature", false, true, h_header_fragment, -EUCLEAN, "the tail is a fragment of the packed inode, but the superblock lacks the fragments feature" },
	{ "compact with one big bit", false, true, h_header_big_half, -EUCLEAN, "only one of the two big pcluster bits" },
	{ "big pclusters without the sb feature", false, true, h_sb_nobig, -EUCLEAN, "without the superblock's big pcluster feature" },
	{ "pcluster above the sb limit", false, true, h_sb_maxblks, -EUCLEAN, "pcluster of 3 blocks (the superblock allows 2)" },
	{ "short LZ4 config", false, true, h_sb_cfg_short, -EUCLEAN, "LZ4 config of 6 bytes (want 14)" },
	{ "unknown algorithms in the sb", false, true, h_sb_algs, -EOPNOTSUPP, "unsupported compression algorithms: unknown bits 0x10" },
	{ "i_size with an index past the image", false, true, h_isize_huge, -EUCLEAN, "lcluster index (1048576 entries) beyond the end of the image" },
	{ "compact delta[0] 0", false, false, hc_delta0_zero, -EUCLEAN, "lcluster 14: delta[0] 0 does not lead back to its head at lcluster 11" },
	{ "compact CBLKCNT without big", false, false, hc_cblkcnt_nobig, -EUCLEAN, "lcluster 12: block count (CBLKCNT) without big pclusters" },
	{ "compact plain delta[0] 1 in a big pack", false, true, hc_plain_d0_big, -EUCLEAN, "in a big-pcluster pack" },
	{ "compact base beyond the image", false, true, hc_base, -EUCLEAN, "beyond the end of the image" },
};

static void test_hostile(void)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *h = &hostile[i];
		struct erofs_reader r;
		struct erofs_rd_inode vi;
		struct layout l;
		struct img m;
		int err;

		fixed_layout(&l, h->full, h->big);
		build_image(&l, &m);
		/* the undamaged file maps cleanly */
		err = map_image(&r, &m, &vi);
		CHECK(err == 0);
		if (err)
			fprintf(stderr, "%s: the undamaged file: %s\n", h->what, erofs_reader_error(&r));
		erofs_reader_close(&r);

		h->edit(&m);
		err = map_image(&r, &m, &vi);
		check_refusal(h->what, err, erofs_reader_error(&r), h->err, h->words);
		erofs_reader_close(&r);
		free(m.b);
		free_layout(&l);
	}
}

/* Random byte damage in the index and header: refused or mapped sanely. */
int main(void)
{
	test_hostile();
	return unit_summary("test-zindex-hostile");
}
