/* SPDX-License-Identifier: MIT */
/*
 * The reader's side of multi-device images (INCOMPAT_DEVICE_TABLE): the
 * device table of the superblock, the extra devices the caller gives
 * (erofs_reader_set_device() in reader.h), and where a block address lands.
 *
 * As in Linux: a chunk index names its device (device_id, masked to the
 * next power of two above the device count); any other block address of
 * the image that falls inside a device's mapped range [mapped_blkaddr,
 * mapped_blkaddr + blocks) is on that device instead (the flat block space
 * of erofs-utils' --tar=i and --blobdev images).
 */
#ifndef EROFS_RDEVICE_H
#define EROFS_RDEVICE_H

#include "erofs/read/reader.h"

/*
 * Reads and checks the device table (its slots inside the image, after
 * the superblock of sb_size bytes) into r->devs.  No table: 0 and
 * nothing allocated.
 */
int erofs_rd_load_devices(struct erofs_reader *r, unsigned int sb_size);
void erofs_rd_free_devices(struct erofs_reader *r);

/* Whether [pa, pa + len) lies on device dev (0: the image or a mapped range). */
bool erofs_rd_extent_ok(const struct erofs_reader *r, unsigned int dev, uint64_t pa,
			uint64_t len);
/* Moves an unencoded extent of the image that lies in a mapped range onto
 * its device; one straddling a range's edge is -EUCLEAN. */
int erofs_rd_remap(struct erofs_reader *r, struct erofs_map *map);
/* The same on extra device dev (0: the image); past its blocks is -EUCLEAN. */
int erofs_devn_read(struct erofs_reader *r, unsigned int dev, void *buf, size_t len,
		    uint64_t off);

#endif
