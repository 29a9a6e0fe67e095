/* SPDX-License-Identifier: MIT */
/*
 * craft: turn a valid EROFS image into one the kernel must refuse (or one
 * whose data is silently wrong), editing the file in place.
 *
 *   craft badmagic IMG          clobber the superblock magic
 *   craft badcsum IMG           claim a superblock checksum (compat bit 0x1)
 *                               and store a wrong one
 *   craft incompat IMG BITS     OR BITS (e.g. 0x40) into feature_incompat and
 *                               reseal the checksum, so only the bit is wrong
 *   craft check IMG             exit 0 if the stored checksum matches (or none
 *                               is claimed), 1 otherwise
 *   craft flip IMG MARKER       flip one byte in the middle of the first
 *                               occurrence of MARKER (file data of an
 *                               uncompressed image); no metadata changes
 *
 * Hostile images for the kernel hardening series (kmod/patches), one per
 * problem; PATH names a file of the image (e.g. "canary", "dir/five-k"),
 * found by walking the directories from the root inode:
 *
 *   craft g1 IMG PATH           PATH becomes a new full-index LZ4 inode
 *                               appended to the image: lcn 0 HEAD1 (PATH's
 *                               first pcluster, if it has one), then 786433
 *                               NONHEAD lclusters looking back to it, i_size
 *                               3 GiB + 8 KiB: one extent decoding to > 2 GiB
 *   craft g1p IMG PATH          PATH becomes a new full-index big-pcluster
 *                               inode whose first pcluster claims 300
 *                               blocks (CBLKCNT): 1.2 MB encoded, over the
 *                               1 MiB cap (needs a big-pcluster image)
 *   craft g2 IMG PATH           PATH becomes a new full-index inode with
 *                               16 KiB lclusters (h_clusterbits 2), the
 *                               interlaced advise bit and PLAIN heads at
 *                               clusterofs 0/4000/100; sets ZTAILPACKING so
 *                               the legacy fast path keeps the map header
 *   craft g3 IMG PATH PACKED [SIZE]
 *                               FRAGMENTS feature, packed_nid = PACKED's nid;
 *                               PATH becomes a new inode whose map header
 *                               says "whole file in the packed inode at
 *                               offset 0", i_size SIZE (default 64 GiB)
 *   craft g4 IMG PATH           PATH's (extended) inode gets i_size
 *                               0x8000000000001000, i.e. negative
 *   craft g5 IMG PATH           PATH's inline xattr header gets
 *                               h_shared_count 255, far more ids than its
 *                               xattr area holds
 *   craft g10 IMG PATH          as g1, but every NONHEAD looks back one
 *                               lcluster: finding the extent head walks
 *                               786433 index entries
 *   craft g11 IMG PATH PACKED   as g3 with a valid 4000-byte fragment, but
 *                               PACKED (the packed inode) becomes a
 *                               character device: no read_folio behind it
 *   craft g11s IMG PATH         as g3 with a valid 4000-byte fragment, but
 *                               the packed inode is a new 64 KiB inode whose
 *                               own data is a whole-file fragment: reading
 *                               it reads itself
 *   craft lookup IMG PATH       print PATH's nid, inode offset, format,
 *                               layout and size (a debugging aid)
 *
 * Every edit is located by parsing the format (superblock, inodes, dirents),
 * not by fixed offsets, and the superblock checksum is resealed when the
 * image claims one.  New inodes are extended (64-byte) inodes appended at
 * the block-aligned end of the image; the directory entry of PATH is
 * repointed at them, so the rest of the image stays valid.
 *
 * Superblock facts used (see erofs-format.md): it starts at byte 1024; magic
 * 0xE0F5E1E2 at +0, checksum at +4, feature_compat at +8 (bit 0x1: checksum
 * present), blkszbits at +12, root_nid at +14, meta_blkaddr at +40,
 * feature_incompat at +80, packed_nid at +96.  The checksum is CRC32C
 * (Castagnoli, reflected, seed 0xFFFFFFFF, no final xor) over the superblock
 * block from byte 1024 with the checksum field zeroed: blocksize - 1024
 * bytes, or blocksize bytes when the block is not larger than 1024.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs-image.h"

#define INCOMPAT_ZTAILPACKING 0x10u
#define INCOMPAT_FRAGMENTS 0x20u

/* inode data layouts (i_format bits 1..3) */
enum { FLAT_PLAIN, COMPRESSED_FULL, FLAT_INLINE, COMPRESSED_COMPACT, CHUNK_BASED };
/* lcluster index types (di_advise bits 0..1) */
enum { LC_PLAIN, LC_HEAD1, LC_NONHEAD, LC_HEAD2 };
#define ADVISE_INTERLACED 0x0010u

