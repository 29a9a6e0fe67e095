// SPDX-License-Identifier: MIT
/* Order-0 entropy of bytes (include/erofs/build/entropy.h). */
#include "erofs/build/entropy.h"

/*
 * log2(x) for x >= 1, in 1/65536ths, in integers only, so that a decision
 * made on it (and so the image) does not depend on the machine's libm:
 * the fraction's bits come from squaring the mantissa.
 */
static uint64_t log2_q16(uint64_t x)
{
	const unsigned int e = 63 - (unsigned int)__builtin_clzll(x);
	/* the mantissa 1.f in Q31: [2^31, 2^32) */
	uint64_t m = e >= 31 ? x >> (e - 31) : x << (31 - e);
	uint64_t r = (uint64_t)e << 16;

	for (int bit = 15; bit >= 0; bit--) {
		m = (m * m) >> 31;	/* [2^31, 2^33) */
		if (m >= (1ull << 32)) {
			m >>= 1;
			r |= 1ull << bit;
		}
	}
	return r;
}

uint32_t erofs_order0_size(const uint8_t *data, uint32_t len)
{
	/* four tables, summed after: a run of one byte value would wait on
	 * its counter's last store (the whole call took 1.3x the time over
	 * the rootfs sample in 8 KiB pieces with one table) */
	uint32_t count[4][256] = { { 0 } };
	uint64_t bits_q16 = 0, log_len;
	uint32_t i = 0;

	if (!len)
		return 0;
	for (; len - i >= 4; i += 4) {
		count[0][data[i]]++;
		count[1][data[i + 1]]++;
		count[2][data[i + 2]]++;
		count[3][data[i + 3]]++;
	}
	for (; i < len; i++)
		count[0][data[i]]++;
	for (int v = 0; v < 256; v++)
		count[0][v] += count[1][v] + count[2][v] + count[3][v];
	log_len = log2_q16(len);
	for (int v = 0; v < 256; v++)
		if (count[0][v])
			bits_q16 += count[0][v] * (log_len - log2_q16(count[0][v]));
	return (uint32_t)((bits_q16 + (8u << 16) - 1) / (8u << 16));
}
