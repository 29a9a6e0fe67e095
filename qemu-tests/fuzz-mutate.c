/* SPDX-License-Identifier: MIT */
/*
 * fuzz-mutate: the structure-aware image mutator of the kernel fuzz campaign
 * (qemu-tests/fuzz.sh; design: ROBUSTNESS.md, "Kernel fuzz campaign").
 *
 *   fuzz-mutate [-s SEED] [-f FIRST] [-n COUNT] [-r RESEAL%] -o DISK [-l LOG]
 *               SEED.img...
 *       writes COUNT mutants (numbered FIRST..FIRST+COUNT-1) into the data
 *       disk DISK: a text header (see below), then the images, each 4 KiB
 *       aligned.  LOG gets one line per mutant: its number, seed image and
 *       every edit applied (offset, width, field, old and new value).
 *   fuzz-mutate -x NUMBER [-s SEED] [-r RESEAL%] -o IMG SEED.img...
 *       regenerates mutant NUMBER alone into IMG (mutant N depends only on
 *       SEED, N and the seed list, so any image of a campaign can be rebuilt).
 *   fuzz-mutate -P -o DISK IMG...
 *       packs IMGs unchanged into a data disk of the same format (to replay
 *       kept images in the guest).
 *   fuzz-mutate -p SEED.img
 *       prints the fields the parser found (a debugging aid).
 *   fuzz-mutate -E NAME[#WHO]=VALUE [-E ...] -o IMG SEED.img
 *       named edits of one seed (the findings' reproducers; see
 *       apply_named), resealed.
 *   fuzz-mutate -R IMG
 *       reseals IMG's superblock checksum in place (fuzz.sh --reduce).
 *
 * Disk header: "FORGE-FUZZ 1 COUNT HEADER_BYTES\n", then one line per image,
 * "NUMBER OFFSET SIZE[ BLOB_OFFSET BLOB_SIZE]\n", NUL-padded to HEADER_BYTES
 * (a multiple of 4096).  A seed SEED.img with a SEED.img.blob beside it (a
 * --blobdev or --tar=i image) carries that file as its extra device: the
 * guest mounts the image with -o device= on it (-P does the same for
 * IMG.blob, -x writes IMG.blob).
 *
 * -F adds the format-aware edits of the newer kernels' campaigns (fuzz.sh
 * --kernel): 48-bit fields (rootnid_8b, blocks_hi, i_nb start-block high
 * bits, device slot high bits), the metabox nid, encoded extent records
 * (plen, pstart, lstart), the long xattr prefix table, and one "format"
 * edit in 20% of the edits:
 *
 *   ext-*      extent records swapped, overlapping (logically or
 *              physically), going backwards, starting past i_size
 *   stream     compressed lengths that lie: plen, i_size of a compressed
 *              file +- up to a block, h_idata_size, i_compressed_blocks, a
 *              pcluster address shifted by one
 *   mbox-*     the metabox nid inside its own data, the root or the packed
 *              inode as the metabox or past its data, its size and mode
 *   addr48     high 16 address bits set: past any device
 *   pfx-*      xattr name indexes past the prefix table, its count and
 *              records lying
 *   filter     the xattr name filter turned on with bits that lie
 *   dev-*      device slots of absurd sizes, device ids past the table
 *   blob-trunc the extra device shorter than the slot says (5%)
 *
 * Each seed image (a valid image of our mkfs.erofs) is parsed once into a
 * table of typed fields: every superblock field, the compression config
 * records, the device table, every inode reachable from the root (and the
 * packed inode) with its xattr ibody header, shared ids and entries, the
 * shared xattr entries it references, directory entries, the compressed
 * map header and every lcluster index (full, or compact 2B/4B packs down
 * to their bitfields), chunk indexes and block maps.  A mutant is the seed
 * with 1..8 edits:
 *
 *   value    a field set to an interesting value for its width and kind: 0,
 *            1, all-ones, signed min/max, powers of two (+-1), block size
 *            +-1, page size +-1, the owner's i_size +-1, 2^31/2^32
 *            boundaries; nids, block addresses and name offsets also take
 *            values from the image (another inode, itself, its parent, the
 *            metadata area, past the end)
 *   arith    a field +- 1..35
 *   flip     one bit of a field
 *   splice   an inode copied over another (same seed or another seed), a
 *            dirent over another, or a block from another seed with the same
 *            block size
 *   struct   two dirents swapped (unsorted names), a name duplicated, a
 *            NONHEAD lookback chain, the whole-file fragment bit with a
 *            huge i_size, wider lclusters, the interlaced bit, a large
 *            h_shared_count
 *   bits     low weight: random bit flips anywhere in the metadata blocks
 *   payload  low weight: random bytes in file data
 *   trunc    low weight: the image cut at a block boundary
 *
 * Then the superblock checksum is resealed (RESEAL%, default 95, of the
 * mutants whose superblock claims one), so most edits get past it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs-image.h"

#define ALIGN_DISK 4096u
#define COMPAT_XATTR_FILTER 0x4u
#define COMPAT_PLAIN_XATTR_PFX 0x10u
#define INCOMPAT_DEVICE_TABLE 0x8u
#define INCOMPAT_XATTR_PREFIXES 0x40u
#define INCOMPAT_48BIT 0x80u
#define INCOMPAT_METABOX 0x100u
#define NID_METABOX (1ull << 63)
#define MAX_INODES 4096
#define MAX_EDITS 8

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz-mutate: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* -------------------------------------------------------------- fields --- */

enum kind {
	K_MAGIC, K_CSUM, K_FLAGS, K_BLKBITS, K_NID, K_BLKADDR, K_SIZE, K_COUNT,
	K_NAMEOFF, K_MODE, K_FORMAT, K_ENUM, K_OTHER, K_CLUSTERBITS, K_DELTA,
	K_CLUSTEROFS, K_PLEN, K_BYTEADDR, K_HI16,
};

struct field {
	uint64_t off;		/* byte holding bit 0 of the field */
	uint8_t bit, nbits;	/* bit offset in that byte, width */
	uint8_t kind;
	const char *name;
	uint64_t nid;		/* owning inode (or 0) */
	uint64_t isize;		/* owner's i_size, for "i_size +- 1" */
};

