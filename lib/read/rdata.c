// SPDX-License-Identifier: MIT
/*
 * A file's data: mapping a logical offset to its extent (one function per
 * layout), reading mapped extents (plain, interlaced ring, a fragment of
 * the packed inode, inline in the metabox), whole files and symlinks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rdevice.h"
#include "erofs/read/rinode.h"
#include "erofs/read/rmcache.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail	erofs_reader_fail

/* ------------------------------------------------------------------ */
/* data mapping, one function per layout                               */

typedef int (*erofs_map_fn)(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			    uint64_t la, struct erofs_map *map);

static int map_flat(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		    uint64_t la, struct erofs_map *map)
{
	if (la < vi->flat_head) {
		map->la = 0;
		map->llen = vi->flat_head;
		map->pa = vi->flat_hole ? 0 : vi->raw_blkaddr << r->blkszbits;
		map->flags = vi->flat_hole ? 0 : EROFS_MAP_MAPPED;
	} else {
		map->la = vi->flat_head;
		map->llen = vi->size - vi->flat_head;
		map->pa = vi->inline_pos;
		map->flags = EROFS_MAP_MAPPED | EROFS_MAP_META | (vi->in_mbox ? EROFS_MAP_MBOX : 0);
	}
	map->plen = map->llen;
	return 0;
}

static int map_chunk(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		    uint64_t la, struct erofs_map *map)
{
	uint64_t chunknr = la >> vi->chunkbits;
	uint8_t ent[EROFS_CHUNK_INDEX_SIZE];
	uint64_t blkaddr, pa;
	bool hole;
	int err;

	err = erofs_meta_read(r, vi->in_mbox, ent, vi->chunk_unit,
			      vi->chunk_table + chunknr * vi->chunk_unit);
	if (err)
		return err;
	map->la = chunknr << vi->chunkbits;
	map->llen = vi->size - map->la;
	if (map->llen > (uint64_t)1 << vi->chunkbits)
		map->llen = (uint64_t)1 << vi->chunkbits;
	map->plen = map->llen;

	if (vi->chunk_unit == EROFS_BLOCK_MAP_ENTRY_SIZE) {
		blkaddr = get_le32(ent);
		hole = blkaddr == EROFS_NULL_ADDR;
	} else {
		/* 48-bit: the first field is startblk_hi; 6.1 calls it advise, 0 */
		uint16_t hi = get_le16(ent), device_id = get_le16(ent + 2);
		const bool wide = vi->chunkformat & EROFS_CHUNK_FORMAT_48BIT;

		blkaddr = get_le32(ent + 4);
		hole = blkaddr == EROFS_NULL_ADDR && (!wide || hi == 0xFFFF);
		if (wide)
			blkaddr |= (uint64_t)hi << 32;
		else if (!hole && hi)
			return fail(r, -EFSCORRUPTED,
				    "chunk %" PRIu64 ": reserved index field set (0x%04x)",
				    chunknr, hi);
		if (!hole && device_id && !r->nr_devs)
			return fail(r, -EFSCORRUPTED,
				    "chunk %" PRIu64 " refers to device %u, but the image has no extra devices",
				    chunknr, device_id);
		/* Linux keeps the bits up to the device count's power of two */
		map->device = device_id & r->device_id_mask;
		if (!hole && map->device > r->nr_devs)
			return fail(r, -EFSCORRUPTED,
				    "chunk %" PRIu64 " refers to device %u, but the image has %u extra devices",
				    chunknr, map->device, r->nr_devs);
	}
	if (hole) {
		map->pa = 0;
		map->flags = 0;
		map->device = 0;
		return 0;
	}
	pa = blkaddr << r->blkszbits;	/* < 2^60 */
	if (map->device && !erofs_rd_extent_ok(r, map->device, pa, map->llen))
		return fail(r, -EFSCORRUPTED,
			    "chunk %" PRIu64 " at block %" PRIu64 " beyond the end of device %u (%" PRIu64 " blocks)",
			    chunknr, blkaddr, map->device, r->devs[map->device - 1].blocks);
	if (!erofs_rd_extent_ok(r, map->device, pa, map->llen))
		return fail(r, -EFSCORRUPTED,
			    "chunk %" PRIu64 " at block %" PRIu64 " beyond the end of the image (%" PRIu64 " blocks)",
			    chunknr, blkaddr, r->size >> r->blkszbits);
	map->pa = pa;
	map->flags = EROFS_MAP_MAPPED;
	return 0;
}

static const erofs_map_fn layout_map[] = {
	[EROFS_LAYOUT_FLAT_PLAIN] = map_flat,
	[EROFS_LAYOUT_COMPRESSED_FULL] = erofs_z_map,
	[EROFS_LAYOUT_FLAT_INLINE] = map_flat,
	[EROFS_LAYOUT_COMPRESSED_COMPACT] = erofs_z_map,
	[EROFS_LAYOUT_CHUNK_BASED] = map_chunk,
};

