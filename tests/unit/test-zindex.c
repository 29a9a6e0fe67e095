// SPDX-License-Identifier: MIT
/*
 * Cross-check of two independent implementations of EROFS lcluster indexes:
 * random extent layouts (raw and compressed extents, one-block and big
 * pclusters, inline tails, extent starts anywhere in an lcluster, files of
 * 1..300 lclusters, full and compact indexes with and without 2-byte packs) are
 * encoded by the writer's erofs_zindex_encode() into an in-memory image and
 * decoded by the reader (lib/read/zread.c): every lcluster entry and every
 * mapping must give back the extent start, pcluster block and block count
 * the layout was made of.  Then hostile indexes: hand-made damage must be
 * refused with the right message, and random damage must never crash, hang
 * or map outside the image (run it under valgrind or ASan).
 *
 * Usage: test-zindex [SEED [CASES]]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/build.h"
#include "erofs/build/zindex.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"
#include "erofs/read/zindexread.h"

#include "unit.h"

#define BLK		4096u
#define NID		40u	/* inode at byte 1280, after the superblock and its config */
#define DATA_BLK	2u	/* first data block */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: the same cases for the same seed on every host */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ------------------------------------------------------------------ */
/* one layout                                                          */

struct layout {
	struct erofs_build_options opts;
	struct erofs_zinfo zi;
	uint64_t size, nlc;
	unsigned int core, xattr_icount, xattr_size;
	bool big;
	bool want_tail;		/* -E ztailpacking: last pcluster inline, if it fits */
	unsigned int maxblks;
	char desc[160];
};

static void add_extent(struct layout *l, uint32_t *cap, uint64_t lofs, uint16_t nblks,
		       bool raw)
{
	if (l->zi.nr_extents == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		l->zi.extents = realloc(l->zi.extents, *cap * sizeof(*l->zi.extents));
		if (!l->zi.extents)
			abort();
	}
	l->zi.extents[l->zi.nr_extents++] = (struct erofs_zextent){
		.lofs = lofs, .pblk = l->zi.nr_blocks, .nblks = nblks, .raw = raw,
	};
	l->zi.nr_blocks += nblks;
}

/*
 * A random layout the kernel can read: at most one head per lcluster, an
 * uncompressed extent never covers a non-head lcluster (so the next head is
 * in the next lcluster, no later in it than its own start), and a
 * multi-block pcluster (or, with big pclusters, any compressed head) has a
 * non-head lcluster after it for its block count unless another head follows.
 */
static void make_layout(struct layout *l)
{
	uint32_t cap = 0;
	uint64_t pos = 0;

	memset(l, 0, sizeof(*l));
	l->opts.blkszbits = 12;
	l->opts.legacy_index = rnd_below(3) == 0;
	l->opts.compact_2b = rnd_below(4) != 0;
	l->big = rnd_below(2);
	l->maxblks = l->big ? (unsigned int)(2 + rnd_below(15)) : 1;
	l->opts.pcluster_size = l->maxblks * BLK;
	l->core = rnd_below(2) ? EROFS_EXTENDED_INODE_SIZE : EROFS_COMPACT_INODE_SIZE;
	l->xattr_icount = rnd_below(2) ? 0 : (unsigned int)(1 + rnd_below(12));
	l->xattr_size = erofs_xattr_ibody_size((uint16_t)l->xattr_icount);
	l->nlc = 1 + rnd_below(rnd_below(4) ? 300 : 20);
	l->size = (l->nlc - 1) * BLK + 1 + rnd_below(BLK);

	while (pos < l->size) {
		uint64_t h = pos / BLK, c = pos % BLK, end, next_lcn;
		bool raw = rnd_below(3) == 0, last;
		uint16_t nblks = 1;

		if (raw) {
			/* the whole tail inside this lcluster */
			if (l->size <= (h + 1) * BLK) {
				add_extent(l, &cap, pos, 1, true);
				break;
			}
			/* or the next head in lcluster h + 1, at or before offset c */
			end = (h + 1) * BLK + rnd_below(c + 1);
			if (end < l->size) {
				add_extent(l, &cap, pos, 1, true);
				pos = end;
				continue;
			}
			/* a raw tail cannot cross into the last lcluster: compress it */
		}
		next_lcn = h + 1 + rnd_below(rnd_below(3) ? 4 : 40);
		last = next_lcn >= l->nlc;
		if (l->big) {
			/* a head in the last lcluster cannot carry a block count */
			if (h + 1 >= l->nlc) {
				add_extent(l, &cap, pos, 1, true);	/* fits: h is the last */
				break;
			}
			if (last || next_lcn >= h + 2)
				nblks = (uint16_t)(1 + rnd_below(l->maxblks));
		}
		add_extent(l, &cap, pos, nblks, false);
		if (last)
			break;
		pos = next_lcn * BLK + rnd_below(BLK);
		if (pos >= l->size)
			break;
	}
	l->want_tail = rnd_below(3) == 0;
	snprintf(l->desc, sizeof(l->desc),
		 "%s%s%s%s, %u-byte pclusters, %" PRIu64 " bytes, %u extents, inode %u+%u",
		 l->opts.legacy_index ? "full" : "compact",
		 !l->opts.legacy_index && l->opts.compact_2b ? " 2B" : "",
		 l->big ? " big" : "", l->want_tail ? " ztail" : "", l->opts.pcluster_size,
		 l->size, l->zi.nr_extents, l->core, l->xattr_size);
}

