// SPDX-License-Identifier: MIT
/* The image file and extra devices a reading tool is given (include/erofs/read/rdopen.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/common/io.h"
#include "erofs/read/rdopen.h"

static int src_fail(struct erofs_rd_source *src, bool image_fault, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int src_fail(struct erofs_rd_source *src, bool image_fault, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(src->err, sizeof(src->err), fmt, ap);
	va_end(ap);
	src->image_fault = image_fault;
	return err;
}

void erofs_rd_source_init(struct erofs_rd_source *src, const char *image)
{
	memset(src, 0, sizeof(*src));
	src->image = image;
	src->fd = -1;
}

int erofs_rd_source_add_device(struct erofs_rd_source *src, const char *path)
{
	const char **v;

	if (!*path)
		return src_fail(src, false, -EINVAL, "--device= needs a path");
	v = realloc(src->devices, (src->nr_devices + 1) * sizeof(*v));
	if (!v)
		return src_fail(src, false, -ENOMEM, "out of memory");
	v[src->nr_devices++] = path;
	src->devices = v;
	return 0;
}

/* A regular file or block device, read-only; its size in *size. */
static int open_one(struct erofs_rd_source *src, const char *path, uint64_t *size)
{
	int fd = erofs_image_open_ro(path, size);

	if (fd == -EINVAL)
		return src_fail(src, false, fd, "%s is neither a regular file nor a block device",
				path);
	if (fd < 0)
		return src_fail(src, false, fd, "cannot open %s: %s", path, strerror(-fd));
	return fd;
}

int erofs_rd_source_open_file(struct erofs_rd_source *src)
{
	int fd = open_one(src, src->image, &src->file_bytes);

	if (fd < 0)
		return fd;
	src->fd = fd;
	if (src->offset && src->offset >= src->file_bytes)
		return src_fail(src, false, -EINVAL,
			"%s: --offset %" PRIu64 " is not inside the file (%" PRIu64 " bytes)",
			src->image, src->offset, src->file_bytes);
	src->image_bytes = src->file_bytes - src->offset;
	return 0;
}

/* n descriptor slots for the devices, all -1 (closed by erofs_rd_source_close()). */
static int alloc_dev_fds(struct erofs_rd_source *src, unsigned int n)
{
	src->dev_fds = malloc(n * sizeof(*src->dev_fds));
	if (!src->dev_fds)
		return src_fail(src, false, -ENOMEM, "out of memory");
	src->nr_dev_fds = n;
	for (unsigned int i = 0; i < n; i++)
		src->dev_fds[i] = -1;
	return 0;
}

/*
 * No --device, and every extra device lies in the image file itself where
 * the device table maps it: containerd's tar-index layers, the tar appended
 * to its index (mapped right after the index's blocks).  erofs-utils' fsck
 * reads those; so do we, each device from its place in the file.
 */
static int use_appended_devices(struct erofs_rd_source *src, struct erofs_reader *r)
{
	for (unsigned int i = 0; i < r->nr_devs; i++) {
		const struct erofs_rd_device *d = &r->devs[i];
		uint64_t start = d->mapped_blkaddr << r->blkszbits, len = d->blocks << r->blkszbits;

		if (!d->mapped_blkaddr || start > src->image_bytes || len > src->image_bytes - start)
			return 0;
	}
	if (alloc_dev_fds(src, r->nr_devs))
		return -ENOMEM;
	for (unsigned int i = 0; i < r->nr_devs; i++) {
		const struct erofs_rd_device *d = &r->devs[i];
		uint64_t start = d->mapped_blkaddr << r->blkszbits;

		/* a descriptor of its own, closed with the devices' */
		if ((src->dev_fds[i] = fcntl(src->fd, F_DUPFD_CLOEXEC, 0)) < 0)
			return src_fail(src, false, -errno, "%s: %s", src->image, strerror(errno));
		if (erofs_reader_set_device_at(r, i + 1, src->dev_fds[i], src->offset + start,
					       src->image_bytes - start))
			return src_fail(src, true, -EUCLEAN, "%s: %s", src->image,
					erofs_reader_error(r));
	}
	return 1;
}

