/* SPDX-License-Identifier: MIT */
/*
 * What the files of fuzz-mutate share: the seed image parsed into typed
 * fields, the mutant being made, the campaign that makes it, and what each
 * file offers the files above it.  What the tool does: fuzz-mutate.c's
 * header.  The files, lowest first (each calls only the ones below it, and
 * this is the one header of ours they include):
 *
 *   fuzz-mutate-util.c    errors, memory, reading a file
 *   fuzz-mutate-parse.c   a seed image into its table of typed fields
 *   fuzz-mutate-edit.c    the generic edits, and -E's named ones
 *   fuzz-mutate-format.c  -F's format-aware edits, built on the generic ones
 *   fuzz-mutate.c         mutant N, the data disk, the command line
 */
#ifndef QEMU_TESTS_FUZZ_MUTATE_H
#define QEMU_TESTS_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "erofs-image.h"

/* the feature bits the parser and the edits look at, and the bit that
 * puts a nid in the metabox */
#define COMPAT_XATTR_FILTER 0x4u
#define COMPAT_PLAIN_XATTR_PFX 0x10u
#define INCOMPAT_XATTR_PREFIXES 0x40u
#define INCOMPAT_48BIT 0x80u
#define INCOMPAT_METABOX 0x100u
#define NID_METABOX (1ull << 63)

enum kind {
	K_MAGIC, K_CSUM, K_FLAGS, K_BLKBITS, K_NID, K_BLKADDR, K_SIZE, K_COUNT,
	K_NAMEOFF, K_MODE, K_FORMAT, K_ENUM, K_OTHER, K_CLUSTERBITS, K_DELTA,
	K_CLUSTEROFS, K_PLEN, K_BYTEADDR, K_HI16,
};

/* a field of a seed image, as the parser typed it (kinds: kind_value) */
struct field {
	uint64_t off;		/* byte holding bit 0 of the field */
	uint8_t bit, nbits;	/* bit offset in that byte, width */
	uint8_t kind;
	const char *name;
	uint64_t nid;		/* owning inode (or 0) */
	uint64_t isize;		/* owner's i_size, for "i_size +- 1" */
};

struct region { uint64_t off, len; };

/* a seed image and what the parser found in it */
struct seed {
	const char *path, *base;
	unsigned char *img;
	size_t size;
	unsigned int blkbits;
	struct field *f;
	size_t nf;
	uint64_t *nids;		/* inodes found, with their parents */
	uint64_t *parents;
	uint64_t *inode_off;
	unsigned int *inode_len;
	size_t ninodes;
	uint64_t *blkaddrs;	/* block addresses seen in the image */
	size_t nblk;
	uint64_t *dirents;	/* offsets of 12-byte dirents */
	size_t ndirents;
	struct region *payload;	/* file data */
	size_t npayload;
	uint64_t meta_lo, meta_hi;	/* byte range holding the parsed metadata */
	unsigned char *blob;	/* SEED.img.blob: the extra device (device table seeds) */
	size_t blobsize;
	int is48;		/* INCOMPAT_48BIT */
	uint64_t mbox_nid;	/* the metabox inode (METABOX), else UINT64_MAX */
	uint64_t mbox_base, mbox_size;	/* its data, when stored flat (else size 0) */
	struct exttab *exttabs;	/* encoded extent tables (48-bit) */
	size_t nexttabs;
};

/* an encoded extent table: NRECS records of RECSZ bytes at OFF */
struct exttab {
	uint64_t off, nrecs, nid, isize;
	unsigned int recsz;
};

/*
 * One campaign: what the command line asks for and the seeds it names,
 * made in main and passed down.  Mutant N depends only on rng_seed, N and
 * the seed list (make_mutant restarts the generator for each mutant).
 */
struct campaign {
	uint64_t rng;		/* splitmix64 state */
	uint64_t rng_seed;	/* -s SEED */
	unsigned int reseal;	/* -r: percent of the mutants resealed */
	/* -F: the format-aware edits of the newer kernels' campaigns (op_format);
	 * without it mutant N is the same as before they existed */
	int format_edits;
	/* some image carries an extra device: header lines get two more fields */
	int has_blobs;
	struct seed *seeds;
	size_t nseeds;
};

/* the image being made: the seed's bytes with the edits so far, and its log line */
struct mutant {
	unsigned char *img;
	size_t size, cap;
	unsigned char *blob;	/* the extra device, if any (not owned, except by -P) */
	size_t blobsize;
	char log[4096];
	size_t loglen;
};

/* the next number of the campaign's generator (splitmix64): make_mutant
 * seeds it, and every random choice of an edit draws from it, in order */
static inline uint64_t rand64(struct campaign *c)
{
	uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* a random number below N (0 when N is 0) */
static inline uint64_t below(struct campaign *c, uint64_t n) { return n ? rand64(c) % n : 0; }
/* true PCT times in a hundred */
static inline int chance(struct campaign *c, unsigned int pct) { return below(c, 100) < pct; }

/* fuzz-mutate-util.c */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xrealloc(void *p, size_t n);
unsigned char *read_file(const char *path, size_t *size);

/* fuzz-mutate-parse.c */
void load_seed(struct campaign *c, const char *path);
void free_seeds(struct campaign *c);
void print_fields(const struct seed *s);
uint64_t mask_of(unsigned int nbits);
uint64_t field_get(const unsigned char *img, const struct field *f);
void field_put(unsigned char *img, const struct field *f, uint64_t val);
int in_image(const struct seed *s, uint64_t off, uint64_t len);
uint64_t meta_base(const struct seed *s);
uint64_t nid_off(const struct seed *s, uint64_t nid);

/* fuzz-mutate-edit.c */
void note(struct mutant *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t kind_value(struct campaign *c, const struct seed *s, const struct field *f,
		    uint64_t old);
void set_field(struct mutant *m, const struct field *f, uint64_t v, const char *op);
void op_value(struct campaign *c, const struct seed *s, struct mutant *m);
void op_arith(struct campaign *c, const struct seed *s, struct mutant *m);
void op_flip(struct campaign *c, const struct seed *s, struct mutant *m);
void op_splice(struct campaign *c, const struct seed *s, struct mutant *m);
void op_struct(struct campaign *c, const struct seed *s, struct mutant *m);
void op_bits(struct campaign *c, const struct seed *s, struct mutant *m);
void op_payload(struct campaign *c, const struct seed *s, struct mutant *m);
void op_trunc(struct campaign *c, const struct seed *s, struct mutant *m);
void apply_named(const struct seed *s, struct mutant *m, const char *edit);

/* fuzz-mutate-format.c */
void op_format(struct campaign *c, const struct seed *s, struct mutant *m);

#endif
