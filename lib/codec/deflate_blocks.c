// SPDX-License-Identifier: MIT
/*
 * Block ends of a raw DEFLATE stream (include/erofs/codec/deflate_blocks.h),
 * read back by zlib's inflate, which stops at every block's end when asked
 * with Z_BLOCK.  The stream is our own compressor's output and its input
 * is at hand, so what inflate writes is dropped.
 */
#include <zlib.h>

#include "erofs/codec/deflate_blocks.h"

/* inflate's data_type after Z_BLOCK: just after a block's end; in the last block */
#define AT_BLOCK_END	128
#define IN_LAST_BLOCK	64

int erofs_deflate_block_ends(const uint8_t *stream, int len, int *in, int *out, int max)
{
	uint8_t sink[16384];
	z_stream zs = { .next_in = (Bytef *)stream, .avail_in = len > 0 ? (uInt)len : 0 };
	int n = 0;

	if (inflateInit2(&zs, -15) != Z_OK)
		return 0;
	while (n < max) {
		zs.next_out = sink;
		zs.avail_out = sizeof(sink);
		/* Z_STREAM_END, or an error: the ends found so far stand */
		if (inflate(&zs, Z_BLOCK) != Z_OK)
			break;
		if ((zs.data_type & AT_BLOCK_END) && !(zs.data_type & IN_LAST_BLOCK) &&
		    zs.total_out > 0 && (!n || (uLong)in[n - 1] < zs.total_out)) {
			in[n] = (int)zs.total_out;
			out[n++] = (int)zs.total_in;
		}
	}
	inflateEnd(&zs);
	return n;
}
