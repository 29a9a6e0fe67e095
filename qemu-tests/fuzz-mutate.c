/* SPDX-License-Identifier: MIT */
/*
 * fuzz-mutate: the structure-aware image mutator of the kernel fuzz campaign
 * (qemu-tests/fuzz.sh; design: ROBUSTNESS.md, "Kernel fuzz campaign").
 *
 *   fuzz-mutate [-s SEED] [-f FIRST] [-n COUNT] [-r RESEAL%] -o DISK [-l LOG]
 *               SEED.img...
 *       writes COUNT mutants (numbered FIRST..FIRST+COUNT-1) into the data
 *       disk DISK: a text header (see below), then the images, each 4 KiB
 *       aligned.  LOG gets one line per mutant: its number, seed image and
 *       every edit applied (offset, width, field, old and new value).
 *   fuzz-mutate -x NUMBER [-s SEED] [-r RESEAL%] -o IMG SEED.img...
 *       regenerates mutant NUMBER alone into IMG (mutant N depends only on
 *       SEED, N and the seed list, so any image of a campaign can be rebuilt).
 *   fuzz-mutate -P -o DISK IMG...
 *       packs IMGs unchanged into a data disk of the same format (to replay
 *       kept images in the guest).
 *   fuzz-mutate -p SEED.img
 *       prints the fields the parser found (a debugging aid).
 *   fuzz-mutate -E NAME[#WHO]=VALUE [-E ...] -o IMG SEED.img
 *       named edits of one seed (the findings' reproducers; see
 *       apply_named in fuzz-mutate-edit.c), resealed.
 *   fuzz-mutate -R IMG
 *       reseals IMG's superblock checksum in place (fuzz.sh --reduce).
 *
 * Disk header: "FORGE-FUZZ 1 COUNT HEADER_BYTES\n", then one line per image,
 * "NUMBER OFFSET SIZE[ BLOB_OFFSET BLOB_SIZE]\n", NUL-padded to HEADER_BYTES
 * (a multiple of 4096).  A seed SEED.img with a SEED.img.blob beside it (a
 * --blobdev or --tar=i image) carries that file as its extra device: the
 * guest mounts the image with -o device= on it (-P does the same for
 * IMG.blob, -x writes IMG.blob).
 *
 * -F adds the format-aware edits of the newer kernels' campaigns (fuzz.sh
 * --kernel): 48-bit fields (rootnid_8b, blocks_hi, i_nb start-block high
 * bits, device slot high bits), the metabox nid, encoded extent records
 * (plen, pstart, lstart), the long xattr prefix table, and one "format"
 * edit in 20% of the edits:
 *
 *   ext-*      extent records swapped, overlapping (logically or
 *              physically), going backwards, starting past i_size
 *   stream     compressed lengths that lie: plen, i_size of a compressed
 *              file +- up to a block, h_idata_size, i_compressed_blocks, a
 *              pcluster address shifted by one
 *   mbox-*     the metabox nid inside its own data, the root or the packed
 *              inode as the metabox or past its data, its size and mode
 *   addr48     high 16 address bits set: past any device
 *   pfx-*      xattr name indexes past the prefix table, its count and
 *              records lying
 *   filter     the xattr name filter turned on with bits that lie
 *   dev-*      device slots of absurd sizes, device ids past the table
 *   blob-trunc the extra device shorter than the slot says (5%)
 *
 * Each seed image (a valid image of our mkfs.erofs) is parsed once into a
 * table of typed fields: every superblock field, the compression config
 * records, the device table, every inode reachable from the root (and the
 * packed inode) with its xattr ibody header, shared ids and entries, the
 * shared xattr entries it references, directory entries, the compressed
 * map header and every lcluster index (full, or compact 2B/4B packs down
 * to their bitfields), chunk indexes and block maps.  A mutant is the seed
 * with 1..8 edits:
 *
 *   value    a field set to an interesting value for its width and kind: 0,
 *            1, all-ones, signed min/max, powers of two (+-1), block size
 *            +-1, page size +-1, the owner's i_size +-1, 2^31/2^32
 *            boundaries; nids, block addresses and name offsets also take
 *            values from the image (another inode, itself, its parent, the
 *            metadata area, past the end)
 *   arith    a field +- 1..35
 *   flip     one bit of a field
 *   splice   an inode copied over another (same seed or another seed), a
 *            dirent over another, or a block from another seed with the same
 *            block size
 *   struct   two dirents swapped (unsorted names), a name duplicated, a
 *            NONHEAD lookback chain, the whole-file fragment bit with a
 *            huge i_size, wider lclusters, the interlaced bit, a large
 *            h_shared_count
 *   bits     low weight: random bit flips anywhere in the metadata blocks
 *   payload  low weight: random bytes in file data
 *   trunc    low weight: the image cut at a block boundary
 *
 * Then the superblock checksum is resealed (RESEAL%, default 95, of the
 * mutants whose superblock claims one), so most edits get past it.
 *
 * This file makes mutant N (make_mutant: the mix of edits above), writes
 * the data disk and reads the command line; fuzz-mutate.h lists the files
 * that parse the seeds and make the edits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-mutate.h"

#define ALIGN_DISK 4096u
#define MAX_EDITS 8

/* mutant NUMBER of the campaign; returns the seed used */
static const struct seed *make_mutant(struct campaign *c, uint64_t number, struct mutant *m)
{
	const struct seed *s;
	unsigned int nedits = 1;
	int cut = 0;

	c->rng = c->rng_seed * 0x9E3779B97F4A7C15ull ^ (number + 1) * 0xD1B54A32D192ED03ull;
	rand64(c);
	s = &c->seeds[below(c, c->nseeds)];
	if (m->cap < s->size) {
		m->cap = s->size;
		m->img = xrealloc(m->img, m->cap);
	}
	memcpy(m->img, s->img, s->size);
	m->size = s->size;
	m->blob = s->blob;
	m->blobsize = s->blobsize;
	m->loglen = 0;
	note(m, "%s:", s->base);
	/* the extra device shorter than its slot says */
	if (c->format_edits && s->blob && chance(c, 5)) {
		m->blobsize = below(c, s->blobsize >> s->blkbits) << s->blkbits;
		note(m, " blob-trunc %zu->%zu;", s->blobsize, m->blobsize);
	}
	while (nedits < MAX_EDITS && chance(c, 45))
		nedits++;
	for (unsigned int i = 0; i < nedits; i++) {
		unsigned int r = (unsigned int)below(c, 100);

		if (c->format_edits && r < 20)
			op_format(c, s, m);
		else if (r < 50)
			op_value(c, s, m);
		else if (r < 62)
			op_arith(c, s, m);
		else if (r < 72)
			op_flip(c, s, m);
		else if (r < 80)
			op_splice(c, s, m);
		else if (r < 88)
			op_struct(c, s, m);
		else if (r < 94)
			op_bits(c, s, m);
		else if (r < 98)
			op_payload(c, s, m);
		else
			cut = 1;
	}
	if (cut)
		op_trunc(c, s, m);
	if ((get32(m->img + SB_OFF + 8) & COMPAT_SB_CHKSUM) && chance(c, c->reseal)) {
		int64_t csum = erofs_sb_csum(m->img, m->size);

		if (csum >= 0)
			put32(m->img + SB_OFF + 4, (uint32_t)csum);
		else
			note(m, " (no reseal: bad blkszbits);");
	} else {
		note(m, " (not resealed);");
	}
	return s;
}

