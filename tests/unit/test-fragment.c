// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/build/fragment.c, the packed inode's store: a
 * fragment that ends a stored one is found and points into it, the longest
 * run two ends share is found exactly (at and around the ladder's lengths),
 * and files that end alike by the thousand cost reads of the scratch file
 * in proportion to their number, not its square.  The reads are counted by
 * this program's own pread(), which the static library's calls reach.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "erofs/build/fragment.h"

#include "unit.h"

static int counted_fd = -1;
static long reads;

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	if (fd == counted_fd)
		reads++;
	return syscall(SYS_pread64, fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

static unsigned int seed = 2026;

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)unit_xorshift(&seed);
}

static void open_packed(struct erofs_packed *p)
{
	CHECK(erofs_packed_open(p, "./test-fragment.img", true) == 0);
	counted_fd = p->fd;
	reads = 0;
}

/* Stores data (deduplicated) and returns its offset in the packed data. */
static uint64_t add(struct erofs_packed *p, const uint8_t *data, uint32_t len)
{
	uint64_t off = UINT64_MAX;

	CHECK(erofs_packed_add(p, data, len, true, &off) == 0);
	return off;
}

/* A fragment that is the end of a stored one points into it, whatever its length. */
static void check_ends_found(void)
{
	static const uint32_t lens[] = { 64, 100, 255, 256, 257, 4095, 4096, 4097, 9000 };
	struct erofs_packed p;
	uint8_t *big = malloc(12000), *other = malloc(12000);
	uint64_t at;

	fill_random(big, 12000);
	fill_random(other, 12000);
	open_packed(&p);
	add(&p, other, 12000);
	at = add(&p, big, 12000);
	CHECK(at == 12000);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t size = p.size;

		CHECK(add(&p, big + 12000 - lens[i], lens[i]) == at + 12000 - lens[i]);
		CHECK(p.size == size);		/* nothing appended */
	}
	/* one byte off before the key's 64: stored anew */
	{
		uint8_t copy[300];
		uint64_t size = p.size;

		memcpy(copy, big + 12000 - 300, 300);
		copy[0] ^= 1;
		CHECK(add(&p, copy, 300) == size);
		CHECK(p.size == size + 300);
	}
	erofs_packed_close(&p);
	free(big);
	free(other);
}

/*
 * Stored fragments sharing runs of several lengths with a query's end: the
 * longest is found, exactly, also at one byte around the ladder's lengths.
 */
static void check_longest_run(void)
{
	static const uint32_t runs[] = { 64, 200, 255, 256, 257, 1000, 4095, 4096, 4097, 7000 };
	const uint32_t n = sizeof(runs) / sizeof(runs[0]), len = 10000;
	uint8_t *query = malloc(len), *f = malloc(len);

	fill_random(query, len);
	/* each run alone, and each as the longest of all stored before it */
	for (uint32_t k = 0; k < n; k++) {
		struct erofs_packed p;
		uint32_t common = 0;
		uint64_t end = 0, want_end = 0;

		open_packed(&p);
		for (uint32_t i = 0; i <= k; i++) {
			/* a stored fragment of len bytes whose last runs[i] are the query's */
			fill_random(f, len);
			f[len - runs[i] - 1] = (uint8_t)(query[len - runs[i] - 1] ^ 0x5a);
			memcpy(f + len - runs[i], query + len - runs[i], runs[i]);
			want_end = add(&p, f, len) + len;
		}
		CHECK(erofs_packed_common_suffix(&p, query, len, &common, &end) == 0);
		CHECK(common == runs[k]);
		CHECK(end == want_end);
		erofs_packed_close(&p);
	}
	/* the longest stored first: later, shorter ones do not displace it */
	{
		struct erofs_packed p;
		uint32_t common = 0;
		uint64_t end = 0, first_end;

		open_packed(&p);
		fill_random(f, len);
		memcpy(f + len - 9000, query + len - 9000, 9000);
		f[len - 9001] = (uint8_t)(query[len - 9001] ^ 1);
		first_end = add(&p, f, len) + len;
		for (uint32_t i = 0; i < n; i++) {
			fill_random(f, len);
			memcpy(f + len - runs[i], query + len - runs[i], runs[i]);
			f[len - runs[i] - 1] = (uint8_t)(query[len - runs[i] - 1] ^ 1);
			add(&p, f, len);
		}
		CHECK(erofs_packed_common_suffix(&p, query, len, &common, &end) == 0);
		CHECK(common == 9000 && end == first_end);
		erofs_packed_close(&p);
	}
	free(query);
	free(f);
}

/*
 * Files that end alike by the thousand (a common footer, under the ladder's
 * first length): storing each reads nothing back, asking each for its
 * longest shared run reads a bounded number, and a fragment that ends the
 * thousandth of them is still found.
 */
#define ALIKE		3000
#define FOOTER		190
static void check_alike_linear(void)
{
	struct erofs_packed p;
	uint8_t footer[FOOTER], *f = malloc(2000 + FOOTER);
	uint64_t offs[ALIKE];
	uint32_t lens[ALIKE];
	long store_reads, most = 0;

	fill_random(footer, FOOTER);
	open_packed(&p);
	for (int i = 0; i < ALIKE; i++) {
		lens[i] = 300 + unit_xorshift(&seed) % 1700 + FOOTER;
		fill_random(f, lens[i] - FOOTER);
		memcpy(f + lens[i] - FOOTER, footer, FOOTER);
		offs[i] = add(&p, f, lens[i]);
	}
	store_reads = reads;
	CHECK(store_reads == 0);	/* was about ALIKE^2 / 4 */
	for (int i = 0; i < ALIKE; i += 97) {
		uint32_t common = 0;
		uint64_t end = 0;

		fill_random(f, 1000);
		memcpy(f + 1000 - FOOTER, footer, FOOTER);
		reads = 0;
		CHECK(erofs_packed_common_suffix(&p, f, 1000, &common, &end) == 0);
		CHECK(common >= FOOTER && common < FOOTER + 8);
		if (reads > most)
			most = reads;
	}
	CHECK(most > 0 && most <= 64);
	/* the end of the 2,000th stored one, with its key shared by all */
	{
		const int k = 2000;
		const uint32_t len = lens[k] - 20;
		uint8_t *again = malloc(lens[k]);
		uint64_t size = p.size;

		CHECK(pread(p.fd, again, lens[k], (off_t)offs[k]) == (ssize_t)lens[k]);
		reads = 0;
		CHECK(add(&p, again + 20, len) == offs[k] + 20);
		CHECK(p.size == size);
		CHECK(reads <= 2);
		free(again);
	}
	erofs_packed_close(&p);
	free(f);
}

int main(void)
{
	check_ends_found();
	check_longest_run();
	check_alike_linear();
	return unit_summary("test-fragment");
}
