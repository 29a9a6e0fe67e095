// SPDX-License-Identifier: MIT
/* Compressing the metabox inode's data, or --zD's packed inode's (see include/erofs/build/metabox.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/codec/codec.h"
#include "erofs/common/format.h"
#include "erofs/build/metabox.h"

/*
 * Input offered per pcluster: far below the 12 MiB a decoded extent may
 * reach, and, as in compress.c, short of the 2047 lclusters an index delta
 * reaches (it binds with blocks under 2 KiB), one lcluster spare for an
 * extent starting inside its first.
 */
#define METABOX_MAX_INPUT	(4u << 20)

static uint32_t metabox_max_input(unsigned int blkszbits)
{
	uint32_t reach = (EROFS_LI_DELTA_MAX - 1) << blkszbits;

	return reach < METABOX_MAX_INPUT ? reach : METABOX_MAX_INPUT;
}

static int add_extent(struct erofs_zinfo *zi, uint32_t *cap, const struct erofs_zextent *e)
{
	if (zi->nr_extents == *cap) {
		uint32_t bigger_cap = *cap ? *cap * 2 : 64;
		struct erofs_zextent *bigger = realloc(zi->extents, bigger_cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		zi->extents = bigger;
		*cap = bigger_cap;
	}
	zi->extents[zi->nr_extents++] = *e;
	return 0;
}

int erofs_buffer_compress(const struct erofs_build_options *opts, unsigned int alg,
			  const uint8_t *data, uint64_t size, struct erofs_zinfo *zi, uint8_t **out)
{
	const uint32_t blksz = 1u << opts->blkszbits, pcluster = zi->pcluster_size;
	const uint32_t max_input = metabox_max_input(opts->blkszbits);
	struct erofs_codec *codec;
	uint8_t *blocks = NULL, *dst = malloc(pcluster);
	uint64_t cap_bytes = 0, used = 0;
	uint32_t ext_cap = 0;
	int err;

	if (!dst)
		return -ENOMEM;
	if ((err = erofs_codec_new(&opts->algorithms[alg], &codec))) {
		free(dst);
		return err;
	}
	zi->nr_extents = 0;
	zi->nr_blocks = 0;
	for (uint64_t pos = 0; pos < size && !err;) {
		uint64_t left = size - pos;
		int src_len = (int)(left < max_input ? left : max_input);
		int n = erofs_codec_fill(codec, data + pos, &src_len, NULL, 0, dst,
					 (int)pcluster);
		struct erofs_zextent e = { .lofs = pos, .pblk = zi->nr_blocks };
		uint32_t stored;

		if (n < 0) {
			err = n;
			break;
		}
		stored = ((uint32_t)n + blksz - 1) & ~(blksz - 1);
		/* compressed only when it saves a block; else one raw block */
		if (n > 0 && stored < (uint32_t)src_len) {
			e.nblks = (uint16_t)(stored / blksz);
			e.clen = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
		} else {
			src_len = (int)(left < blksz ? left : blksz);
			/* the last raw extent may not cross an lcluster boundary
			 * (see compress.c): the rest follows, aligned */
			if ((uint64_t)src_len == left && (pos & (blksz - 1)) + left > blksz)
				src_len = (int)(blksz - (pos & (blksz - 1)));
			stored = blksz;
			e.nblks = 1;
			e.raw = true;
			e.clen = (uint16_t)src_len;
		}
		if (used + stored > cap_bytes) {
			uint64_t want = (used + stored) * 2;
			uint8_t *bigger = realloc(blocks, want);

			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			blocks = bigger;
			cap_bytes = want;
		}
		memset(blocks + used, 0, stored);
		/* compressed streams end at the pcluster's end (0-padding first);
		 * raw bytes start the block */
		if (e.raw)
			memcpy(blocks + used, data + pos, (size_t)src_len);
		else
			memcpy(blocks + used + stored - (uint32_t)n, dst, (size_t)n);
		used += stored;
		zi->nr_blocks += e.nblks;
		pos += (uint64_t)src_len;
		err = add_extent(zi, &ext_cap, &e);
	}
	erofs_codec_free(codec);
	free(dst);
	if (err) {
		free(blocks);
		return err;
	}
	*out = blocks;
	return 0;
}