/* ---------------------------------------------------------------- main --- */

static void write_all(int fd, const void *buf, size_t len, uint64_t off, const char *what)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (n <= 0)
			die("%s: write failed: %s", what, strerror(errno));
		done += (size_t)n;
	}
}

/* fills M with image NUMBER of a disk: its bytes, extra device and log line */
typedef void make_image_fn(void *ctx, uint64_t number, struct mutant *m);

/*
 * Write COUNT images into the data disk OUT: image I is made by
 * MAKE(CTX, I, &mutant).  HAS_BLOBS: some image carries an extra device,
 * so the header needs room for two more fields a line.
 */
static void write_disk(const char *out, uint64_t first, uint64_t count, int has_blobs, FILE *log,
		       make_image_fn *make, void *ctx)
{
	struct mutant m = { 0 };
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t hdrcap = 64 + (has_blobs ? 96 : 48) * count, hdrlen;
	uint64_t hdrbytes = (hdrcap + ALIGN_DISK - 1) / ALIGN_DISK * ALIGN_DISK, off = hdrbytes;
	char *hdr = xrealloc(NULL, hdrbytes);

	if (fd < 0)
		die("%s: %s", out, strerror(errno));
	memset(hdr, 0, hdrbytes);
	hdrlen = (size_t)snprintf(hdr, hdrcap, "FORGE-FUZZ 1 %" PRIu64 " %" PRIu64 "\n", count,
				  hdrbytes);
	for (uint64_t i = 0; i < count; i++) {
		make(ctx, first + i, &m);
		write_all(fd, m.img, m.size, off, out);
		hdrlen += (size_t)snprintf(hdr + hdrlen, hdrcap - hdrlen, "%" PRIu64 " %" PRIu64
					   " %zu", first + i, off, m.size);
		off += (m.size + ALIGN_DISK - 1) / ALIGN_DISK * ALIGN_DISK;
		if (m.blob) {	/* "BLOB_OFFSET BLOB_SIZE": the image's extra device */
			if (m.blobsize)
				write_all(fd, m.blob, m.blobsize, off, out);
			hdrlen += (size_t)snprintf(hdr + hdrlen, hdrcap - hdrlen, " %" PRIu64 " %zu",
						   off, m.blobsize);
			off += (m.blobsize + ALIGN_DISK - 1) / ALIGN_DISK * ALIGN_DISK;
		}
		hdr[hdrlen++] = '\n';
		if (log)
			fprintf(log, "%" PRIu64 " %s\n", first + i, m.log);
	}
	write_all(fd, hdr, hdrbytes, 0, out);
	if (ftruncate(fd, (off_t)off) < 0 || close(fd) < 0)
		die("%s: %s", out, strerror(errno));
	free(hdr);
	free(m.img);
}

