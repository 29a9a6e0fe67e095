// SPDX-License-Identifier: MIT
/*
 * dump.erofs -s: the superblock, in erofs-utils 1.9.4's lines (feature and
 * algorithm names as it spells them), plus the compression configurations
 * and the volume name, which it does not show.  Works from the raw bytes
 * of the image's start, so that images our reader refuses are still shown;
 * every length and offset is checked against those bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "erofs/common/compalg.h"
#include "erofs/common/diag.h"
#include "erofs/dump/dump.h"
#include "erofs/common/format.h"
#include "erofs/common/kernel.h"
#include "erofs/common/ondisk.h"
#include "erofs/common/io.h"
#include "erofs/read/rdopen.h"
#include "erofs/read/zread.h"

#define ALG_BITS	16u
#define LINE		"%-46s"	/* "Filesystem ...:" padded to the value column */

static int sb_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sb_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EUCLEAN;
}

struct feature {
	uint32_t bit;
	const char *name;
};

static const struct feature compat_names[] = {
	{ EROFS_COMPAT_SB_CHKSUM, "sb_csum" },
	{ EROFS_COMPAT_MTIME, "mtime" },
	{ 0x00000004u, "xattr_filter" },
	{ EROFS_COMPAT_SHARED_EA_IN_METABOX, "shared_ea_in_metabox" },
	{ EROFS_COMPAT_PLAIN_XATTR_PFX, "plain_xattr_pfx" },
	{ 0x00000020u, "ishare_xattrs" },
};

/* bits that share a value are named twice, as erofs-utils does */
static const struct feature incompat_names[] = {
	{ EROFS_INCOMPAT_ZERO_PADDING, "lz4_0padding" },
	{ EROFS_INCOMPAT_COMPR_CFGS, "compr_cfgs" },
	{ EROFS_INCOMPAT_COMPR_CFGS, "big_pcluster" },
	{ EROFS_INCOMPAT_CHUNKED_FILE, "chunked_file" },
	{ EROFS_INCOMPAT_DEVICE_TABLE, "device_table" },
	{ EROFS_INCOMPAT_ZTAILPACKING, "ztailpacking" },
	{ EROFS_INCOMPAT_FRAGMENTS, "fragments" },
	{ EROFS_INCOMPAT_FRAGMENTS, "dedupe" },
	{ 0x00000040u, "xattr_prefixes" },
	{ 0x00000080u, "48bit" },
	{ 0x00000100u, "metabox" },
};

#define NFEATURES(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * "Required upstream Linux kernel version:", from lib/common/kernel.c's table.
 * Left out when the image needs nothing newer than 5.4 (EROFS out of
 * staging), as erofs-utils leaves it out; "none" when no release mounts it.
 */
static void print_kernel(FILE *out, const struct erofs_super *sb, uint16_t algs)
{
	const char *label = "Required upstream Linux kernel version:";
	struct erofs_kneeds needs;
	struct erofs_kversion v;
	char why[256];

	erofs_kneeds_from_super(sb, algs, &needs);
	if (!needs.features)
		return;
	v = erofs_kneeds_version(&needs);
	if (v.major) {
		fprintf(out, LINE "%u.%u\n", label, v.major, v.minor);
		return;
	}
	erofs_kneeds_describe(&needs, why, sizeof(why));
	fprintf(out, LINE "none: %s\n", label, why);
}

/* The configuration records that follow the superblock, one per algorithm
 * listed in available_compr_algs (COMPR_CFGS): a u16 length, then that
 * many bytes, each record 4-byte aligned. */
struct compr_cfgs {
	bool present[ALG_BITS];
	uint32_t len[ALG_BITS];
	const uint8_t *rec[ALG_BITS];
};

static int parse_cfgs(const uint8_t *head, size_t len, size_t off, uint16_t algs,
		      struct compr_cfgs *c, char *err, size_t errlen)
{
	unsigned int alg;