/* ------------------------------------------------------------------ */
/* the image                                                           */

struct img {
	uint8_t *b;
	size_t size;
	uint32_t meta;		/* inode core + xattrs */
	uint32_t index_size;
};

static void build_image(struct layout *l, struct img *m)
{
	struct erofs_super sb;
	struct erofs_dinode di;
	unsigned int nblocks;
	uint8_t *ino;

	m->meta = l->core + l->xattr_size;
	m->index_size = erofs_zindex_size(&l->opts, m->meta, l->size, NULL);
	if (l->want_tail && !l->zi.tail_size) {
		/* the last pcluster moves inline after the index if it fits there */
		struct erofs_zextent *x = &l->zi.extents[l->zi.nr_extents - 1];
		uint32_t room = BLK - (NID * 32 + m->meta + m->index_size) % BLK, want;

		want = x->raw ? (uint32_t)(l->size - x->lofs) :
		       (uint32_t)(1 + rnd_below(room < 3000 ? room : 3000));
		if (want <= room) {
			l->zi.tail_size = (uint16_t)want;
			l->zi.nr_blocks -= x->nblks;
			x->nblks = 0;
		}
	}
	nblocks = DATA_BLK + l->zi.nr_blocks;

	m->size = (size_t)nblocks * BLK;
	m->b = calloc(1, m->size);
	if (!m->b)
		abort();
	memset(&sb, 0, sizeof(sb));
	sb.magic = EROFS_MAGIC;
	sb.blkszbits = 12;
	sb.root_nid = NID;
	sb.blocks = nblocks;
	sb.inos = 1;
	sb.feature_incompat = EROFS_INCOMPAT_ZERO_PADDING;
	if (l->zi.tail_size)
		sb.feature_incompat |= EROFS_INCOMPAT_ZTAILPACKING;
	if (l->big) {
		sb.feature_incompat |= EROFS_INCOMPAT_COMPR_CFGS;
		sb.u1 = 1u << EROFS_COMPR_LZ4;
		put_le16(m->b + 1152, EROFS_COMPR_CFG_LZ4_SIZE);
		put_le16(m->b + 1156, (uint16_t)l->maxblks);
	}
	erofs_super_encode(&sb, m->b + EROFS_SUPER_OFFSET);

	memset(&di, 0, sizeof(di));
	di.format = erofs_inode_format(l->core == EROFS_EXTENDED_INODE_SIZE ?
				       EROFS_INODE_EXTENDED : EROFS_INODE_COMPACT,
				       l->opts.legacy_index ? EROFS_LAYOUT_COMPRESSED_FULL :
							      EROFS_LAYOUT_COMPRESSED_COMPACT);
	di.xattr_icount = (uint16_t)l->xattr_icount;
	di.mode = S_IFREG | 0644;
	di.size = l->size;
	di.u = l->zi.nr_blocks;
	di.nlink = 1;
	ino = m->b + NID * 32;
	erofs_dinode_encode(&di, ino);
	if (NID * 32 + m->meta + m->index_size + l->zi.tail_size > DATA_BLK * BLK)
		abort();
	erofs_zindex_encode(&l->opts, m->meta, l->size, &l->zi, DATA_BLK, ino + m->meta);
	/* the tail's bytes (the writer copies its pcluster here) */
	memset(ino + m->meta + m->index_size, 0x5a, l->zi.tail_size);
}

