// SPDX-License-Identifier: MIT
/*
 * The superblock's compression settings for the image reader: the list of
 * algorithms and each one's configuration record, checked as Linux checks
 * them at mount (see include/erofs/read/zread.h).  Moved out of lib/read/zread.c.
 */
#include <errno.h>
#include <string.h>

#include "erofs/codec/zdecode.h"
#include "erofs/common/compalg.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/rbase.h"
#include "erofs/read/zconfig.h"

#define EFSCORRUPTED	EUCLEAN
#define fail		erofs_reader_fail

/* ------------------------------------------------------------------ */
/* superblock                                                          */

/*
 * Checks one algorithm's config record (payload raw[0, len)) as the kernel
 * does at mount, and keeps what decoding needs.
 */
static int load_algorithm_config(struct erofs_reader *r, unsigned int alg, const uint8_t *raw,
				 uint32_t len)
{
	const uint32_t want = erofs_compr_cfg_size(alg);
	const char *name = erofs_zdecode_name(alg);

	if (len < want)
		return fail(r, -EFSCORRUPTED, "superblock: %s config of %u bytes (want %u)",
			    name, len, want);
	if (alg == EROFS_COMPR_LZ4) {
		uint32_t most = EROFS_PCLUSTER_MAX_SIZE >> r->blkszbits;

		r->lz4_max_distance = get_le16(raw);
		r->lz4_max_pclusterblks = get_le16(raw + 2);
		if (!r->lz4_max_pclusterblks)
			r->lz4_max_pclusterblks = 1;
		else if (r->lz4_max_pclusterblks > most)
			return fail(r, -EFSCORRUPTED,
				    "superblock: LZ4 pclusters of %u blocks (at most %u)",
				    r->lz4_max_pclusterblks, most);
	} else if (alg == EROFS_COMPR_LZMA) {
		r->lzma_dict_size = get_le32(raw);
		if (get_le16(raw + 4))
			return fail(r, -EOPNOTSUPP, "superblock: unknown MicroLZMA format %u",
				    get_le16(raw + 4));
		if (r->lzma_dict_size < 4096 || r->lzma_dict_size > EROFS_LZMA_MAX_DICT_SIZE)
			return fail(r, -EFSCORRUPTED,
				    "superblock: MicroLZMA dictionary of %u bytes (4096 to %u)",
				    r->lzma_dict_size, EROFS_LZMA_MAX_DICT_SIZE);
	} else if (alg == EROFS_COMPR_DEFLATE) {
		r->deflate_windowbits = raw[0];
		if (raw[0] > 15)
			return fail(r, -EFSCORRUPTED,
				    "superblock: DEFLATE window of 2^%u bytes (at most 2^15)", raw[0]);
	} else {
		if (raw[0])
			return fail(r, -EOPNOTSUPP, "superblock: unknown zstd format %u", raw[0]);
		r->zstd_window_log = raw[1] + 10u;	/* up to 265: no shift by it */
		if (r->zstd_window_log > 20 || (1ull << r->zstd_window_log) > EROFS_ZSTD_MAX_DICT_SIZE)
			return fail(r, -EFSCORRUPTED,
				    "superblock: zstd window of 2^%u bytes (at most %u)",
				    r->zstd_window_log, EROFS_ZSTD_MAX_DICT_SIZE);
	}
	return 0;
}

int erofs_z_load_config(struct erofs_reader *r)
{
	const struct erofs_super *sb = &r->sb;
	uint64_t off = EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE +
		       (uint64_t)sb->sb_extslots * EROFS_SB_EXTSLOT_SIZE;
	unsigned int alg;

	r->sb_end = off;
	r->lz4_max_pclusterblks = 1;
	r->lz4_max_distance = 0;
	if (!(sb->feature_incompat & EROFS_INCOMPAT_COMPR_CFGS)) {
		/* u1 is lz4_max_distance; LZ4 is the only algorithm */
		r->available_compr_algs = 1u << EROFS_COMPR_LZ4;
		r->lz4_max_distance = sb->u1;
		return 0;
	}
	r->available_compr_algs = sb->u1;
	if (sb->u1 >> EROFS_COMPR_MAX) {
		char names[192];

		/* refused whole, rather than a file at a time */
		return fail(r, -EOPNOTSUPP, "superblock: unsupported compression algorithms: %s",
			    erofs_name_bits(names, sizeof(names), sb->u1 >> EROFS_COMPR_MAX << EROFS_COMPR_MAX,
					    NULL, 0));
	}
	/* one record per listed algorithm: u16 length, then its payload */
	for (alg = 0; alg < EROFS_COMPR_MAX; alg++) {
		uint8_t raw[EROFS_COMPR_CFG_LZ4_SIZE];
		uint32_t len;
		int err;

		if (!(sb->u1 & (1u << alg)))
			continue;
		off = (off + 3) & ~(uint64_t)3;
		if (off + 2 > r->size)
			return fail(r, -EFSCORRUPTED,
				    "superblock: compression config of algorithm %u beyond the end of the image",
				    alg);
		err = erofs_dev_read(r, raw, 2, off);
		if (err)
			return err;
		len = get_le16(raw);
		if (!len)
			len = 65536;
		if (len > r->size - off - 2)
			return fail(r, -EFSCORRUPTED,
				    "superblock: compression config of algorithm %u (%u bytes) beyond the end of the image",
				    alg, len);
		memset(raw, 0, sizeof(raw));
		err = erofs_dev_read(r, raw, len < sizeof(raw) ? len : sizeof(raw), off + 2);
		if (err || (err = load_algorithm_config(r, alg, raw, len)))
			return err;
		off += 2 + (uint64_t)len;
	}
	r->sb_end = off;
	return 0;
}
