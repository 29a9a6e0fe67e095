// SPDX-License-Identifier: MIT
/* Whole-file deduplication (see include/erofs/dedup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "erofs/dedup.h"
#include "erofs/diag.h"
#include "erofs/tree.h"

#define HASH_BUFFER (1u << 20)

struct candidate {
	struct erofs_inode *inode;
	uint32_t order;		/* position in plan order: the first one keeps the data */
	XXH128_hash_t hash;
};

static int by_size_then_order(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->inode->size != y->inode->size)
		return x->inode->size < y->inode->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_size_hash_order(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->inode->size != y->inode->size)
		return x->inode->size < y->inode->size ? -1 : 1;
	if (x->hash.high64 != y->hash.high64)
		return x->hash.high64 < y->hash.high64 ? -1 : 1;
	if (x->hash.low64 != y->hash.low64)
		return x->hash.low64 < y->hash.low64 ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int open_or_report(const struct erofs_build_options *opts,
			  const struct erofs_tree *tree, const struct erofs_inode *inode)
{
	int fd = erofs_tree_open_file(tree, inode, NULL);

	if (fd < 0) {
		int err = errno;

		erofs_err("%s/%s: cannot open: %s", opts->source, inode->path,
			  erofs_tree_open_error(err));
		return -err;
	}
	return fd;
}

static int hash_file(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		     struct candidate *c, uint8_t *buf)
{
	XXH3_state_t *state = XXH3_createState();
	uint64_t done = 0;
	int fd, err = 0;

	if (!state)
		return -ENOMEM;
	fd = open_or_report(opts, tree, c->inode);
	if (fd < 0) {
		XXH3_freeState(state);
		return fd;
	}
	XXH3_128bits_reset(state);
	while (done < c->inode->size) {
		ssize_t n = pread(fd, buf, HASH_BUFFER, (off_t)done);

		if (n <= 0) {
			err = n ? errno : ENODATA;
			erofs_err("%s/%s: cannot read: %s", opts->source, c->inode->path,
				  n ? strerror(err) : "file shrank during the build");
			break;
		}
		XXH3_128bits_update(state, buf, (size_t)n);
		done += (uint64_t)n;
	}
	c->hash = XXH3_128bits_digest(state);
	XXH3_freeState(state);
	close(fd);
	return -err;
}

/* A hash match is confirmed byte by byte before data is shared. */
static int same_bytes(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		      const struct erofs_inode *a, const struct erofs_inode *b, uint8_t *buf)
{
	int fa = open_or_report(opts, tree, a), fb;
	uint64_t done = 0;
	int result = 1;

	if (fa < 0)
		return fa;
	fb = open_or_report(opts, tree, b);
	if (fb < 0) {
		close(fa);
		return fb;
	}
	while (result == 1 && done < a->size) {
		size_t half = HASH_BUFFER / 2;
		size_t want = a->size - done < half ? (size_t)(a->size - done) : half;
		ssize_t na = pread(fa, buf, want, (off_t)done);
		ssize_t nb = pread(fb, buf + half, want, (off_t)done);

		if (na != (ssize_t)want || nb != (ssize_t)want)
			result = 0;	/* changed under us: do not share; the writer reports it */
		else if (memcmp(buf, buf + half, want))
			result = 0;
		done += want;
	}
	close(fa);
	close(fb);
	return result;
}

int erofs_dedup_files(const struct erofs_build_options *opts, struct erofs_tree *tree,
		      struct erofs_dedup_stats *stats)
{
	struct candidate *all;
	uint32_t n = 0, kept = 0;
	uint8_t *buf;
	int err = 0;

	memset(stats, 0, sizeof(*stats));
	all = malloc((tree->nr_inodes ? tree->nr_inodes : 1) * sizeof(*all));
	buf = malloc(HASH_BUFFER);
	if (!all || !buf) {
		free(all);
		free(buf);
		return -ENOMEM;
	}
	/* a file within one block has no block to share: its data is inline */
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		if (S_ISREG(tree->inodes[i]->mode) &&
		    tree->inodes[i]->size > 1u << opts->blkszbits)
			all[n++] = (struct candidate){ .inode = tree->inodes[i], .order = i };

	/* only files that share their size with another one are read */
	qsort(all, n, sizeof(*all), by_size_then_order);
	for (uint32_t i = 0; i < n && !err; i++) {
		bool alone = (i == 0 || all[i - 1].inode->size != all[i].inode->size) &&
			     (i + 1 == n || all[i + 1].inode->size != all[i].inode->size);

		if (alone)
			continue;
		err = hash_file(opts, tree, &all[i], buf);
		all[kept++] = all[i];
	}
	qsort(all, kept, sizeof(*all), by_size_hash_order);
	for (uint32_t start = 0, end; start < kept && !err; start = end) {
		for (end = start + 1; end < kept && all[end].inode->size == all[start].inode->size &&
				      XXH128_isEqual(all[end].hash, all[start].hash); end++) {
			/* all[start] comes first in plan order within the run */
			int same = same_bytes(opts, tree, all[start].inode, all[end].inode, buf);

			if (same < 0) {
				err = same;
				break;
			}
			if (same) {
				all[end].inode->same_data = all[start].inode;
				stats->files++;
				stats->bytes += all[end].inode->size;
			}
		}
	}
	free(all);
	free(buf);
	return err;
}
