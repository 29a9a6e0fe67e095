/* SPDX-License-Identifier: MIT */
/*
 * fuzz-mutate's parser: a seed image into its table of typed fields (every
 * superblock field, the compression configs, the device table and prefix
 * table, every inode reachable from the root, the metabox and the packed
 * inode, with their xattrs, dirents, map headers, lcluster indexes, extent
 * records, chunk indexes and block maps), and the reading and writing of a
 * field in an image.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz-mutate.h"

#define MAX_INODES 4096

/* append V to the array ARR of N elements */
#define PUSH(arr, n, v) do { \
	(arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr))); \
	(arr)[(n)++] = (v); \
} while (0)

/* ------------------------------------------------------------- fields --- */

static void meta_touch(struct seed *s, uint64_t off, uint64_t len)
{
	if (off < s->meta_lo)
		s->meta_lo = off;
	if (off + len > s->meta_hi)
		s->meta_hi = off + len;
}

static void add_bits(struct seed *s, uint64_t off, unsigned int bit, unsigned int nbits,
		     enum kind kind, const char *name, uint64_t nid, uint64_t isize)
{
	struct field f = { off + bit / 8, bit % 8, nbits, kind, name, nid, isize };

	if (off + (bit + nbits + 7) / 8 > s->size)
		return;
	PUSH(s->f, s->nf, f);
	meta_touch(s, f.off, (f.bit + nbits + 7) / 8);
}

static void add(struct seed *s, uint64_t off, unsigned int bytes, enum kind kind,
		const char *name, uint64_t nid, uint64_t isize)
{
	add_bits(s, off, 0, 8 * bytes, kind, name, nid, isize);
}

/* the low NBITS bits set */
uint64_t mask_of(unsigned int nbits)
{
	return nbits >= 64 ? ~0ull : (1ull << nbits) - 1;
}

/* field F of image IMG (the seed or a mutant of it) */
uint64_t field_get(const unsigned char *img, const struct field *f)
{
	unsigned int nbytes = (f->bit + f->nbits + 7) / 8;
	unsigned __int128 v = 0;

	for (unsigned int i = 0; i < nbytes; i++)
		v |= (unsigned __int128)img[f->off + i] << (8 * i);
	return (uint64_t)(v >> f->bit) & mask_of(f->nbits);
}

void field_put(unsigned char *img, const struct field *f, uint64_t val)
{
	unsigned int nbytes = (f->bit + f->nbits + 7) / 8;
	unsigned __int128 v = 0, m = (unsigned __int128)mask_of(f->nbits) << f->bit;

	for (unsigned int i = 0; i < nbytes; i++)
		v |= (unsigned __int128)img[f->off + i] << (8 * i);
	v = (v & ~m) | (((unsigned __int128)(val & mask_of(f->nbits))) << f->bit);
	for (unsigned int i = 0; i < nbytes; i++)
		img[f->off + i] = (unsigned char)(v >> (8 * i));
}

/* ------------------------------------------------------------- parsing --- */

/* LEN bytes at OFF lie within the seed image */
int in_image(const struct seed *s, uint64_t off, uint64_t len)
{
	return off <= s->size && len <= s->size - off;
}

/* byte offset of nid 0 */
uint64_t meta_base(const struct seed *s)
{
	return (uint64_t)get32(s->img + SB_OFF + 40) << s->blkbits;
}

/* byte offset of inode NID (metabox nids: in a flat metabox), or UINT64_MAX */
uint64_t nid_off(const struct seed *s, uint64_t nid)
{
	if (nid >> 63) {
		nid &= ~(1ull << 63);
		return nid < (s->mbox_size >> 5) ? s->mbox_base + 32 * nid : UINT64_MAX;
	}
	return nid <= (s->size >> 5) ? meta_base(s) + 32 * nid : UINT64_MAX;
}

