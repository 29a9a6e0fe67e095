// SPDX-License-Identifier: MIT
/* Scratch files, whole reads and writes, buffered sequential writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/io.h"

static bool is_device(const char *path)
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
	if (is_device(image))
		where = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	fd = open(where, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (path = malloc(strlen(where) + 32))) {
		sprintf(path, "%s/.erofs-scratch-XXXXXX", where);
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

bool erofs_is_zero(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* each byte equals the next, and the first is zero */
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
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

int erofs_image_open_ro(const char *path, uint64_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		goto fail;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size))
			goto fail;
	} else if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
	} else {
		close(fd);
		return -EINVAL;
	}
	return fd;
fail:
	{
		int err = -errno;

		close(fd);
		return err;
	}
}
