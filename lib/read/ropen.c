// SPDX-License-Identifier: MIT
/*
 * Opening an image: the superblock, every field checked, then the extra
 * devices, the compression settings and the metabox; a clone for another
 * thread; closing.  The top of the reader's core: it installs the two hooks
 * (erofs_reader.load_inode, .read_inode_data) through which the files below
 * reach the packed inode and the metabox, whose data is itself an inode's.
 *
 * Written for erofs-forge from Documentation/filesystems/erofs.rst and the
 * format as laid out in include/erofs/common/format.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rdevice.h"
#include "erofs/read/rmcache.h"
#include "erofs/read/rmetabox.h"
#include "erofs/read/zconfig.h"
#include "erofs/read/zpacked.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail	erofs_reader_fail

/* Incompatible features this reader knows: 6.1's, long xattr prefixes (6.4),
 * 48-bit addresses (6.15) and the metabox (6.17); any other bit is refused. */
#define INCOMPAT_KNOWN	(EROFS_INCOMPAT_LINUX_6_1 | EROFS_INCOMPAT_XATTR_PREFIXES | \
			 EROFS_INCOMPAT_48BIT | EROFS_INCOMPAT_METABOX)

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
	/* Linux 7.0 refuses to mount such an image */
	if ((sb->feature_compat & EROFS_COMPAT_ISHARE_XATTRS) &&
	    sb->ishare_xattr_prefix_id >= sb->xattr_prefix_count)
		return fail(r, -EFSCORRUPTED,
			    "superblock: ishare_xattr_prefix_id %u, but %u long xattr prefixes",
			    sb->ishare_xattr_prefix_id, sb->xattr_prefix_count);
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
	int err;

	r->load_inode = erofs_read_inode;
	r->read_inode_data = erofs_read_data;
	err = load_super(r);
	if (err) {
		erofs_packed_free(r);
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
	dst->pk = NULL;		/* its own packed inode, loaded on demand */
	dst->mc = NULL;
	dst->prefixes = NULL;	/* its own xattr prefix table, loaded on demand */
	dst->devs_borrowed = true;	/* the source's devices: not freed by the clone */
	dst->err[0] = '\0';
}

void erofs_reader_close(struct erofs_reader *r)
{
	erofs_xattr_prefixes_free(r);
	erofs_mbox_free(r);
	erofs_packed_free(r);
	erofs_z_release(r);
	erofs_mcache_free(r);
	erofs_rd_free_devices(r);
}
