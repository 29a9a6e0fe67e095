// SPDX-License-Identifier: MIT
/*
 * lib/build/compress.c reuses one LZ4HC state per worker with a fast reset
 * between pclusters, and relies on that giving the same bytes as a fresh
 * one-shot compression: otherwise images would depend on which worker
 * compressed what.  This checks that assumption against the installed
 * liblz4, over mixed inputs, levels and pcluster sizes.
 */
#include <lz4hc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned int seed = 12345;

static unsigned int next_random(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

static void fill(unsigned char *buf, size_t len, int kind)
{
	static const char words[] = "erofs fixed output compression pcluster lcluster ";

	for (size_t i = 0; i < len; i++)
		buf[i] = kind == 0 ? (unsigned char)next_random()
		       : kind == 1 ? (unsigned char)words[(i + next_random() % 3) % (sizeof(words) - 1)]
				   : (unsigned char)(i / 512);
}

int main(void)
{
	const size_t len = 1 << 20;
	unsigned char *src = malloc(len), *a = malloc(1 << 20), *b = malloc(1 << 20);
	void *oneshot = malloc((size_t)LZ4_sizeofStateHC());
	LZ4_streamHC_t *reused = LZ4_createStreamHC();
	int failures = 0, runs = 0;

	if (!src || !a || !b || !oneshot || !reused)
		return 1;
	for (int round = 0; round < 60; round++) {
		int kind = round % 3, level = 1 + round % 12;
		int cap = 4096 << (round % 5);
		size_t off = next_random() % (len / 2);
		int in_a = (int)(len - off), in_b = in_a;
		int out_a, out_b;

		fill(src, len, kind);
		out_a = LZ4_compress_HC_destSize(oneshot, (const char *)src + off, (char *)a, &in_a,
						 cap, level);
		LZ4_resetStreamHC_fast(reused, level);
		out_b = LZ4_compress_HC_continue_destSize(reused, (const char *)src + off,
							  (char *)b, &in_b, cap);
		runs++;
		if (out_a != out_b || in_a != in_b || memcmp(a, b, (size_t)out_a)) {
			fprintf(stderr, "round %d (kind %d, level %d, cap %d): fast reset differs\n",
				round, kind, level, cap);
			failures++;
		}
	}
	LZ4_freeStreamHC(reused);
	free(oneshot);
	free(src);
	free(a);
	free(b);
	if (failures)
		return 1;
	printf("test-lz4-reset: %d rounds identical\n", runs);
	return 0;
}
