// SPDX-License-Identifier: MIT
/*
 * Inodes: the core at a nid, every field checked (bounds, i_format, mode,
 * size), and where each layout keeps its data: flat blocks and inline
 * tails, chunk tables, and (lib/read/zread.c) the compressed map header.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rdevice.h"
#include "erofs/read/rinode.h"
#include "erofs/read/rmcache.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail	erofs_reader_fail

/* Bytes of the space an inode's metadata lives in: the image or the metabox data. */
static uint64_t meta_limit(const struct erofs_reader *r, const struct erofs_rd_inode *vi)
{
	return vi->in_mbox ? r->mbox->size : r->size;
}

static int setup_flat(struct erofs_reader *r, struct erofs_rd_inode *vi)
{
	uint64_t nblocks, head, tail;

	if (!vi->size)
		return 0;
	nblocks = ((vi->size - 1) >> r->blkszbits) + 1;
	if (vi->layout == EROFS_LAYOUT_FLAT_PLAIN) {
		head = vi->size;
		tail = 0;
	} else {
		/* the last (possibly full) block lives right after the xattrs */
		head = (nblocks - 1) << r->blkszbits;
		tail = vi->size - head;
	}
	vi->flat_head = head;
	if (head && vi->raw_blkaddr == UINT64_MAX && vi->layout == EROFS_LAYOUT_FLAT_PLAIN &&
	    (r->sb.feature_incompat & EROFS_INCOMPAT_48BIT)) {
		vi->flat_hole = true;	/* Linux 6.15: no block at all, the file reads as zeros */
	} else if (head) {
		/* raw_blkaddr < 2^48: the shift cannot overflow */
		uint64_t pa = vi->raw_blkaddr << r->blkszbits;

		if (vi->raw_blkaddr == UINT64_MAX || !erofs_rd_extent_ok(r, 0, pa, head))
			return fail(r, -EFSCORRUPTED,
				    "data blocks %" PRIu64 "..+%" PRIu64 " beyond the end of the image (%" PRIu64 " blocks)",
				    vi->raw_blkaddr == UINT64_MAX ? (uint64_t)EROFS_NULL_ADDR : vi->raw_blkaddr,
				    ((head - 1) >> r->blkszbits) + 1,
				    r->size >> r->blkszbits);
	}
	if (tail) {
		uint64_t pos = vi->meta_end;

		if ((pos & (r->blksz - 1)) + tail > r->blksz)
			return fail(r, -EFSCORRUPTED,
				    "inline data (%" PRIu64 " bytes at offset %" PRIu64 ") crosses a block boundary",
				    tail, pos & (r->blksz - 1));
		if (pos + tail > meta_limit(r, vi))
			return fail(r, -EFSCORRUPTED,
				    "inline data beyond the end of the %s",
				    vi->in_mbox ? "metabox" : "image");
		vi->inline_pos = pos;
		vi->meta_end = pos + tail;
	}
	return 0;
}

