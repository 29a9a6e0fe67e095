// SPDX-License-Identifier: MIT
/* The compression algorithms' names and config sizes (include/erofs/common/compalg.h). */
#include <stddef.h>

#include "erofs/common/compalg.h"
#include "erofs/common/format.h"

static const struct {
	const char *name, *title;
	uint32_t cfg_size;
} algorithms[EROFS_COMPR_MAX] = {
	[EROFS_COMPR_LZ4] = { "lz4", "LZ4", EROFS_COMPR_CFG_LZ4_SIZE },
	[EROFS_COMPR_LZMA] = { "lzma", "MicroLZMA", EROFS_COMPR_CFG_LZMA_SIZE },
	[EROFS_COMPR_DEFLATE] = { "deflate", "DEFLATE", EROFS_COMPR_CFG_DEFLATE_SIZE },
	[EROFS_COMPR_ZSTD] = { "zstd", "zstd", EROFS_COMPR_CFG_ZSTD_SIZE },
};

const char *erofs_compr_alg_name(unsigned int alg)
{
	return alg < EROFS_COMPR_MAX ? algorithms[alg].name : NULL;
}

const char *erofs_compr_alg_title(unsigned int alg)
{
	return alg < EROFS_COMPR_MAX ? algorithms[alg].title : "unknown";
}

uint32_t erofs_compr_cfg_size(unsigned int alg)
{
	return alg < EROFS_COMPR_MAX ? algorithms[alg].cfg_size : 0;
}