/* The slots no --device stands for, by number and tag (at most 4 named). */
static void missing_devices(const struct erofs_rd_source *src, const struct erofs_reader *r,
			    char *out, size_t len)
{
	char name[EROFS_DEVICE_NAME_LEN];
	size_t used = 0;
	unsigned int i, shown = 0;

	out[0] = '\0';
	for (i = src->nr_devices; i < r->nr_devs && used < len; i++) {
		if (shown == 4) {
			snprintf(out + used, len - used, ", and %u more", r->nr_devs - i);
			return;
		}
		used += (size_t)snprintf(out + used, len - used, "%s%s", shown ? ", " : "",
					 erofs_reader_device_name(r, i + 1, name, sizeof(name)));
		shown++;
	}
}

/* One --device per slot of the device table, as Linux wants -o device=. */
static int open_devices(struct erofs_rd_source *src, struct erofs_reader *r)
{
	unsigned int n = r->nr_devs;
	int appended;

	if (src->flags & EROFS_RD_NO_DEVICES) {
		if (src->nr_devices)
			return src_fail(src, false, -EINVAL,
				"%s: --device and --no-devices exclude each other", src->image);
		return 0;
	}
	appended = n && !src->nr_devices ? use_appended_devices(src, r) : 0;
	if (appended)
		return appended < 0 ? appended : 0;
	if (src->nr_devices != n && (src->nr_devices || (src->flags & EROFS_RD_ALL_DEVICES))) {
		char missing[4 * EROFS_DEVICE_NAME_LEN + 32];

		if (!n)
			return src_fail(src, false, -EINVAL,
				"%s: --device given, but the image has no extra devices", src->image);
		if (src->nr_devices > n)
			return src_fail(src, false, -EINVAL,
				"%s: the image has %u extra device%s: give %s with --device=PATH (%u given)",
				src->image, n, n == 1 ? "" : "s", n == 1 ? "it" : "each, in order",
				src->nr_devices);
		missing_devices(src, r, missing, sizeof(missing));
		return src_fail(src, false, -ENXIO,
			"%s: the image has %u extra device%s: give %s with --device=PATH (%u given); missing: %s",
			src->image, n, n == 1 ? "" : "s", n == 1 ? "it" : "each, in order",
			src->nr_devices, missing);
	}
	if (!src->nr_devices)
		return 0;
	if (alloc_dev_fds(src, src->nr_devices))
		return -ENOMEM;
	for (unsigned int i = 0; i < src->nr_devices; i++) {
		uint64_t size;
		int fd = open_one(src, src->devices[i], &size);

		if (fd < 0)
			return fd;
		src->dev_fds[i] = fd;
		if (erofs_reader_set_device(r, i + 1, fd, size))
			return src_fail(src, true, -EUCLEAN, "%s: %s: %s", src->image,
					src->devices[i], erofs_reader_error(r));
	}
	return 0;
}

int erofs_rd_source_open_reader(struct erofs_rd_source *src, struct erofs_reader *r)
{
	int err = erofs_reader_open_fd_at(r, src->fd, src->offset, src->image_bytes);

	if (err)
		return src_fail(src, true, err, "%s: %s", src->image, erofs_reader_error(r));
	err = open_devices(src, r);
	if (err)
		erofs_reader_close(r);
	return err;
}

int erofs_rd_source_open(struct erofs_rd_source *src, struct erofs_reader *r)
{
	int err = erofs_rd_source_open_file(src);

	return err ? err : erofs_rd_source_open_reader(src, r);
}

void erofs_rd_source_close(struct erofs_rd_source *src)
{
	for (unsigned int i = 0; src->dev_fds && i < src->nr_dev_fds; i++)
		if (src->dev_fds[i] >= 0)
			close(src->dev_fds[i]);
	free(src->dev_fds);
	src->dev_fds = NULL;
	src->nr_dev_fds = 0;
	if (src->fd >= 0)
		close(src->fd);
	src->fd = -1;
	free(src->devices);
	src->devices = NULL;
	src->nr_devices = 0;
}