static int setup_chunks(struct erofs_reader *r, struct erofs_rd_inode *vi)
{
	uint64_t bytes, limit = meta_limit(r, vi);

	vi->chunkformat = (uint16_t)vi->di.u;
	if (vi->chunkformat & ~(EROFS_CHUNK_FORMAT_KNOWN | EROFS_CHUNK_FORMAT_48BIT))
		return fail(r, -EOPNOTSUPP,
			    "unsupported chunk format 0x%04x",
			    vi->chunkformat);
	if ((vi->chunkformat & EROFS_CHUNK_FORMAT_48BIT) &&
	    !(r->sb.feature_incompat & EROFS_INCOMPAT_48BIT))
		return fail(r, -EOPNOTSUPP,
			    "unsupported chunk format 0x%04x (48-bit, but the superblock lacks the 48bit feature)",
			    vi->chunkformat);
	if (vi->di.u >> 16)
		return fail(r, -EFSCORRUPTED,
			    "reserved chunk info bits set (0x%08x)",
			    vi->di.u);
	vi->chunkbits = r->blkszbits + (vi->chunkformat & EROFS_CHUNK_FORMAT_BLKBITS_MASK);
	vi->chunk_unit = (vi->chunkformat & EROFS_CHUNK_FORMAT_INDEXES) ?
			 EROFS_CHUNK_INDEX_SIZE : EROFS_BLOCK_MAP_ENTRY_SIZE;
	vi->chunk_table = (vi->meta_end + vi->chunk_unit - 1) & ~(uint64_t)(vi->chunk_unit - 1);
	vi->nchunks = vi->size ? ((vi->size - 1) >> vi->chunkbits) + 1 : 0;
	/* nchunks < 2^54, so the product cannot overflow */
	bytes = vi->nchunks * vi->chunk_unit;
	if (vi->chunk_table > limit || bytes > limit - vi->chunk_table)
		return fail(r, -EFSCORRUPTED,
			    "chunk table (%" PRIu64 " entries) beyond the end of the %s",
			    vi->nchunks, vi->in_mbox ? "metabox" : "image");
	vi->meta_end = vi->chunk_table + bytes;
	return 0;
}

/*
 * The 48-bit reading of an inode core: i_nb is nlink, or with NLINK_1 (compact
 * non-directories) the high 16 bits of the start block; extended inodes keep
 * those bits in i_nb too.  Compact inodes' mtime counts from the epoch.
 */
static void decode_48bit(struct erofs_reader *r, struct erofs_rd_inode *vi)
{
	bool wide = false;	/* i_nb holds the high address bits */
	uint64_t hi = 0;

	if (vi->version == EROFS_INODE_COMPACT) {
		if (!S_ISDIR(vi->di.mode) && (vi->di.format & EROFS_I_NLINK_1)) {
			hi = (uint16_t)vi->di.nlink;
			vi->di.nlink = 1;
			wide = true;
		}
		vi->mtime = r->epoch + vi->di.compact_mtime;
		vi->mtime_nsec = r->sb.build_time_nsec;
	} else if (r->sb.feature_incompat & EROFS_INCOMPAT_48BIT) {
		hi = vi->di.nb_hi;
		wide = true;
	}
	if (S_ISDIR(vi->di.mode))
		vi->dot_omitted = vi->di.format & EROFS_I_DOT_OMITTED;
	/* a start block of all ones (32 or 48 bits) is "no block", as in Linux */
	vi->raw_blkaddr = (uint64_t)vi->di.u | hi << 32;
	if (vi->raw_blkaddr == (wide ? 0xFFFFFFFFFFFFull : EROFS_NULL_ADDR))
		vi->raw_blkaddr = UINT64_MAX;
}