	memset(c, 0, sizeof(*c));
	for (alg = 0; alg < ALG_BITS; alg++) {
		uint32_t n;

		if (!(algs & (1u << alg)))
			continue;
		off = (off + 3) & ~(size_t)3;
		if (off + 2 > len)
			return sb_fail(err, errlen,
				       "superblock: compression config of algorithm %u at byte %zu beyond the end of the image or the first %u bytes",
				       alg, off, EROFS_DUMP_SB_BYTES);
		n = get_le16(head + off);
		if (!n)
			n = 65536;
		if (n > len - off - 2)
			return sb_fail(err, errlen,
				       "superblock: compression config of algorithm %u (%u bytes at byte %zu) beyond the end of the image or the first %u bytes",
				       alg, n, off, EROFS_DUMP_SB_BYTES);
		c->present[alg] = true;
		c->len[alg] = n;
		c->rec[alg] = head + off + 2;
		off += 2 + (size_t)n;
	}
	return 0;
}

static void print_features(FILE *out, const char *label, uint32_t mask,
			   const struct feature *names, size_t n)
{
	uint32_t known = 0;
	size_t i;

	fprintf(out, LINE, label);
	for (i = 0; i < n; i++) {
		known |= names[i].bit;
		if (mask & names[i].bit)
			fprintf(out, "%s ", names[i].name);
	}
	if (mask & ~known)
		fprintf(out, "unknown(0x%x) ", mask & ~known);
	fputc('\n', out);
}

void erofs_dump_feature_names(FILE *out, uint32_t compat, uint32_t incompat)
{
	uint32_t known = 0;
	size_t i;

	for (i = 0; i < NFEATURES(compat_names); i++)
		if (compat & compat_names[i].bit)
			fprintf(out, "%s ", compat_names[i].name);
	for (i = 0; i < NFEATURES(incompat_names); i++) {
		known |= incompat_names[i].bit;
		if (incompat & incompat_names[i].bit)
			fprintf(out, "%s ", incompat_names[i].name);
	}
	if (incompat & ~known)
		fprintf(out, "unknown(0x%x) ", incompat & ~known);
}

/* Our lines for what erofs-utils leaves out: each algorithm's settings,
 * "Filesystem <algorithm> config:" then name value pairs. */
static void print_cfgs(FILE *out, const struct compr_cfgs *c)
{
	unsigned int alg;

	for (alg = 0; alg < ALG_BITS; alg++) {
		const char *name = erofs_compr_alg_name(alg);
		const uint8_t *p = c->rec[alg];
		uint32_t n = c->len[alg];
		char label[48];

		if (!c->present[alg])
			continue;
		if (name)
			snprintf(label, sizeof(label), "Filesystem %s config:", name);
		else
			snprintf(label, sizeof(label), "Filesystem algorithm %u config:", alg);
		fprintf(out, LINE, label);
		if (alg == EROFS_COMPR_LZ4 && n >= 4)
			fprintf(out, "max_distance %u, max_pclusterblks %u\n", get_le16(p),
				get_le16(p + 2));
		else if (alg == EROFS_COMPR_LZMA && n >= 4)
			fprintf(out, "dict_size %u\n", get_le32(p));
		else if (alg == EROFS_COMPR_DEFLATE && n >= 1)
			fprintf(out, "windowbits %u\n", p[0]);
		else if (alg == EROFS_COMPR_ZSTD && n >= 2)
			fprintf(out, "windowlog %u\n", p[1] + 10u);	/* stored minus 10 */
		else
			fprintf(out, "%u bytes\n", n);
	}
}

static void print_algs(FILE *out, uint16_t algs)
{
	bool comma = false;
	unsigned int alg;

	fprintf(out, LINE, "Filesystem compr_algs:");
	for (alg = 0; alg < ALG_BITS; alg++) {
		const char *name = erofs_compr_alg_name(alg);

		if (!(algs & (1u << alg)))
			continue;
		if (comma)
			fputs(", ", out);
		if (name)
			fputs(name, out);
		else
			fprintf(out, "unknown(%u)", alg);
		comma = true;
	}
	fputc('\n', out);
}

