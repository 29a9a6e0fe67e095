// SPDX-License-Identifier: MIT
/*
 * Cross-check of two independent implementations of EROFS lcluster indexes:
 * random extent layouts (raw and compressed extents, one-block and big
 * pclusters, inline tails, extent starts anywhere in an lcluster, files of
 * 1..300 lclusters, full and compact indexes with and without 2-byte packs) are
 * encoded by the writer's erofs_zindex_encode() into an in-memory image and
 * decoded by the reader (lib/read/zread.c): every lcluster entry and every
 * mapping must give back the extent start, pcluster block and block count
 * the layout was made of.  Then random damage to those indexes must never
 * crash, hang or map outside the image (run it under valgrind or ASan);
 * test-zindex-hostile.c refuses hand-made damage by its message.  The
 * layouts and images come from zindex-img.c.
 *
 * Usage: test-zindex [SEED [CASES]]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"
#include "erofs/read/zindexread.h"

#include "unit.h"
#include "zindex-img.h"

/* ------------------------------------------------------------------ */
/* one layout                                                          */

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
		err = map_image(&r, &m, &vi);
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
	test_random_damage(cases);
	return unit_summary("test-zindex");
}