static unsigned char *img;	/* the whole image, editable */
static size_t img_size, img_cap;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#include <stdarg.h>
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "craft: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Checksum of the superblock block as the kernel computes it. */
static uint32_t sb_csum(void)
{
	int64_t crc = erofs_sb_csum(img, img_size);

	if (crc < 0)
		die("bad blkszbits %u, or image shorter than its superblock block",
		    img[SB_OFF + 12]);
	return (uint32_t)crc;
}

static void reseal(void)
{
	if (get32(img + SB_OFF + 8) & COMPAT_SB_CHKSUM)
		put32(img + SB_OFF + 4, sb_csum());
}

/* ------------------------------------------------------------ parsing --- */

static unsigned int blkbits;
static size_t blksz;

static uint64_t meta_base(void)
{
	return (uint64_t)get32(img + SB_OFF + 40) << blkbits;
}

/* byte range check: [off, off + len) inside the image */
static void need(uint64_t off, uint64_t len, const char *what)
{
	if (off > img_size || len > img_size - off)
		die("%s at %llu (+%llu) lies outside the %zu-byte image", what,
		    (unsigned long long)off, (unsigned long long)len, img_size);
}

struct inode {
	uint64_t nid, off;	/* offset of the on-disk inode */
	unsigned int extended, layout, isize, xattr_isize;
	uint16_t mode;
	uint64_t size;
	uint32_t u;		/* raw_blkaddr / compressed blocks / chunk format */
};

static void read_inode(uint64_t nid, struct inode *ino)
{
	const unsigned char *p;
	uint16_t fmt, icount;

	ino->nid = nid;
	ino->off = meta_base() + nid * 32;
	need(ino->off, 32, "inode");
	p = img + ino->off;
	fmt = get16(p);
	ino->extended = fmt & 1;
	ino->layout = (fmt >> 1) & 7;
	ino->isize = ino->extended ? 64 : 32;
	need(ino->off, ino->isize, "inode");
	icount = get16(p + 2);
	ino->xattr_isize = icount ? 12 + 4 * (icount - 1) : 0;
	ino->mode = get16(p + 4);
	ino->size = ino->extended ? get64(p + 8) : get32(p + 8);
	ino->u = get32(p + 16);
}

/* offset of byte POS of a flat (plain or inline) inode's data */
static uint64_t flat_data_off(const struct inode *ino, uint64_t pos)
{
	uint64_t nblocks = (ino->size + blksz - 1) >> blkbits;
	uint64_t blk = pos >> blkbits;

	if (ino->layout == FLAT_INLINE && blk == nblocks - 1)
		return ino->off + ino->isize + ino->xattr_isize + (pos & (blksz - 1));
	if (ino->layout != FLAT_PLAIN && ino->layout != FLAT_INLINE)
		die("nid %llu: layout %u is not flat", (unsigned long long)ino->nid,
		    ino->layout);
	return ((uint64_t)ino->u << blkbits) + pos;
}

/*
 * Find NAME in directory DIR; returns the image offset of the matching
 * dirent (its nid is the first 8 bytes), 0 if absent.
 */
