/* SPDX-License-Identifier: MIT */
/*
 * Reading tar streams (ustar, GNU, PAX), from a file or a pipe, plain or
 * through gzip, xz or zstd, strictly forward: nothing is read twice, so a
 * pipe works.  The parser knows nothing of EROFS: it yields one entry at a
 * time, with every header extension (GNU long names, PAX records, global
 * PAX headers) already applied, and where the entry's data lies in the
 * decoded stream.  Every malformed input is reported once, naming the
 * entry (when its name is known) and the offset of its header, and the
 * reader stops.
 *
 * Use:
 *	erofs_tar_open(&t, fd, decoder, "layer.tar");
 *	while ((ret = erofs_tar_next(t, &e)) > 0) {
 *		... e.data_offset, e.size ...
 *		erofs_tar_read_data(t, buf, n);  (optional, in order, at most e.size bytes)
 *	}
 *	erofs_tar_close(t);
 * Data not read is skipped by the next erofs_tar_next() (with lseek on a
 * seekable plain file).
 */
#ifndef EROFS_TAR_H
#define EROFS_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/source/tarpax.h"

struct erofs_tar_entry {
	char *path;		/* as archived ("./" and "/" kept); never empty */
	char *link;		/* symlink target or hard link's path; NULL otherwise */
	char type;		/* '0' file, '1' hard link, '2' symlink, '3' char, '4' block,
				 * '5' directory, '6' FIFO (others are normalized to these) */
	uint32_t mode;		/* permission bits only (07777) */
	uint32_t uid, gid;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint32_t rdev_major, rdev_minor;
	uint64_t size;		/* the file's data bytes ('0' only; 0 for the others) */
	uint64_t header_offset;	/* where the entry's first header block starts */
	uint64_t data_offset;	/* where its data starts, in the decoded stream */
	struct erofs_tar_xattr *xattrs;	/* PAX SCHILY.xattr.* / LIBARCHIVE.xattr.* */
	size_t nr_xattrs;
	/* GNU sparse files (old GNU headers, PAX 0.0, 0.1 and 1.0): size is the
	 * file's, the stream holds only these segments, in order, from
	 * data_offset on; NULL for the others */
	const struct erofs_tar_sparse *sparse;
	size_t nr_sparse;
};

struct erofs_tar;

/*
 * Starts reading fd (not closed by the reader).  `name` names the input in
 * messages.  0 or -errno (reported).
 */
int erofs_tar_open(struct erofs_tar **out, int fd, enum erofs_tar_decoder decoder,
		   const char *name);

/*
 * The next entry into *e (its strings owned by the reader until the next
 * call): 1, or 0 at the end of the archive, or -errno (reported).
 */
int erofs_tar_next(struct erofs_tar *t, struct erofs_tar_entry *e);

/* Reads the current entry's next len bytes of data: 0 or -errno (reported). */
int erofs_tar_read_data(struct erofs_tar *t, void *buf, size_t len);

/*
 * Whether the entries' data can be read in place at data_offset + the
 * returned base in fd itself (a plain, seekable input): then *base is the
 * file offset of the stream's first byte.
 */
bool erofs_tar_in_place(const struct erofs_tar *t, uint64_t *base);

/* Reads the input to its end (the archive's padding after its end marker);
 * the stream's decoded bytes in all, as the tar file would have them. */
int erofs_tar_drain(struct erofs_tar *t, uint64_t *total);
/* --ungzip=FILE, --unxz=FILE: the decoded stream is also written to fd. */
void erofs_tar_dump_decoded(struct erofs_tar *t, int fd);
/* --tar=headerball: no file data follows the headers (extension records do);
 * a sparse entry is refused, having no map to follow. */
void erofs_tar_headers_only(struct erofs_tar *t);
void erofs_tar_close(struct erofs_tar *t);

#endif
