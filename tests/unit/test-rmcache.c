// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/read/rmcache.c, the reader's metadata block cache: every
 * read through it must give the bytes of the image file, whatever block
 * it falls in or across, however many blocks have been cached and evicted
 * before, on the short last block and behind --offset; reads past the end
 * fail as erofs_dev_read() fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/common/ondisk.h"
#include "erofs/read/reader.h"
#include "erofs/read/rmcache.h"

#include "unit.h"

#define BLK	4096u
#define NBLK	24u		/* more blocks than the cache keeps */
#define TAIL	1000u		/* bytes of the file past the last whole block */
#define LEAD	512u		/* bytes before the image (--offset) */

/* An image of NBLK blocks whose bytes past the superblock are a pattern,
 * followed by TAIL bytes more (the filesystem ends at NBLK blocks, so the
 * reader's size is NBLK * BLK), LEAD bytes into a temporary file. */
static int make_image(uint8_t **bytes, size_t *size)
{
	char path[] = "/tmp/test-rmcache-XXXXXX";
	struct erofs_super sb;
	size_t n = (size_t)NBLK * BLK + TAIL;
	uint8_t *b = malloc(LEAD + n);
	int fd;

	if (!b)
		return -1;
	for (size_t i = 0; i < LEAD + n; i++)
		b[i] = (uint8_t)(i * 131 + (i >> 9) * 7);
	memset(&sb, 0, sizeof(sb));
	sb.magic = EROFS_MAGIC;
	sb.blkszbits = 12;
	sb.root_nid = 36;
	sb.blocks = NBLK;
	sb.inos = 1;
	erofs_super_encode(&sb, b + LEAD + EROFS_SUPER_OFFSET);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	if (write(fd, b, LEAD + n) != (ssize_t)(LEAD + n)) {
		close(fd);
		return -1;
	}
	*bytes = b + LEAD;
	*size = (size_t)NBLK * BLK;
	return fd;
}

static void check_range(struct erofs_reader *r, const uint8_t *want, uint64_t pos, size_t len)
{
	uint8_t got[2 * BLK];
	const uint8_t *p = NULL;

	memset(got, 0xee, sizeof(got));
	CHECK(erofs_mcache_read(r, got, len, pos) == 0);
	CHECK(memcmp(got, want + pos, len) == 0);
	if ((pos % BLK) + len <= BLK) {
		CHECK(erofs_mcache_at(r, pos, len, &p) == 0);
		CHECK(p && memcmp(p, want + pos, len) == 0);
	}
}

int main(void)
{
	struct erofs_reader r;
	const uint8_t *p;
	uint8_t *want, buf[64];
	size_t size;
	uint64_t pos;
	int fd = make_image(&want, &size);

	if (fd < 0) {
		perror("test-rmcache: temporary image");
		return 1;
	}
	if (erofs_reader_open_fd_at(&r, fd, LEAD, size)) {
		fprintf(stderr, "test-rmcache: open: %s\n", erofs_reader_error(&r));
		return 1;
	}

	/* inode-sized reads walking forward, then backward: more blocks than
	 * slots, so evictions and refills in both directions */
	for (pos = 1024; pos + 64 <= size; pos += 1000)
		check_range(&r, want, pos, 64);
	for (pos = size - 64; pos >= 3001; pos -= 3001)
		check_range(&r, want, pos, 64);
	/* across a block boundary (an extended inode at a block's end) */
	check_range(&r, want, 5 * BLK - 32, 64);
	check_range(&r, want, 7 * BLK - 1, 2);
	/* a whole block; one longer goes straight to the file */
	check_range(&r, want, 3 * BLK, BLK);
	check_range(&r, want, 3 * BLK + 100, BLK + 200);
	/* the last bytes of the filesystem */
	check_range(&r, want, size - 8, 8);
	check_range(&r, want, size - BLK, BLK);

	/* past the end: the same failure as erofs_dev_read() */
	CHECK(erofs_mcache_read(&r, buf, 16, size - 8) == -EUCLEAN);
	CHECK(strstr(erofs_reader_error(&r), "beyond the end of the image") != NULL);
	CHECK(erofs_mcache_at(&r, size, 1, &p) == -EUCLEAN);
	CHECK(erofs_mcache_read(&r, buf, 1, UINT64_MAX) == -EUCLEAN);
	/* and the cache still serves after a failure */
	check_range(&r, want, 2 * BLK + 8, 32);

	/* a clone has its own cache and reads the same bytes */
	{
		struct erofs_reader c;

		erofs_reader_clone(&c, &r);
		CHECK(c.mc == NULL);
		for (pos = 40; pos + 48 <= size; pos += 4999)
			check_range(&c, want, pos, 48);
		CHECK(c.mc != NULL && c.mc != r.mc);
		erofs_reader_close(&c);
	}
	erofs_reader_close(&r);
	CHECK(r.mc == NULL);
	close(fd);
	free(want - LEAD);

	return unit_summary("test-rmcache");
}