static void print_created(FILE *out, uint64_t build_time)
{
	time_t t = (time_t)build_time;
	struct tm tm;
	char buf[64];

	/* ctime()'s form; a time localtime() cannot represent is shown raw */
	if ((uint64_t)t != build_time || build_time > INT64_MAX || !localtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(buf, sizeof(buf), "%" PRIu64 " seconds since the epoch", build_time);
	fprintf(out, LINE "%s\n", "Filesystem created:", buf);
}

/* As erofs-utils counts "Filesystem blocks": the image's and every extra
 * device's, when the device table lies inside the bytes read. */
static uint64_t total_blocks(const struct erofs_super *sb, const uint8_t *head, size_t len)
{
	uint64_t blocks = erofs_super_blocks(sb);
	uint64_t start = (uint64_t)sb->devt_slotoff * EROFS_DEVT_SLOT_BYTES;
	bool wide = sb->feature_incompat & EROFS_INCOMPAT_48BIT;

	if (!(sb->feature_incompat & EROFS_INCOMPAT_DEVICE_TABLE) ||
	    start + (uint64_t)sb->extra_devices * EROFS_DEVT_SLOT_BYTES > len)
		return blocks;
	for (unsigned int i = 0; i < sb->extra_devices; i++) {
		const uint8_t *slot = head + start + i * EROFS_DEVT_SLOT_BYTES;

		blocks += get_le32(slot + EROFS_DEVT_SLOT_BLOCKS);
		if (wide)	/* 48-bit: the count's high half */
			blocks += (uint64_t)get_le32(slot + EROFS_DEVT_SLOT_BLOCKS_HI) << 32;
	}
	return blocks;
}

int erofs_dump_super(FILE *out, const uint8_t *head, size_t len, char *err, size_t errlen)
{
	struct erofs_super sb;
	struct compr_cfgs cfgs;
	unsigned int sb_size;
	int ret;

	if (len < EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE)
		return sb_fail(err, errlen, "image too small for a superblock (%zu bytes)", len);
	erofs_super_decode(head + EROFS_SUPER_OFFSET, len - EROFS_SUPER_OFFSET, &sb);
	if (sb.magic != EROFS_MAGIC)
		return sb_fail(err, errlen, "superblock: bad magic 0x%08x (not an EROFS image)",
			       sb.magic);
	if (sb.blkszbits < EROFS_MIN_BLKSZBITS || sb.blkszbits > EROFS_MAX_BLKSZBITS)
		return sb_fail(err, errlen, "superblock: unsupported block size bits %u (want %u..%u)",
			       sb.blkszbits, EROFS_MIN_BLKSZBITS, EROFS_MAX_BLKSZBITS);
	sb_size = EROFS_SUPER_SIZE + sb.sb_extslots * EROFS_SB_EXTSLOT_SIZE;
	if (EROFS_SUPER_OFFSET + (size_t)sb_size > len)
		return sb_fail(err, errlen, "superblock: sb_extslots %u makes a %u-byte superblock beyond the end of the image",
			       sb.sb_extslots, sb_size);
	if (sb.feature_compat & EROFS_COMPAT_SB_CHKSUM) {
		size_t span = erofs_sb_checksum_span(sb.blkszbits);
		uint32_t crc;

		if (EROFS_SUPER_OFFSET + span > len)
			return sb_fail(err, errlen, "superblock: image too small for the checksummed area");
		crc = erofs_sb_checksum(head + EROFS_SUPER_OFFSET, span);
		if (crc != sb.checksum)
			return sb_fail(err, errlen,
				       "superblock: checksum mismatch (stored 0x%08x, computed 0x%08x)",
				       sb.checksum, crc);
	}
	memset(&cfgs, 0, sizeof(cfgs));
	if (sb.feature_incompat & EROFS_INCOMPAT_COMPR_CFGS) {
		ret = parse_cfgs(head, len, EROFS_SUPER_OFFSET + sb_size, sb.u1, &cfgs, err, errlen);
		if (ret)
			return ret;
	}

	fprintf(out, LINE "0x%08X\n", "Filesystem magic number:", sb.magic);
	fprintf(out, LINE "%u\n", "Filesystem blocksize:", 1u << sb.blkszbits);
	fprintf(out, LINE "%" PRIu64 "\n", "Filesystem blocks:", total_blocks(&sb, head, len));
	fprintf(out, LINE "%u\n", "Filesystem inode metadata start block:", sb.meta_blkaddr);
	fprintf(out, LINE "%u\n", "Filesystem shared xattr metadata start block:",
		sb.xattr_blkaddr);
	fprintf(out, LINE "%" PRIu64 "\n", "Filesystem root nid:", erofs_super_root_nid(&sb));
	if ((sb.feature_incompat & EROFS_INCOMPAT_FRAGMENTS) && sb.packed_nid)
		fprintf(out, LINE "%" PRIu64 "\n", "Filesystem packed nid:", sb.packed_nid);
	if (sb.feature_incompat & EROFS_INCOMPAT_METABOX)
		fprintf(out, LINE "%" PRIu64 "\n", "Filesystem metabox nid:", sb.metabox_nid);
	if (sb.feature_incompat & EROFS_INCOMPAT_COMPR_CFGS) {
		print_algs(out, sb.u1);
		print_cfgs(out, &cfgs);
	} else {
		fprintf(out, LINE "%u\n", "Filesystem lz4_max_distance:", sb.u1);
	}
	if (sb.volume_name[0]) {
		fprintf(out, LINE, "Filesystem volume name:");
		erofs_fput_escaped(out, sb.volume_name,
				   strnlen((const char *)sb.volume_name, sizeof(sb.volume_name)));
		fputc('\n', out);
	}
	if ((sb.feature_incompat & EROFS_INCOMPAT_DEVICE_TABLE) && sb.extra_devices)
		fprintf(out, LINE "%u\n", "Filesystem extra devices:", sb.extra_devices);
	fprintf(out, LINE "%u\n", "Filesystem sb_size:", sb_size);
	fprintf(out, LINE "%" PRIu64 "\n", "Filesystem inode count:", sb.inos);
	/* 48-bit: the build time is the epoch plus its delta (0x6C) */
	print_created(out, (sb.feature_incompat & EROFS_INCOMPAT_48BIT) ?
		      sb.build_time + sb.build_time_delta : sb.build_time);
	print_features(out, "Filesystem compatible features:", sb.feature_compat, compat_names,
		       NFEATURES(compat_names));
	print_features(out, "Filesystem incompatible features:", sb.feature_incompat,
		       incompat_names, NFEATURES(incompat_names));
	fprintf(out, LINE, "Filesystem UUID:");
	for (unsigned int i = 0; i < sizeof(sb.uuid); i++)
		fprintf(out, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", sb.uuid[i]);
	fputc('\n', out);
	print_kernel(out, &sb, sb.feature_incompat & EROFS_INCOMPAT_COMPR_CFGS ? sb.u1 : 0);
	return 0;
}

int erofs_dump_super_file(FILE *out, const char *path, uint64_t offset, char *err,
			  size_t errlen)
{
	struct erofs_rd_source src;
	uint8_t *head = NULL;
	char why[EROFS_DUMP_ERRLEN];
	size_t len;
	int ret;

	erofs_rd_source_init(&src, path);
	src.offset = offset;
	ret = erofs_rd_source_open_file(&src);
	if (ret) {
		snprintf(err, errlen, "%s", src.err);
		goto out;
	}
	len = src.image_bytes < EROFS_DUMP_SB_BYTES ? (size_t)src.image_bytes : EROFS_DUMP_SB_BYTES;
	head = malloc(EROFS_DUMP_SB_BYTES);
	if (!head) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ret = erofs_pread_all(src.fd, head, len, offset);
	if (ret) {
		snprintf(err, errlen, "%s: cannot read the superblock: %s", path, strerror(-ret));
		goto out;
	}
	if (erofs_dump_super(out, head, len, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", path, why);
		ret = -EUCLEAN;
	}
out:
	free(head);
	erofs_rd_source_close(&src);
	return ret;
}
