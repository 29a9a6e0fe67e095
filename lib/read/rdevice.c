// SPDX-License-Identifier: MIT
/* Extra devices of multi-device images (see include/erofs/read/rdevice.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/rdevice.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN

static uint16_t id_mask(unsigned int n)
{
	unsigned int p = 1;

	while (p < n + 1)
		p <<= 1;
	return (uint16_t)(p - 1);
}

int erofs_rd_load_devices(struct erofs_reader *r, unsigned int sb_size)
{
	const struct erofs_super *sb = &r->sb;
	uint64_t start = (uint64_t)sb->devt_slotoff * EROFS_DEVT_SLOT_BYTES, bytes;
	uint8_t slot[EROFS_DEVT_SLOT_BYTES];
	const bool wide = sb->feature_incompat & EROFS_INCOMPAT_48BIT;
	const uint64_t top = wide ? (1ull << 48) - 1 : UINT32_MAX;

	if (!(sb->feature_incompat & EROFS_INCOMPAT_DEVICE_TABLE) || !sb->extra_devices)
		return 0;
	bytes = (uint64_t)sb->extra_devices * EROFS_DEVT_SLOT_BYTES;
	if (start < EROFS_SUPER_OFFSET + (uint64_t)sb_size || start > r->size ||
	    bytes > r->size - start)
		return erofs_reader_fail(r, -EFSCORRUPTED,
			"superblock: device table (%u slots at slot offset %u) overlaps the superblock or lies beyond the end of the image",
			sb->extra_devices, sb->devt_slotoff);
	r->devs = calloc(sb->extra_devices, sizeof(*r->devs));
	if (!r->devs)
		return erofs_reader_fail(r, -ENOMEM, "out of memory");
	r->nr_devs = sb->extra_devices;
	r->device_id_mask = id_mask(r->nr_devs);
	for (unsigned int i = 0; i < r->nr_devs; i++) {
		struct erofs_rd_device *d = &r->devs[i];
		int err = erofs_dev_read(r, slot, sizeof(slot), start + i * EROFS_DEVT_SLOT_BYTES);
		uint64_t end;

		if (err)
			return err;
		d->fd = -1;
		memcpy(d->tag, slot, EROFS_DEVT_TAG_LEN);
		d->blocks = get_le32(slot + EROFS_DEVT_SLOT_BLOCKS);
		d->mapped_blkaddr = get_le32(slot + EROFS_DEVT_SLOT_MAPPED);
		if (wide) {	/* 48-bit: the high bits of both */
			d->blocks |= (uint64_t)get_le32(slot + EROFS_DEVT_SLOT_BLOCKS_HI) << 32;
			d->mapped_blkaddr |= (uint64_t)get_le16(slot + EROFS_DEVT_SLOT_MAPPED_HI) << 32;
		}
		end = d->mapped_blkaddr + d->blocks;	/* both < 2^48: no overflow */
		if (d->blocks > top || (d->mapped_blkaddr && end > top))
			return erofs_reader_fail(r, -EFSCORRUPTED,
				"device %u: mapped at block %" PRIu64 ", its %" PRIu64 " blocks run past 2^%u",
				i + 1, d->mapped_blkaddr, d->blocks, wide ? 48 : 32);
	}
	return 0;
}

void erofs_rd_free_devices(struct erofs_reader *r)
{
	if (!r->devs_borrowed)
		free(r->devs);
	r->devs = NULL;
	r->nr_devs = 0;
}

int erofs_reader_set_device(struct erofs_reader *r, unsigned int id, int fd, uint64_t size)
{
	return erofs_reader_set_device_at(r, id, fd, 0, size);
}

int erofs_reader_set_device_at(struct erofs_reader *r, unsigned int id, int fd, uint64_t base,
			       uint64_t size)
{
	struct erofs_rd_device *d;

	if (!id || id > r->nr_devs)
		return erofs_reader_fail(r, -EINVAL,
			"device %u given, but the image has %u extra device%s",
			id, r->nr_devs, r->nr_devs == 1 ? "" : "s");
	d = &r->devs[id - 1];
	if (size < (uint64_t)d->blocks << r->blkszbits)
		return erofs_reader_fail(r, -EFSCORRUPTED,
			"device %u is too short: %" PRIu64 " bytes, the device table says %" PRIu64 " blocks (%" PRIu64 " bytes)",
			id, size, d->blocks, (uint64_t)d->blocks << r->blkszbits);
	d->fd = fd;
	d->base = base;
	d->size = size;
	return 0;
}