/* ------------------------------------------------------------------ */
/* the cross-check                                                     */

static uint64_t ext_end(const struct layout *l, uint32_t i)
{
	return i + 1 < l->zi.nr_extents ? l->zi.extents[i + 1].lofs : l->size;
}

static int check_layout(struct layout *l, unsigned int caseno)
{
	struct erofs_reader r;
	struct erofs_rd_inode vi;
	struct img m;
	uint32_t e = 0;
	int bad = 0;

#define LCHECK(cond, ...) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		if (bad++ < 5) {					\
			fprintf(stderr, "case %u (%s): ", caseno, l->desc); \
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
		}							\
	}								\
} while (0)

	build_image(l, &m);
	if (erofs_reader_open_mem(&r, m.b, m.size) || erofs_read_inode(&r, NID, &vi)) {
		LCHECK(0, "cannot open: %s", erofs_reader_error(&r));
		goto out;
	}
	LCHECK(vi.meta_end == NID * 32 + m.meta + m.index_size + l->zi.tail_size,
	       "index ends at %" PRIu64 ", the writer made %u bytes", vi.meta_end,
	       m.meta + m.index_size + l->zi.tail_size);
	LCHECK(vi.z_nlclusters == l->nlc, "%" PRIu64 " lclusters, want %" PRIu64,
	       vi.z_nlclusters, l->nlc);

	/* every entry, as the kernel decodes it */
	for (uint64_t lcn = 0; lcn < l->nlc; lcn++) {
		const struct erofs_zextent *x;
		struct erofs_lcluster lc;
		uint64_t head, next;

		while (e + 1 < l->zi.nr_extents && l->zi.extents[e + 1].lofs / BLK <= lcn)
			e++;
		x = &l->zi.extents[e];
		head = x->lofs / BLK;
		next = e + 1 < l->zi.nr_extents ? l->zi.extents[e + 1].lofs / BLK : l->nlc;
		if (erofs_z_load_lcluster(&r, &vi, lcn, true, &lc)) {
			LCHECK(0, "lcluster %" PRIu64 ": %s", lcn, erofs_reader_error(&r));
			continue;
		}
		if (head == lcn) {
			LCHECK(lc.type == (x->raw ? EROFS_LCLUSTER_PLAIN : EROFS_LCLUSTER_HEAD1),
			       "lcluster %" PRIu64 ": type %u, want a %s head", lcn, lc.type,
			       x->raw ? "plain" : "HEAD1");
			LCHECK(lc.clusterofs == x->lofs % BLK,
			       "lcluster %" PRIu64 ": clusterofs %u, want %" PRIu64, lcn,
			       lc.clusterofs, x->lofs % BLK);
			/* an inline tail's head has no block */
			LCHECK(!x->nblks || lc.pblk == DATA_BLK + x->pblk,
			       "lcluster %" PRIu64 ": pcluster block %u, want %u", lcn, lc.pblk,
			       DATA_BLK + x->pblk);
			continue;
		}
		LCHECK(lc.type == EROFS_LCLUSTER_NONHEAD, "lcluster %" PRIu64 ": type %u, want non-head",
		       lcn, lc.type);
		LCHECK(lc.delta[0] == lcn - head, "lcluster %" PRIu64 ": delta[0] %u, want %" PRIu64,
		       lcn, lc.delta[0], lcn - head);
		/* a compact pack cannot look past a block count in its last entry:
		 * the kernel then takes delta[1] to end there */
		LCHECK(lc.delta[1] == next - lcn ||
		       (!l->opts.legacy_index && l->big && lc.delta[1] &&
			lcn + lc.delta[1] - 1 == head + 1),
		       "lcluster %" PRIu64 ": delta[1] %u, want %" PRIu64,
		       lcn, lc.delta[1], next - lcn);
		if (lcn == head + 1 && l->big)	/* inline tails say 1 */
			LCHECK(lc.has_cblkcnt && lc.cblkcnt == (x->nblks ? x->nblks : 1u),
			       "lcluster %" PRIu64 ": block count %s%u, want %u", lcn,
			       lc.has_cblkcnt ? "" : "missing, ", lc.cblkcnt, x->nblks);
		else
			LCHECK(!lc.has_cblkcnt, "lcluster %" PRIu64 ": unexpected block count", lcn);
	}

	/* every extent maps whole from its first byte, its last, and each lcluster */
	for (uint32_t i = 0; i < l->zi.nr_extents; i++) {
		const struct erofs_zextent *x = &l->zi.extents[i];
		uint64_t end = ext_end(l, i), probes[4], nprobes = 0;

		if (x->lofs >= l->size)
			continue;
		probes[nprobes++] = x->lofs;
		probes[nprobes++] = end - 1;
		probes[nprobes++] = x->lofs + rnd_below(end - x->lofs);
		if ((x->lofs / BLK + 1) * BLK < end)
			probes[nprobes++] = (x->lofs / BLK + 1) * BLK;
		for (uint64_t p = 0; p < nprobes; p++) {
			struct erofs_map map;

			if (erofs_map_blocks(&r, &vi, probes[p], &map)) {
				LCHECK(0, "offset %" PRIu64 ": %s", probes[p], erofs_reader_error(&r));
				continue;
			}
			LCHECK(map.la == x->lofs && map.llen == end - x->lofs,
			       "offset %" PRIu64 ": extent %" PRIu64 "+%" PRIu64 ", want %" PRIu64 "+%" PRIu64,
			       probes[p], map.la, map.llen, x->lofs, end - x->lofs);
			if (!x->nblks)	/* the inline tail */
				LCHECK(map.pa == NID * 32 + m.meta + m.index_size &&
				       map.plen == l->zi.tail_size && (map.flags & EROFS_MAP_META),
				       "offset %" PRIu64 ": pcluster at %" PRIu64 "+%" PRIu64 " (0x%x), want inline %u+%u",
				       probes[p], map.pa, map.plen, map.flags,
				       NID * 32 + m.meta + m.index_size, l->zi.tail_size);
			else
				LCHECK(map.pa == (uint64_t)(DATA_BLK + x->pblk) * BLK &&
				       map.plen == (uint64_t)x->nblks * BLK && !(map.flags & EROFS_MAP_META),
				       "offset %" PRIu64 ": pcluster at %" PRIu64 "+%" PRIu64 ", want block %u+%u",
				       probes[p], map.pa, map.plen, DATA_BLK + x->pblk, x->nblks);
			LCHECK(!!(map.flags & EROFS_MAP_ENCODED) == !x->raw,
			       "offset %" PRIu64 ": flags 0x%x for a %s extent", probes[p], map.flags,
			       x->raw ? "raw" : "compressed");
		}
	}
