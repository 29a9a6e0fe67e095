/* SPDX-License-Identifier: MIT */
/*
 * Extraction of an image's tree into a host directory (fsck.erofs --extract).
 *
 * Safety contract: nothing is ever created, changed or followed outside the
 * target directory.  Every operation is relative to a directory descriptor
 * opened with O_DIRECTORY|O_NOFOLLOW (openat, mkdirat, symlinkat, linkat,
 * mknodat, ...); names are single components ('/' and "."/".." refused);
 * new files are created with O_EXCL|O_NOFOLLOW, so a symlink extracted
 * earlier (or planted beforehand) can never redirect a later write.  An
 * existing entry is replaced only with the overwrite option.
 *
 * Each function reports its own failures (erofs_err/erofs_warn naming the
 * path) and returns 0 or a negative errno; the counters in the extractor
 * tell how many errors and warnings were printed.  A regular file whose
 * data cannot be read is removed again: nothing empty or cut short is left
 * to pass for it.
 *
 * The image path in messages comes from a struct erofs_xpath, built only
 * when a message is printed: a walk of a deep tree need not keep paths.
 */
#ifndef EROFS_EXTRACT_H
#define EROFS_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "erofs/read/reader.h"

/* How the caller names the entry an extractor call works on. */
struct erofs_xpath {
	/* Writes the entry's image path into buf (escaped for a terminal,
	 * shortened to fit len bytes). */
	void (*show)(const struct erofs_xpath *self, char *buf, size_t len);
};

/* An erofs_xpath for a path the caller holds as a string. */
struct erofs_xpath_str {
	struct erofs_xpath base;
	const char *path;
};
const struct erofs_xpath *erofs_xpath_str(struct erofs_xpath_str *p, const char *path);

struct erofs_extract_opts {
	bool force;		/* allow a non-empty target and "/" */
	bool overwrite;		/* replace entries that already exist */
	bool preserve_owner;	/* chown to the image's uid/gid */
	bool preserve_perms;	/* exact mode incl. suid/sgid/sticky; else & ~umask */
	bool xattrs;		/* restore extended attributes */
};

struct erofs_extractor {
	struct erofs_reader *r;
	struct erofs_extract_opts o;
	int rootfd;
	char leaf[256];		/* erofs_extract_open_leaf(): the name in rootfd */
	mode_t umask;
	/*
	 * A new file below rootfd gets owner euid:egid and exactly the
	 * mode it is created with (less the umask): the target was empty,
	 * not set-group-ID, with no default ACL, and its group is egid, so
	 * the directories made inside it are the same until their own
	 * metadata is applied, after their entries.
	 */
	bool fresh;
	uid_t euid;
	gid_t egid;
	uint8_t *buf;		/* data copy buffer */
	size_t bufsz;
	unsigned long errors, warnings;
	/* Called before a message is printed (fsck's job queue drains). */
	void (*before_print)(void *arg);
	void *before_print_arg;
};

/*
 * Extracting regular files on worker threads: each worker has its own
 * reader (a clone, erofs_reader_clone()) and copy buffer, and its
 * messages are kept in a log, without the path, until the walk prints
 * them in order with erofs_xlog_flush() (which also adds its counts to
 * the extractor's).
 */
struct erofs_xworker {
	struct erofs_reader *r;
	uint8_t *buf;
	size_t bufsz;
};

struct erofs_xlog {
	char *buf;		/* level byte, text, NUL; repeated */
	size_t len, cap;
	unsigned long errors, warnings;
};

int erofs_xworker_init(struct erofs_xworker *w, struct erofs_reader *r);
void erofs_xworker_fini(struct erofs_xworker *w);

/* erofs_extract_node() for a regular file, safe on any thread: x is only
 * read, and messages go to log. */
int erofs_extract_file_logged(const struct erofs_extractor *x, struct erofs_xworker *w,
			      int parentfd, const char *name, const struct erofs_rd_inode *vi,
			      struct erofs_xlog *log);
void erofs_xlog_flush(struct erofs_extractor *x, struct erofs_xlog *log,
		      const struct erofs_xpath *path);

/* Opens (creating it if missing) the target directory. */
int erofs_extract_open(struct erofs_extractor *x, struct erofs_reader *r,
		       const char *dir, const struct erofs_extract_opts *o);
/* For a single non-directory (fsck --path to a file): path itself is to
 * become the entry, as erofs_extract_node(x, x->rootfd, x->leaf, ...). */
int erofs_extract_open_leaf(struct erofs_extractor *x, struct erofs_reader *r,
			    const char *path, const struct erofs_extract_opts *o);
void erofs_extract_close(struct erofs_extractor *x);

/* A new descriptor on the target directory, standing for the image root. */
int erofs_extract_root(struct erofs_extractor *x);

/* Creates (or, with overwrite, reuses) directory name under parentfd and
 * returns a descriptor on it; its metadata is applied by dir_end, after
 * its children.  path names it in messages. */
int erofs_extract_dir_begin(struct erofs_extractor *x, int parentfd,
			    const char *name, const struct erofs_xpath *path);
/* Applies owner, xattrs, mode and mtime of vi to dirfd, then closes it. */
int erofs_extract_dir_end(struct erofs_extractor *x, int dirfd, const struct erofs_xpath *path,
			  const struct erofs_rd_inode *vi);

/* Opens directory name of dirfd, made by an earlier dir_begin, again:
 * never through a symlink.  A descriptor, or a negative errno (nothing is
 * printed). */
int erofs_extract_reopen_dir(struct erofs_extractor *x, int dirfd, const char *name);

/* Opens the parent of dirfd again, which must still be the directory
 * (dev, ino) it was made as; -ESTALE if it is not. */
int erofs_extract_reopen_parent(struct erofs_extractor *x, int dirfd, uint64_t dev, uint64_t ino);

/* Regular file, symlink, device, fifo or socket, with all its metadata. */
int erofs_extract_node(struct erofs_extractor *x, int parentfd, const char *name,
		       const struct erofs_xpath *path, const struct erofs_rd_inode *vi);

/* Hard link name under parentfd to entry tname of directory tdirfd, where
 * the same inode was extracted first. */
int erofs_extract_hardlink(struct erofs_extractor *x, int parentfd, const char *name,
			   const struct erofs_xpath *path, int tdirfd, const char *tname);

#endif
