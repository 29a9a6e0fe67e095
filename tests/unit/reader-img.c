// SPDX-License-Identifier: MIT
/*
 * The in-memory image of the read layer's unit tests (reader-img.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"

#include "reader-img.h"

void img_init(struct img *m, unsigned int nblocks)
{
	m->size = (size_t)nblocks * BLK;
	m->b = calloc(1, m->size);
	memset(&m->sb, 0, sizeof(m->sb));
	m->sb.magic = EROFS_MAGIC;
	m->sb.blkszbits = 12;
	m->sb.root_nid = ROOT;
	m->sb.blocks = nblocks;
	m->sb.feature_compat = EROFS_COMPAT_MTIME;
	m->sb.inos = 1;
	m->csum = false;
}

void img_seal(struct img *m)
{
	if (m->csum)
		m->sb.feature_compat |= EROFS_COMPAT_SB_CHKSUM;
	erofs_super_encode(&m->sb, m->b + EROFS_SUPER_OFFSET);
	if (m->csum) {
		size_t span = erofs_sb_checksum_span(12);

		put_le32(m->b + EROFS_SUPER_OFFSET + EROFS_SB_CHECKSUM_OFFSET,
			 erofs_sb_checksum(m->b + EROFS_SUPER_OFFSET, span));
	}
}

int img_open(struct img *m, struct erofs_reader *r)
{
	img_seal(m);
	return erofs_reader_open_mem(r, m->b, m->size);
}

void put_inode(struct img *m, uint64_t nid, uint16_t mode, unsigned int layout,
	       uint64_t size, uint32_t u, bool extended)
{
	struct erofs_dinode di;

	memset(&di, 0, sizeof(di));
	di.format = erofs_inode_format(extended ? EROFS_INODE_EXTENDED : EROFS_INODE_COMPACT,
				       layout);
	di.mode = mode;
	di.size = size;
	di.u = u;
	di.nlink = S_ISDIR(mode) ? 2 : 1;
	erofs_dinode_encode(&di, m->b + nid * 32);
}

unsigned int put_dirblock(uint8_t *blk, const struct ent *e, unsigned int n)
{
	unsigned int i, off = n * EROFS_DIRENT_SIZE;

	for (i = 0; i < n; i++) {
		struct erofs_dirent de = { e[i].nid, (uint16_t)off, e[i].ft };
		size_t len = strlen(e[i].name);

		erofs_dirent_encode(&de, blk + i * EROFS_DIRENT_SIZE);
		memcpy(blk + off, e[i].name, len);
		off += (unsigned int)len;
	}
	return off;
}

unsigned int put_root(struct img *m, const struct ent *e, unsigned int n)
{
	uint8_t blk[BLK];
	unsigned int used;

	memset(blk, 0, sizeof(blk));
	used = put_dirblock(blk, e, n);
	put_inode(m, ROOT, S_IFDIR | 0755, EROFS_LAYOUT_FLAT_INLINE, used, 0, false);
	memcpy(m->b + ROOT * 32 + 32, blk, used);
	return used;
}
