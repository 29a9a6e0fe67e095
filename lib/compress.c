// SPDX-License-Identifier: MIT
/*
 * Fixed-output-size LZ4/LZ4HC compression of regular files into the spool
 * (see include/erofs/compress.h).
 *
 * The rules every extent follows, so that a Linux 6.1 kernel can map it:
 * - an lcluster (one block) holds at most one extent head, so every extent
 *   but a file's last spans at least one block of input;
 * - a raw (uncompressed) pcluster is one block holding at most one block of
 *   input, its bytes from the start of the block;
 * - compressed bytes are right-aligned in their pcluster behind zeros (the
 *   0-padding feature lets the kernel find where they start);
 * - a pcluster of more than one block needs a non-head lcluster after its
 *   head, where the index records the block count;
 * - an extent decodes to at most EXTENT_INPUT_MAX bytes, far below the
 *   2047-lcluster reach of an index delta.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/compress.h"
#include "erofs/diag.h"
#include "erofs/format.h"
#include "erofs/io.h"
#include "erofs/tree.h"

#define EXTENT_INPUT_MAX	(4u << 20)
#define READ_WINDOW		(2 * EXTENT_INPUT_MAX)

struct compressor {
	const struct erofs_build_options *opts;
	uint32_t blksz;
	void *hc_state;
	uint8_t *window;	/* input: [0, window_len) holds file bytes from window_pos */
	uint64_t window_pos;
	size_t window_len;
	uint8_t *pcluster;	/* output of one pcluster */
	struct erofs_seq_writer spool;
	uint64_t spool_end;
};

/* Makes at least `want` bytes from file offset pos available in the window. */
static int fill_window(struct compressor *c, int fd, uint64_t pos, uint64_t size, size_t want)
{
	size_t skip = (size_t)(pos - c->window_pos);

	if (c->window_len - skip >= want)
		return 0;
	memmove(c->window, c->window + skip, c->window_len - skip);
	c->window_len -= skip;
	c->window_pos = pos;
	while (c->window_len < READ_WINDOW && c->window_pos + c->window_len < size) {
		uint64_t left = size - c->window_pos - c->window_len;
		size_t room = READ_WINDOW - c->window_len;
		ssize_t n = pread(fd, c->window + c->window_len, left < room ? (size_t)left : room,
				  (off_t)(c->window_pos + c->window_len));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;	/* the file shrank */
		c->window_len += (size_t)n;
	}
	return 0;
}

/* Fills one pcluster; returns the compressed length, 0 if nothing fits. */
static int compress_pcluster(struct compressor *c, const uint8_t *src, int *src_len)
{
	int cap = (int)c->opts->pcluster_size;

	if (c->opts->compressor == EROFS_COMPRESS_LZ4HC)
		return LZ4_compress_HC_destSize(c->hc_state, (const char *)src,
						(char *)c->pcluster, src_len, cap,
						c->opts->compress_level);
	return LZ4_compress_destSize((const char *)src, (char *)c->pcluster, src_len, cap);
}

