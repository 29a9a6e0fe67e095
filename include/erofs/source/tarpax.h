/* SPDX-License-Identifier: MIT */
/*
 * Inside the tar parser (lib/source/tar.c): what extension headers (PAX records,
 * GNU long names, sparse maps) say about the next entry, and the PAX
 * record parser (lib/source/tarpax.c).  Not for other callers: see tar.h.
 */
#ifndef EROFS_TARPAX_H
#define EROFS_TARPAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An xattr of an entry (PAX SCHILY.xattr.* / LIBARCHIVE.xattr.*). */
struct erofs_tar_xattr {
	char *name;		/* full name, "security.selinux" */
	uint8_t *value;
	size_t value_len;
};

/* A sparse file's data segment: its bytes are stored in the stream back to
 * back with the other segments'; the rest of the file reads as zeros. */
struct erofs_tar_sparse {
	uint64_t offset, len;
};

#define EROFS_TAR_SPARSE_MAX	(1u << 20)	/* segments: 16 MiB of map at most */

/* What PAX records (or GNU long-name headers) say about an entry. */
struct erofs_tar_ext {
	char *path, *link;
	bool has_size, has_uid, has_gid, has_mtime, has_major, has_minor;
	uint64_t size;
	uint32_t uid, gid, major, minor;
	int64_t mtime;
	uint32_t mtime_nsec;
	struct erofs_tar_xattr *xattrs;
	size_t nr_xattrs;
	/* GNU sparse: the file's size, its segments (PAX 0.0 gives them key by key) */
	bool sparse, sparse_map_in_data, has_sparse_offset;
	uint64_t sparse_size, sparse_offset;
	char *sparse_name;
	struct erofs_tar_sparse *map;
	size_t nr_map;
};

void erofs_tar_ext_free(struct erofs_tar_ext *e);
/* Puts an xattr, replacing one of that name: 0 or -ENOMEM. */
int erofs_tar_ext_put_xattr(struct erofs_tar_ext *e, const char *name, size_t name_len,
			    const uint8_t *value, size_t len);
/* Appends a sparse segment: 0, -EINVAL past EROFS_TAR_SPARSE_MAX, -ENOMEM. */
int erofs_tar_ext_add_segment(struct erofs_tar_ext *e, uint64_t offset, uint64_t len);
/*
 * Parses "LEN KEY=VALUE\n" records (LEN counting the whole record) into e;
 * global: a 'g' header (no path, linkpath, size or sparse map).  Errors are
 * reported naming the input and the header's offset.
 */
int erofs_tar_parse_pax(struct erofs_tar_ext *e, bool global, const char *buf, size_t size,
			const char *name, uint64_t at);

#endif