struct region { uint64_t off, len; };

struct seed {
	const char *path, *base;
	unsigned char *img;
	size_t size;
	unsigned int blkbits;
	struct field *f;
	size_t nf;
	uint64_t *nids;		/* inodes found, with their parents */
	uint64_t *parents;
	uint64_t *inode_off;
	unsigned int *inode_len;
	size_t ninodes;
	uint64_t *blkaddrs;	/* block addresses seen in the image */
	size_t nblk;
	uint64_t *dirents;	/* offsets of 12-byte dirents */
	size_t ndirents;
	struct region *payload;	/* file data */
	size_t npayload;
	uint64_t meta_lo, meta_hi;	/* byte range holding the parsed metadata */
	unsigned char *blob;	/* SEED.img.blob: the extra device (device table seeds) */
	size_t blobsize;
	int is48;		/* INCOMPAT_48BIT */
	uint64_t mbox_nid;	/* the metabox inode (METABOX), else UINT64_MAX */
	uint64_t mbox_base, mbox_size;	/* its data, when stored flat (else size 0) */
	struct exttab *exttabs;	/* encoded extent tables (48-bit) */
	size_t nexttabs;
};

/* an encoded extent table: NRECS records of RECSZ bytes at OFF */
struct exttab {
	uint64_t off, nrecs, nid, isize;
	unsigned int recsz;
};

/*
 * One campaign: what the command line asks for and the seeds it names,
 * made in main and passed down.  Mutant N depends only on rng_seed, N and
 * the seed list (make_mutant restarts the generator for each mutant).
 */
struct campaign {
	uint64_t rng;		/* splitmix64 state */
	uint64_t rng_seed;	/* -s SEED */
	unsigned int reseal;	/* -r: percent of the mutants resealed */
	/* -F: the format-aware edits of the newer kernels' campaigns (op_format);
	 * without it mutant N is the same as before they existed */
	int format_edits;
	/* some image carries an extra device: header lines get two more fields */
	int has_blobs;
	struct seed *seeds;
	size_t nseeds;
};

/* ------------------------------------------------------------- random --- */

/* the next number of the campaign's generator (splitmix64) */
static uint64_t rand64(struct campaign *c)
{
	uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* a random number below N (0 when N is 0) */
static uint64_t below(struct campaign *c, uint64_t n) { return n ? rand64(c) % n : 0; }
/* true PCT times in a hundred */
static int chance(struct campaign *c, unsigned int pct) { return below(c, 100) < pct; }

#define PUSH(arr, n, v) do { \
	(arr) = xrealloc((arr), ((n) + 1) * sizeof(*(arr))); \
	(arr)[(n)++] = (v); \
} while (0)

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

static uint64_t mask_of(unsigned int nbits)
{
	return nbits >= 64 ? ~0ull : (1ull << nbits) - 1;
}

static uint64_t field_get(const unsigned char *img, const struct field *f)
{
	unsigned int nbytes = (f->bit + f->nbits + 7) / 8;
	unsigned __int128 v = 0;

	for (unsigned int i = 0; i < nbytes; i++)
		v |= (unsigned __int128)img[f->off + i] << (8 * i);
	return (uint64_t)(v >> f->bit) & mask_of(f->nbits);
}

static void field_put(unsigned char *img, const struct field *f, uint64_t val)
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

static int in_image(const struct seed *s, uint64_t off, uint64_t len)
{
	return off <= s->size && len <= s->size - off;
}

static uint64_t meta_base(const struct seed *s)
{
	return (uint64_t)get32(s->img + SB_OFF + 40) << s->blkbits;
}

/* byte offset of inode NID (metabox nids: in a flat metabox), or UINT64_MAX */
static uint64_t nid_off(const struct seed *s, uint64_t nid)
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

static unsigned char *read_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	unsigned char *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s: %s", path, strerror(errno));
	*size = (size_t)st.st_size;
	p = xrealloc(NULL, *size ? *size : 1);
	for (size_t got = 0; got < *size;) {
		ssize_t n = pread(fd, p + got, *size - got, (off_t)got);

		if (n <= 0)
			die("%s: read failed", path);
		got += (size_t)n;
	}
	close(fd);
	return p;
}

static void load_seed(struct campaign *c, const char *path)
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

/* ------------------------------------------------------------ mutating --- */

struct mutant {
	unsigned char *img;
	size_t size, cap;
	unsigned char *blob;	/* the extra device, if any (not owned, except by -P) */
	size_t blobsize;
	char log[4096];
	size_t loglen;
};