static int seen_nid(const struct seed *s, uint64_t nid)
{
	for (size_t i = 0; i < s->ninodes; i++)
		if (s->nids[i] == nid)
			return 1;
	return 0;
}

static void parse_xattr_entry(struct seed *s, uint64_t off, uint64_t nid, const char *where)
{
	(void)where;
	if (!in_image(s, off, 4))
		return;
	add(s, off, 1, K_COUNT, "e_name_len", nid, 0);
	add(s, off + 1, 1, K_ENUM, "e_name_index", nid, 0);
	add(s, off + 2, 2, K_SIZE, "e_value_size", nid, 0);
}

static void parse_xattrs(struct seed *s, uint64_t base, unsigned int xsize, uint64_t nid)
{
	uint64_t p, end = base + xsize;
	unsigned int shared, i;

	if (xsize < 12 || !in_image(s, base, xsize))
		return;
	add(s, base, 4, K_FLAGS, "h_name_filter", nid, 0);
	add(s, base + 4, 1, K_COUNT, "h_shared_count", nid, 0);
	shared = s->img[base + 4];
	p = base + 12;
	for (i = 0; i < shared && p + 4 <= end; i++, p += 4) {
		uint32_t id = get32(s->img + p);
		uint64_t xoff = ((uint64_t)get32(s->img + SB_OFF + 44) << s->blkbits) + 4ull * id;

		add(s, p, 4, K_COUNT, "shared_xattr_id", nid, 0);
		parse_xattr_entry(s, xoff, nid, "shared");
	}
	while (p + 4 <= end) {
		unsigned int esz = (4 + s->img[p] + get16(s->img + p + 2) + 3) & ~3u;

		parse_xattr_entry(s, p, nid, "inline");
		p += esz;
	}
}

/* flat (plain or inline) data offset of byte POS, or UINT64_MAX */
static uint64_t flat_off(const struct seed *s, uint64_t ioff, unsigned int hdr,
			 unsigned int layout, uint32_t raw, uint64_t size, uint64_t pos)
{
	uint64_t blksz = 1ull << s->blkbits;
	uint64_t nblocks = (size + blksz - 1) >> s->blkbits;

	if (layout == 2 && (pos >> s->blkbits) == nblocks - 1)
		return ioff + hdr + (pos & (blksz - 1));
	if (layout != 0 && layout != 2)
		return UINT64_MAX;
	return ((uint64_t)raw << s->blkbits) + pos;
}

static void parse_dir(struct seed *s, uint64_t nid, uint64_t ioff, unsigned int hdr,
		      unsigned int layout, uint32_t raw, uint64_t size, uint64_t *queue,
		      uint64_t *qparent, size_t *nq)
{
	uint64_t blksz = 1ull << s->blkbits;

	for (uint64_t pos = 0; pos < size && pos < (64ull << 10); pos += blksz) {
		uint64_t len = size - pos < blksz ? size - pos : blksz;
		uint64_t b = flat_off(s, ioff, hdr, layout, raw, size, pos);
		unsigned int n, i;

		if (b == UINT64_MAX || !in_image(s, b, len) || len < 12)
			return;
		n = get16(s->img + b + 8) / 12;
		if (!n || n * 12 > len)
			return;
		for (i = 0; i < n; i++) {
			uint64_t d = b + 12 * i, child = get64(s->img + d);

			add(s, d, 8, K_NID, "dirent.nid", nid, size);
			add(s, d + 8, 2, K_NAMEOFF, "dirent.nameoff", nid, len);
			add(s, d + 10, 1, K_ENUM, "dirent.file_type", nid, 0);
			PUSH(s->dirents, s->ndirents, d);
			if (*nq < MAX_INODES && !seen_nid(s, child)) {
				int dup = 0;

				for (size_t q = 0; q < *nq; q++)
					dup |= queue[q] == child;
				if (!dup) {
					queue[*nq] = child;
					qparent[*nq] = nid;
					(*nq)++;
				}
			}
		}
		/* the names are metadata too (bit flips may land there) */
		meta_touch(s, b, len);
	}
}

