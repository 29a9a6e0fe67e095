/* SPDX-License-Identifier: MIT */
/*
 * Reading one EROFS image as a layer of a build (rebuild mode's merge,
 * --incremental's base and copy-up): the reader opened on it with all its
 * checks, the path of the entry being read for messages ("LAYER: /PATH:
 * REASON"), and an inode's attributes, payload and bytes in mkfs's terms.
 */
#ifndef EROFS_IMGLAYER_H
#define EROFS_IMGLAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/build.h"
#include "erofs/read/rdopen.h"
#include "erofs/read/reader.h"
#include "erofs/source/inode.h"

#define EROFS_LAYER_COPY_BUFFER	(1u << 20)

struct erofs_xattr_set;

struct erofs_layer {
	const struct erofs_build_options *opts;
	const char *name;		/* the image, for messages */
	struct erofs_rd_source src;
	struct erofs_reader r;
	bool open;
	char *path;			/* the entry being read, "" for the root */
	size_t path_len, path_cap;
	uint8_t *buf;			/* EROFS_LAYER_COPY_BUFFER bytes, made on demand */
};

/* Opens name through the reader's checks: 0, or -errno (reported). */
int erofs_layer_open(struct erofs_layer *l, const struct erofs_build_options *opts,
		     const char *name);
/* Closes the image; the path and buffer stay for the next one. */
void erofs_layer_close(struct erofs_layer *l);
/* Frees the path and buffer too. */
void erofs_layer_release(struct erofs_layer *l);

/* Reports "LAYER: /PATH: why" and returns err. */
int erofs_layer_error(struct erofs_layer *l, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Reports the reader's last error the same way: -EINVAL, -EOPNOTSUPP or -ENOMEM. */
int erofs_layer_reader_failed(struct erofs_layer *l, int err);

/* The path grows by a name while an entry is read: *mark undoes it. */
int erofs_layer_path_push(struct erofs_layer *l, const char *name, size_t len, size_t *mark);
void erofs_layer_path_pop(struct erofs_layer *l, size_t mark);

/* The entries of one directory of a layer, read before any is used. */
struct erofs_layer_entries {
	struct erofs_layer_entry {
		uint64_t nid;
		uint32_t name_at;	/* in names, not NUL-terminated */
		uint16_t len;
		uint8_t type;		/* EROFS_FT_* as the entry says */
	} *e;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
};

/* erofs_dir_iterate()'s callback: appends the entry to the list at arg. */
int erofs_layer_collect(void *arg, const struct erofs_rd_dentry *de);
void erofs_layer_entries_free(struct erofs_layer_entries *l);

/* vi's xattrs as a new set (NULL: none; -x -1: none read), and whether it
 * is an opaque directory; --ovlfs-strip=1 drops empty overlay origins. */
int erofs_layer_xattrs(struct erofs_layer *l, const struct erofs_rd_inode *vi,
		       struct erofs_xattr_set **set, bool *opaque);
/* What a non-directory holds besides data: a symlink's target, a device's
 * numbers; a regular file's size (its data is for the caller). */
int erofs_layer_leaf(struct erofs_layer *l, const struct erofs_rd_inode *vi,
		     struct erofs_inode *inode);
/* Writes [off, off + len) of vi's bytes to fd at pos + off; blocks of
 * zeros are skipped (holes) when the file at fd reads zeros there. */
int erofs_layer_copy(struct erofs_layer *l, const struct erofs_rd_inode *vi, uint64_t off,
		     uint64_t len, int fd, uint64_t pos);

/*
 * Whether path is an EROFS image (1), something else (0), or cannot be
 * read (-errno, reported); *blkszbits gets its block size.  Rebuild mode
 * takes the first layer's block size unless -b says otherwise.
 */
int erofs_layer_probe(const char *path, unsigned int *blkszbits);

#endif
