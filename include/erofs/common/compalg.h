/* SPDX-License-Identifier: MIT */
/*
 * The compression algorithms of the format (EROFS_COMPR_*): how tools and
 * messages name them and the size of each one's superblock config record,
 * in one table (lib/common/compalg.c) for mkfs's writer, the reader's decoders and
 * dump.erofs.
 */
#ifndef EROFS_COMPALG_H
#define EROFS_COMPALG_H

#include <stdint.h>

/* "lz4", "lzma", "deflate", "zstd" as erofs-utils' dump.erofs and -z name
 * them; NULL for an id the format does not define. */
const char *erofs_compr_alg_name(unsigned int alg);
/* "LZ4", "MicroLZMA", "DEFLATE", "zstd": the names in messages; "unknown". */
const char *erofs_compr_alg_title(unsigned int alg);
/* The payload bytes of its config record (EROFS_COMPR_CFG_*_SIZE); 0 if unknown. */
uint32_t erofs_compr_cfg_size(unsigned int alg);

#endif