static void parse_zmap(struct seed *s, uint64_t nid, uint64_t ioff, unsigned int hdr,
		       unsigned int layout, uint64_t size)
{
	uint64_t h = ((ioff + hdr + 7) & ~7ull), blksz = 1ull << s->blkbits;
	uint64_t total = (size + blksz - 1) >> s->blkbits, lcn;
	unsigned int lbits = s->blkbits, advise;

	if (!in_image(s, h, 8))
		return;
	add(s, h, 4, K_OTHER, "h_fragmentoff", nid, size);
	add(s, h + 2, 2, K_SIZE, "h_idata_size", nid, size);
	add(s, h + 4, 2, K_FLAGS, "h_advise", nid, size);
	add(s, h + 6, 1, K_ENUM, "h_algorithmtype", nid, 0);
	add_bits(s, h + 7, 0, 3, K_CLUSTERBITS, "h_clusterbits", nid, 0);
	add_bits(s, h + 7, 7, 1, K_FLAGS, "h_fragment_bit", nid, size);
	advise = get16(s->img + h + 4);
	if (s->img[h + 7] & 0x80) {
		/* whole file in the packed inode: a 63-bit offset, no indexes */
		add_bits(s, h, 0, 63, K_SIZE, "h_fragmentoff63", nid, size);
		return;
	}
	if (total > 65536)
		total = 65536;
	if (layout == 1 && s->is48 && (advise & 1)) {	/* encoded extent records */
		unsigned int recsz = 4u << ((advise >> 1) & 3);
		uint64_t pos = (h + 8 + recsz - 1) & ~(uint64_t)(recsz - 1), n;
		struct exttab t;

		if (recsz <= 8) {
			unsigned int lcb = s->blkbits + (s->img[h + 7] & 15);

			n = size ? ((size - 1) >> (lcb < 63 ? lcb : 63)) + 1 : 0;
			if (recsz == 4) {
				add(s, pos, 8, K_BYTEADDR, "ext.base", nid, size);
				pos += 8;
			}
		} else {
			add(s, h, 4, K_COUNT, "h_extents_lo", nid, size);
			add(s, h + 6, 2, K_COUNT, "h_extents_hi", nid, size);
			n = get32(s->img + h) | (uint64_t)get16(s->img + h + 6) << 32;
		}
		if (n > 4096)
			n = 4096;
		for (lcn = 0; lcn < n && in_image(s, pos + recsz * lcn, recsz); lcn++) {
			uint64_t p = pos + recsz * lcn;

			add(s, p, 4, K_PLEN, "ext.plen", nid, size);
			if (recsz >= 8)
				add(s, p + 4, 4, K_BYTEADDR, "ext.pstart_lo", nid, size);
			if (recsz >= 16) {
				add(s, p + 8, 4, K_HI16, "ext.pstart_hi", nid, size);
				add(s, p + 12, 4, K_SIZE, "ext.lstart_lo", nid, size);
			}
			if (recsz >= 32)
				add(s, p + 16, 4, K_HI16, "ext.lstart_hi", nid, size);
		}
		t.off = pos;
		t.nrecs = lcn;
		t.nid = nid;
		t.isize = size;
		t.recsz = recsz;
		if (lcn)
			PUSH(s->exttabs, s->nexttabs, t);
		return;
	}
	if (layout == 1) {	/* full indexes */
		uint64_t e = h + 16;

		for (lcn = 0; lcn < total + 1 && in_image(s, e + 8 * lcn, 8); lcn++) {
			uint64_t p = e + 8 * lcn;
			unsigned int type = get16(s->img + p) & 3;

			add_bits(s, p, 0, 2, K_ENUM, "li.type", nid, size);
			add(s, p, 2, K_FLAGS, "li.advise", nid, size);
			add(s, p + 2, 2, K_CLUSTEROFS, "li.clusterofs", nid, size);
			if (type == 2) {
				add(s, p + 4, 2, K_DELTA, "li.delta0", nid, size);
				add(s, p + 6, 2, K_DELTA, "li.delta1", nid, size);
			} else {
				add(s, p + 4, 4, K_BLKADDR, "li.blkaddr", nid, size);
				PUSH(s->blkaddrs, s->nblk, get32(s->img + p + 4));
			}
		}
		return;
	}
	/* compact: 4B packs up to 32-byte alignment, then 2B packs, then 4B */
	{
		uint64_t ebase = h + 8, pos = ebase;
		uint64_t init4 = (32 - ebase % 32) / 4, n2 = 0;

		if (init4 == 8)
			init4 = 0;
		if ((advise & 1) && init4 < total)
			n2 = (total - init4) / 16 * 16;
		for (lcn = 0; lcn < total; ) {
			unsigned int shift = (lcn < init4 || lcn >= init4 + n2) ? 2 : 1;
			unsigned int vcnt = shift == 2 ? 2 : 16;
			unsigned int packsz = vcnt << shift;
			unsigned int ebits = (packsz - 4) * 8 / vcnt;

			if (!in_image(s, pos, packsz))
				return;
			for (unsigned int i = 0; i < vcnt && lcn < total; i++, lcn++) {
				add_bits(s, pos, ebits * i, lbits, K_CLUSTEROFS, "ci.lo", nid, size);
				add_bits(s, pos, ebits * i + lbits, 2, K_ENUM, "ci.type", nid, size);
			}
			add(s, pos + packsz - 4, 4, K_BLKADDR, "ci.blkaddr", nid, size);
			PUSH(s->blkaddrs, s->nblk, get32(s->img + pos + packsz - 4));
			pos += packsz;
		}
	}
}