int erofs_read_inode(struct erofs_reader *r, uint64_t nid, struct erofs_rd_inode *vi)
{
	uint8_t raw[EROFS_EXTENDED_INODE_SIZE];
	uint64_t slots, avail, base, limit, slot = nid & ~EROFS_NID_METABOX_BIT;
	unsigned int ftype;
	uint16_t known;
	int err;

	memset(vi, 0, sizeof(*vi));
	vi->nid = nid;
	vi->in_mbox = nid & EROFS_NID_METABOX_BIT;
	if (vi->in_mbox && !r->mbox)
		return fail(r, -EFSCORRUPTED,
			    "nid %" PRIu64 " is in the metabox (bit 63), but %s", nid,
			    (r->sb.feature_incompat & EROFS_INCOMPAT_METABOX) ?
			    "the metabox is not loaded yet (it would need itself to be read)" :
			    "the image has no metabox");
	base = vi->in_mbox ? 0 : r->meta_base;
	limit = meta_limit(r, vi);
	slots = (limit - base) >> EROFS_SLOT_BITS;
	if (slot >= slots)
		return fail(r, -EFSCORRUPTED,
			    "nid %" PRIu64 " out of range (the %s has %" PRIu64 " inode slots)",
			    nid, vi->in_mbox ? "metabox" : "image", slots);
	vi->iloc = base + (slot << EROFS_SLOT_BITS);
	avail = limit - vi->iloc;
	err = erofs_meta_read(r, vi->in_mbox, raw, avail < sizeof(raw) ? (size_t)avail : sizeof(raw),
			      vi->iloc);
	if (err)
		return err;
	vi->di.format = get_le16(raw);
	known = (r->sb.feature_incompat & EROFS_INCOMPAT_48BIT) ? EROFS_I_FORMAT_KNOWN_48BIT
								  : EROFS_I_FORMAT_KNOWN;
	if (vi->di.format & ~known)
		return fail(r, -EOPNOTSUPP,
			    "unsupported i_format 0x%04x", vi->di.format);
	vi->version = erofs_inode_version(vi->di.format);
	vi->layout = erofs_inode_layout(vi->di.format);
	if (vi->layout > EROFS_LAYOUT_CHUNK_BASED)
		return fail(r, -EOPNOTSUPP,
			    "unknown data layout %u", vi->layout);
	vi->isize = erofs_inode_core_size(vi->version);
	if (vi->isize > avail)
		return fail(r, -EFSCORRUPTED,
			    "extended inode beyond the end of the %s",
			    vi->in_mbox ? "metabox" : "image");
	erofs_dinode_decode(raw, &vi->di);

	ftype = erofs_mode_to_ftype(vi->di.mode);
	if (ftype == EROFS_FT_UNKNOWN)
		return fail(r, -EFSCORRUPTED,
			    "bogus file type in mode 0%o", vi->di.mode);
	if (vi->version == EROFS_INODE_EXTENDED) {
		vi->mtime = vi->di.mtime;
		vi->mtime_nsec = vi->di.mtime_nsec;
		if (vi->mtime_nsec >= 1000000000u)
			return fail(r, -EFSCORRUPTED,
				    "mtime nanoseconds %u out of range",
				    vi->mtime_nsec);
	}
	decode_48bit(r, vi);
	if (vi->di.nlink == 0)
		return fail(r, -EFSCORRUPTED, "link count is 0");

	vi->xattr_isize = erofs_xattr_ibody_size(vi->di.xattr_icount);
	vi->meta_end = vi->iloc + vi->isize;
	if (vi->xattr_isize > limit - vi->meta_end)
		return fail(r, -EFSCORRUPTED,
			    "inline xattrs (%u bytes) beyond the end of the %s",
			    vi->xattr_isize, vi->in_mbox ? "metabox" : "image");
	vi->meta_end += vi->xattr_isize;

	if (vi->di.size > (uint64_t)INT64_MAX)
		return fail(r, -EFSCORRUPTED,
			    "negative i_size (0x%016" PRIx64 ")", vi->di.size);
	vi->size = vi->di.size;

	if (!erofs_mode_has_data(vi->di.mode))
		return 0;	/* i_u is rdev; no data whatever the layout says */

	if (S_ISLNK(vi->di.mode) && (vi->size == 0 || vi->size >= EROFS_SYMLINK_MAXLEN))
		return fail(r, -EFSCORRUPTED,
			    "symlink target length %" PRIu64 " out of range (1..%u)",
			    vi->size, EROFS_SYMLINK_MAXLEN - 1);
	if (S_ISDIR(vi->di.mode) && vi->size < (vi->dot_omitted ? 1u : 2u) * EROFS_DIRENT_SIZE)
		return fail(r, -EFSCORRUPTED,
			    "directory size %" PRIu64 " too small for %s",
			    vi->size, vi->dot_omitted ? "'..'" : "'.' and '..'");

	switch (vi->layout) {
	case EROFS_LAYOUT_FLAT_PLAIN:
	case EROFS_LAYOUT_FLAT_INLINE:
		return setup_flat(r, vi);
	case EROFS_LAYOUT_CHUNK_BASED:
		return setup_chunks(r, vi);
	default:
		/* compressed: the map header now, the index entries when mapped */
		return erofs_z_setup_inode(r, vi);
	}
}
