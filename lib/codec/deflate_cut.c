// SPDX-License-Identifier: MIT
/*
 * Cutting a raw DEFLATE stream short (include/erofs/codec/deflate_cut.h),
 * from RFC 1951's definition of the format.  The stream is read only for
 * where its symbols start and how much input each stands for; nothing is
 * written out, so reading costs a table lookup per symbol.
 *
 * The stream is our compressor's, but it is read with every length checked
 * all the same: a stream that does not decode yields no cut.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/deflate_cut.h"
#include "erofs/common/ondisk.h"

#define MAX_CODE_BITS	15
#define LITLEN_SYMS	288
#define DIST_SYMS	32
#define END_OF_BLOCK	256

/* The bits of the stream, least significant first, with their position. */
struct bit_reader {
	const uint8_t *p;
	int len, next;			/* bytes; the next one to load */
	uint64_t buf;
	int cnt;			/* bits in buf */
};

static inline int64_t bit_pos(const struct bit_reader *b)
{
	return (int64_t)b->next * 8 - b->cnt;
}

/*
 * Loads what fits; true when at least n bits are there.  Away from the
 * end, one load of eight bytes: the bits past cnt it leaves in buf are
 * the stream's own, loaded again to the same place by the next fill.
 */
static inline bool bit_fill(struct bit_reader *b, int n)
{
	if (b->cnt <= 56 && b->next + 8 <= b->len) {
		b->buf |= get_le64(b->p + b->next) << b->cnt;
		b->next += (63 - b->cnt) >> 3;
		b->cnt |= 56;
		return true;
	}
	while (b->cnt <= 56 && b->next < b->len) {
		b->buf |= (uint64_t)b->p[b->next++] << b->cnt;
		b->cnt += 8;
	}
	return b->cnt >= n;
}

/* n <= 32 bits, or -1 past the stream's end */
static inline int64_t bit_take(struct bit_reader *b, int n)
{
	uint32_t v;

	if (b->cnt < n && !bit_fill(b, n))
		return -1;
	v = (uint32_t)(b->buf & ((1ull << n) - 1));
	b->buf >>= n;
	b->cnt -= n;
	return v;
}

/*
 * A canonical code's decoding table: indexed by the stream's next bits
 * (as many as the longest code), each entry is symbol << 4 | code length,
 * 0 where no code starts.
 */
struct huffman {
	uint16_t table[1u << MAX_CODE_BITS];
	int bits;
	uint32_t eob;			/* symbol 256's code as it is in the stream */
	int eob_len;
};

static uint32_t reverse_bits(uint32_t code, int n)
{
	uint32_t r = 0;

	for (int i = 0; i < n; i++, code >>= 1)
		r = r << 1 | (code & 1);
	return r;
}

/* false for a code that is over-subscribed */
static bool build_huffman(struct huffman *h, const uint8_t *lens, int n)
{
	int count[MAX_CODE_BITS + 1] = { 0 }, left = 1;
	uint32_t next[MAX_CODE_BITS + 1];

	h->bits = 1;
	h->eob_len = 0;
	for (int s = 0; s < n; s++)
		count[lens[s]]++;
	count[0] = 0;
	for (int l = 1; l <= MAX_CODE_BITS; l++) {
		left = left * 2 - count[l];
		if (left < 0)
			return false;
		if (count[l])
			h->bits = l;
	}
	next[1] = 0;
	for (int l = 2; l <= MAX_CODE_BITS; l++)
		next[l] = (next[l - 1] + (uint32_t)count[l - 1]) << 1;
	memset(h->table, 0, sizeof(h->table[0]) << h->bits);
	for (int s = 0; s < n; s++) {
		const int l = lens[s];
		uint32_t r;

		if (!l)
			continue;
		r = reverse_bits(next[l]++, l);
		if (s == END_OF_BLOCK) {
			h->eob = r;
			h->eob_len = l;
		}
		for (uint32_t i = r; i < (1u << h->bits); i += 1u << l)
			h->table[i] = (uint16_t)(s << 4 | l);
	}
	return true;
}

/* the next symbol, or -1 where no code is or the stream ends */
static inline int decode(struct bit_reader *b, const struct huffman *h)
{
	uint16_t e;

	if (b->cnt < MAX_CODE_BITS)
		bit_fill(b, MAX_CODE_BITS);
	e = h->table[b->buf & ((1u << h->bits) - 1)];
	if (!e || (e & 15) > b->cnt)
		return -1;
	b->buf >>= e & 15;
	b->cnt -= e & 15;
	return e >> 4;
}

