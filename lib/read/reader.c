// SPDX-License-Identifier: MIT
/*
 * The image reader: superblock, inodes, data mapping, directories, xattrs.
 *
 * Written for erofs-forge from Documentation/filesystems/erofs.rst and the
 * format as laid out in include/erofs/common/format.h.  Every value taken from the
 * image is checked before it steers a read or a loop; see reader.h for the
 * error convention.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/rdevice.h"
#include "erofs/read/reader.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN

int erofs_reader_fail(struct erofs_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err;
}

#define fail	erofs_reader_fail

const char *erofs_reader_error(const struct erofs_reader *r)
{
	return r->err[0] ? r->err : "unknown error";
}

const char *erofs_name_bits(char *out, size_t len, uint32_t mask,
			    const struct erofs_bitname *names, size_t n)
{
	size_t used = 0, i;

	out[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		if (!(mask & names[i].bit))
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "",
					 names[i].name);
		mask &= ~names[i].bit;
	}
	if (mask && used < len)
		snprintf(out + used, len - used, "%sunknown bits 0x%x", used ? ", " : "", mask);
	return out;
}

/* Incompatible features this reader knows: 6.1's, long xattr prefixes (6.4),
 * 48-bit addresses (6.15) and the metabox (6.17); any other bit is refused. */
#define INCOMPAT_KNOWN	(EROFS_INCOMPAT_LINUX_6_1 | EROFS_INCOMPAT_XATTR_PREFIXES | \
			 EROFS_INCOMPAT_48BIT | EROFS_INCOMPAT_METABOX)