const char *erofs_reader_device_name(const struct erofs_reader *r, unsigned int id, char *buf,
				     size_t len)
{
	const struct erofs_rd_device *d;
	char tag[EROFS_DEVT_TAG_LEN * 4 + 4];

	if (!id || id > r->nr_devs) {
		snprintf(buf, len, "device %u", id);
		return buf;
	}
	d = &r->devs[id - 1];
	if (d->tag[0])
		erofs_escape(tag, sizeof(tag), d->tag, strnlen(d->tag, EROFS_DEVT_TAG_LEN));
	snprintf(buf, len, "device %u (%s%s%s, %" PRIu64 " block%s)", id,
		 d->tag[0] ? "tag \"" : "no tag", d->tag[0] ? tag : "", d->tag[0] ? "\"" : "",
		 d->blocks, d->blocks == 1 ? "" : "s");
	return buf;
}

int erofs_devn_read(struct erofs_reader *r, unsigned int dev, void *buf, size_t len,
		    uint64_t off)
{
	const struct erofs_rd_device *d;
	uint64_t limit;
	uint8_t *p = buf;

	if (!dev)
		return erofs_dev_read(r, buf, len, off);
	if (dev > r->nr_devs)
		return erofs_reader_fail(r, -EFSCORRUPTED, "read from device %u of %u", dev,
					 r->nr_devs);
	d = &r->devs[dev - 1];
	if (d->fd < 0) {
		char name[EROFS_DEVICE_NAME_LEN];

		return erofs_reader_fail(r, -ENXIO,
			"data on extra %s, which was not given (--device=PATH)",
			erofs_reader_device_name(r, dev, name, sizeof(name)));
	}
	limit = (uint64_t)d->blocks << r->blkszbits;
	if (off > limit || len > limit - off)
		return erofs_reader_fail(r, -EFSCORRUPTED,
			"read of %zu bytes at %" PRIu64 " beyond device %u's %" PRIu64 " blocks",
			len, off, dev, d->blocks);
	while (len) {
		ssize_t n = pread(d->fd, p, len, (off_t)(d->base + off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return erofs_reader_fail(r, -EIO, "device %u: read error at %" PRIu64 ": %s",
						 dev, off, strerror(errno));
		if (n == 0)
			return erofs_reader_fail(r, -EIO, "device %u: unexpected end at %" PRIu64,
						 dev, off);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* The mapped range holding byte pa of the flat block space: 1..nr_devs, 0: none. */
static unsigned int mapped_device(const struct erofs_reader *r, uint64_t pa)
{
	for (unsigned int i = 0; i < r->nr_devs; i++) {
		const struct erofs_rd_device *d = &r->devs[i];
		uint64_t start = (uint64_t)d->mapped_blkaddr << r->blkszbits;

		if (d->mapped_blkaddr && pa >= start &&
		    pa - start < ((uint64_t)d->blocks << r->blkszbits))
			return i + 1;
	}
	return 0;
}

bool erofs_rd_extent_ok(const struct erofs_reader *r, unsigned int dev, uint64_t pa,
			uint64_t len)
{
	uint64_t start = 0, limit = r->size;

	if (!dev && (dev = mapped_device(r, pa)))
		start = (uint64_t)r->devs[dev - 1].mapped_blkaddr << r->blkszbits;
	if (dev > r->nr_devs)
		return false;
	if (dev)
		limit = start + ((uint64_t)r->devs[dev - 1].blocks << r->blkszbits);
	return pa <= limit && len <= limit - pa;
}

int erofs_rd_remap(struct erofs_reader *r, struct erofs_map *map)
{
	unsigned int dev;
	uint64_t start;

	if (map->device || !r->nr_devs || !(map->flags & EROFS_MAP_MAPPED) ||
	    (map->flags & (EROFS_MAP_META | EROFS_MAP_FRAGMENT | EROFS_MAP_ENCODED |
			   EROFS_MAP_INTERLACED)))
		return 0;
	dev = mapped_device(r, map->pa);
	if (!dev)
		return 0;
	if (!erofs_rd_extent_ok(r, 0, map->pa, map->plen))
		return erofs_reader_fail(r, -EFSCORRUPTED,
			"extent at %" PRIu64 " (%" PRIu64 " bytes) runs past the end of device %u's mapped blocks",
			map->pa, map->plen, dev);
	start = (uint64_t)r->devs[dev - 1].mapped_blkaddr << r->blkszbits;
	map->pa -= start;
	map->device = dev;
	return 0;
}