/* the lengths of symbols 257..285: base and extra bits */
static const uint16_t length_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const uint8_t length_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
};

struct erofs_deflate_cutter {
	struct bit_reader b;
	struct huffman litlen, dist;
	int64_t limit;			/* cap in bits */
	int in;				/* input decoded so far */
	struct erofs_deflate_cut *cut;
};

/* A block's two codes as RFC 1951 3.2.7 sends them. */
static bool read_dynamic_codes(struct erofs_deflate_cutter *r)
{
	static const uint8_t order[19] = {
		16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
	};
	uint8_t lens[LITLEN_SYMS + DIST_SYMS] = { 0 }, clens[19] = { 0 };
	const int64_t hlit = bit_take(&r->b, 5), hdist = bit_take(&r->b, 5);
	const int64_t hclen = bit_take(&r->b, 4);
	int nlit, ndist;

	if (hlit < 0 || hdist < 0 || hclen < 0)
		return false;
	nlit = (int)hlit + 257;
	ndist = (int)hdist + 1;
	if (nlit > 286 || ndist > 30)
		return false;
	for (int i = 0; i < (int)hclen + 4; i++) {
		const int64_t v = bit_take(&r->b, 3);

		if (v < 0)
			return false;
		clens[order[i]] = (uint8_t)v;
	}
	/* the code lengths' own code decodes through the dist table, free until then */
	if (!build_huffman(&r->dist, clens, 19))
		return false;
	for (int i = 0; i < nlit + ndist;) {
		const int sym = decode(&r->b, &r->dist);
		int64_t rep;
		uint8_t value = 0;

		if (sym < 0)
			return false;
		if (sym < 16) {
			lens[i++] = (uint8_t)sym;
			continue;
		}
		if (sym == 16) {
			if (!i)
				return false;
			value = lens[i - 1];
			rep = bit_take(&r->b, 2);
			rep = rep < 0 ? -1 : rep + 3;
		} else if (sym == 17) {
			rep = bit_take(&r->b, 3);
			rep = rep < 0 ? -1 : rep + 3;
		} else {
			rep = bit_take(&r->b, 7);
			rep = rep < 0 ? -1 : rep + 11;
		}
		if (rep < 0 || i + rep > nlit + ndist)
			return false;
		memset(lens + i, value, (size_t)rep);
		i += (int)rep;
	}
	if (!lens[END_OF_BLOCK])
		return false;
	/* the distances' lengths follow the literals' in lens */
	return build_huffman(&r->litlen, lens, nlit) &&
	       build_huffman(&r->dist, lens + nlit, ndist);
}

static bool fixed_codes(struct erofs_deflate_cutter *r)
{
	uint8_t lens[LITLEN_SYMS];

	memset(lens, 8, 144);
	memset(lens + 144, 9, 112);
	memset(lens + 256, 7, 24);
	memset(lens + 280, 8, 8);
	if (!build_huffman(&r->litlen, lens, LITLEN_SYMS))
		return false;
	memset(lens, 5, DIST_SYMS);
	return build_huffman(&r->dist, lens, DIST_SYMS);
}

/*
 * The symbols of a Huffman-coded block, from after its codes: each place
 * before a symbol is a cut, as long as the end-of-block code still fits.
 * Returns 1 at the block's end, 0 where the cap is reached, -1 on damage.
 */
static int read_symbols(struct erofs_deflate_cutter *r, int64_t header_bit)
{
	/* a cut starts at most here; the reader and counts are locals for the loop's sake */
	const int64_t last = r->limit - r->litlen.eob_len;
	struct bit_reader b = r->b;
	int64_t at_bits = -1;
	int in = r->in, at_in = 0, ret;

	for (;;) {
		const int64_t here = bit_pos(&b);
		int sym;

		if (here > last) {
			ret = 0;
			break;
		}
		at_bits = here;
		at_in = in;
		sym = decode(&b, &r->litlen);
		if (sym < END_OF_BLOCK) {
			if (sym < 0)
				return -1;
			if (++in == INT_MAX)
				return -1;
			continue;
		}
		if (sym == END_OF_BLOCK) {
			ret = 1;
			break;
		}
		if (sym > 285)
			return -1;
		{
			const int64_t extra = bit_take(&b, length_extra[sym - 257]);
			const int d = decode(&b, &r->dist);
			/* distance codes 4.. carry d / 2 - 1 extra bits */
			const int64_t dextra = d < 0 || d > 29 ? -1 : bit_take(&b, d < 4 ? 0 : d / 2 - 1);

			/* no int overflow, whatever the stream */
			if (extra < 0 || dextra < 0 || in > INT_MAX - 258)
				return -1;
			in += length_base[sym - 257] + (int)extra;
		}
	}
	/* the last place that fits: before the block's end, or before the symbol past the cap */
	if (at_bits >= 0 && at_in > r->cut->in_len) {
		*r->cut = (struct erofs_deflate_cut){
			.bits = at_bits, .final_bit = header_bit, .in_len = at_in,
			.eob = r->litlen.eob, .eob_len = r->litlen.eob_len,
		};
	}
	r->b = b;
	r->in = in;
	return ret;
}

