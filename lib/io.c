// SPDX-License-Identifier: MIT
/* Image output: temporary file, atomic rename, buffered sequential writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/diag.h"
#include "erofs/io.h"

bool erofs_image_is_device(const char *path)
{
	struct stat st;

	return !stat(path, &st) && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode));
}

/*
 * Scratch space beside the image (same filesystem as the final copy, not a
 * tmpfs), unlinked at once so nothing is left behind; beside a device (/dev)
 * it goes to $TMPDIR or /var/tmp instead.
 */
int erofs_scratch_open(const char *image)
{
	char *dir = strdup(image), *slash, *path;
	const char *where;
	int fd;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	where = slash ? dir : ".";
	if (erofs_image_is_device(image))
		where = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	fd = open(where, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (path = malloc(strlen(where) + 32))) {
		sprintf(path, "%s/.erofs-spool-XXXXXX", where);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
	}
	if (fd < 0) {
		int err = errno;

		erofs_err("%s: cannot create a temporary file beside the image: %s", where,
			  strerror(err));
		free(dir);
		return -err;
	}
	free(dir);
	return fd;
}

static int open_device(struct erofs_image_file *img)
{
	img->in_place = true;
	img->fd = open(img->final_path, O_RDWR | O_CLOEXEC);
	if (img->fd < 0) {
		int err = errno;

		erofs_err("%s: cannot open the device: %s", img->final_path, strerror(err));
		return -err;
	}
	return 0;
}

int erofs_image_create(struct erofs_image_file *img, const char *final_path)
{
	struct stat st;
	size_t len;

	memset(img, 0, sizeof(*img));
	img->fd = -1;
	img->final_path = final_path;
	if (erofs_image_is_device(final_path))
		return open_device(img);
	/* through a symlink: replace its target, so the link stays */
	if (!lstat(final_path, &st) && S_ISLNK(st.st_mode))
		img->target_path = realpath(final_path, NULL);
	if (!img->target_path && !(img->target_path = strdup(final_path)))
		return -ENOMEM;
	len = strlen(img->target_path);
	img->tmp_path = malloc(len + sizeof(".tmp-XXXXXX"));
	if (!img->tmp_path)
		return -ENOMEM;
	memcpy(img->tmp_path, img->target_path, len);
	memcpy(img->tmp_path + len, ".tmp-XXXXXX", sizeof(".tmp-XXXXXX"));
	img->fd = mkostemp(img->tmp_path, O_CLOEXEC);
	if (img->fd < 0) {
		int err = errno;

		erofs_err("%s: cannot create the image: %s", final_path, strerror(err));
		free(img->tmp_path);
		img->tmp_path = NULL;
		return -err;
	}
	/* mkostemp makes 0600; an image is as readable as any new file */
	{
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(img->fd, 0666 & ~mask))
			erofs_warn("%s: cannot set the image mode: %s", final_path,
				   strerror(errno));
	}
	return 0;
}

/* A device cannot grow: it must hold the whole image. */
static int check_device_size(struct erofs_image_file *img, uint64_t size)
{
	uint64_t dev_size = 0;
	struct stat st;

	if (!fstat(img->fd, &st) && S_ISBLK(st.st_mode) &&
	    !ioctl(img->fd, BLKGETSIZE64, &dev_size) && dev_size < size) {
		erofs_err("%s: the device holds %llu bytes, the image needs %llu",
			  img->final_path, (unsigned long long)dev_size,
			  (unsigned long long)size);
		return -ENOSPC;
	}
	return 0;
}

int erofs_image_check_size(struct erofs_image_file *img, uint64_t size)
{
	int err = img->in_place ? check_device_size(img, size) : 0;

	if (err)
		img->untouched = true;
	return err;
}

int erofs_image_resize(struct erofs_image_file *img, uint64_t size)
{
	if (img->in_place)
		return check_device_size(img, size);
	if (ftruncate(img->fd, (off_t)size)) {
		int err = errno;

		erofs_err("%s: cannot set the image size: %s", img->final_path, strerror(err));
		return -err;
	}
	return 0;
}

static void release_paths(struct erofs_image_file *img)
{
	free(img->tmp_path);
	free(img->target_path);
	img->tmp_path = img->target_path = NULL;
}

int erofs_image_commit(struct erofs_image_file *img)
{
	int err = 0;

	if (img->in_place && fsync(img->fd) && errno != EINVAL)
		err = errno;
	if (close(img->fd) && !err)
		err = errno;
	img->fd = -1;
	if (!err && !img->in_place && rename(img->tmp_path, img->target_path))
		err = errno;
	if (err) {
		erofs_err("%s: cannot finish the image: %s", img->final_path, strerror(err));
		erofs_image_abort(img);
		return -err;
	}
	release_paths(img);
	return 0;
}

void erofs_image_abort(struct erofs_image_file *img)
{
	if (img->fd >= 0)
		close(img->fd);
	img->fd = -1;
	if (img->in_place && !img->untouched)
		erofs_err("%s: the device now holds an incomplete image", img->final_path);
	if (img->tmp_path)
		unlink(img->tmp_path);
	release_paths(img);
}