/* CTX: the campaign */
static void make_numbered(void *ctx, uint64_t number, struct mutant *m)
{
	make_mutant(ctx, number, m);
}

/* CTX: the image files of -P */
static void make_packed(void *ctx, uint64_t i, struct mutant *m)
{
	char **files = ctx;
	char bp[4096];
	struct stat st;

	free(m->img);
	free(m->blob);
	m->img = read_file(files[i], &m->size);
	m->cap = m->size;
	m->blob = NULL;
	m->blobsize = 0;
	snprintf(bp, sizeof(bp), "%s.blob", files[i]);
	if (!stat(bp, &st))
		m->blob = read_file(bp, &m->blobsize);
	m->loglen = 0;
	note(m, "%s (unchanged)", files[i]);
}

int main(int argc, char **argv)
{
	struct campaign c = { .rng_seed = 1, .reseal = 95 };
	uint64_t first = 0, count = 100, only = UINT64_MAX;
	const char *out = NULL, *logpath = NULL;
	int opt, print = 0, pack = 0, reseal_only = 0;
	const char *edits[32];
	int nedits = 0;

	while ((opt = getopt(argc, argv, "s:f:n:r:o:l:x:pPFE:R")) != -1) {
		switch (opt) {
		case 's': c.rng_seed = strtoull(optarg, NULL, 0); break;
		case 'f': first = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'r': c.reseal = (unsigned int)atoi(optarg); break;
		case 'o': out = optarg; break;
		case 'l': logpath = optarg; break;
		case 'x': only = strtoull(optarg, NULL, 0); break;
		case 'p': print = 1; break;
		case 'P': pack = 1; break;
		case 'F': c.format_edits = 1; break;
		case 'R': reseal_only = 1; break;
		case 'E':
			if (nedits == 32)
				die("at most 32 -E");
			edits[nedits++] = optarg;
			break;
		default: return 2;
		}
	}
	if (reseal_only && optind + 1 == argc) {	/* -R IMG: reseal in place */
		size_t size;
		unsigned char *img = read_file(argv[optind], &size);
		int64_t csum = size >= SB_OFF + 128 ? erofs_sb_csum(img, size) : -1;
		int fd;

		if (csum < 0 || !(get32(img + SB_OFF + 8) & COMPAT_SB_CHKSUM)) {
			free(img);
			return 0;
		}
		put32(img + SB_OFF + 4, (uint32_t)csum);
		fd = open(argv[optind], O_WRONLY);
		if (fd < 0)
			die("%s: %s", argv[optind], strerror(errno));
		write_all(fd, img + SB_OFF + 4, 4, SB_OFF + 4, argv[optind]);
		free(img);
		return close(fd) ? 1 : 0;
	}
	if (optind >= argc || (!out && !print)) {
		fprintf(stderr, "usage: fuzz-mutate [-s SEED] [-f FIRST] [-n COUNT] [-r RESEAL%%] [-F] "
				"-o DISK [-l LOG] SEED.img...\n"
				"       fuzz-mutate -x NUMBER [-s SEED] [-F] -o IMG SEED.img...\n"
				"       fuzz-mutate -P -o DISK IMG...\n"
				"       fuzz-mutate -E NAME[#NID|root|mbox|packed]=VALUE... -o IMG SEED.img\n"
				"       fuzz-mutate -R IMG\n"
				"       fuzz-mutate -p SEED.img...\n");
		return 2;
	}
	if (pack) {
		write_disk(out, 0, (uint64_t)(argc - optind), 1, NULL, make_packed, argv + optind);
		return 0;
	}
	for (int i = optind; i < argc; i++)
		load_seed(&c, argv[i]);
	if (print) {
		for (size_t i = 0; i < c.nseeds; i++)
			print_fields(&c.seeds[i]);
		free_seeds(&c);
		return 0;
	}
	for (size_t i = 0; i < c.nseeds; i++)
		if (!c.seeds[i].nf || !c.seeds[i].ninodes)
			die("%s: nothing parsed", c.seeds[i].path);
	if (nedits) {	/* named edits of the one seed, resealed */
		struct mutant m = { 0 };
		int fd;

		if (c.nseeds != 1 || !out)
			die("-E: one seed image and -o IMG");
		m.img = xrealloc(NULL, c.seeds[0].size);
		memcpy(m.img, c.seeds[0].img, c.seeds[0].size);
		m.size = c.seeds[0].size;
		for (int i = 0; i < nedits; i++)
			apply_named(&c.seeds[0], &m, edits[i]);
		if (get32(m.img + SB_OFF + 8) & COMPAT_SB_CHKSUM) {
			int64_t csum = erofs_sb_csum(m.img, m.size);

			if (csum >= 0)
				put32(m.img + SB_OFF + 4, (uint32_t)csum);
		}
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("%s: %s", out, strerror(errno));
		write_all(fd, m.img, m.size, 0, out);
		fprintf(stderr, "%s%s\n", c.seeds[0].base, m.log);
		free(m.img);
		free_seeds(&c);
		return close(fd) ? 1 : 0;
	}

	if (only != UINT64_MAX) {
		struct mutant m = { 0 };
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			die("%s: %s", out, strerror(errno));
		make_mutant(&c, only, &m);
		write_all(fd, m.img, m.size, 0, out);
		if (m.blob) {
			char bp[4096];
			int bfd;

			snprintf(bp, sizeof(bp), "%s.blob", out);
			bfd = open(bp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (bfd < 0)
				die("%s: %s", bp, strerror(errno));
			if (m.blobsize)
				write_all(bfd, m.blob, m.blobsize, 0, bp);
			close(bfd);
		}
		fprintf(stderr, "%" PRIu64 " %s\n", only, m.log);
		free(m.img);
		free_seeds(&c);
		return close(fd) ? 1 : 0;
	}

	FILE *log = logpath ? fopen(logpath, "w") : NULL;

	if (logpath && !log)
		die("%s: %s", logpath, strerror(errno));
	write_disk(out, first, count, c.has_blobs, log, make_numbered, &c);
	if (log && fclose(log))
		die("%s: write failed", logpath);
	free_seeds(&c);
	return 0;
}
