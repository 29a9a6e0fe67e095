/* SPDX-License-Identifier: MIT */
/*
 * Fragments (-E fragments, -E all-fragments): file tails, or whole small
 * files, are stored back to back in the data of one hidden "packed" inode,
 * which is then compressed like any file; a fragment is read at its offset
 * in the packed inode's decoded data.  The packed data waits in a scratch
 * file while the tree is compressed.  Identical fragments are stored once
 * (strong hash, then a byte compare against the stored copy); with
 * -E fragdedupe=full (the default, as in erofs-utils) so is a fragment that
 * ends a stored one: it points into that one's last bytes, found by the
 * hash of their last EROFS_FRAGMENT_TAIL_KEY bytes.  A fragment that only
 * shares its end with a stored one is cut by the committer (zcommit.c):
 * its head is compressed on its own, its end points into the stored one.
 */
#ifndef EROFS_FRAGMENT_H
#define EROFS_FRAGMENT_H

#include <stdbool.h>
#include <stdint.h>

struct erofs_fragment_slot;
struct erofs_fragment_tail;

/* fragments shorter than this are only shared when identical */
#define EROFS_FRAGMENT_TAIL_KEY	64u

struct erofs_packed {
	int fd;			/* scratch file holding the packed data; -1: none */
	uint64_t size;		/* bytes appended so far */
	struct erofs_fragment_slot *slots;	/* open-addressing index of fragments */
	uint32_t nr_slots, nr_used;
	bool suffixes;		/* share a fragment that ends a stored one */
	struct erofs_fragment_tail *tails;	/* stored fragments by their last bytes */
	uint32_t nr_tail_slots, nr_tails;
	uint32_t nr_fragments;	/* fragments referenced (stored or shared) */
	uint32_t nr_shared;	/* of which found already stored */
	uint64_t shared_bytes;	/* bytes those did not store again */
};

/* suffixes: -E fragdedupe=full (see above) */
int erofs_packed_open(struct erofs_packed *p, const char *image, bool suffixes);
void erofs_packed_close(struct erofs_packed *p);

/*
 * Stores len bytes (or finds them stored, whole or, with suffixes, as the
 * end of a stored fragment) and returns their offset in *off.  With dedupe
 * false the bytes are appended without a lookup and not indexed, for a
 * fragment that continues the previous one (a file packed in pieces), or
 * after -E ^fragdedupe.
 */
int erofs_packed_add(struct erofs_packed *p, const uint8_t *data, uint32_t len, bool dedupe,
		     uint64_t *off);

/*
 * The longest run that ends both data and a stored fragment (one indexed
 * for its last EROFS_FRAGMENT_TAIL_KEY bytes), in *common (0 when none),
 * and where that fragment ends in the packed data, in *stored_end.  With
 * suffixes only.
 */
int erofs_packed_common_suffix(const struct erofs_packed *p, const uint8_t *data, uint32_t len,
			       uint32_t *common, uint64_t *stored_end);

/*
 * The packed data's last bytes, at most want of them, into buf; their
 * count in *got.
 */
int erofs_packed_read_end(const struct erofs_packed *p, uint8_t *buf, uint32_t want,
			  uint32_t *got);

/*
 * Forgets the bytes appended since the packed data was `size` long: the
 * pieces of a file then stored another way.  Only pieces appended without
 * a lookup may be taken back (no index entry points at them).
 */
void erofs_packed_truncate(struct erofs_packed *p, uint64_t size);

#endif
