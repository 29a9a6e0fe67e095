// SPDX-License-Identifier: MIT
/*
 * Content digests (--xattr-inode-digest): the pair under the superblock's
 * ishare_xattr_prefix_id holds "sha256:" and the SHA-256 of the file's
 * bytes.  The walk notes it with the inode's xattrs; the data job that
 * reads the file hashes what the image decodes to and compares.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/check/checkwalk.h"
#include "erofs/common/digest.h"

#define HASH_PIECE	(256u << 10)

void ck_digest_note(struct checker *f, const struct place *at, uint64_t nid,
		    const struct erofs_rd_xattr *x)
{
	if (x->value_size != EROFS_DIGEST_VALUE_LEN ||
	    memcmp(x->value, EROFS_DIGEST_TAG, EROFS_DIGEST_TAG_LEN)) {
		ck_report(f, at, nid, "content digest xattr of %u bytes is not \"sha256:\" and 32 bytes",
			  x->value_size);
		return;
	}
	f->digest_seen = true;
	memcpy(f->digest, (const uint8_t *)x->value + EROFS_DIGEST_TAG_LEN, EROFS_SHA256_LEN);
}

int ck_digest_compute(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		      uint8_t out[EROFS_SHA256_LEN])
{
	uint8_t value[EROFS_DIGEST_VALUE_LEN];
	struct erofs_sha256 sha;
	uint8_t *buf = malloc(HASH_PIECE);
	int err = 0;

	if (!buf)
		ck_nomem();
	erofs_sha256_begin(&sha);
	for (uint64_t off = 0; !err && off < vi->size; off += HASH_PIECE) {
		size_t len = vi->size - off < HASH_PIECE ? (size_t)(vi->size - off) : HASH_PIECE;

		if (!(err = erofs_read_data(r, vi, buf, len, off)))
			erofs_sha256_add(&sha, buf, len);
	}
	free(buf);
	erofs_sha256_value(&sha, value);
	memcpy(out, value + EROFS_DIGEST_TAG_LEN, EROFS_SHA256_LEN);
	return err;
}

static void hex(char *out, const uint8_t *in)
{
	for (unsigned int i = 0; i < EROFS_SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", in[i]);
}

void ck_digest_compare(struct checker *f, const struct place *at, uint64_t nid,
		       const uint8_t want[EROFS_SHA256_LEN], const uint8_t got[EROFS_SHA256_LEN])
{
	char w[2 * EROFS_SHA256_LEN + 1], g[2 * EROFS_SHA256_LEN + 1];

	if (!memcmp(want, got, EROFS_SHA256_LEN))
		return;
	hex(w, want);
	hex(g, got);
	ck_report(f, at, nid, "content digest mismatch: the xattr says sha256:%s, the data hashes to %s",
		  w, g);
}
