// SPDX-License-Identifier: MIT
/*
 * The layouts and images of the lcluster index tests (zindex-img.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"

#include "zindex-img.h"

uint64_t rng_state;

uint64_t rnd(void)
{
	/* xorshift64*: the same cases for the same seed on every host */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

void add_extent(struct layout *l, uint32_t *cap, uint64_t lofs, uint16_t nblks, bool raw)
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

void build_image(struct layout *l, struct img *m)
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

void free_layout(struct layout *l)
{
	free(l->zi.extents);
	l->zi.extents = NULL;
}

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

int map_image(struct erofs_reader *r, const struct img *m, struct erofs_rd_inode *vi)
{
	int err = erofs_reader_open_mem(r, m->b, m->size);

	if (!err)
		err = erofs_read_inode(r, NID, vi);
	if (!err)
		err = map_all(r, vi);
	return err;
}
