// SPDX-License-Identifier: MIT
/*
 * The image reader's directories: one block's entries parsed and checked
 * (names, sorting, "." and ".."), and whole directories iterated.
 *
 * Written for erofs-forge from Documentation/filesystems/erofs.rst; see
 * reader.h for the error convention.  Moved out of the old reader.c unchanged but
 * for DOT_OMITTED directories (48-bit), whose "." is not stored.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/diag.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/zread.h"

#define EFSCORRUPTED	EUCLEAN
#define fail	erofs_reader_fail

static int errf(char *buf, size_t len, int err, const char *fmt, ...)
	EROFS_PRINTF(4, 5);

static int errf(char *buf, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (buf && len) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* directories                                                         */

void erofs_dir_cursor_init(struct erofs_dir_cursor *cur, uint64_t dir_nid,
			   uint64_t parent_nid)
{
	memset(cur, 0, sizeof(*cur));
	cur->dir_nid = dir_nid;
	cur->parent_nid = parent_nid;
}

int erofs_dirblock_parse(const uint8_t *blk, unsigned int maxsize,
			 unsigned int blksz, struct erofs_dir_cursor *cur,
			 erofs_dirent_fn fn, void *arg, char *err, size_t errlen)
{
	unsigned int nameoff0, n, j;
	char pn[80], pp[80];

	if (maxsize > blksz)
		return errf(err, errlen, -EINVAL, "block %" PRIu64 ": size %u above block size",
			    cur->blkno, maxsize);
	if (maxsize < EROFS_DIRENT_SIZE)
		return errf(err, errlen, -EFSCORRUPTED,
			    "directory block %" PRIu64 ": %u bytes, too short for an entry",
			    cur->blkno, maxsize);
	nameoff0 = get_le16(blk + 8);
	if (nameoff0 < EROFS_DIRENT_SIZE || nameoff0 % EROFS_DIRENT_SIZE ||
	    nameoff0 >= maxsize)
		return errf(err, errlen, -EFSCORRUPTED,
			    "directory block %" PRIu64 ": invalid first nameoff %u",
			    cur->blkno, nameoff0);
	n = nameoff0 / EROFS_DIRENT_SIZE;

	for (j = 0; j < n; j++) {
		struct erofs_dirent de;
		struct erofs_rd_dentry d;
		unsigned int end, len, cmplen;
		const uint8_t *name;
		int cmp, ret;

		erofs_dirent_decode(blk + j * EROFS_DIRENT_SIZE, &de);
		if (j + 1 < n) {
			end = get_le16(blk + (j + 1) * EROFS_DIRENT_SIZE + 8);
			if (end <= de.nameoff || end > maxsize)
				return errf(err, errlen, -EFSCORRUPTED,
					    "directory block %" PRIu64 ", entry %u: bad nameoff %u (next %u, block holds %u bytes)",
					    cur->blkno, j, de.nameoff, end, maxsize);
		} else {
			if (de.nameoff >= maxsize)
				return errf(err, errlen, -EFSCORRUPTED,
					    "directory block %" PRIu64 ", entry %u: nameoff %u beyond the block (%u bytes)",
					    cur->blkno, j, de.nameoff, maxsize);
			end = de.nameoff;
			while (end < maxsize && blk[end])
				end++;
		}
		name = blk + de.nameoff;
		len = end - de.nameoff;
		if (len == 0)
			return errf(err, errlen, -EFSCORRUPTED,
				    "directory block %" PRIu64 ", entry %u: empty name",
				    cur->blkno, j);
		if (len > EROFS_NAME_LEN)
			return errf(err, errlen, -EFSCORRUPTED,
				    "directory block %" PRIu64 ", entry %u: name of %u bytes (max %u)",
				    cur->blkno, j, len, EROFS_NAME_LEN);
		if (memchr(name, '\0', len))
			return errf(err, errlen, -EFSCORRUPTED,
				    "directory block %" PRIu64 ", entry %u: name '%s' contains a NUL byte",
				    cur->blkno, j, erofs_escape(pn, sizeof(pn), name, len));
		if (memchr(name, '/', len))
			return errf(err, errlen, -EFSCORRUPTED,
				    "directory block %" PRIu64 ", entry %u: name '%s' contains '/'",
				    cur->blkno, j, erofs_escape(pn, sizeof(pn), name, len));
		if (de.file_type >= EROFS_FT_MAX)
			return errf(err, errlen, -EFSCORRUPTED,
				    "directory entry '%s': invalid file type %u",
				    erofs_escape(pn, sizeof(pn), name, len), de.file_type);

		if (cur->nentries) {
			cmplen = cur->prevlen < len ? cur->prevlen : len;
			cmp = memcmp(cur->prev, name, cmplen);
			if (cmp > 0 || (cmp == 0 && cur->prevlen >= len))
				return errf(err, errlen, -EFSCORRUPTED,
					    cmp == 0 && cur->prevlen == len ?
					    "duplicate directory entry '%s' (previous '%s')" :
					    "directory entries not sorted: '%s' after '%s'",
					    erofs_escape(pn, sizeof(pn), name, len),
					    erofs_escape(pp, sizeof(pp), cur->prev, cur->prevlen));
		}
		memcpy(cur->prev, name, len);
		cur->prevlen = len;
		cur->nentries++;

		if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))) {
			bool dot = len == 1;
			uint64_t want = dot ? cur->dir_nid : cur->parent_nid;

			/* erofsfuse's lookups learn the parent from ".." */
			if (!dot && want == EROFS_NID_UNKNOWN)
				cur->parent_nid = want = de.nid;
			if (de.nid != want)
				return errf(err, errlen, -EFSCORRUPTED,
					    "'%s' points to nid %" PRIu64 ", expected %" PRIu64,
					    dot ? "." : "..", de.nid, want);
			if (de.file_type != EROFS_FT_DIR)
				return errf(err, errlen, -EFSCORRUPTED,
					    "'%s' has file type %u, not a directory",
					    dot ? "." : "..", de.file_type);
			if (dot)
				cur->seen_dot = true;
			else
				cur->seen_dotdot = true;
			if (!(cur->flags & EROFS_DIR_WITH_DOTS))
				continue;
		}
		if (!fn)
			continue;
		d.nid = de.nid;
		d.name = (const char *)name;
		d.namelen = len;
		d.file_type = de.file_type;
		ret = fn(arg, &d);
		if (ret)
			return ret;
	}
	return 0;
}

