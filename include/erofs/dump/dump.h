/* SPDX-License-Identifier: MIT */
/*
 * dump.erofs's library half: the superblock (lib/dump/dumpsb.c), a walk of the
 * tree in directory order (lib/dump/dumpwalk.c), statistics (lib/dump/dumpstat.c) and
 * one inode's details, listing, extents and xattrs (lib/dump/dumpinode.c).
 *
 * Output goes to d->out in erofs-utils 1.9.4's line formats, so that
 * scripts written for its dump.erofs parse ours.  Everything comes from
 * the reader (include/erofs/read/reader.h), which checks every value it takes
 * from the image; names are printed through erofs_fput_escaped().  On
 * failure a function returns a negative errno with a one-line reason in
 * d->err (naming the path or nid) and the caller prints it.
 */
#ifndef EROFS_DUMP_H
#define EROFS_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "erofs/read/reader.h"

#define EROFS_DUMP_ERRLEN	512u

struct erofs_dump {
	struct erofs_reader *r;
	FILE *out;
	char err[EROFS_DUMP_ERRLEN];
};

struct eforge_image;

/* The parent of an inode whose directory is not known (--nid). */
#define EROFS_DUMP_PARENT_UNKNOWN	EROFS_NID_UNKNOWN

/* Sets d up to show the image open in img (eforge_open_flags()) on out. */
void erofs_dump_init(struct erofs_dump *d, struct eforge_image *img, FILE *out);

/* Records a failure in d->err; returns err. */
int erofs_dump_fail(struct erofs_dump *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Records the reader's last error behind a prefix ("/a/b: ..."). */
int erofs_dump_reader_fail(struct erofs_dump *d, int err, const char *what, uint64_t nid);

/* ---- superblock (-s) ---- */

/* Bytes of the image's start that erofs_dump_super() reads: the
 * superblock, its extension slots and the compression configs after it. */
#define EROFS_DUMP_SB_BYTES	8192u

/* Prints the superblock from the first len bytes of the image (len is
 * min(image size, EROFS_DUMP_SB_BYTES)).  Needs no reader, so images the
 * reader refuses (newer features, other algorithms, extra devices) are
 * still shown; a bad magic, block size, checksum or configuration record
 * is refused with -EUCLEAN. */
int erofs_dump_super(FILE *out, const uint8_t *head, size_t len, char *err, size_t errlen);
/* The same from the image at byte offset of the file at path (dump.erofs
 * -s): 0; -EUCLEAN when its bytes are no superblock this can show; another
 * negative errno when the file cannot be opened or read, the offset lies
 * past its end, or memory runs out.  err names path and says why. */
int erofs_dump_super_file(FILE *out, const char *path, uint64_t offset, char *err,
			  size_t errlen);

/* ---- the walk ---- */

struct erofs_dump_visit {
	const struct erofs_rd_inode *vi;	/* the entry's inode, loaded and checked */
	uint64_t parent_nid;
	const char *name;			/* not NUL-terminated; "" for the root */
	unsigned int namelen;
	const char *path;			/* "/a/b", NUL-terminated, raw bytes */
	size_t pathlen;
};

/* Return 0 to go on, 1 to stop the walk (returned), a negative errno to fail. */
typedef int (*erofs_dump_visit_fn)(void *arg, const struct erofs_dump_visit *v);

/* Visits the root, then every directory entry depth first in on-disk
 * order (a directory's entries right after it), as erofs-utils does;
 * hard links are visited once per name.  A directory reached twice is
 * corruption (-EUCLEAN), so the walk ends on any image. */
int erofs_dump_walk(struct erofs_dump *d, erofs_dump_visit_fn fn, void *arg);

/* The first path naming nid in walk order (malloc'd, raw bytes) in *path
 * and the directory holding it in *parent (the root: itself); *path NULL
 * when no directory names it.  0 or a negative errno. */
int erofs_dump_find_path(struct erofs_dump *d, uint64_t nid, char **path, uint64_t *parent);

/* Resolves an absolute or root-relative path ("/a/b", "a/b", "/"). */
int erofs_dump_lookup(struct erofs_dump *d, const char *path, uint64_t *nid);

/* ---- statistics (-S) ---- */

int erofs_dump_statistics(struct erofs_dump *d);

/* "regular file", "directory", ... as erofs-utils names file types. */
const char *erofs_dump_ftype_name(uint16_t mode);

/* ---- one inode (--path, --nid) ---- */

#define EROFS_DUMP_LS		0x1u	/* --ls: the directory's entries */
#define EROFS_DUMP_EXTENTS	0x2u	/* -e: logical and physical extents */
#define EROFS_DUMP_XATTRS	0x4u	/* -x: extended attributes */

/* Prints the inode at nid; shown is the path to print ("(packed file)",
 * "(not found)", or the path found); parent is the directory holding it,
 * which its ".." must name (EROFS_NID_UNKNOWN: unknown). */
int erofs_dump_inode(struct erofs_dump *d, uint64_t nid, const char *shown, uint64_t parent,
		     unsigned int what);

/* --cat: writes the file's data to d->out. */
int erofs_dump_cat(struct erofs_dump *d, uint64_t nid);

/* The compatible and incompatible features by erofs-utils' names, each
 * followed by a space (fsck.erofs -p shows them too). */
void erofs_dump_feature_names(FILE *out, uint32_t compat, uint32_t incompat);

#endif