const char *erofs_escape(char *out, size_t outlen, const void *name, size_t len)
{
	const unsigned char *s = name;
	size_t o = 0, i;

	if (!outlen)
		return out;
	if (outlen < 12) {
		out[0] = '\0';
		return out;
	}

	for (i = 0; i < len && o + 8 < outlen; i++) {
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '\\')
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", s[i]);
		else
			out[o++] = (char)s[i];
	}
	if (i < len && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

int erofs_dev_read(struct erofs_reader *r, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	if (off > r->size || len > r->size - off)
		return fail(r, -EFSCORRUPTED,
			    "read of %zu bytes at %" PRIu64 " beyond the end of the image (%" PRIu64 " bytes)",
			    len, off, r->size);
	if (r->mem) {
		memcpy(buf, r->mem + off, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)(r->base + off));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(r, -EIO, "read error at %" PRIu64 ": %s",
				    off, strerror(errno));
		}
		if (n == 0)
			return fail(r, -EIO, "unexpected end of image at %" PRIu64, off);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* superblock                                                          */

static int load_super(struct erofs_reader *r)
{
	uint8_t raw[EROFS_SUPER_MAX_SIZE] = { 0 };
	struct erofs_super *sb = &r->sb;
	uint64_t fsbytes, limit;
	unsigned int sb_size;
	int err;

	if (r->size < EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE)
		return fail(r, -EFSCORRUPTED,
			    "image too small for a superblock (%" PRIu64 " bytes)", r->size);
	err = erofs_dev_read(r, raw, r->size - EROFS_SUPER_OFFSET < sizeof(raw) ?
				 r->size - EROFS_SUPER_OFFSET : sizeof(raw), EROFS_SUPER_OFFSET);
	if (err)
		return err;
	erofs_super_decode(raw, r->size - EROFS_SUPER_OFFSET, sb);

	if (sb->magic != EROFS_MAGIC)
		return fail(r, -EFSCORRUPTED,
			    "superblock: bad magic 0x%08x (not an EROFS image)", sb->magic);
	if (sb->blkszbits < EROFS_MIN_BLKSZBITS || sb->blkszbits > EROFS_MAX_BLKSZBITS)
		return fail(r, -EFSCORRUPTED,
			    "superblock: unsupported block size bits %u (want %u..%u)",
			    sb->blkszbits, EROFS_MIN_BLKSZBITS, EROFS_MAX_BLKSZBITS);
	r->blkszbits = sb->blkszbits;
	r->blksz = 1u << sb->blkszbits;

	if (sb->feature_compat & EROFS_COMPAT_SB_CHKSUM) {
		size_t span = erofs_sb_checksum_span(r->blkszbits);
		uint8_t *buf;
		uint32_t crc;

		if (EROFS_SUPER_OFFSET + (uint64_t)span > r->size)
			return fail(r, -EFSCORRUPTED,
				    "superblock: image too small (%" PRIu64 " bytes) for the checksummed area",
				    r->size);
		buf = malloc(span);
		if (!buf)
			return fail(r, -ENOMEM, "out of memory");
		err = erofs_dev_read(r, buf, span, EROFS_SUPER_OFFSET);
		crc = err ? 0 : erofs_sb_checksum(buf, span);
		free(buf);
		if (err)
			return err;
		if (crc != sb->checksum)
			return fail(r, -EFSCORRUPTED,
				    "superblock: checksum mismatch (stored 0x%08x, computed 0x%08x)",
				    sb->checksum, crc);
	}

	if (sb->feature_incompat & ~INCOMPAT_KNOWN)
		return fail(r, -EOPNOTSUPP,
			    "superblock: unsupported incompatible features: unknown bits 0x%x",
			    sb->feature_incompat & ~INCOMPAT_KNOWN);
	if ((sb->feature_incompat & EROFS_INCOMPAT_METABOX) &&
	    !(sb->feature_incompat & EROFS_INCOMPAT_48BIT))
		return fail(r, -EFSCORRUPTED,
			    "superblock: the metabox feature without the 48bit feature");
	r->root_nid = erofs_super_root_nid(sb);
	r->blocks = erofs_super_blocks(sb);
	r->epoch = (int64_t)sb->build_time;
	if (sb->build_time > (uint64_t)INT64_MAX - UINT32_MAX)
		return fail(r, -EFSCORRUPTED,
			    "superblock: epoch %" PRIu64 " out of range", sb->build_time);
	if (sb->dirblkbits)
		return fail(r, -EFSCORRUPTED,
			    "superblock: dirblkbits %u (must be 0)", sb->dirblkbits);
	sb_size = EROFS_SUPER_SIZE + sb->sb_extslots * EROFS_SB_EXTSLOT_SIZE;
	if (sb_size > EROFS_SB_MAX_SIZE ||
	    EROFS_SUPER_OFFSET + (uint64_t)sb_size > r->size)
		return fail(r, -EFSCORRUPTED,
			    "superblock: sb_extslots %u makes a %u-byte superblock",
			    sb->sb_extslots, sb_size);
	if (!memchr(sb->volume_name, '\0', sizeof(sb->volume_name)))
		return fail(r, -EFSCORRUPTED,
			    "superblock: volume name is not NUL-terminated");
	if (sb->build_time_nsec >= 1000000000u)
		return fail(r, -EFSCORRUPTED,
			    "superblock: build_time_nsec %u out of range", sb->build_time_nsec);
	err = erofs_rd_load_devices(r, sb_size);
	if (err)
		return err;

	/* everything past the block count is outside the filesystem; 48-bit
	 * counts stay below 2^48, so the shift cannot overflow */
	fsbytes = r->blocks << r->blkszbits;
	if (fsbytes > r->size)
		return fail(r, -EFSCORRUPTED,
			    "image is truncated: %" PRIu64 " bytes, but the superblock says %" PRIu64 " blocks (%" PRIu64 " bytes)",
			    r->size, r->blocks, fsbytes);
	if (r->nr_devs && (uint64_t)sb->devt_slotoff * EROFS_DEVT_SLOT_BYTES +
			  (uint64_t)r->nr_devs * EROFS_DEVT_SLOT_BYTES > fsbytes)
		return fail(r, -EFSCORRUPTED,
			    "superblock: device table beyond the end of the filesystem");
	if (fsbytes < EROFS_SUPER_OFFSET + (uint64_t)sb_size)
		return fail(r, -EFSCORRUPTED,
			    "superblock: block count %" PRIu64 " too small to hold the superblock",
			    r->blocks);
	limit = fsbytes;
	r->size = limit;

	r->meta_base = (uint64_t)sb->meta_blkaddr << r->blkszbits;
	if (r->meta_base >= limit)
		return fail(r, -EFSCORRUPTED,
			    "superblock: meta_blkaddr %u beyond the end of the image (%" PRIu64 " blocks)",
			    sb->meta_blkaddr, r->blocks);
	r->xattr_base = (uint64_t)sb->xattr_blkaddr << r->blkszbits;
	if (r->xattr_base >= limit && !(sb->feature_compat & EROFS_COMPAT_SHARED_EA_IN_METABOX))
		return fail(r, -EFSCORRUPTED,
			    "superblock: xattr_blkaddr %u beyond the end of the image (%" PRIu64 " blocks)",
			    sb->xattr_blkaddr, r->blocks);
	if (!(r->root_nid & EROFS_NID_METABOX_BIT) &&
	    r->meta_base + (r->root_nid << EROFS_SLOT_BITS) + EROFS_COMPACT_INODE_SIZE > limit)
		return fail(r, -EFSCORRUPTED,
			    "superblock: root nid %" PRIu64 " beyond the end of the image", r->root_nid);
	err = erofs_z_load_config(r);
	if (!err)
		err = erofs_mbox_load(r);
	if (err)
		return err;
	r->err[0] = '\0';
	return 0;
}

/* A reader that failed to open holds nothing: callers do not close it. */
static int open_super(struct erofs_reader *r)
{
	int err = load_super(r);

	if (err) {
		erofs_z_release(r);
		erofs_mcache_free(r);
		erofs_mbox_free(r);
		erofs_rd_free_devices(r);
	}
	return err;
}

static int open_fd(struct erofs_reader *r, int fd, uint64_t base, uint64_t size,
		   unsigned int flags)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->base = base;
	r->size = size;
	r->flags = flags;
	return open_super(r);
}