static void parse_chunks(struct seed *s, uint64_t nid, uint64_t ioff, unsigned int hdr,
			 uint32_t fmt, uint64_t size)
{
	unsigned int cbits = s->blkbits + (fmt & 0x1f);
	int indexes = fmt & 0x20;
	unsigned int unit = indexes ? 8 : 4;
	uint64_t p = (ioff + hdr + unit - 1) & ~(uint64_t)(unit - 1);
	uint64_t n = cbits < 63 ? (size + (1ull << cbits) - 1) >> cbits : 1;

	if (n > 16384)
		n = 16384;
	for (uint64_t i = 0; i < n && in_image(s, p + unit * i, unit); i++) {
		uint64_t e = p + unit * i;

		if (indexes) {
			add(s, e, 2, K_FLAGS, "chunk.advise", nid, size);
			add(s, e + 2, 2, K_COUNT, "chunk.device_id", nid, size);
			add(s, e + 4, 4, K_BLKADDR, "chunk.blkaddr", nid, size);
			PUSH(s->blkaddrs, s->nblk, get32(s->img + e + 4));
		} else {
			add(s, e, 4, K_BLKADDR, "blockmap.blkaddr", nid, size);
			PUSH(s->blkaddrs, s->nblk, get32(s->img + e));
		}
	}
}