static void note(struct mutant *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct mutant *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->loglen >= sizeof(m->log) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(m->log + m->loglen, sizeof(m->log) - m->loglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		m->loglen += (size_t)n < sizeof(m->log) - m->loglen ? (size_t)n
							  : sizeof(m->log) - m->loglen - 1;
}

static uint64_t interesting(struct campaign *c, const struct seed *s, const struct field *f,
			    uint64_t old)
{
	unsigned int w = f->nbits, k;
	uint64_t blksz = 1ull << s->blkbits;

	switch (below(c, 18)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return ~0ull;
	case 3: return w > 1 ? mask_of(w - 1) : 1;		/* signed max */
	case 4: return w > 1 ? 1ull << (w - 1) : 1;		/* signed min */
	case 5: k = (unsigned int)below(c, w); return 1ull << k;
	case 6: k = (unsigned int)below(c, w); return (1ull << k) - 1;
	case 7: k = (unsigned int)below(c, w); return (1ull << k) + 1;
	case 8: return blksz + below(c, 3) - 1;
	case 9: return 4096 + below(c, 3) - 1;
	case 10: return f->isize + below(c, 3) - 1;
	case 11: return (1ull << 31) + below(c, 3) - 1;
	case 12: return (1ull << 32) + below(c, 3) - 1;
	case 13: return old + below(c, 3) - 1;
	case 14: return old * 2;
	case 15: return old + blksz;
	case 16: return (uint64_t)-(int64_t)(below(c, 4) + 1);	/* -1..-4 */
	default: return rand64(c);
	}
}

static uint64_t kind_value(struct campaign *c, const struct seed *s, const struct field *f,
			   uint64_t old)
{
	uint64_t blksz = 1ull << s->blkbits;
	uint64_t nblocks = s->size >> s->blkbits;

	switch (f->kind) {
	case K_NID:
		switch (below(c, 8)) {
		case 0: return s->nids[below(c, s->ninodes)];
		case 1: return f->nid;				/* itself: loops */
		case 2: for (size_t i = 0; i < s->ninodes; i++)	/* its parent */
				if (s->nids[i] == f->nid)
					return s->parents[i];
			return 0;
		case 3: return s->nids[below(c, s->ninodes)] + 1;	/* mid-inode */
		case 4:						/* past the end */
			return (s->size - meta_base(s)) / 32 + below(c, 4);
		case 5: return get16(s->img + SB_OFF + 14);	/* the root */
		default: break;
		}
		break;
	case K_BLKADDR:
		switch (below(c, 8)) {
		case 0: return s->nblk ? s->blkaddrs[below(c, s->nblk)] : 0;
		case 1: return get32(s->img + SB_OFF + 40);	/* metadata area */
		case 2: return nblocks + below(c, 3) - 1;		/* the end */
		case 3: return 0xFFFFFFFFu;			/* hole marker */
		case 4: return old + below(c, 3) - 1;
		default: break;
		}
		break;
	case K_NAMEOFF:
		switch (below(c, 6)) {
		case 0: return below(c, blksz + 2);
		case 1: return 12 * below(c, 16);
		case 2: return old + below(c, 3) - 1;
		case 3: return f->isize + below(c, 3) - 1;	/* the block's end */
		default: break;
		}
		break;
	case K_MODE:
		if (chance(c, 50)) {
			static const uint16_t types[] = { 0010000, 0020000, 0040000, 0060000,
							  0100000, 0120000, 0140000, 0, 0170000 };

			return (old & 07777) | types[below(c, 9)];
		}
		break;
	case K_FORMAT:
		if (chance(c, 60))
			return (old & ~0xEull) | below(c, 8) << 1;	/* another layout */
		if (chance(c, 50))
			return old ^ 1;				/* compact <-> extended */
		if (c->format_edits && chance(c, 50))
			return old ^ 0x10;			/* NLINK_1 / DOT_OMITTED */
		break;
	case K_ENUM:
		if (chance(c, 60))
			return below(c, 1ull << (f->nbits < 4 ? f->nbits : 4));
		break;
	case K_CLUSTERBITS:
		return below(c, 8);
	case K_HI16:		/* high address bits: past any device */
		switch (below(c, 4)) {
		case 0: return 1;
		case 1: return 0xffff;
		case 2: return 1ull << below(c, f->nbits);
		default: break;
		}
		break;
	case K_BYTEADDR:	/* a byte address: unaligned, past the end, in the metadata */
		switch (below(c, 6)) {
		case 0: return old + 1 + below(c, blksz - 1);
		case 1: return s->size + below(c, 2 * blksz);
		case 2: return SB_OFF;
		case 3: return old - blksz;
		default: break;
		}
		break;
	case K_PLEN:		/* extent plen: length lies, partial bit, format */
		switch (below(c, 6)) {
		case 0: return old + below(c, 3) - 1;
		case 1: return (old & ~0x1fffffull) | (1 + below(c, 0x1fffff));
		case 2: return old ^ (1u << 27);
		case 3: return (old & 0x0fffffffull) | below(c, 16) << 28;
		case 4: return (old & ~0x1fffffull) | ((old & 0x1fffff) + blksz);
		default: break;
		}
		break;
	case K_BLKBITS:
		if (chance(c, 60))
			return 8 + below(c, 6);
		break;
	case K_FLAGS:
		if (chance(c, 60))
			return old ^ (1ull << below(c, f->nbits));
		break;
	case K_DELTA:
		switch (below(c, 5)) {
		case 0: return 1;
		case 1: return 0x800 | below(c, 300);		/* CBLKCNT */
		case 2: return 0x7ff;
		default: break;
		}
		break;
	default:
		break;
	}
	return interesting(c, s, f, old);
}

static const struct field *pick_field(struct campaign *c, const struct seed *s,
				      const struct mutant *m)
{
	for (int tries = 0; tries < 16; tries++) {
		const struct field *f = &s->f[below(c, s->nf)];

		/* the magic and the checksum only rarely: they end at mount */
		if ((f->kind == K_MAGIC || f->kind == K_CSUM) && !chance(c, 5))
			continue;
		if (f->off + (f->bit + f->nbits + 7) / 8 <= m->size)
			return f;
	}
	return NULL;
}

static void set_field(struct mutant *m, const struct field *f, uint64_t v, const char *op)
{
	uint64_t old = field_get(m->img, f);

	field_put(m->img, f, v);
	note(m, " %s %s@%" PRIu64 ".%u/%u %" PRIx64 "->%" PRIx64 ";", op, f->name, f->off,
	     f->bit, f->nbits, old, field_get(m->img, f));
}

static void op_value(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_field(c, s, m);

	if (f)
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "value");
}

static void op_arith(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_field(c, s, m);
	uint64_t d = 1 + below(c, 35);

	if (f)
		set_field(m, f, field_get(m->img, f) + (chance(c, 50) ? d : -d), "arith");
}

static void op_flip(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_field(c, s, m);

	if (f)
		set_field(m, f, field_get(m->img, f) ^ (1ull << below(c, f->nbits)), "flip");
}

static void copy_bytes(struct mutant *m, uint64_t dst, const unsigned char *src, uint64_t len,
		       const char *what)
{
	if (dst + len > m->size)
		return;
	memmove(m->img + dst, src, len);
	note(m, " splice %s @%" PRIu64 "+%" PRIu64 ";", what, dst, len);
}

