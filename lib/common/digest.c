// SPDX-License-Identifier: MIT
/* Content digests (see include/erofs/common/digest.h). */
#include <string.h>

#include <nettle/sha2.h>

#include "erofs/common/digest.h"

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((struct erofs_sha256 *)0)->opaque),
	       "struct erofs_sha256 too small for nettle's sha256_ctx");
_Static_assert(SHA256_DIGEST_SIZE == EROFS_SHA256_LEN, "SHA-256 is 32 bytes");

void erofs_sha256_begin(struct erofs_sha256 *s)
{
	sha256_init((struct sha256_ctx *)s->opaque);
}

void erofs_sha256_add(struct erofs_sha256 *s, const void *buf, size_t len)
{
	sha256_update((struct sha256_ctx *)s->opaque, len, buf);
}

void erofs_sha256_value(struct erofs_sha256 *s, uint8_t value[EROFS_DIGEST_VALUE_LEN])
{
	memcpy(value, EROFS_DIGEST_TAG, EROFS_DIGEST_TAG_LEN);
	sha256_digest((struct sha256_ctx *)s->opaque, EROFS_SHA256_LEN,
		      value + EROFS_DIGEST_TAG_LEN);
}