int erofs_dir_cursor_finish(const struct erofs_dir_cursor *cur, char *err,
			    size_t errlen)
{
	if (!cur->seen_dot)
		return errf(err, errlen, -EFSCORRUPTED, "directory has no '.' entry");
	if (!cur->seen_dotdot)
		return errf(err, errlen, -EFSCORRUPTED, "directory has no '..' entry");
	return 0;
}

int erofs_dir_iterate(struct erofs_reader *r, const struct erofs_rd_inode *dir,
		      uint64_t parent_nid, erofs_dirent_fn fn, void *arg)
{
	return erofs_dir_iterate_flags(r, dir, parent_nid, 0, fn, arg);
}

int erofs_dir_iterate_flags(struct erofs_reader *r, const struct erofs_rd_inode *dir,
			    uint64_t parent_nid, unsigned int flags, erofs_dirent_fn fn, void *arg)
{
	struct erofs_dir_cursor cur;
	uint8_t *blk;
	uint64_t pos;
	int err = 0;

	if (!S_ISDIR(dir->di.mode))
		return fail(r, -ENOTDIR, "not a directory");
	blk = malloc(r->blksz);
	if (!blk)
		return fail(r, -ENOMEM, "out of memory");
	erofs_dir_cursor_init(&cur, dir->nid, parent_nid);
	cur.flags = flags;
	cur.seen_dot = dir->dot_omitted;	/* 48-bit DOT_OMITTED: no "." to find */
	for (pos = 0; pos < dir->size; pos += r->blksz) {
		unsigned int maxsize = dir->size - pos < r->blksz ?
				       (unsigned int)(dir->size - pos) : r->blksz;

		err = erofs_read_data(r, dir, blk, maxsize, pos);
		if (err)
			break;
		cur.blkno = pos >> r->blkszbits;
		err = erofs_dirblock_parse(blk, maxsize, r->blksz, &cur, fn, arg,
					   r->err, sizeof(r->err));
		if (err)
			break;
	}
	if (!err)
		err = erofs_dir_cursor_finish(&cur, r->err, sizeof(r->err));
	free(blk);
	return err;
}