static void parse_inode(struct seed *s, uint64_t nid, uint64_t parent, uint64_t *queue,
			uint64_t *qparent, size_t *nq)
{
	uint64_t ioff = nid_off(s, nid), size;

	/* a metabox nid names a slot of the metabox data: parsed when it is flat */
	if (ioff == UINT64_MAX)
		return;
	const unsigned char *p;
	unsigned int fmt, ext, layout, isz, icount, xsize, hdr;
	uint16_t mode;
	uint32_t raw;

	if (!in_image(s, ioff, 32))
		return;
	p = s->img + ioff;
	fmt = get16(p);
	ext = fmt & 1;
	layout = (fmt >> 1) & 7;
	isz = ext ? 64 : 32;
	if (!in_image(s, ioff, isz))
		return;
	icount = get16(p + 2);
	xsize = icount ? 12 + 4 * (icount - 1) : 0;
	hdr = isz + xsize;
	mode = get16(p + 4);
	size = ext ? get64(p + 8) : get32(p + 8);
	raw = get32(p + 16);

	if (s->ninodes >= MAX_INODES)
		return;
	s->nids[s->ninodes] = nid;
	s->parents[s->ninodes] = parent;
	s->inode_off[s->ninodes] = ioff;
	s->inode_len[s->ninodes] = isz;
	s->ninodes++;

	add(s, ioff, 2, K_FORMAT, "i_format", nid, size);
	add(s, ioff + 2, 2, K_COUNT, "i_xattr_icount", nid, size);
	add(s, ioff + 4, 2, K_MODE, "i_mode", nid, size);
	if (ext) {
		add(s, ioff + 8, 8, K_SIZE, "i_size", nid, size);
		add(s, ioff + 24, 4, K_OTHER, "i_uid", nid, size);
		add(s, ioff + 28, 4, K_OTHER, "i_gid", nid, size);
		add(s, ioff + 32, 8, K_OTHER, "i_mtime", nid, size);
		add(s, ioff + 40, 4, K_OTHER, "i_mtime_nsec", nid, size);
		add(s, ioff + 44, 4, K_COUNT, "i_nlink", nid, size);
	} else {
		add(s, ioff + 6, 2, K_COUNT, "i_nlink", nid, size);
		add(s, ioff + 8, 4, K_SIZE, "i_size", nid, size);
		add(s, ioff + 24, 2, K_OTHER, "i_uid", nid, size);
		add(s, ioff + 26, 2, K_OTHER, "i_gid", nid, size);
	}
	add(s, ioff + 20, 4, K_OTHER, "i_ino", nid, size);
	if (s->is48) {
		/* i_nb: the high 16 bits of the start block (extended inodes, and
		 * compact non-directories with NLINK_1), else nlink */
		if (ext || ((fmt & 0x10) && (mode & 0170000) != 0040000))
			add(s, ioff + 6, 2, K_HI16, "i_startblk_hi", nid, size);
		if (!ext)
			add(s, ioff + 12, 4, K_OTHER, "i_mtime48", nid, size);
	}
	switch (mode & 0170000) {
	case 0020000: case 0060000: case 0010000: case 0140000:
		add(s, ioff + 16, 4, K_OTHER, "i_rdev", nid, size);
		break;
	default:
		if (layout == 4)
			add(s, ioff + 16, 2, K_FLAGS, "i_chunk_format", nid, size);
		else if (layout == 1 || layout == 3)
			add(s, ioff + 16, 4, K_COUNT, "i_compressed_blocks", nid, size);
		else {
			add(s, ioff + 16, 4, K_BLKADDR, "i_raw_blkaddr", nid, size);
			PUSH(s->blkaddrs, s->nblk, raw);
		}
	}
	parse_xattrs(s, ioff + isz, xsize, nid);
	if ((mode & 0170000) == 0040000 && (layout == 0 || layout == 2)) {
		parse_dir(s, nid, ioff, hdr, layout, raw, size, queue, qparent, nq);
	} else if (layout == 1 || layout == 3) {
		parse_zmap(s, nid, ioff, hdr, layout, size);
	} else if (layout == 4) {
		parse_chunks(s, nid, ioff, hdr, raw & 0xffff, size);
	} else if ((layout == 0 || layout == 2) && size) {
		uint64_t start = flat_off(s, ioff, hdr, layout, raw, size, 0);
		uint64_t blksz = 1ull << s->blkbits;
		uint64_t full = layout == 2 ? (size - 1) / blksz * blksz : size;

		if (full && start != UINT64_MAX && in_image(s, start, full)) {
			struct region r = { start, full };

			PUSH(s->payload, s->npayload, r);
		}
	}
	/* the inode's own block(s) are metadata */
	meta_touch(s, ioff, hdr);
}