static uint64_t dir_find(const struct inode *dir, const char *name, size_t nlen)
{
	uint64_t pos;

	if ((dir->mode & 0170000) != 0040000)
		die("nid %llu is not a directory", (unsigned long long)dir->nid);
	for (pos = 0; pos < dir->size; pos += blksz) {
		size_t len = dir->size - pos < blksz ? dir->size - pos : blksz;
		uint64_t base = flat_data_off(dir, pos);
		const unsigned char *b;
		unsigned int n, i;

		need(base, len, "directory block");
		b = img + base;
		if (len < 12)
			die("directory nid %llu: short block", (unsigned long long)dir->nid);
		n = get16(b + 8) / 12;
		if (!n || n * 12 > len)
			die("directory nid %llu: bad first nameoff", (unsigned long long)dir->nid);
		for (i = 0; i < n; i++) {
			unsigned int no = get16(b + 12 * i + 8);
			unsigned int end = i + 1 < n ? get16(b + 12 * (i + 1) + 8) : len;

			if (no > end || end > len)
				die("directory nid %llu: bad nameoff", (unsigned long long)dir->nid);
			if (i + 1 == n)	/* the last name may be NUL-padded */
				end = no + strnlen((const char *)b + no, end - no);
			if (end - no == nlen && !memcmp(b + no, name, nlen))
				return base + 12 * i;
		}
	}
	return 0;
}

/* Walk PATH from the root; returns its dirent offset and fills *ino. */
static uint64_t lookup(const char *path, struct inode *ino)
{
	uint64_t dirent = 0;

	read_inode(get16(img + SB_OFF + 14), ino);
	while (*path) {
		size_t n = strcspn(path, "/");

		if (n) {
			dirent = dir_find(ino, path, n);
			if (!dirent)
				die("%.*s: not found", (int)n, path);
			read_inode(get64(img + dirent), ino);
		}
		path += n;
		path += *path == '/';
	}
	if (!dirent)
		die("the root itself cannot be crafted");
	return dirent;
}

/* ------------------------------------------------------------ editing --- */

static void grow(size_t size)
{
	if (size > img_cap) {
		img_cap = size + (size >> 2);
		img = realloc(img, img_cap);
		if (!img)
			die("out of memory");
	}
	if (size > img_size)
		memset(img + img_size, 0, size - img_size);
	img_size = size;
}

/*
 * Append a new extended inode in the image of OLD's mode and owner, with
 * LAYOUT, SIZE and I_U; repoint DIRENT at it (0: no dirent).  Returns the
 * inode's offset; the caller appends its payload right after the 64 bytes.
 */
static uint64_t append_inode(const struct inode *old, uint64_t dirent,
			     unsigned int layout, uint64_t size, uint32_t i_u,
			     size_t payload)
{
	uint64_t off = (img_size + blksz - 1) & ~(uint64_t)(blksz - 1);
	const unsigned char *o = img + old->off;
	unsigned char *p;

	grow(off + 64 + payload);
	p = img + off;
	put16(p, 1 | layout << 1);		/* extended, LAYOUT */
	put16(p + 2, 0);			/* no xattrs */
	put16(p + 4, old->mode);
	put64(p + 8, size);
	put32(p + 16, i_u);
	put32(p + 20, get32(o + 20));		/* i_ino */
	if (old->extended) {
		memcpy(p + 24, o + 24, 24);	/* uid, gid, mtime, nsec */
	} else {
		put32(p + 24, get16(o + 24));
		put32(p + 28, get16(o + 26));
	}
	put32(p + 44, 1);			/* i_nlink */
	if (dirent)
		put64(img + dirent, (off - meta_base()) / 32);
	return off;
}

/*
 * Full (non-compact) lcluster indexes start after the 8-byte map header and
 * 8 bytes of legacy padding: ALIGN(inode + xattrs, 8) + 16.
 */
static uint64_t full_index(const struct inode *ino)
{
	return ((ino->off + ino->isize + ino->xattr_isize + 7) & ~7ull) + 16;
}

/* the blkaddr of the first pcluster of a full-index compressed inode, or 0 */
static uint32_t first_pcluster(const struct inode *ino)
{
	uint64_t idx = full_index(ino);

	if (ino->layout != COMPRESSED_FULL)
		return 0;
	need(idx, 8, "lcluster index");
	if ((get16(img + idx) & 3) == LC_NONHEAD)
		return 0;
	return get32(img + idx + 4);
}