static void op_splice(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct seed *o = &c->seeds[below(c, c->nseeds)];

	switch (below(c, 3)) {
	case 0: {	/* an inode over another */
		size_t a = below(c, s->ninodes);
		uint64_t src, len = s->inode_len[a];
		const unsigned char *from;

		if (o != s && o->ninodes && chance(c, 50)) {
			size_t b = below(c, o->ninodes);

			from = o->img + o->inode_off[b];
			len = o->inode_len[b];
			src = 0;
		} else {
			src = s->inode_off[below(c, s->ninodes)];
			from = m->img + src;
		}
		(void)src;
		copy_bytes(m, s->inode_off[a], from, len, "inode");
		break;
	}
	case 1:		/* a dirent over another */
		if (s->ndirents > 1)
			copy_bytes(m, s->dirents[below(c, s->ndirents)],
				   m->img + s->dirents[below(c, s->ndirents)], 12, "dirent");
		break;
	default: {	/* a block from another seed with the same block size */
		uint64_t bs = 1ull << s->blkbits, nb, ob;

		if (o->blkbits != s->blkbits)
			break;
		nb = m->size / bs;
		ob = o->size / bs;
		if (nb < 2 || ob < 2)
			break;
		copy_bytes(m, (1 + below(c, nb - 1)) * bs, o->img + (1 + below(c, ob - 1)) * bs, bs,
			   "block");
	}
	}
}

static void op_struct(struct campaign *c, const struct seed *s, struct mutant *m)
{
	switch (below(c, 6)) {
	case 0:		/* swap two dirents of the same block: unsorted names */
	case 1: {	/* or duplicate one name: point a nameoff at another's */
		uint64_t a, b;
		unsigned char t[12];

		if (s->ndirents < 2)
			return;
		a = s->dirents[below(c, s->ndirents)];
		b = s->dirents[below(c, s->ndirents)];
		if (a == b || a + 12 > m->size || b + 12 > m->size)
			return;
		if (below(c, 2)) {
			memcpy(t, m->img + a, 12);
			memcpy(m->img + a, m->img + b, 12);
			memcpy(m->img + b, t, 12);
			note(m, " struct swap-dirents @%" PRIu64 ",@%" PRIu64 ";", a, b);
		} else {
			memcpy(m->img + a + 8, m->img + b + 8, 2);
			note(m, " struct dup-name @%" PRIu64 "<-@%" PRIu64 ";", a, b);
		}
		return;
	}
	default: {
		/* compressed-file edits need a map header: find an h_advise field */
		const struct field *hf = NULL;

		for (int tries = 0; tries < 64 && !hf; tries++) {
			const struct field *f = &s->f[below(c, s->nf)];

			if (!strcmp(f->name, "h_advise") && f->off + 4 <= m->size)
				hf = f;
		}
		if (!hf)
			return;
		switch (below(c, 4)) {
		case 0: {	/* whole-file fragment bit with a huge i_size */
			uint64_t ioff = nid_off(s, hf->nid);

			m->img[hf->off + 3] |= 0x80;
			if (ioff != UINT64_MAX && ioff + 16 <= m->size) {
				if (get16(m->img + ioff) & 1)
					put64(m->img + ioff + 8, 1ull << (20 + below(c, 20)));
				else
					put32(m->img + ioff + 8, 1u << (20 + below(c, 12)));
			}
			put32(m->img + SB_OFF + 80, get32(m->img + SB_OFF + 80) | 0x20);
			note(m, " struct fragment-flood nid %" PRIu64 ";", hf->nid);
			break;
		}
		case 1:		/* wider lclusters */
			m->img[hf->off + 3] = (m->img[hf->off + 3] & ~7) | (1 + below(c, 7));
			note(m, " struct lclusterbits nid %" PRIu64 " -> %u;", hf->nid,
			     m->img[hf->off + 3] & 7);
			break;
		case 2:		/* interlaced plain pclusters */
			put16(m->img + hf->off, get16(m->img + hf->off) | 0x10);
			note(m, " struct interlaced nid %" PRIu64 ";", hf->nid);
			break;
		default: {	/* a NONHEAD chain over the full indexes that follow */
			uint64_t p = hf->off + 12;	/* header + 8 bytes of padding */
			unsigned int n = 2 + (unsigned int)below(c, 30), i,
				     back = chance(c, 50) ? 1 : 2047;

			for (i = 1; i <= n && p + 8 * i + 8 <= m->size; i++) {
				put16(m->img + p + 8 * i, 2);
				put16(m->img + p + 8 * i + 4, i < back ? i : back);
				put16(m->img + p + 8 * i + 6, n - i + 1);
			}
			note(m, " struct nonhead-chain nid %" PRIu64 " x%u;", hf->nid, n);
		}
		}
	}
	}
}

/* a random field named NAME (a prefix with a trailing '*'), of inode NID
 * unless NID is UINT64_MAX, that fits the mutant */
static const struct field *pick_named(struct campaign *c, const struct seed *s,
				      const struct mutant *m, const char *name, uint64_t nid)
{
	size_t len = strlen(name), seen = 0;
	const struct field *got = NULL;
	int prefix = len && name[len - 1] == '*';

	for (size_t i = 0; i < s->nf; i++) {
		const struct field *f = &s->f[i];

		if (prefix ? strncmp(f->name, name, len - 1) : strcmp(f->name, name))
			continue;
		if (nid != UINT64_MAX && f->nid != nid)
			continue;
		if (f->off + (f->bit + f->nbits + 7) / 8 > m->size)
			continue;
		if (below(c, ++seen) == 0)
			got = f;
	}
	return got;
}

static uint64_t inode_isize(const struct seed *s, uint64_t nid)
{
	uint64_t ioff = nid_off(s, nid);

	if (ioff == UINT64_MAX || !in_image(s, ioff, 16))
		return 0;
	return (get16(s->img + ioff) & 1) ? get64(s->img + ioff + 8) : get32(s->img + ioff + 8);
}