/*
 * FORMAT_FIELDS (-F) adds the xattr filter's reserved byte to the fields;
 * without -F the field list, and so every mutant, stays as it was before
 * the format-aware edits existed.
 */
static void parse_seed(struct seed *s, int format_fields)
{
	unsigned char *sb = s->img + SB_OFF;
	uint64_t *queue = xrealloc(NULL, MAX_INODES * sizeof(*queue));
	uint64_t *qparent = xrealloc(NULL, MAX_INODES * sizeof(*qparent));
	size_t nq = 0, qi;
	uint32_t incompat;

	s->meta_lo = SB_OFF;
	s->meta_hi = SB_OFF + 128;
	s->nids = xrealloc(NULL, MAX_INODES * sizeof(*s->nids));
	s->parents = xrealloc(NULL, MAX_INODES * sizeof(*s->parents));
	s->inode_off = xrealloc(NULL, MAX_INODES * sizeof(*s->inode_off));
	s->inode_len = xrealloc(NULL, MAX_INODES * sizeof(*s->inode_len));
	add(s, SB_OFF, 4, K_MAGIC, "sb.magic", 0, 0);
	add(s, SB_OFF + 4, 4, K_CSUM, "sb.checksum", 0, 0);
	add(s, SB_OFF + 8, 4, K_FLAGS, "sb.feature_compat", 0, 0);
	add(s, SB_OFF + 12, 1, K_BLKBITS, "sb.blkszbits", 0, 0);
	add(s, SB_OFF + 13, 1, K_COUNT, "sb.sb_extslots", 0, 0);
	add(s, SB_OFF + 14, 2, K_NID, "sb.root_nid", 0, 0);
	add(s, SB_OFF + 16, 8, K_COUNT, "sb.inos", 0, 0);
	add(s, SB_OFF + 24, 8, K_OTHER, "sb.build_time", 0, 0);
	add(s, SB_OFF + 32, 4, K_OTHER, "sb.build_time_nsec", 0, 0);
	add(s, SB_OFF + 36, 4, K_BLKADDR, "sb.blocks", 0, 0);
	add(s, SB_OFF + 40, 4, K_BLKADDR, "sb.meta_blkaddr", 0, 0);
	add(s, SB_OFF + 44, 4, K_BLKADDR, "sb.xattr_blkaddr", 0, 0);
	add(s, SB_OFF + 64, 16, K_OTHER, "sb.volume_name", 0, 0);
	add(s, SB_OFF + 80, 4, K_FLAGS, "sb.feature_incompat", 0, 0);
	add(s, SB_OFF + 84, 2, K_FLAGS, "sb.u1", 0, 0);
	add(s, SB_OFF + 86, 2, K_COUNT, "sb.extra_devices", 0, 0);
	add(s, SB_OFF + 88, 2, K_NAMEOFF, "sb.devt_slotoff", 0, 0);
	add(s, SB_OFF + 90, 1, K_BLKBITS, "sb.dirblkbits", 0, 0);
	add(s, SB_OFF + 91, 1, K_COUNT, "sb.xattr_prefix_count", 0, 0);
	add(s, SB_OFF + 92, 4, K_OTHER, "sb.xattr_prefix_start", 0, 0);
	add(s, SB_OFF + 96, 8, K_NID, "sb.packed_nid", 0, 0);
	PUSH(s->blkaddrs, s->nblk, get32(sb + 40));
	PUSH(s->blkaddrs, s->nblk, get32(sb + 44));
	incompat = get32(sb + 80);
	s->is48 = !!(incompat & INCOMPAT_48BIT);
	s->mbox_nid = UINT64_MAX;
	if (format_fields)
		add(s, SB_OFF + 0x6B, 1, K_OTHER, "sb.xattr_filter_reserved", 0, 0);
	if (s->is48) {
		add(s, SB_OFF + 0x6C, 4, K_OTHER, "sb.build_time_delta", 0, 0);
		add(s, SB_OFF + 0x70, 8, K_NID, "sb.rootnid_8b", 0, 0);
		/* with rootnid_8b, the 16-bit root nid field holds blocks_hi */
		for (size_t i = 0; get64(sb + 0x70) && i < s->nf; i++)
			if (!strcmp(s->f[i].name, "sb.root_nid")) {
				s->f[i].name = "sb.blocks_hi";
				s->f[i].kind = K_HI16;
			}
	}
	if (sb[13] >= 1 && (incompat & INCOMPAT_METABOX)) {
		uint64_t mo;

		add(s, SB_OFF + 0x80, 8, K_NID, "sb.metabox_nid", 0, 0);
		s->mbox_nid = get64(sb + 0x80);
		mo = nid_off(s, s->mbox_nid);
		/* a flat (uncompressed, -m without an algorithm) metabox: its
		 * inodes are parsed like the others */
		if (mo != UINT64_MAX && in_image(s, mo, 32) && !(get16(s->img + mo) & 1) &&
		    ((get16(s->img + mo) >> 1) & 7) == 0) {
			s->mbox_base = (uint64_t)get32(s->img + mo + 16) << s->blkbits;
			s->mbox_size = get32(s->img + mo + 8);
			if (!in_image(s, s->mbox_base, s->mbox_size))
				s->mbox_size = 0;
		}
	}
	/* the long xattr prefix table, when it lies in the image itself */
	if ((incompat & INCOMPAT_XATTR_PREFIXES) && (get32(sb + 8) & COMPAT_PLAIN_XATTR_PFX)) {
		uint64_t p = 4ull * get32(sb + 92);

		for (unsigned int i = 0; i < sb[91] && in_image(s, p, 3); i++) {
			add(s, p, 2, K_SIZE, "pfx.len", 0, 0);
			add(s, p + 2, 1, K_ENUM, "pfx.base_index", 0, 0);
			p = (p + 2 + get16(s->img + p) + 3) & ~3ull;
		}
	}

	/* compression configuration records after the superblock */
	if (incompat & 0x2) {
		uint64_t p = SB_OFF + 128 + 16ull * sb[13];
		uint16_t algs = get16(sb + 84);

		for (int alg = 0; alg < 16; alg++) {
			if (!(algs & (1u << alg)) || !in_image(s, p, 2))
				continue;
			add(s, p, 2, K_SIZE, "cfg.size", 0, 0);
			if (alg == 0 && in_image(s, p + 2, 4)) {
				add(s, p + 2, 2, K_SIZE, "lz4.max_distance", 0, 0);
				add(s, p + 4, 2, K_COUNT, "lz4.max_pclusterblks", 0, 0);
			} else if (alg == 1 && in_image(s, p + 2, 6)) {
				add(s, p + 2, 4, K_SIZE, "lzma.dict_size", 0, 0);
				add(s, p + 6, 2, K_ENUM, "lzma.format", 0, 0);
			} else if (alg == 2 && in_image(s, p + 2, 1)) {
				add(s, p + 2, 1, K_COUNT, "deflate.windowbits", 0, 0);
			} else if (alg == 3 && in_image(s, p + 2, 2)) {
				add(s, p + 2, 1, K_ENUM, "zstd.format", 0, 0);
				add(s, p + 3, 1, K_COUNT, "zstd.windowlog", 0, 0);
			}
			p += 2 + get16(s->img + p);
		}
	}
	/* device table */
	if (get16(sb + 86) && get16(sb + 88)) {
		uint64_t p = 128ull * get16(sb + 88);

		for (unsigned int i = 0; i < get16(sb + 86) && i < 16; i++, p += 128) {
			add(s, p, 8, K_OTHER, "devslot.tag", 0, 0);
			add(s, p + 64, 4, K_BLKADDR, "devslot.blocks", 0, 0);
			add(s, p + 68, 4, K_BLKADDR, "devslot.mapped_blkaddr", 0, 0);
			if (s->is48) {
				add(s, p + 72, 4, K_HI16, "devslot.blocks_hi", 0, 0);
				add(s, p + 76, 2, K_HI16, "devslot.mapped_hi", 0, 0);
			}
		}
	}

	{
		uint64_t root = (s->is48 && get64(sb + 0x70)) ? get64(sb + 0x70) : get16(sb + 14);

		queue[nq] = root;
		qparent[nq++] = root;
	}
	if (s->mbox_nid != UINT64_MAX) {
		queue[nq] = s->mbox_nid;
		qparent[nq++] = s->mbox_nid;
	}
	if ((incompat & 0x20) && get64(sb + 96) != get16(sb + 14)) {
		queue[nq] = get64(sb + 96);
		qparent[nq++] = get64(sb + 96);
	}
	/* breadth first from the root (and the packed inode) */
	for (qi = 0; qi < nq && s->ninodes < MAX_INODES; qi++)
		if (!seen_nid(s, queue[qi]))
			parse_inode(s, queue[qi], qparent[qi], queue, qparent, &nq);
	/* a compressed metabox hides the inodes: random bits reach its pclusters */
	if (s->mbox_nid != UINT64_MAX && !s->mbox_size)
		s->meta_hi = s->size;
	free(queue);
	free(qparent);
}