int erofs_map_blocks(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		    uint64_t la, struct erofs_map *map)
{
	int err;

	if (!erofs_mode_has_data(vi->di.mode))
		return fail(r, -EINVAL, "special file has no data");
	if (la >= vi->size)
		return fail(r, -EINVAL, "offset %" PRIu64 " beyond i_size %" PRIu64,
			    la, vi->size);
	if (vi->layout >= sizeof(layout_map) / sizeof(layout_map[0]))
		return fail(r, -EOPNOTSUPP, "unknown data layout %u",
			    vi->layout);
	memset(map, 0, sizeof(*map));
	err = layout_map[vi->layout](r, vi, la, map);
	if (!err)
		err = erofs_rd_remap(r, map);
	if (err)
		return err;
	/* a mapping that does not cover la, or runs past i_size, is a bug */
	if (!map->llen || la < map->la || la - map->la >= map->llen ||
	    map->llen > vi->size - map->la)
		return fail(r, -EFSCORRUPTED,
			    "bad mapping of offset %" PRIu64, la);
	if (map->flags & EROFS_MAP_FRAGMENT) {
		/* pa is in the packed inode's data, checked when the inode was loaded */
		if (!(map->flags & EROFS_MAP_MAPPED) || map->plen != map->llen ||
		    (map->flags & (EROFS_MAP_ENCODED | EROFS_MAP_META | EROFS_MAP_INTERLACED)))
			return fail(r, -EFSCORRUPTED, "bad fragment mapping of offset %" PRIu64, la);
		return 0;
	}
	if ((map->flags & EROFS_MAP_MBOX) &&
	    (!vi->in_mbox || !(map->flags & EROFS_MAP_META) || map->device ||
	     map->pa > r->mbox->size || map->plen > r->mbox->size - map->pa))
		return fail(r, -EFSCORRUPTED,
			    "bad mapping of offset %" PRIu64 " (beyond the metabox)", la);
	if ((map->flags & EROFS_MAP_MAPPED) &&
	    ((!(map->flags & EROFS_MAP_MBOX) &&
	      !erofs_rd_extent_ok(r, map->device, map->pa, map->plen)) ||
	     (!(map->flags & EROFS_MAP_ENCODED) && map->llen > map->plen)))
		return fail(r, -EFSCORRUPTED,
			    "bad mapping of offset %" PRIu64 " (beyond the image)", la);
	if ((map->flags & EROFS_MAP_INTERLACED) &&
	    (map->plen != r->blksz || (map->pa & (r->blksz - 1))))
		return fail(r, -EFSCORRUPTED,
			    "bad interlaced mapping of offset %" PRIu64, la);
	return 0;
}

int erofs_read_mapped(struct erofs_reader *r, const struct erofs_map *map,
		      void *buf, size_t len, uint64_t pos)
{
	uint8_t *p = buf;
	uint64_t skip;

	if (!(map->flags & EROFS_MAP_MAPPED) || (map->flags & EROFS_MAP_ENCODED) ||
	    pos < map->la || pos - map->la > map->llen || len > map->llen - (pos - map->la))
		return fail(r, -EINVAL, "read of %zu bytes at %" PRIu64 " outside its extent", len, pos);
	skip = pos - map->la;
	if (map->flags & EROFS_MAP_FRAGMENT)
		return erofs_read_packed(r, buf, len, map->pa + skip);
	if (map->flags & EROFS_MAP_MBOX)
		return erofs_meta_read(r, true, buf, len, map->pa + skip);
	if (!(map->flags & EROFS_MAP_INTERLACED))
		return erofs_devn_read(r, map->device, buf, len, map->pa + skip);
	/* a ring: the part up to the end of the block, then from its start */
	while (len) {
		uint64_t at = pos & (r->blksz - 1);
		size_t n = len < r->blksz - at ? len : (size_t)(r->blksz - at);
		int err = erofs_dev_read(r, p, n, map->pa + at);

		if (err)
			return err;
		p += n;
		pos += n;
		len -= n;
	}
	return 0;
}

int erofs_read_data(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		    void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	if (off > vi->size || len > vi->size - off)
		return fail(r, -EINVAL, "read beyond i_size");
	while (len) {
		struct erofs_map map;
		uint64_t skip, n;
		int err = erofs_map_blocks(r, vi, off, &map);

		if (err)
			return err;
		skip = off - map.la;
		n = map.llen - skip;
		if (n > len)
			n = len;
		if (map.flags & EROFS_MAP_ENCODED) {
			const uint8_t *dec;

			err = erofs_decode_extent(r, vi, &map, &dec);
			if (err)
				return err;
			memcpy(p, dec + skip, (size_t)n);
		} else if (map.flags & EROFS_MAP_MAPPED) {
			err = erofs_read_mapped(r, &map, p, (size_t)n, off);
			if (err)
				return err;
		} else {
			memset(p, 0, (size_t)n);
		}
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

int erofs_read_symlink(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		       char *buf, size_t bufsz)
{
	int err;

	if (!S_ISLNK(vi->di.mode))
		return fail(r, -EINVAL, "not a symlink");
	if (vi->size == 0 || vi->size >= EROFS_SYMLINK_MAXLEN || vi->size >= bufsz)
		return fail(r, -EFSCORRUPTED,
			    "symlink target length %" PRIu64 " out of range",
			    vi->size);
	err = erofs_read_data(r, vi, buf, (size_t)vi->size, 0);
	if (err)
		return err;
	if (memchr(buf, '\0', (size_t)vi->size))
		return fail(r, -EFSCORRUPTED,
			    "symlink target contains a NUL byte");
	buf[vi->size] = '\0';
	return 0;
}

int erofs_read_packed(struct erofs_reader *r, void *buf, size_t len, uint64_t off)
{
	const struct erofs_rd_inode *pk;
	char msg[EROFS_ERRMSG_LEN];
	int err = erofs_packed_inode(r, &pk);

	if (err < 0)
		return err;
	if (!err)
		return fail(r, -EFSCORRUPTED, "fragment data, but the image has no packed inode");
	if (off > pk->size || len > pk->size - off)
		return fail(r, -EFSCORRUPTED,
			    "read of %zu bytes at %" PRIu64 " beyond the end of the packed inode (%" PRIu64 " bytes)",
			    len, off, pk->size);
	err = erofs_read_data(r, pk, buf, len, off);
	if (err) {
		snprintf(msg, sizeof(msg), "packed inode (nid %" PRIu64 "): %.200s", pk->nid, r->err);
		memcpy(r->err, msg, sizeof(r->err));
	}
	return err;
}