out:
	erofs_reader_close(&r);
	free(m.b);
	return bad;
#undef LCHECK
}

static void free_layout(struct layout *l)
{
	free(l->zi.extents);
	l->zi.extents = NULL;
}

static void test_random_layouts(unsigned int cases)
{
	unsigned int bad = 0, kinds[8] = { 0 }, tails = 0;

	for (unsigned int i = 0; i < cases; i++) {
		struct layout l;

		make_layout(&l);
		kinds[(l.opts.legacy_index ? 4 : 0) | (l.opts.compact_2b ? 2 : 0) | l.big]++;
		if (check_layout(&l, i))
			bad++;
		tails += l.zi.tail_size != 0;
		free_layout(&l);
	}
	printf("random layouts: %u cases (full %u/%u big, compact %u/%u big, compact 2B %u/%u big; %u inline tails), %u bad\n",
	       cases, kinds[4] + kinds[6], kinds[5] + kinds[7], kinds[0], kinds[1],
	       kinds[2], kinds[3], tails, bad);
}

/* ------------------------------------------------------------------ */
/* hostile indexes                                                     */

/* Maps the whole file; returns the first error (message in r) or 0. */
static int map_all(struct erofs_reader *r, const struct erofs_rd_inode *vi)
{
	uint64_t off = 0;

	while (off < vi->size) {
		struct erofs_map map;
		int err = erofs_map_blocks(r, vi, off, &map);

		if (err)
			return err;
		if (map.la > off || map.la + map.llen <= off || map.la + map.llen > vi->size ||
		    ((map.flags & EROFS_MAP_MAPPED) &&
		     (map.pa + map.plen > r->size || map.plen > EROFS_PCLUSTER_MAX_SIZE)))
			return -ERANGE;
		off = map.la + map.llen;
	}
	return 0;
}

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
		err = erofs_reader_open_mem(&r, m.b, m.size);
		if (!err)
			err = erofs_read_inode(&r, NID, &vi);
		if (!err)
			err = map_all(&r, &vi);
		CHECK(err == 0);
		if (err)
			fprintf(stderr, "%s: the undamaged file: %s\n", h->what, erofs_reader_error(&r));
		erofs_reader_close(&r);

		h->edit(&m);
		err = erofs_reader_open_mem(&r, m.b, m.size);
		if (!err)
			err = erofs_read_inode(&r, NID, &vi);
		if (!err)
			err = map_all(&r, &vi);
		checks++;
		if (err != h->err || !strstr(erofs_reader_error(&r), h->words)) {
			failures++;
			fprintf(stderr, "%s: returned %d (\"%s\"), expected %d with \"%s\"\n",
				h->what, err, erofs_reader_error(&r), h->err, h->words);
		}
		erofs_reader_close(&r);
		free(m.b);
		free_layout(&l);
	}
}

