/* SPDX-License-Identifier: MIT */
/*
 * Per-file content digests (--xattr-inode-digest): the xattr value is
 * "sha256:" followed by the 32 raw bytes of the SHA-256 of the file's
 * bytes, as erofs-utils 1.9.4 writes it.  SHA-256 comes from nettle.
 */
#ifndef EROFS_DIGEST_H
#define EROFS_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define EROFS_DIGEST_NAME_DEFAULT	"erofs.fingerprint.v1"
#define EROFS_DIGEST_TAG		"sha256:"
#define EROFS_DIGEST_TAG_LEN		7u
#define EROFS_SHA256_LEN		32u
#define EROFS_DIGEST_VALUE_LEN		(EROFS_DIGEST_TAG_LEN + EROFS_SHA256_LEN)

struct erofs_sha256 {
	/* nettle's struct sha256_ctx, kept opaque to the includers */
	uint64_t opaque[16];
};

void erofs_sha256_begin(struct erofs_sha256 *s);
void erofs_sha256_add(struct erofs_sha256 *s, const void *buf, size_t len);
/* Ends the hash and writes the xattr value (EROFS_DIGEST_VALUE_LEN bytes). */
void erofs_sha256_value(struct erofs_sha256 *s, uint8_t value[EROFS_DIGEST_VALUE_LEN]);

#endif