int erofs_reader_open_fd_flags(struct erofs_reader *r, int fd, uint64_t size,
			       unsigned int flags)
{
	return open_fd(r, fd, 0, size, flags);
}

int erofs_reader_open_fd_at(struct erofs_reader *r, int fd, uint64_t base, uint64_t size)
{
	return open_fd(r, fd, base, size, 0);
}

int erofs_reader_open_mem_flags(struct erofs_reader *r, const void *buf, size_t size,
				unsigned int flags)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->mem = buf;
	r->size = size;
	r->flags = flags;
	return open_super(r);
}

int erofs_reader_open_fd(struct erofs_reader *r, int fd, uint64_t size)
{
	return erofs_reader_open_fd_flags(r, fd, size, 0);
}

int erofs_reader_open_mem(struct erofs_reader *r, const void *buf, size_t size)
{
	return erofs_reader_open_mem_flags(r, buf, size, 0);
}

void erofs_reader_clone(struct erofs_reader *dst, const struct erofs_reader *src)
{
	*dst = *src;
	dst->zc = NULL;		/* its own buffers and caches, made on demand */
	dst->mc = NULL;
	dst->prefixes = NULL;	/* its own xattr prefix table, loaded on demand */
	dst->devs_borrowed = true;	/* the source's devices: not freed by the clone */
	dst->err[0] = '\0';
}

void erofs_reader_close(struct erofs_reader *r)
{
	erofs_xattr_prefixes_free(r);
	erofs_mbox_free(r);
	erofs_z_release(r);
	erofs_mcache_free(r);
	erofs_rd_free_devices(r);
}

/* ------------------------------------------------------------------ */
/* inodes                                                              */

static bool has_data(uint16_t mode)
{
	return S_ISREG(mode) || S_ISDIR(mode) || S_ISLNK(mode);
}

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

	if (!has_data(vi->di.mode))
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

	if (!has_data(vi->di.mode))
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