static void put_index(unsigned char *p, unsigned int type, unsigned int clusterofs,
		      uint32_t u)
{
	put16(p, type);
	put16(p + 2, clusterofs);
	put32(p + 4, u);
}

/*
 * G1: one encoded extent of > 2 GiB decoded.  NONHEAD lclusters look back
 * MAXBACK lclusters at most (G1: 2047, a short walk; G10: 1, a walk over
 * every lcluster of the extent).
 */
static void craft_g1(const char *path, uint32_t maxback)
{
	const uint64_t size = (3ull << 30) + 8192;
	const uint64_t nlc = ((size - 1) >> 12) + 1;
	struct inode ino;
	uint64_t dirent = lookup(path, &ino), off, lcn;
	uint32_t head = first_pcluster(&ino);
	unsigned char *idx;

	if (blkbits != 12)
		die("g1 needs a 4096-byte block image");
	if (!head)	/* no compressed data: point at the superblock block */
		head = 0;
	off = append_inode(&ino, dirent, COMPRESSED_FULL, size, 1, 16 + nlc * 8);
	/* zero map header (ignored by 6.1's legacy fast path) and padding */
	memset(img + off + 64, 0, 16);
	idx = img + off + 80;
	put_index(idx, LC_HEAD1, 0, head);
	for (lcn = 1; lcn < nlc; lcn++) {
		uint32_t d0 = lcn < maxback ? lcn : maxback;
		uint64_t left = nlc - lcn;
		uint32_t d1 = left < 2047 ? left : 2047;

		put_index(idx + 8 * lcn, LC_NONHEAD, 0, d0 | d1 << 16);
	}
}

/* G1, encoded half: a big pcluster of 300 blocks (1.2 MB > 1 MiB) */
static void craft_g1p(const char *path)
{
	const uint64_t size = 3 * 4096;
	struct inode ino;
	uint64_t dirent = lookup(path, &ino), off;
	uint32_t head = first_pcluster(&ino);
	unsigned char *h;

	if (blkbits != 12)
		die("g1p needs a 4096-byte block image");
	if (!(get32(img + SB_OFF + 80) & 0x2))
		die("g1p needs a big-pcluster image (e.g. mkfs -C 65536)");
	off = append_inode(&ino, dirent, COMPRESSED_FULL, size, 300, 16 + 3 * 8);
	h = img + off + 64;
	memset(h, 0, 16);
	put16(h + 4, 0x0002);			/* h_advise: BIG_PCLUSTER_1 */
	put_index(h + 16, LC_HEAD1, 0, head);
	/* the first NONHEAD carries CBLKCNT (bit 11 of delta[0]): 300 blocks */
	put_index(h + 24, LC_NONHEAD, 0, (1u << 11 | 300) | 2u << 16);
	put_index(h + 32, LC_NONHEAD, 0, 2 | 1u << 16);
}

/* G2: lclusters of 16 KiB with interlaced plain pclusters */
static void craft_g2(const char *path)
{
	static const unsigned int cofs[3] = { 0, 4000, 100 };
	const uint64_t size = 40000;	/* three 16 KiB lclusters */
	struct inode ino;
	uint64_t dirent = lookup(path, &ino), off, data;
	unsigned char *h;
	int i;

	if (blkbits != 12)
		die("g2 needs a 4096-byte block image");
	/* inode, header, 3 indexes, then 3 x 16 KiB of pcluster data */
	off = append_inode(&ino, dirent, COMPRESSED_FULL, size, 12, 16 + 3 * 8);
	data = (img_size + blksz - 1) & ~(uint64_t)(blksz - 1);
	grow(data + 3 * 16384);
	for (i = 0; i < 3 * 16384; i++)
		img[data + i] = 'A' + (i >> 12) % 26;
	h = img + off + 64;
	put16(h + 4, ADVISE_INTERLACED);	/* h_advise */
	h[6] = 0;				/* h_algorithmtype: LZ4 */
	h[7] = 2;				/* h_clusterbits: 4 KiB << 2 */
	for (i = 0; i < 3; i++)
		put_index(h + 16 + 8 * i, LC_PLAIN, cofs[i],
			  (uint32_t)((data >> blkbits) + 4 * i));
	put32(img + SB_OFF + 80, get32(img + SB_OFF + 80) | INCOMPAT_ZTAILPACKING);
}