static int add_extent(struct erofs_zinfo *zi, uint32_t *cap, uint64_t lofs, uint16_t nblks,
		      bool raw)
{
	if (zi->nr_extents == *cap) {
		uint32_t bigger_cap = *cap ? *cap * 2 : 16;
		struct erofs_zextent *bigger = realloc(zi->extents, bigger_cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		zi->extents = bigger;
		*cap = bigger_cap;
	}
	zi->extents[zi->nr_extents++] = (struct erofs_zextent){
		.lofs = lofs, .pblk = zi->nr_blocks, .nblks = nblks, .raw = raw,
	};
	zi->nr_blocks += nblks;
	return 0;
}

static uint64_t blocks_for(uint64_t bytes, uint32_t blksz)
{
	return (bytes + blksz - 1) / blksz;
}

/* Compresses one open file into the spool; the extents land in *zi. */
static int compress_file(struct compressor *c, int fd, uint64_t size, struct erofs_zinfo *zi)
{
	const uint32_t blksz = c->blksz;
	uint32_t cap = 0;
	uint64_t pos = 0;
	int err;

	zi->spool_pos = c->spool_end;
	c->window_pos = 0;
	c->window_len = 0;
	while (pos < size) {
		uint64_t left = size - pos;
		size_t want = left < EXTENT_INPUT_MAX ? (size_t)left : EXTENT_INPUT_MAX;
		const uint8_t *src;
		int src_len = (int)want, out_len;
		uint64_t nblks, raw_blocks;

		if ((err = fill_window(c, fd, pos, size, want)))
			return err;
		src = c->window + (pos - c->window_pos);
		out_len = compress_pcluster(c, src, &src_len);
		nblks = blocks_for((uint64_t)out_len, blksz);
		/* keep it only if it saves a block and can be indexed */
		if (out_len > 0 && nblks < blocks_for((uint64_t)src_len, blksz) &&
		    (nblks == 1 || (pos + (uint64_t)src_len) / blksz >= pos / blksz + 2)) {
			uint8_t *dst = erofs_seq_reserve(&c->spool, c->spool_end, nblks * blksz);

			if (!dst)
				return c->spool.error;
			memcpy(dst + nblks * blksz - (uint64_t)out_len, c->pcluster, (size_t)out_len);
			c->spool_end += nblks * blksz;
			if ((err = add_extent(zi, &cap, pos, (uint16_t)nblks, false)))
				return err;
			pos += (uint64_t)src_len;
			continue;
		}
		/* incompressible: raw blocks for what the compressor could not shrink */
		raw_blocks = out_len > 0 && (uint64_t)src_len >= blksz ? (uint64_t)src_len / blksz : 1;
		for (; raw_blocks && pos < size; raw_blocks--) {
			uint64_t len = size - pos < blksz ? size - pos : blksz;

			erofs_seq_write(&c->spool, c->spool_end, c->window + (pos - c->window_pos), len);
			c->spool_end += blksz;
			if ((err = add_extent(zi, &cap, pos, 1, true)))
				return err;
			pos += len;
		}
	}
	return c->spool.error;
}

void erofs_zinfo_free(struct erofs_zinfo *zi)
{
	if (zi)
		free(zi->extents);
	free(zi);
}

static int open_spool(const struct erofs_build_options *opts, struct erofs_spool *spool)
{
	/* beside the image: same filesystem as the copy target, not a tmpfs */
	char *dir = strdup(opts->image), *slash;
	char *path;
	int fd;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	fd = open(slash ? dir : ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (path = malloc(strlen(dir) + 32))) {
		sprintf(path, "%s/.erofs-spool-XXXXXX", slash ? dir : ".");
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
	}
	if (fd < 0) {
		int err = errno;

		erofs_err("%s: cannot create a temporary file beside the image: %s",
			  slash ? dir : ".", strerror(err));
		free(dir);
		return -err;
	}
	free(dir);
	spool->fd = fd;
	spool->size = 0;
	return 0;
}

void erofs_spool_close(struct erofs_spool *spool)
{
	if (spool->fd >= 0)
		close(spool->fd);
	spool->fd = -1;
}

/* Whether a compressed layout beats the plain one (full blocks plus an inline tail). */
static bool worth_it(const struct erofs_build_options *opts, const struct erofs_inode *inode,
		     const struct erofs_zinfo *zi)
{
	uint32_t meta = 64 + inode->xattr_size;	/* an upper bound of the core */

	return (uint64_t)zi->nr_blocks * (1u << opts->blkszbits) +
	       erofs_zindex_size(opts, meta, inode->size) < inode->size;
}

static int compress_inode(struct compressor *c, const struct erofs_tree *tree,
			  struct erofs_inode *inode)
{
	const char *src = c->opts->source;
	struct erofs_zinfo *zi;
	struct stat st;
	int fd, err;

	fd = erofs_tree_open_file(tree, inode);
	if (fd < 0) {
		err = errno;
		erofs_err("%s/%s: cannot open: %s", src, inode->path, strerror(err));
		return -err;
	}
	zi = calloc(1, sizeof(*zi));
	err = zi ? compress_file(c, fd, inode->size, zi) : -ENOMEM;
	if (err == -ENODATA)
		erofs_err("%s/%s: file shrank during the build", src, inode->path);
	else if (err && !c->spool.error && err != -ENOMEM)
		erofs_err("%s/%s: cannot read: %s", src, inode->path, strerror(-err));
	else if (!err && (fstat(fd, &st) || (uint64_t)st.st_size != inode->size)) {
		erofs_err("%s/%s: file changed size during the build", src, inode->path);
		err = -EAGAIN;
	}
	close(fd);
	if (!err && worth_it(c->opts, inode, zi)) {
		inode->z = zi;
		return 0;
	}
	/* stored plain: what went to the spool is left unused there */
	erofs_zinfo_free(zi);
	return err;
}

int erofs_compress_tree(const struct erofs_build_options *opts, struct erofs_tree *tree,
			struct erofs_spool *spool)
{
	struct compressor c = { .opts = opts, .blksz = 1u << opts->blkszbits };
	int err;

	spool->fd = -1;
	if (opts->compressor == EROFS_COMPRESS_NONE)
		return 0;
	if ((err = open_spool(opts, spool)))
		return err;
	c.window = malloc(READ_WINDOW);
	c.pcluster = malloc(opts->pcluster_size);
	if (opts->compressor == EROFS_COMPRESS_LZ4HC)
		c.hc_state = malloc((size_t)LZ4_sizeofStateHC());
	err = erofs_seq_init(&c.spool, spool->fd, "temporary spool", 1u << 20);
	if (!err && (!c.window || !c.pcluster ||
		     (opts->compressor == EROFS_COMPRESS_LZ4HC && !c.hc_state)))
		err = -ENOMEM;
	for (uint32_t i = 0; i < tree->nr_inodes && !err; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		/* a file of one block or less cannot save a block */
		if (S_ISREG(inode->mode) && inode->size > c.blksz)
			err = compress_inode(&c, tree, inode);
	}
	if (!err)
		err = erofs_seq_flush(&c.spool);
	/* a raw tail block is written only as far as its data */
	if (!err && ftruncate(spool->fd, (off_t)c.spool_end))
		err = -errno;
	spool->size = c.spool_end;
	erofs_seq_release(&c.spool);
	free(c.window);
	free(c.pcluster);
	free(c.hc_state);
	return err;
}
