// SPDX-License-Identifier: MIT
/* Encoded extents of compressed files (see include/erofs/build/zextent.h). */
#include <string.h>

#include "erofs/common/format.h"
#include "erofs/common/ondisk.h"
#include "erofs/build/zextent.h"

static uint64_t extent_length(const struct erofs_zinfo *zi, uint64_t file_size, uint32_t i)
{
	return (i + 1 < zi->nr_extents ? zi->extents[i + 1].lofs : file_size) - zi->extents[i].lofs;
}

/* The common length's log2 (at least a block) when the records may omit lstart, else 0. */
static unsigned int uniform_bits(const struct erofs_build_options *opts, uint64_t file_size,
				 const struct erofs_zinfo *zi)
{
	uint64_t first = extent_length(zi, file_size, 0);
	unsigned int bits = 0;

	while (bits < 63 && (1ull << bits) < first)
		bits++;
	if (bits < opts->blkszbits)
		bits = opts->blkszbits;
	for (uint32_t i = 0; i < zi->nr_extents; i++) {
		uint64_t len = extent_length(zi, file_size, i);

		if (len != 1ull << bits && (i + 1 < zi->nr_extents || len > 1ull << bits))
			return 0;
	}
	return bits;
}

/* Whether each pcluster starts where the one before ends (the same file's blocks). */
static bool contiguous(const struct erofs_zinfo *zi)
{
	for (uint32_t i = 1; i < zi->nr_extents; i++) {
		const struct erofs_zextent *a = &zi->extents[i - 1], *b = &zi->extents[i];

		if (!b->nblks)		/* the fragment tail: not in the data */
			continue;
		if (a->owner != b->owner || b->pblk != a->pblk + a->nblks)
			return false;
	}
	return true;
}

uint32_t erofs_zextent_size(uint32_t meta_size, unsigned int recsz, uint32_t nr_extents)
{
	uint32_t header = (meta_size + 7) & ~7u;
	uint32_t records = (header + EROFS_ZMAP_HEADER_SIZE + recsz - 1) / recsz * recsz;

	return records + recsz * nr_extents + (recsz <= 4 ? 8 : 0) - meta_size;
}

unsigned int erofs_zextent_recsz(const struct erofs_build_options *opts, uint32_t meta_size,
				 uint64_t file_size, const struct erofs_zinfo *zi)
{
	uint64_t full = ((file_size + (1u << opts->blkszbits) - 1) >> opts->blkszbits) *
			EROFS_LCLUSTER_INDEX_SIZE + 16;
	uint32_t header = (meta_size + 7) & ~7u;
	unsigned int recsz;

	if (!opts->layout_48bit || !zi || !zi->nr_extents || zi->tail_size || zi->no_extents ||
	    erofs_zinfo_whole_fragment(zi))
		return 0;
	recsz = file_size > UINT32_MAX ? 32 : 16;
	/* byte addresses: only full records hold them, whatever their size */
	if (zi->unaligned)
		return recsz;
	/*
	 * Uniform extents: 4-byte records after a 64-bit base when they are
	 * contiguous.  Not 8-byte ones otherwise: those hold 32-bit byte
	 * addresses, and the record size is fixed before the data's addresses
	 * are known, so an image past 4 GiB could not be ruled out.
	 */
	if (uniform_bits(opts, file_size, zi) && contiguous(zi))
		recsz = 4;
	/* what follows the map header's start, against full indexes */
	if (erofs_zextent_size(meta_size, recsz, zi->nr_extents) + meta_size - header > full)
		return 0;
	return recsz;
}

void erofs_zextent_encode(const struct erofs_build_options *opts, uint32_t meta_size,
			  uint64_t file_size, const struct erofs_zinfo *zi, uint32_t blkaddr,
			  uint8_t *out)
{
	const unsigned int bits = opts->blkszbits;
	const unsigned int recsz = erofs_zextent_recsz(opts, meta_size, file_size, zi);
	uint32_t size = erofs_zextent_size(meta_size, recsz, zi->nr_extents);
	uint32_t header_at = ((meta_size + 7) & ~7u) - meta_size;
	uint32_t rec_at = (uint32_t)((header_at + meta_size + EROFS_ZMAP_HEADER_SIZE + recsz - 1) /
				     recsz * recsz) - meta_size;
	uint16_t advise = (uint16_t)(EROFS_ZADVISE_EXTENTS |
				     (__builtin_ctz(recsz) - 2) << EROFS_ZADVISE_EXTRECSZ_SHIFT);
	uint8_t *p = out + rec_at;

	memset(out, 0, size);
	if (zi->fragment)
		advise |= EROFS_ZADVISE_FRAGMENT;
	put_le16(out + header_at + 4, advise);
	if (recsz > 8)		/* the extent count; else every extent's length */
		put_le32(out + header_at, zi->nr_extents);
	else
		out[header_at + 7] = (uint8_t)(uniform_bits(opts, file_size, zi) - bits);
	if (recsz <= 4) {	/* contiguous: one base address for all */
		const struct erofs_zextent *e = &zi->extents[0];

		put_le64(p, (uint64_t)((e->owner ? e->owner->blkaddr : blkaddr) + e->pblk) << bits);
		p += 8;
	}
	for (uint32_t i = 0; i < zi->nr_extents; i++, p += recsz) {
		const struct erofs_zextent *e = &zi->extents[i];
		uint8_t rec[EROFS_EXTENT_MAX_SIZE] = { 0 };
		uint64_t pstart;
		uint32_t plen;

		if (!e->nblks && zi->fragment) {	/* the tail in the packed inode */
			plen = (uint32_t)zi->frag_off;
			pstart = zi->frag_off >> 32;
		} else {
			plen = zi->unaligned ? e->bytes : (uint32_t)e->nblks << bits;
			if (!e->raw)
				plen |= (uint32_t)(zi->algorithm + 1) << EROFS_EXTENT_PLEN_FMT_SHIFT;
			pstart = ((uint64_t)((e->owner ? e->owner->blkaddr : blkaddr) + e->pblk) << bits) +
				 (zi->unaligned ? e->boff : 0);
		}
		put_le32(rec, plen);
		put_le32(rec + 4, (uint32_t)pstart);
		put_le32(rec + 8, (uint32_t)(pstart >> 32));
		put_le32(rec + 12, (uint32_t)e->lofs);
		put_le32(rec + 16, (uint32_t)(e->lofs >> 32));
		memcpy(p, rec, recsz);
	}
}