/* G3: a whole-file fragment with a 64 GiB i_size */
static void craft_g3(const char *path, const char *packed, uint64_t size)
{
	struct inode ino, pk;
	uint64_t dirent, off;

	lookup(packed, &pk);
	dirent = lookup(path, &ino);
	if (blkbits != 12)
		die("g3 needs a 4096-byte block image");
	off = append_inode(&ino, dirent, COMPRESSED_FULL, size, 0, 8);
	/* bit 63 of the 8-byte map header: whole file in the packed inode */
	put64(img + off + 64, 1ull << 63 | 0);
	put32(img + SB_OFF + 80, get32(img + SB_OFF + 80) | INCOMPAT_FRAGMENTS);
	put64(img + SB_OFF + 96, pk.nid);
}

/* G11: the packed inode is a character device */
static void craft_g11(const char *path, const char *packed)
{
	struct inode pk;

	craft_g3(path, packed, 4000);
	lookup(packed, &pk);
	if (pk.size < 4000)
		die("%s: %llu bytes, the fragment needs 4000", packed,
		    (unsigned long long)pk.size);
	put16(img + pk.off + 4, (pk.mode & 07777) | 0020000);
}

/* G11, second half: a packed inode whose data is a fragment of itself */
static void craft_g11s(const char *path)
{
	struct inode ino;
	uint64_t dirent = lookup(path, &ino), off, pk;

	if (blkbits != 12)
		die("g11s needs a 4096-byte block image");
	/* the packed inode: 64 KiB, "whole file in the packed inode at 0" */
	pk = append_inode(&ino, 0, COMPRESSED_FULL, 65536, 0, 8);
	put64(img + pk + 64, 1ull << 63 | 0);
	put16(img + pk + 4, (ino.mode & 07777) | 0100000);
	/* PATH: a valid whole-file fragment of 4000 bytes at offset 0 */
	off = append_inode(&ino, dirent, COMPRESSED_FULL, 4000, 0, 8);
	put64(img + off + 64, 1ull << 63 | 0);
	put32(img + SB_OFF + 80, get32(img + SB_OFF + 80) | INCOMPAT_FRAGMENTS);
	put64(img + SB_OFF + 96, (pk - meta_base()) / 32);
}

/* G4: a negative i_size */
static void craft_g4(const char *path)
{
	struct inode ino;

	lookup(path, &ino);
	if (!ino.extended)
		die("%s: compact inode (32-bit size); build with -E force-inode-extended", path);
	put64(img + ino.off + 8, 0x8000000000001000ull);
}

/* G5: h_shared_count far beyond the xattr area */
static void craft_g5(const char *path)
{
	struct inode ino;

	lookup(path, &ino);
	if (ino.xattr_isize <= 12)
		die("%s: no inline xattr area", path);
	need(ino.off + ino.isize, 12, "xattr ibody header");
	img[ino.off + ino.isize + 4] = 255;
}