/* extent tables: records out of order, overlapping, past i_size */
static int fmt_ext_order(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct exttab *t;
	uint64_t a, b, i;
	unsigned char tmp[32];

	if (!s->nexttabs)
		return 0;
	t = &s->exttabs[below(c, s->nexttabs)];
	if (t->nrecs < 2 && t->recsz < 16)
		return 0;
	i = t->nrecs > 1 ? 1 + below(c, t->nrecs - 1) : 0;
	a = t->off + t->recsz * i;
	b = i ? a - t->recsz : a;
	if (a + t->recsz > m->size)
		return 0;
	switch (t->recsz >= 16 ? below(c, 5) : 3 + below(c, 2)) {
	case 0:		/* lstart equal to the previous one's, or inside it */
		put32(m->img + a + 12,
		      get32(m->img + b + 12) + (uint32_t)below(c, 1u << s->blkbits));
		note(m, " format ext-overlap-l nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	case 1:		/* lstart at or past i_size */
		put32(m->img + a + 12, (uint32_t)(t->isize + below(c, 3)));
		note(m, " format ext-past-isize nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	case 2:		/* lstart going backwards by a little */
		put32(m->img + a + 12, get32(m->img + a + 12) - 1 - (uint32_t)below(c, 64));
		note(m, " format ext-back nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	case 3:		/* two records swapped */
		if (a == b)
			return 0;
		memcpy(tmp, m->img + a, t->recsz);
		memcpy(m->img + a, m->img + b, t->recsz);
		memcpy(m->img + b, tmp, t->recsz);
		note(m, " format ext-swap nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	default:	/* physically overlapping: pstart of the previous one (+ a bit) */
		if (t->recsz < 8) {	/* 4-byte records: a plen swallowing the next */
			put32(m->img + a, get32(m->img + a) + (1u << s->blkbits));
			note(m, " format ext-plen-swallow nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
			return 1;
		}
		put32(m->img + a + 4, get32(m->img + b + 4) + (uint32_t)below(c, 16));
		note(m, " format ext-overlap-p nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	}
}

/* compressed streams whose lengths lie: plen, i_size, idata size, block counts */
static int fmt_stream_lie(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_named(c, s, m, "h_advise", UINT64_MAX), *g;
	uint64_t bs = 1ull << s->blkbits, d = 1 + below(c, bs);

	if (!f)
		return 0;
	switch (below(c, 5)) {
	case 0:
		if ((g = pick_named(c, s, m, "ext.plen", f->nid))) {
			set_field(m, g, kind_value(c, s, g, field_get(m->img, g)), "format-plen");
			return 1;
		}
		/* fall through */
	case 1:		/* the file decodes shorter or longer than its extents */
		if ((g = pick_named(c, s, m, "i_size", f->nid))) {
			uint64_t v = field_get(m->img, g);

			set_field(m, g, chance(c, 50) ? v + d : v > d ? v - d : v + 1,
				  "format-isize");
			return 1;
		}
		return 0;
	case 2:
		if ((g = pick_named(c, s, m, "h_idata_size", f->nid))) {
			set_field(m, g, field_get(m->img, g) + (chance(c, 50) ? d : -d),
				  "format-idata");
			return 1;
		}
		return 0;
	case 3:
		if ((g = pick_named(c, s, m, "i_compressed_blocks", f->nid))) {
			set_field(m, g, field_get(m->img, g) + below(c, 3) - 1, "format-cblocks");
			return 1;
		}
		return 0;
	default:	/* a pcluster shifted by a block (or a byte, in byte addresses) */
		if ((g = pick_named(c, s, m, "ci.blkaddr", f->nid)) ||
		    (g = pick_named(c, s, m, "li.blkaddr", f->nid)) ||
		    (g = pick_named(c, s, m, "ext.pstart_lo", f->nid)) ||
		    (g = pick_named(c, s, m, "ext.base", f->nid))) {
			set_field(m, g, field_get(m->img, g) + (chance(c, 50) ? 1 : -1),
				  "format-shift");
			return 1;
		}
		return 0;
	}
}

/* metabox nids into themselves, past the metabox, the root as the metabox */
static int fmt_metabox(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f;
	uint64_t msz, slot;

	if (s->mbox_nid == UINT64_MAX) {
		/* a 48-bit image that suddenly claims a metabox: its own root */
		if (!s->is48 || !chance(c, 30) || m->size < SB_OFF + 0x88)
			return 0;
		put32(m->img + SB_OFF + 80, get32(m->img + SB_OFF + 80) | INCOMPAT_METABOX);
		m->img[SB_OFF + 13] = 1;
		put64(m->img + SB_OFF + 0x80, get16(m->img + SB_OFF + 14));
		note(m, " format mbox-claimed;");
		return 1;
	}
	msz = inode_isize(s, s->mbox_nid);
	slot = msz / 32;
	switch (below(c, 6)) {
	case 0:		/* the metabox inode inside its own data */
		f = pick_named(c, s, m, "sb.metabox_nid", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, NID_METABOX | (chance(c, 50) ? 0 : below(c, slot + 1)),
			  "format-mbox-self");
		return 1;
	case 1:		/* the root is the metabox inode, or past its data */
		f = pick_named(c, s, m, "sb.rootnid_8b", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, chance(c, 50) ? s->mbox_nid : NID_METABOX | (slot + below(c, 4)),
			  "format-mbox-root");
		return 1;
	case 2:		/* the packed inode in the metabox, past it */
		f = pick_named(c, s, m, "sb.packed_nid", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f,
			  NID_METABOX | (chance(c, 50) ? slot - 1 : slot + below(c, 1u << 20)),
			  "format-mbox-packed");
		return 1;
	case 3:		/* the metabox inode's size: longer or shorter than its data */
		f = pick_named(c, s, m, "i_size", s->mbox_nid);
		if (!f)
			return 0;
		set_field(m, f, chance(c, 50) ? msz * 2 + below(c, 64) : msz / 2 + below(c, 32),
			  "format-mbox-size");
		return 1;
	case 4:		/* the metabox inode is a directory, a symlink, a device */
		f = pick_named(c, s, m, "i_mode", s->mbox_nid);
		if (!f)
			return 0;
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "format-mbox-mode");
		return 1;
	default:	/* the metabox inode's map: any of its fields */
		f = pick_named(c, s, m, "*", s->mbox_nid);
		if (!f)
			return 0;
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "format-mbox-field");
		return 1;
	}
}

/* 48-bit addresses past the device: the high 16 bits of every address */
static int fmt_addr48(struct campaign *c, const struct seed *s, struct mutant *m)
{
	static const char *const names[] = {
		"i_startblk_hi", "ext.pstart_hi", "devslot.blocks_hi", "devslot.mapped_hi",
		"sb.blocks_hi", "chunk.advise", "ext.lstart_hi",
	};
	const struct field *f;

	if (!s->is48)
		return 0;
	f = pick_named(c, s, m, names[below(c, sizeof(names) / sizeof(names[0]))], UINT64_MAX);
	if (!f)
		return 0;
	set_field(m, f, chance(c, 50) ? 1 + below(c, 4) : mask_of(f->nbits) - below(c, 4),
		  "format-addr48");
	return 1;
}

/* long xattr name prefixes: indexes past the table, lying lengths */
static int fmt_prefix(struct campaign *c, const struct seed *s, struct mutant *m)
{
	unsigned int count = m->img[SB_OFF + 91];
	const struct field *f;

	if (!(get32(m->img + SB_OFF + 80) & INCOMPAT_XATTR_PREFIXES))
		return 0;
	switch (below(c, 4)) {
	case 0:
	case 1:
		f = pick_named(c, s, m, "e_name_index", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, chance(c, 70) ? 0x80 | ((count + below(c, 3)) & 0x7f)
					      : 0x80 | below(c, 128), "format-pfx-index");
		return 1;
	case 2:
		f = pick_named(c, s, m, "sb.xattr_prefix_count", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f,
			  chance(c, 50) ? (count ? count - 1 : 0) : chance(c, 50) ? count + 1 : 255,
			  "format-pfx-count");
		return 1;
	default:
		f = pick_named(c, s, m, "pfx.*", UINT64_MAX);
		if (!f)
			f = pick_named(c, s, m, "sb.xattr_prefix_start", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "format-pfx-table");
		return 1;
	}
}

/* name-filter bits that lie: the filter claims names absent (or all present) */
static int fmt_filter(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_named(c, s, m, "h_name_filter", UINT64_MAX);
	static const uint64_t vals[] = { 0xffffffff, 0, 0x7fffffff, 0xfffffffe };

	if (!f)
		return 0;
	put32(m->img + SB_OFF + 8, get32(m->img + SB_OFF + 8) | COMPAT_XATTR_FILTER);
	m->img[SB_OFF + 0x6B] = 0;
	set_field(m, f,
		  chance(c, 60) ? vals[below(c, 4)] : field_get(m->img, f) ^ (1ull << below(c, 32)),
		  "format-filter");
	return 1;
}

/* device slots with absurd sizes, device ids past the table */
static int fmt_devices(struct campaign *c, const struct seed *s, struct mutant *m)
{
	unsigned int ndev = get16(m->img + SB_OFF + 86);
	const struct { const char *field, *op; uint64_t v[4]; } e[] = {
		{ "devslot.blocks", "format-dev-blocks", { 0, 1, 0xffffffff, 0x80000000 } },
		{ "devslot.mapped_blkaddr", "format-dev-mapped", { 0, 1, 0xffffffff, 0xfffffff0 } },
		{ "chunk.device_id", "format-dev-id", { 0, ndev + 1, 0xffff, ndev + 2 } },
		{ "sb.extra_devices", "format-dev-count", { 0, ndev + 1, 0xffff, 255 } },
		{ "sb.devt_slotoff", "format-dev-slotoff", { 0, 1, 8, 0xffff } },
	};
	unsigned int i = (unsigned int)below(c, sizeof(e) / sizeof(e[0]));
	const struct field *f;

	if (!ndev || !(f = pick_named(c, s, m, e[i].field, UINT64_MAX)))
		return 0;
	set_field(m, f, e[i].v[below(c, 4)], e[i].op);
	return 1;
}

/* one format-aware edit the seed allows (tries a few kinds) */
static void op_format(struct campaign *c, const struct seed *s, struct mutant *m)
{
	/* weights: the filter applies to nearly every seed, so it gets one slot */
	static int (*const ops[])(struct campaign *, const struct seed *, struct mutant *) = {
		fmt_ext_order, fmt_ext_order, fmt_ext_order, fmt_stream_lie, fmt_stream_lie,
		fmt_metabox, fmt_metabox, fmt_metabox, fmt_addr48, fmt_addr48, fmt_prefix,
		fmt_prefix, fmt_filter, fmt_devices, fmt_devices,
	};

	for (int tries = 0; tries < 6; tries++)
		if (ops[below(c, sizeof(ops) / sizeof(ops[0]))](c, s, m))
			return;
	op_value(c, s, m);
}

static void op_bits(struct campaign *c, const struct seed *s, struct mutant *m)
{
	uint64_t lo = s->meta_lo, hi = s->meta_hi < m->size ? s->meta_hi : m->size;
	unsigned int n = 1 + (unsigned int)below(c, 4);

	if (hi <= lo)
		return;
	while (n--) {
		uint64_t at = lo + below(c, hi - lo);
		unsigned int b = (unsigned int)below(c, 8);

		m->img[at] ^= (unsigned char)(1u << b);
		note(m, " bits @%" PRIu64 "^%02x;", at, 1u << b);
	}
}

static void op_payload(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct region *r;
	uint64_t at;

	if (!s->npayload)
		return;
	r = &s->payload[below(c, s->npayload)];
	at = r->off + below(c, r->len);
	if (at >= m->size)
		return;
	m->img[at] = (unsigned char)rand64(c);
	note(m, " payload @%" PRIu64 ";", at);
}

static void op_trunc(struct campaign *c, const struct seed *s, struct mutant *m)
{
	uint64_t bs = 1ull << s->blkbits, nb = m->size / bs;
	uint64_t keep;

	if (nb < 3)
		return;
	keep = (2 + below(c, nb - 2)) * bs;
	if (keep < SB_OFF + bs)
		keep = (SB_OFF + bs + bs - 1) / bs * bs;
	if (keep >= m->size)
		return;
	note(m, " trunc %zu->%" PRIu64 ";", m->size, keep);
	m->size = keep;
}

/* mutant NUMBER of the campaign; returns the seed used */
static const struct seed *make_mutant(struct campaign *c, uint64_t number, struct mutant *m)
{
	const struct seed *s;
	unsigned int nedits = 1;
	int cut = 0;

	c->rng = c->rng_seed * 0x9E3779B97F4A7C15ull ^ (number + 1) * 0xD1B54A32D192ED03ull;
	rand64(c);
	s = &c->seeds[below(c, c->nseeds)];
	if (m->cap < s->size) {
		m->cap = s->size;
		m->img = xrealloc(m->img, m->cap);
	}
	memcpy(m->img, s->img, s->size);
	m->size = s->size;
	m->blob = s->blob;
	m->blobsize = s->blobsize;
	m->loglen = 0;
	note(m, "%s:", s->base);
	/* the extra device shorter than its slot says */
	if (c->format_edits && s->blob && chance(c, 5)) {
		m->blobsize = below(c, s->blobsize >> s->blkbits) << s->blkbits;
		note(m, " blob-trunc %zu->%zu;", s->blobsize, m->blobsize);
	}
	while (nedits < MAX_EDITS && chance(c, 45))
		nedits++;
	for (unsigned int i = 0; i < nedits; i++) {
		unsigned int r = (unsigned int)below(c, 100);

		if (c->format_edits && r < 20)
			op_format(c, s, m);
		else if (r < 50)
			op_value(c, s, m);
		else if (r < 62)
			op_arith(c, s, m);
		else if (r < 72)
			op_flip(c, s, m);
		else if (r < 80)
			op_splice(c, s, m);
		else if (r < 88)
			op_struct(c, s, m);
		else if (r < 94)
			op_bits(c, s, m);
		else if (r < 98)
			op_payload(c, s, m);
		else
			cut = 1;
	}
	if (cut)
		op_trunc(c, s, m);
	if ((get32(m->img + SB_OFF + 8) & COMPAT_SB_CHKSUM) && chance(c, c->reseal)) {
		int64_t csum = erofs_sb_csum(m->img, m->size);

		if (csum >= 0)
			put32(m->img + SB_OFF + 4, (uint32_t)csum);
		else
			note(m, " (no reseal: bad blkszbits);");
	} else {
		note(m, " (not resealed);");
	}
	return s;
}

/*
 * -E NAME[#WHO]=VALUE: set the field NAME (as -p prints it) of inode WHO (a
 * nid, or root, mbox, packed; default: the first field of that name) to
 * VALUE.  Findings are kept as a seed image plus such edits
 * (qemu-tests/fuzz-findings.list), so the reproducer survives format
 * changes of the tree it was found on.
 */
static void apply_named(const struct seed *s, struct mutant *m, const char *edit)
{
	char name[64], who[32] = "";
	const char *eq = strchr(edit, '='), *hash = strchr(edit, '#');
	uint64_t nid = UINT64_MAX, val;
	const struct field *f = NULL;
	size_t nl;

	if (!eq)
		die("-E %s: NAME[#WHO]=VALUE", edit);
	nl = (size_t)((hash && hash < eq ? hash : eq) - edit);
	if (nl >= sizeof(name))
		die("-E %s: name too long", edit);
	memcpy(name, edit, nl);
	name[nl] = 0;
	if (hash && hash < eq)
		snprintf(who, sizeof(who), "%.*s", (int)(eq - hash - 1), hash + 1);
	val = strtoull(eq + 1, NULL, 0);
	if (!strcmp(who, "root"))
		nid = (s->is48 && get64(s->img + SB_OFF + 0x70)) ? get64(s->img + SB_OFF + 0x70)
								 : get16(s->img + SB_OFF + 14);
	else if (!strcmp(who, "mbox"))
		nid = s->mbox_nid;
	else if (!strcmp(who, "packed"))
		nid = get64(s->img + SB_OFF + 96);
	else if (who[0])
		nid = strtoull(who, NULL, 0);
	for (size_t i = 0; i < s->nf && !f; i++)
		if (!strcmp(s->f[i].name, name) && (nid == UINT64_MAX || s->f[i].nid == nid))
			f = &s->f[i];
	if (!f)
		die("-E %s: no field %s%s%s in %s", edit, name, who[0] ? " of " : "", who, s->path);
	set_field(m, f, val, "named");
}

/* ---------------------------------------------------------------- main --- */

static void write_all(int fd, const void *buf, size_t len, uint64_t off, const char *what)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n <= 0)
			die("%s: write failed: %s", what, strerror(errno));
		done += (size_t)n;
	}
}

static void print_fields(const struct seed *s)
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

/* fills M with image NUMBER of a disk: its bytes, extra device and log line */
typedef void make_image_fn(void *ctx, uint64_t number, struct mutant *m);

/*
 * Write COUNT images into the data disk OUT: image I is made by
 * MAKE(CTX, I, &mutant).  HAS_BLOBS: some image carries an extra device,
 * so the header needs room for two more fields a line.
 */
static void write_disk(const char *out, uint64_t first, uint64_t count, int has_blobs, FILE *log,
		       make_image_fn *make, void *ctx)
{
	struct mutant m = { 0 };
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t hdrcap = 64 + (has_blobs ? 96 : 48) * count, hdrlen;
	uint64_t hdrbytes = (hdrcap + ALIGN_DISK - 1) / ALIGN_DISK * ALIGN_DISK, off = hdrbytes;
	char *hdr = xrealloc(NULL, hdrbytes);

	if (fd < 0)
		die("%s: %s", out, strerror(errno));
	memset(hdr, 0, hdrbytes);
	hdrlen = (size_t)snprintf(hdr, hdrcap, "FORGE-FUZZ 1 %" PRIu64 " %" PRIu64 "\n", count,
				  hdrbytes);
	for (uint64_t i = 0; i < count; i++) {
		make(ctx, first + i, &m);
		write_all(fd, m.img, m.size, off, out);
		hdrlen += (size_t)snprintf(hdr + hdrlen, hdrcap - hdrlen, "%" PRIu64 " %" PRIu64
					   " %zu", first + i, off, m.size);
		off += (m.size + ALIGN_DISK - 1) / ALIGN_DISK * ALIGN_DISK;
		if (m.blob) {	/* "BLOB_OFFSET BLOB_SIZE": the image's extra device */
			if (m.blobsize)
				write_all(fd, m.blob, m.blobsize, off, out);
			hdrlen += (size_t)snprintf(hdr + hdrlen, hdrcap - hdrlen, " %" PRIu64 " %zu",
						   off, m.blobsize);
			off += (m.blobsize + ALIGN_DISK - 1) / ALIGN_DISK * ALIGN_DISK;
		}
		hdr[hdrlen++] = '\n';
		if (log)
			fprintf(log, "%" PRIu64 " %s\n", first + i, m.log);
	}
	write_all(fd, hdr, hdrbytes, 0, out);
	if (ftruncate(fd, (off_t)off) < 0 || close(fd) < 0)
		die("%s: %s", out, strerror(errno));
	free(hdr);
	free(m.img);
}

/* CTX: the campaign */
static void make_numbered(void *ctx, uint64_t number, struct mutant *m)
{
	make_mutant(ctx, number, m);
}

/* CTX: the image files of -P */
static void make_packed(void *ctx, uint64_t i, struct mutant *m)
{
	char **files = ctx;
	char bp[4096];
	struct stat st;

	free(m->img);
	free(m->blob);
	m->img = read_file(files[i], &m->size);
	m->cap = m->size;
	m->blob = NULL;
	m->blobsize = 0;
	snprintf(bp, sizeof(bp), "%s.blob", files[i]);
	if (!stat(bp, &st))
		m->blob = read_file(bp, &m->blobsize);
	m->loglen = 0;
	note(m, "%s (unchanged)", files[i]);
}

int main(int argc, char **argv)
{
	struct campaign c = { .rng_seed = 1, .reseal = 95 };
	uint64_t first = 0, count = 100, only = UINT64_MAX;
	const char *out = NULL, *logpath = NULL;
	int opt, print = 0, pack = 0, reseal_only = 0;
	const char *edits[32];
	int nedits = 0;

	while ((opt = getopt(argc, argv, "s:f:n:r:o:l:x:pPFE:R")) != -1) {
		switch (opt) {
		case 's': c.rng_seed = strtoull(optarg, NULL, 0); break;
		case 'f': first = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'r': c.reseal = (unsigned int)atoi(optarg); break;
		case 'o': out = optarg; break;
		case 'l': logpath = optarg; break;
		case 'x': only = strtoull(optarg, NULL, 0); break;
		case 'p': print = 1; break;
		case 'P': pack = 1; break;
		case 'F': c.format_edits = 1; break;
		case 'R': reseal_only = 1; break;
		case 'E':
			if (nedits == 32)
				die("at most 32 -E");
			edits[nedits++] = optarg;
			break;
		default: return 2;
		}
	}
	if (reseal_only && optind + 1 == argc) {	/* -R IMG: reseal in place */
		size_t size;
		unsigned char *img = read_file(argv[optind], &size);
		int64_t csum = size >= SB_OFF + 128 ? erofs_sb_csum(img, size) : -1;
		int fd;

		if (csum < 0 || !(get32(img + SB_OFF + 8) & COMPAT_SB_CHKSUM))
			return 0;
		put32(img + SB_OFF + 4, (uint32_t)csum);
		fd = open(argv[optind], O_WRONLY);
		if (fd < 0)
			die("%s: %s", argv[optind], strerror(errno));
		write_all(fd, img + SB_OFF + 4, 4, SB_OFF + 4, argv[optind]);
		return close(fd) ? 1 : 0;
	}
	if (optind >= argc || (!out && !print)) {
		fprintf(stderr, "usage: fuzz-mutate [-s SEED] [-f FIRST] [-n COUNT] [-r RESEAL%%] [-F] "
				"-o DISK [-l LOG] SEED.img...\n"
				"       fuzz-mutate -x NUMBER [-s SEED] [-F] -o IMG SEED.img...\n"
				"       fuzz-mutate -P -o DISK IMG...\n"
				"       fuzz-mutate -E NAME[#NID|root|mbox|packed]=VALUE... -o IMG SEED.img\n"
				"       fuzz-mutate -R IMG\n"
				"       fuzz-mutate -p SEED.img...\n");
		return 2;
	}
	if (pack) {
		write_disk(out, 0, (uint64_t)(argc - optind), 1, NULL, make_packed, argv + optind);
		return 0;
	}
	for (int i = optind; i < argc; i++)
		load_seed(&c, argv[i]);
	if (print) {
		for (size_t i = 0; i < c.nseeds; i++)
			print_fields(&c.seeds[i]);
		return 0;
	}
	for (size_t i = 0; i < c.nseeds; i++)
		if (!c.seeds[i].nf || !c.seeds[i].ninodes)
			die("%s: nothing parsed", c.seeds[i].path);
	if (nedits) {	/* named edits of the one seed, resealed */
		struct mutant m = { 0 };
		int fd;

		if (c.nseeds != 1 || !out)
			die("-E: one seed image and -o IMG");
		m.img = xrealloc(NULL, c.seeds[0].size);
		memcpy(m.img, c.seeds[0].img, c.seeds[0].size);
		m.size = c.seeds[0].size;
		for (int i = 0; i < nedits; i++)
			apply_named(&c.seeds[0], &m, edits[i]);
		if (get32(m.img + SB_OFF + 8) & COMPAT_SB_CHKSUM) {
			int64_t csum = erofs_sb_csum(m.img, m.size);

			if (csum >= 0)
				put32(m.img + SB_OFF + 4, (uint32_t)csum);
		}
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("%s: %s", out, strerror(errno));
		write_all(fd, m.img, m.size, 0, out);
		fprintf(stderr, "%s%s\n", c.seeds[0].base, m.log);
		return close(fd) ? 1 : 0;
	}

	if (only != UINT64_MAX) {
		struct mutant m = { 0 };
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			die("%s: %s", out, strerror(errno));
		make_mutant(&c, only, &m);
		write_all(fd, m.img, m.size, 0, out);
		if (m.blob) {
			char bp[4096];
			int bfd;

			snprintf(bp, sizeof(bp), "%s.blob", out);
			bfd = open(bp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (bfd < 0)
				die("%s: %s", bp, strerror(errno));
			if (m.blobsize)
				write_all(bfd, m.blob, m.blobsize, 0, bp);
			close(bfd);
		}
		fprintf(stderr, "%" PRIu64 " %s\n", only, m.log);
		return close(fd) ? 1 : 0;
	}

	FILE *log = logpath ? fopen(logpath, "w") : NULL;

	if (logpath && !log)
		die("%s: %s", logpath, strerror(errno));
	write_disk(out, first, count, c.has_blobs, log, make_numbered, &c);
	if (log && fclose(log))
		die("%s: write failed", logpath);
	return 0;
}
