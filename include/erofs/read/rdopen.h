/* SPDX-License-Identifier: MIT */
/*
 * What a reading tool is given, opened for the reader: the image file (a
 * regular file or a block device; the image may start --offset bytes into
 * it) and the extra devices of a multi-device image (--device=PATH, once
 * per slot of the device table, in its order).  fsck.erofs, dump.erofs and
 * erofsfuse share it, so that they take the same options and fail with the
 * same messages.
 *
 * Failures leave a one-line message in err (naming the path; the caller
 * adds its program name) and say whose fault it is: image_fault is set
 * when the image or a device holds the wrong bytes (a corrupt superblock,
 * a device shorter than its table slot), clear when the command line is
 * wrong (no such file, an offset past the end, the wrong device count).
 */
#ifndef EROFS_RDOPEN_H
#define EROFS_RDOPEN_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* every extra device must be given (fsck.erofs, erofsfuse): fewer is
 * -ENXIO, naming the missing slots; without it, no --device at all is
 * accepted too, and data on a device fails to read (-ENXIO) */
#define EROFS_RD_ALL_DEVICES	0x1u
/* the extra devices are left out on purpose (fsck.erofs --no-devices):
 * --device is refused, devices appended to the image file are not used
 * either, and data on a device fails to read with -ENXIO */
#define EROFS_RD_NO_DEVICES	0x2u

struct erofs_rd_source {
	/* what the command line said */
	const char *image;
	uint64_t offset;		/* --offset: bytes of the file before the image */
	const char **devices;		/* --device=PATH, in device table order */
	unsigned int nr_devices;
	unsigned int flags;		/* EROFS_RD_* */

	/* what was opened */
	int fd;				/* the image file, -1 when not open */
	uint64_t file_bytes;		/* its size (st_size or BLKGETSIZE64) */
	uint64_t image_bytes;		/* file_bytes - offset */
	int *dev_fds;			/* nr_dev_fds of them, -1 when not open: one per
					 * --device, or per device appended to the image */
	unsigned int nr_dev_fds;
	bool image_fault;		/* see above */
	char err[EROFS_ERRMSG_LEN + 4096];
};

/* Sets src up for image; nothing is opened yet. */
void erofs_rd_source_init(struct erofs_rd_source *src, const char *image);
/* Adds a --device=PATH (kept, not copied): 0, or -EINVAL for an empty
 * path and -ENOMEM, with the message in err. */
int erofs_rd_source_add_device(struct erofs_rd_source *src, const char *path);

/* Opens the image file and checks that the offset lies inside it. */
int erofs_rd_source_open_file(struct erofs_rd_source *src);
/* Then opens the reader on the image (erofs_reader_open_fd_at()) and gives
 * it the extra devices; on failure r holds nothing. */
int erofs_rd_source_open_reader(struct erofs_rd_source *src, struct erofs_reader *r);
/* Both. */
int erofs_rd_source_open(struct erofs_rd_source *src, struct erofs_reader *r);

/* Closes what was opened and frees the device list (not the reader). */
void erofs_rd_source_close(struct erofs_rd_source *src);

#endif