/* reads, checks and parses the seed image PATH (and PATH.blob) into C's list */
void load_seed(struct campaign *c, const char *path)
{
	struct seed s = { 0 };

	s.path = path;
	s.base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	s.img = read_file(path, &s.size);
	if (s.size < SB_OFF + 128)
		die("%s: too small", path);
	if (get32(s.img + SB_OFF) != SB_MAGIC)
		die("%s: no EROFS magic", path);
	{
		char bp[4096];
		struct stat st;

		snprintf(bp, sizeof(bp), "%s.blob", path);
		if (!stat(bp, &st)) {
			s.blob = read_file(bp, &s.blobsize);
			c->has_blobs = 1;
		}
	}
	s.blkbits = s.img[SB_OFF + 12];
	if (s.blkbits < 9 || s.blkbits > 12)
		die("%s: blkszbits %u", path, s.blkbits);
	parse_seed(&s, c->format_edits);
	PUSH(c->seeds, c->nseeds, s);
}

/* what load_seed allocated, so that a leak checker sees none at exit */
void free_seeds(struct campaign *c)
{
	for (size_t i = 0; i < c->nseeds; i++) {
		struct seed *s = &c->seeds[i];

		free(s->img);
		free(s->f);
		free(s->nids);
		free(s->parents);
		free(s->inode_off);
		free(s->inode_len);
		free(s->blkaddrs);
		free(s->dirents);
		free(s->payload);
		free(s->blob);
		free(s->exttabs);
	}
	free(c->seeds);
	c->seeds = NULL;
	c->nseeds = 0;
}

/* -p: the fields the parser found */
void print_fields(const struct seed *s)
{
	printf("%s: %zu fields, %zu inodes, %zu dirents, %zu block addresses, %zu data regions, "
	       "metadata bytes %" PRIu64 "..%" PRIu64 "\n", s->path, s->nf, s->ninodes,
	       s->ndirents, s->nblk, s->npayload, s->meta_lo, s->meta_hi);
	for (size_t i = 0; i < s->nf; i++) {
		const struct field *f = &s->f[i];

		printf("  %-22s @%" PRIu64 ".%u/%-2u kind %u nid %" PRIu64 " = %" PRIx64 "\n",
		       f->name, f->off, f->bit, f->nbits, f->kind, f->nid, field_get(s->img, f));
	}
}
