// SPDX-License-Identifier: MIT
/*
 * Unit tests for lib/build/entropy.c: the order-0 size of bytes is exact
 * where the entropy is a whole number of bits a byte (one value, two, the
 * sixteen of hex, all 256 equally often), rounds up, and stays within a
 * byte of the floating-point sum on random histograms.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "erofs/build/entropy.h"

#include "unit.h"

static unsigned int seed = 1207;

/* len bytes cycling through `values` byte values: log2(values) bits each */
static uint32_t cycling(uint32_t len, uint32_t values)
{
	uint8_t *b = malloc(len);
	uint32_t size;

	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i % values * 7 + 3);
	size = erofs_order0_size(b, len);
	free(b);
	return size;
}

static double exact_bits(const uint8_t *b, uint32_t len)
{
	uint32_t count[256] = { 0 };
	double bits = 0;

	for (uint32_t i = 0; i < len; i++)
		count[b[i]]++;
	for (int v = 0; v < 256; v++)
		if (count[v])
			bits += count[v] * log2((double)len / count[v]);
	return bits;
}

int main(void)
{
	const uint8_t three[4] = { 'a', 'b', 'c', 'c' };	/* 2 + 2 + 1 + 1 = 6 bits */

	CHECK(erofs_order0_size(three, 0) == 0);
	CHECK(cycling(4096, 1) == 0);
	CHECK(cycling(1024, 2) == 128);
	CHECK(cycling(1024, 16) == 512);
	CHECK(cycling(65536, 16) == 32768);
	CHECK(cycling(4096, 256) == 4096);
	CHECK(cycling(1u << 20, 256) == 1u << 20);
	CHECK(erofs_order0_size(three, 4) == 1);
	for (int round = 0; round < 200; round++) {
		const uint32_t len = 1 + unit_xorshift(&seed) % 300000;
		const uint32_t values = 1 + unit_xorshift(&seed) % 256;
		const unsigned int skew = unit_xorshift(&seed) % 4;
		uint8_t *b = malloc(len);
		double want;
		uint32_t got;

		for (uint32_t i = 0; i < len; i++) {
			uint32_t v = unit_xorshift(&seed) % values;

			for (unsigned int k = 0; k < skew; k++)	/* more of the small values */
				v = v * (unit_xorshift(&seed) % (values + 1)) / (values + 1);
			b[i] = (uint8_t)v;
		}
		want = exact_bits(b, len) / 8;
		got = erofs_order0_size(b, len);
		CHECK(got + 1 >= want && got <= want + 1 + want / 10000);
		free(b);
	}
	return unit_summary("test-entropy");
}
