/* SPDX-License-Identifier: MIT */
/*
 * The image being written.  A regular file is created unnamed (O_TMPFILE)
 * in the target's directory and linked into place only when complete; where
 * the filesystem cannot do that, a named temporary file is used and removed
 * on failure and on SIGINT, SIGTERM and SIGHUP.  A block or character device
 * is written in place once the image is complete and known to fit: until
 * then it is built in a scratch file in $TMPDIR (or /var/tmp), so a device
 * too small, or a build that fails, leaves the device as it was.  A
 * symlinked target keeps its link: the image replaces what it points at.
 *
 * Data is laid out first, block after block, as the pipeline commits it:
 * erofs_image_alloc() hands out the next blocks and erofs_image_rewind()
 * takes back the latest ones (a file that turned out to be stored another
 * way).  Metadata follows the data once it is planned.
 */
#ifndef EROFS_IMAGE_H
#define EROFS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct erofs_image {
	int fd;
	const char *final_path;	/* as the user named it, for messages */
	char *target_path;	/* what the image replaces */
	char *tmp_path;		/* a named temporary file, when O_TMPFILE failed */
	bool in_place;		/* a device, or --offset: fd is the scratch file, device_fd
				 * the output (for a file, opened at commit) */
	int device_fd;
	uint64_t offset;	/* --offset: the image starts this many bytes in */
	unsigned int blkszbits;
	uint32_t next_blk;	/* the first block no data holds yet */
	uint64_t written_end;	/* bytes below this may hold data written earlier */
	uint64_t size;		/* the final size, once set */
	int error;		/* first write error, already reported */
	bool append;		/* --incremental: fd is the old image itself, added to */
	uint64_t append_from;	/* its size before: what an abort truncates back to */
	struct erofs_image *blob;	/* --blobdev: where chunks go; NULL: here */
};

/*
 * Opens the output; blocks from first_blk on are the data area.  With an
 * offset (mkfs --offset), the image is built aside and written offset bytes
 * into final_path at commit, a regular file being truncated first (zeros
 * before the image), as erofs-utils writes it.
 */
int erofs_image_open(struct erofs_image *img, const char *final_path, uint64_t offset,
		     unsigned int blkszbits, uint32_t first_blk);
/*
 * --incremental: opens the existing image final_path to add to it.  Its
 * bytes stay as they are while new blocks are written from first_blk on,
 * and the superblock, written last, is the commit: before it the old image
 * is whole.  An abort, a failed write or SIGINT, SIGTERM or SIGHUP puts
 * back its first block and its size, leaving it byte for byte as it was.
 */
int erofs_image_open_append(struct erofs_image *img, const char *final_path,
			    unsigned int blkszbits, uint32_t first_blk);
/* Sets the final size (blocks not written read as zeros). */
int erofs_image_resize(struct erofs_image *img, uint64_t size);
/*
 * Makes the image visible under its name (a device: checks that it holds
 * the image, then writes it there); on failure it is removed and a device
 * is left as it was, unless writing to it failed.
 */
int erofs_image_commit(struct erofs_image *img);
/* Removes the unfinished image; safe to call on any state. */
void erofs_image_abort(struct erofs_image *img);

/* The next n data blocks; -EFBIG (reported) past 2^32 blocks. */
int erofs_image_alloc(struct erofs_image *img, uint32_t n, uint32_t *blk);
/* Takes back every data block from blk on (they will be written again). */
void erofs_image_rewind(struct erofs_image *img, uint32_t blk);

/* Writes len bytes at pos; errors are reported once, naming the image. */
int erofs_image_pwrite(struct erofs_image *img, const void *buf, size_t len, uint64_t pos);
/*
 * --incremental: writes over bytes of the image added to, which a failure
 * or signal before the commit puts back (the old bytes are kept).
 */
int erofs_image_overwrite(struct erofs_image *img, const void *buf, size_t len, uint64_t pos);
/* Reads back bytes written earlier. */
int erofs_image_pread(struct erofs_image *img, void *buf, size_t len, uint64_t pos);
/* Makes [pos, pos + len) read as zeros without writing data where it can (a hole). */
int erofs_image_zero(struct erofs_image *img, uint64_t pos, uint64_t len);
/*
 * Copies len bytes of src_fd from src_pos to pos: inside the kernel where
 * it can (copy_file_range), holes of the source kept as holes.  A source
 * that ends early is -ENODATA and one that fails to read -EIO-like, both
 * unreported (the caller names the file); image errors are reported.
 */
int erofs_image_copy(struct erofs_image *img, uint64_t pos, int src_fd, uint64_t src_pos,
		     uint64_t len);

#endif