int erofs_pwrite_all(int fd, const void *buf, size_t len, uint64_t pos)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
		pos += (uint64_t)n;
	}
	return 0;
}

int erofs_pread_all(int fd, void *buf, size_t len, uint64_t pos)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;	/* the file ends early: not an I/O error */
		p += n;
		len -= (size_t)n;
		pos += (uint64_t)n;
	}
	return 0;
}

int erofs_seq_init(struct erofs_seq_writer *w, int fd, const char *display, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->display = display;
	w->cap = cap;
	w->buf = malloc(cap);
	return w->buf ? 0 : -ENOMEM;
}

static void seq_fail(struct erofs_seq_writer *w, int err)
{
	if (!w->error) {
		w->error = err;
		erofs_err("%s: write failed: %s", w->display, strerror(-err));
	}
}

/* Writes out the buffer and restarts it at pos. */
static void seq_drain(struct erofs_seq_writer *w, uint64_t pos)
{
	if (w->len && !w->error) {
		int err = erofs_pwrite_all(w->fd, w->buf, w->len, w->buf_pos);

		if (err)
			seq_fail(w, err);
	}
	w->len = 0;
	w->buf_pos = pos;
}

uint8_t *erofs_seq_reserve(struct erofs_seq_writer *w, uint64_t pos, size_t len)
{
	uint64_t end = w->buf_pos + w->len;

	if (w->error)
		return NULL;
	if (pos < end) {
		seq_fail(w, -EINVAL);	/* the plan went backwards: a bug */
		return NULL;
	}
	/* a gap the buffer cannot hold is left as a hole in the file */
	if (pos + len - w->buf_pos > w->cap)
		seq_drain(w, pos);
	if (len > w->cap) {
		uint8_t *bigger = realloc(w->buf, len);

		if (!bigger) {
			seq_fail(w, -ENOMEM);
			return NULL;
		}
		w->buf = bigger;
		w->cap = len;
	}
	end = w->buf_pos + w->len;
	memset(w->buf + w->len, 0, (size_t)(pos + len - end));
	w->len = (size_t)(pos + len - w->buf_pos);
	return w->buf + (pos - w->buf_pos);
}

void erofs_seq_write(struct erofs_seq_writer *w, uint64_t pos, const void *data, size_t len)
{
	uint8_t *dst = erofs_seq_reserve(w, pos, len);

	if (dst)
		memcpy(dst, data, len);
}

/*
 * Large copies go file to file inside the kernel (copy_file_range), which
 * spares two trips through user memory; returns -EXDEV-like errors when the
 * filesystems cannot, so the caller falls back to buffered copying.
 */
static int copy_in_kernel(struct erofs_seq_writer *w, uint64_t pos, int src_fd,
			  uint64_t src_pos, uint64_t len, uint64_t *done)
{
#ifdef HAVE_COPY_FILE_RANGE
	loff_t in = (loff_t)src_pos, out = (loff_t)pos;

	seq_drain(w, pos);
	if (w->error)
		return w->error;
	while (*done < len) {
		ssize_t n = copy_file_range(src_fd, &in, w->fd, &out, (size_t)(len - *done), 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;
		*done += (uint64_t)n;
	}
	w->buf_pos = pos + len;
	return 0;
#else
	return -ENOSYS;
#endif
}

#define COPY_IN_KERNEL_MIN	(256u << 10)

int erofs_seq_copy(struct erofs_seq_writer *w, uint64_t pos, int src_fd, uint64_t src_pos,
		   uint64_t len)
{
	uint64_t done = 0;

	if (len >= COPY_IN_KERNEL_MIN && !w->error) {
		int err = copy_in_kernel(w, pos, src_fd, src_pos, len, &done);

		if (!err || err == -ENODATA)
			return err;
		/*
		 * Go on with buffered copies from where the kernel stopped:
		 * whether it could not copy between these files (EXDEV,
		 * EINVAL...) or failed to read or write, only the buffered
		 * path can tell a source error (returned, for the caller to
		 * name the file) from an image one (reported here).
		 */
		w->buf_pos = pos + done;
	}

	while (done < len && !w->error) {
		size_t chunk = len - done < w->cap ? (size_t)(len - done) : w->cap;
		uint8_t *dst = erofs_seq_reserve(w, pos + done, chunk);
		ssize_t n;

		if (!dst)
			break;
		/* a short read is not the end: only 0 is, and -1 an error */
		for (size_t got = 0; got < chunk; got += (size_t)n) {
			n = pread(src_fd, dst + got, chunk - got, (off_t)(src_pos + done + got));
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0) {
				int err = n ? -errno : -ENODATA;

				w->len -= chunk;	/* nothing of this span is kept */
				return err;
			}
		}
		done += chunk;
	}
	return w->error;
}

int erofs_seq_flush(struct erofs_seq_writer *w)
{
	seq_drain(w, w->buf_pos + w->len);
	return w->error;
}

void erofs_seq_release(struct erofs_seq_writer *w)
{
	free(w->buf);
	w->buf = NULL;
}
