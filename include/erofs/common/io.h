/* SPDX-License-Identifier: MIT */
/*
 * Low-level I/O: scratch files beside the image, whole reads and writes, and
 * a buffered sequential writer.
 */
#ifndef EROFS_IO_H
#define EROFS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An unlinked temporary file beside the image (see io.c); fd or -errno. */
int erofs_scratch_open(const char *image);

/* Whether len bytes are all zero. */
bool erofs_is_zero(const void *buf, size_t len);

/* pwrite()/pread() until done; a file that ends early is -ENODATA. */
int erofs_pwrite_all(int fd, const void *buf, size_t len, uint64_t pos);
int erofs_pread_all(int fd, void *buf, size_t len, uint64_t pos);

/* Opens an image (regular file or block device) read-only and gets its
 * size; fd, or -errno (-EINVAL: neither a file nor a block device). */
int erofs_image_open_ro(const char *path, uint64_t *size);

/*
 * Appends at increasing offsets; gaps between writes read back as zeros.
 * Errors are sticky and reported once by erofs_seq_flush().
 */
struct erofs_seq_writer {
	int fd;
	const char *display;	/* output name for messages */
	uint8_t *buf;
	size_t cap, len;
	uint64_t buf_pos;	/* image offset of buf[0] */
	int error;
};

int erofs_seq_init(struct erofs_seq_writer *w, int fd, const char *display, size_t cap);
void erofs_seq_write(struct erofs_seq_writer *w, uint64_t pos, const void *data, size_t len);
/* Returns a zeroed span of len bytes at pos to fill in place, or NULL on error. */
uint8_t *erofs_seq_reserve(struct erofs_seq_writer *w, uint64_t pos, size_t len);
int erofs_seq_flush(struct erofs_seq_writer *w);
void erofs_seq_release(struct erofs_seq_writer *w);

#endif