/* A stored block, from after its three header bits: as Huffman ones, 1, 0 or -1. */
static int read_stored(struct erofs_deflate_cutter *r, int64_t header_bit)
{
	struct erofs_deflate_cut *cut = r->cut;
	int64_t len, nlen, data, fit;

	bit_take(&r->b, r->b.cnt & 7);		/* to the next byte */
	len = bit_take(&r->b, 16);
	nlen = bit_take(&r->b, 16);
	if (len < 0 || nlen < 0 || (len ^ nlen) != 0xffff)
		return -1;
	data = bit_pos(&r->b) / 8;
	if (data + len > r->b.len)
		return -1;
	fit = r->limit / 8 - data;
	if (fit > len)
		fit = len;
	if (fit > 0 && r->in + fit > cut->in_len) {
		*cut = (struct erofs_deflate_cut){
			.bits = (data + fit) * 8, .final_bit = header_bit,
			.in_len = r->in + (int)fit, .stored = true, .stored_len = (int)fit,
		};
	}
	if (fit < len)
		return 0;
	r->in += (int)len;
	r->b.next = (int)(data + len);
	r->b.buf = 0;
	r->b.cnt = 0;
	return 1;
}

struct erofs_deflate_cutter *erofs_deflate_cutter_new(void)
{
	return malloc(sizeof(struct erofs_deflate_cutter));
}

void erofs_deflate_cutter_free(struct erofs_deflate_cutter *r)
{
	free(r);
}

int erofs_deflate_find_cut(struct erofs_deflate_cutter *r, const uint8_t *stream, int len, int cap,
			   struct erofs_deflate_cut *cut)
{
	bool final = false;

	*cut = (struct erofs_deflate_cut){ .in_len = 0 };
	if (!stream || len <= 0 || cap <= 0)
		return 0;
	r->b = (struct bit_reader){ .p = stream, .len = len };
	r->limit = (int64_t)cap * 8;
	r->in = 0;
	r->cut = cut;
	while (!final) {
		const int64_t header_bit = bit_pos(&r->b);
		const int64_t head = bit_take(&r->b, 3);
		int ret;

		if (head < 0)
			break;
		final = head & 1;
		switch (head >> 1) {
		case 0:
			ret = read_stored(r, header_bit);
			break;
		case 1:
			ret = fixed_codes(r) ? read_symbols(r, header_bit) : -1;
			break;
		case 2:
			ret = read_dynamic_codes(r) ? read_symbols(r, header_bit) : -1;
			break;
		default:
			ret = -1;
		}
		if (ret < 0)
			*cut = (struct erofs_deflate_cut){ .in_len = 0 };
		if (ret <= 0)
			break;
	}
	return cut->in_len;
}

int erofs_deflate_write_cut(const uint8_t *stream, const struct erofs_deflate_cut *cut,
			    uint8_t *dst)
{
	const int64_t bytes = (cut->bits + 7) / 8;
	int64_t end = cut->bits + cut->eob_len;

	memcpy(dst, stream, (size_t)bytes);
	if (cut->stored) {
		const int64_t len_at = bytes - cut->stored_len - 4;

		dst[len_at] = (uint8_t)cut->stored_len;
		dst[len_at + 1] = (uint8_t)(cut->stored_len >> 8);
		dst[len_at + 2] = (uint8_t)~cut->stored_len;
		dst[len_at + 3] = (uint8_t)(~cut->stored_len >> 8);
	} else {
		if (cut->bits & 7)
			dst[bytes - 1] &= (uint8_t)((1u << (cut->bits & 7)) - 1);
		memset(dst + bytes, 0, (size_t)((end + 7) / 8 - bytes));
		for (int i = 0; i < cut->eob_len; i++) {
			const int64_t at = cut->bits + i;

			dst[at / 8] |= (uint8_t)(((cut->eob >> i) & 1) << (at & 7));
		}
	}
	dst[cut->final_bit / 8] |= (uint8_t)(1u << (cut->final_bit & 7));
	return (int)((end + 7) / 8);
}