/* Random byte damage in the index and header: refused or mapped sanely. */
static void test_random_damage(unsigned int rounds)
{
	unsigned int refused = 0, clean = 0;

	for (unsigned int i = 0; i < rounds; i++) {
		struct erofs_reader r;
		struct erofs_rd_inode vi;
		struct layout l;
		struct img m;
		size_t from, span;
		int err, n = 1 + (int)rnd_below(4);

		make_layout(&l);
		build_image(&l, &m);
		from = NID * 32 + m.meta;
		span = m.index_size;
		while (n--) {
			size_t at = from + rnd_below(span);

			m.b[at] ^= (uint8_t)(1u << rnd_below(8));
			if (rnd_below(4) == 0)
				m.b[at] = (uint8_t)rnd();
		}
		err = erofs_reader_open_mem(&r, m.b, m.size);
		if (!err)
			err = erofs_read_inode(&r, NID, &vi);
		if (!err)
			err = map_all(&r, &vi);
		checks++;
		if (err == -ERANGE || (err && err != -EUCLEAN && err != -EOPNOTSUPP)) {
			failures++;
			fprintf(stderr, "random damage %u (%s): returned %d (%s)\n", i, l.desc, err,
				erofs_reader_error(&r));
		}
		if (err)
			refused++;
		else
			clean++;
		/* random offsets as well (lookbacks from anywhere) */
		for (int k = 0; !err && k < 64; k++) {
			struct erofs_map map;
			uint64_t la = rnd_below(vi.size);

			if (!erofs_map_blocks(&r, &vi, la, &map))
				CHECK(map.la <= la && la - map.la < map.llen);
		}
		erofs_reader_close(&r);
		free(m.b);
		free_layout(&l);
	}
	printf("random damage: %u images, %u refused, %u still consistent\n", rounds, refused,
	       clean);
}

int main(int argc, char **argv)
{
	unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 0) : 20240611;
	unsigned int cases = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 3000;

	rng_state = seed ? seed : 1;
	printf("seed %lu\n", seed);
	test_random_layouts(cases);
	test_hostile();
	test_random_damage(cases);
	return unit_summary("test-zindex");
}
