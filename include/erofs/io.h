/* SPDX-License-Identifier: MIT */
/*
 * Output: the image is written to a temporary file beside its final path
 * and renamed into place only when complete, so a failed build leaves no
 * partial image.  A symlink keeps pointing at the new image (it goes beside
 * the symlink's target).  A block or character device is written in place:
 * there nothing can be renamed, and a failed build says so.
 * Writes go through a buffered sequential writer.
 */
#ifndef EROFS_IO_H
#define EROFS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct erofs_image_file {
	int fd;
	char *tmp_path;
	const char *final_path;	/* as the user named it, for messages */
	char *target_path;	/* what the rename replaces */
	bool in_place;		/* a device */
	bool untouched;		/* a device refused before any write */
};

/* Whether the image goes to a device, whose folder is no place for scratch files. */
bool erofs_image_is_device(const char *path);

/* An unlinked temporary file beside the image (see io.c); fd or -errno. */
int erofs_scratch_open(const char *image);

int erofs_image_create(struct erofs_image_file *img, const char *final_path);
/*
 * Before any write: whether a device holds size bytes (a file always can).
 * A device refused is left as it was: erofs_image_abort() does not call it
 * incomplete.
 */
int erofs_image_check_size(struct erofs_image_file *img, uint64_t size);
/* Sets the final size (blocks not written read as zeros). */
int erofs_image_resize(struct erofs_image_file *img, uint64_t size);
/* Closes and renames into place. */
int erofs_image_commit(struct erofs_image_file *img);
/* Removes the temporary file; safe to call on any state. */
void erofs_image_abort(struct erofs_image_file *img);

/* pwrite()/pread() until done; a file that ends early is -ENODATA. */
int erofs_pwrite_all(int fd, const void *buf, size_t len, uint64_t pos);
int erofs_pread_all(int fd, void *buf, size_t len, uint64_t pos);

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
/* Copies len bytes of src_fd from src_pos to pos; a source that ends early
 * is -ENODATA, so the caller can name the file that shrank. */
int erofs_seq_copy(struct erofs_seq_writer *w, uint64_t pos, int src_fd, uint64_t src_pos,
		   uint64_t len);
int erofs_seq_flush(struct erofs_seq_writer *w);
void erofs_seq_release(struct erofs_seq_writer *w);

#endif
