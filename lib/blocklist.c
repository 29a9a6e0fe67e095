// SPDX-License-Identifier: MIT
/* --block-list-file: per-file block ranges (see include/erofs/blocklist.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/android.h"
#include "erofs/blocklist.h"
#include "erofs/chunk.h"
#include "erofs/diag.h"
#include "erofs/format.h"

/* Prints the file's extents, merging those that continue each other. */
struct ranges {
	FILE *f;
	uint64_t start, count;		/* the pending range; count 0: none */
};

static void range_flush(struct ranges *r)
{
	if (!r->count)
		return;
	if (r->count == 1)
		fprintf(r->f, " %llu", (unsigned long long)r->start);
	else
		fprintf(r->f, " %llu-%llu", (unsigned long long)r->start,
			(unsigned long long)(r->start + r->count - 1));
	r->count = 0;
}

static void range_add(struct ranges *r, uint64_t start, uint64_t count)
{
	if (!count)
		return;
	if (r->count && r->start + r->count == start) {
		r->count += count;
		return;
	}
	range_flush(r);
	r->start = start;
	r->count = count;
}

static bool has_blocks(const struct erofs_inode *inode)
{
	if (inode->chunks) {
		for (uint32_t i = 0; i < inode->chunks->count; i++)
			if (inode->chunks->blkaddr[i] != EROFS_NULL_ADDR)
				return true;
		return false;
	}
	return inode->nr_blocks && inode->blkaddr != EROFS_NULL_ADDR;
}

static void write_ranges(const struct erofs_plan *plan, const struct erofs_inode *inode,
			 struct ranges *r)
{
	const struct erofs_chunks *ch = inode->chunks;
	const unsigned int bits = plan->blkszbits;

	if (!ch) {
		/* plain, inline (the tail is in the inode's block, not listed) and
		 * compressed files (their pclusters) are one run of blocks */
		range_add(r, inode->blkaddr, inode->nr_blocks);
		return;
	}
	for (uint32_t i = 0; i < ch->count; i++) {
		uint64_t pos = (uint64_t)i << ch->chunkbits;
		uint64_t len = inode->size - pos;

		if (ch->blkaddr[i] == EROFS_NULL_ADDR)
			continue;	/* a hole: no block */
		if (len > 1ull << ch->chunkbits)
			len = 1ull << ch->chunkbits;
		range_add(r, ch->blkaddr[i], (len + (1u << bits) - 1) >> bits);
	}
}

int erofs_blocklist_write(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			  const struct erofs_plan *plan)
{
	const char *file = opts->block_list_file;
	char *mp = NULL, *tmp = NULL;
	FILE *f = NULL;
	struct stat st;
	bool created = false;
	int fd = -1, err;

	if (!file)
		return 0;
	if ((err = erofs_android_mount_point(opts, &mp)))
		goto out;
	/* a symlink, device or pipe (/dev/stdout, /dev/null) is written through,
	 * in place: renaming over it would replace it */
	if (!lstat(file, &st) && !S_ISREG(st.st_mode)) {
		if (!(f = fopen(file, "w"))) {
			err = -errno;
			erofs_err("%s: cannot open the block list: %s", file, strerror(-err));
			goto out;
		}
	} else if (asprintf(&tmp, "%s.tmp-XXXXXX", file) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	if (tmp) {
		fd = mkstemp(tmp);
		created = fd >= 0;
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			err = -errno;
			erofs_err("%s: cannot create the block list: %s", file, strerror(-err));
			goto out;
		}
		fd = -1;
	}
	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		const struct erofs_inode *inode = tree->inodes[i];
		struct ranges r = { .f = f };
		char *name, *path;

		if (!S_ISREG(inode->mode) || !has_blocks(inode))
			continue;
		path = erofs_inode_path(inode);
		name = path ? erofs_android_device_path(mp, path) : NULL;
		free(path);
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		fputs(name, f);
		free(name);
		write_ranges(plan, inode, &r);
		range_flush(&r);
		fputc('\n', f);
	}
	errno = 0;
	if (fflush(f) || ferror(f) || (tmp && fsync(fileno(f)))) {
		err = -(errno ? errno : EIO);
		erofs_err("%s: cannot write the block list: %s", file, strerror(-err));
		goto out;
	}
	/* mkstemp made it 0600: give it the usual mode for a new file */
	if (tmp) {
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fileno(f), 0666 & ~mask);
	}
	if (fclose(f)) {
		f = NULL;
		err = -errno;
		erofs_err("%s: cannot write the block list: %s", file, strerror(-err));
		goto out;
	}
	f = NULL;
	if (tmp && rename(tmp, file)) {
		err = -errno;
		erofs_err("%s: cannot create the block list: %s", file, strerror(-err));
	}
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (err && created)
		unlink(tmp);
	if (err == -ENOMEM)
		erofs_err("out of memory writing the block list");
	free(tmp);
	free(mp);
	return err;
}