static void load(const char *name)
{
	int fd = open(name, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s: %s", name, strerror(errno));
	if (st.st_size < SB_OFF + 128)
		die("image too small");
	img_size = img_cap = (size_t)st.st_size;
	img = malloc(img_cap);
	if (!img)
		die("out of memory");
	for (size_t got = 0; got < img_size;) {
		ssize_t n = pread(fd, img + got, img_size - got, (off_t)got);

		if (n <= 0)
			die("%s: read failed", name);
		got += (size_t)n;
	}
	close(fd);
	if (get32(img + SB_OFF) != SB_MAGIC)
		die("source image has no EROFS magic");
	blkbits = img[SB_OFF + 12];
	if (blkbits < 9 || blkbits > 12)
		die("unsupported blkszbits %u", blkbits);
	blksz = (size_t)1 << blkbits;
}

static void store(const char *name)
{
	int fd = open(name, O_WRONLY);

	if (fd < 0)
		die("%s: %s", name, strerror(errno));
	for (size_t done = 0; done < img_size;) {
		ssize_t n = pwrite(fd, img + done, img_size - done, (off_t)done);

		if (n <= 0)
			die("%s: write failed", name);
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)img_size) < 0 || fsync(fd) < 0 || close(fd) < 0)
		die("%s: %s", name, strerror(errno));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (argc < 3) {
		fprintf(stderr,
			"usage: craft check|badmagic|badcsum IMG\n"
			"       craft incompat IMG BITS\n"
			"       craft flip IMG MARKER\n"
			"       craft g1|g1p|g2|g4|g5|g10|g11s|lookup IMG PATH\n"
			"       craft g3 IMG PATH PACKED-PATH [I_SIZE]\n"
			"       craft g11 IMG PATH PACKED-PATH\n");
		return 2;
	}
	load(argv[2]);

	if (!strcmp(mode, "check")) {
		if (!(get32(img + SB_OFF + 8) & COMPAT_SB_CHKSUM))
			return 0;
		return get32(img + SB_OFF + 4) == sb_csum() ? 0 : 1;
	} else if (!strcmp(mode, "lookup") && argc == 4) {
		struct inode ino;

		lookup(argv[3], &ino);
		printf("nid %llu off %llu %s layout %u size %llu mode %o xattr_isize %u\n",
		       (unsigned long long)ino.nid, (unsigned long long)ino.off,
		       ino.extended ? "extended" : "compact", ino.layout,
		       (unsigned long long)ino.size, ino.mode, ino.xattr_isize);
		return 0;
	} else if (!strcmp(mode, "badmagic")) {
		put32(img + SB_OFF, 0xDEADBEEFu);
		store(argv[2]);
		return 0;	/* no reseal: the magic is the defect */
	} else if (!strcmp(mode, "badcsum")) {
		put32(img + SB_OFF + 8,
		      get32(img + SB_OFF + 8) | COMPAT_SB_CHKSUM);
		put32(img + SB_OFF + 4, sb_csum() ^ 1);
		store(argv[2]);
		return 0;
	} else if (!strcmp(mode, "incompat") && argc == 4) {
		uint32_t bits = (uint32_t)strtoul(argv[3], NULL, 0);

		put32(img + SB_OFF + 80, get32(img + SB_OFF + 80) | bits);
	} else if (!strcmp(mode, "flip") && argc == 4) {
		size_t mlen = strlen(argv[3]);
		unsigned char *hit = memmem(img, img_size, argv[3], mlen);

		if (!mlen || !hit)
			die("marker not found in the image");
		hit[mlen / 2] ^= 0x20;
		store(argv[2]);
		return 0;	/* data only: the checksum stays as it was */
	} else if (!strcmp(mode, "g1") && argc == 4) {
		craft_g1(argv[3], 2047);
	} else if (!strcmp(mode, "g1p") && argc == 4) {
		craft_g1p(argv[3]);
	} else if (!strcmp(mode, "g10") && argc == 4) {
		craft_g1(argv[3], 1);
	} else if (!strcmp(mode, "g2") && argc == 4) {
		craft_g2(argv[3]);
	} else if (!strcmp(mode, "g3") && (argc == 5 || argc == 6)) {
		craft_g3(argv[3], argv[4],
			 argc == 6 ? strtoull(argv[5], NULL, 0) : 64ull << 30);
	} else if (!strcmp(mode, "g11") && argc == 5) {
		craft_g11(argv[3], argv[4]);
	} else if (!strcmp(mode, "g11s") && argc == 4) {
		craft_g11s(argv[3]);
	} else if (!strcmp(mode, "g4") && argc == 4) {
		craft_g4(argv[3]);
	} else if (!strcmp(mode, "g5") && argc == 4) {
		craft_g5(argv[3]);
	} else {
		die("unknown mode or missing argument");
	}
	/* appended inodes and data: keep the image a whole number of blocks */
	grow((img_size + blksz - 1) & ~(blksz - 1));
	reseal();
	store(argv[2]);
	return 0;
}
