// SPDX-License-Identifier: MIT
/*
 * mkfs.erofs option values (mkfs/optvalues.h): numbers, -b, -E, -z and
 * its levels and dictionaries, --compress-hints, -U, --xattr-prefix and
 * --exclude-*, each refused with a message naming the option and what it
 * accepts.  mkfs/main.c's parse_args() calls them.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "erofs/common/build.h"
#include "erofs/codec/codec.h"
#include "erofs/common/diag.h"
#include "erofs/common/digest.h"
#include "erofs/common/format.h"
#include "erofs/build/mkfs.h"
#include "erofs/source/xattr.h"
#include "optvalues.h"

int mkfs_parse_int64(const char *arg, const char *what, int64_t min, int64_t max,
		       int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max) {
		erofs_err("invalid %s '%s' (expected an integer from %" PRId64 " to %" PRId64 ")",
			  what, arg, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int mkfs_parse_block_size(const char *arg, struct erofs_build_options *opts)
{
	int64_t size;

	if (mkfs_parse_int64(arg, "block size", 1, INT32_MAX, &size))
		return -EINVAL;
	for (unsigned int bits = EROFS_MIN_BLKSZBITS; bits <= EROFS_MAX_BLKSZBITS; bits++)
		if (size == 1 << bits) {
			opts->blkszbits = bits;
			return 0;
		}
	erofs_err("invalid block size %s: Linux 6.1 mounts 512, 1024, 2048 or 4096", arg);
	return -EINVAL;
}

/* -E words that set one flag of the options, as erofs-utils spells them */
static const struct {
	const char *word;
	size_t flag;		/* offsetof a bool in struct erofs_build_options */
	bool value;
} flag_words[] = {
#define FLAG(word, field, value) { word, offsetof(struct erofs_build_options, field), value }
	FLAG("inline_data", inline_data, true),
	FLAG("noinline_data", inline_data, false),
	FLAG("^inline_data", inline_data, false),
	FLAG("xattr-name-filter", xattr_name_filter, true),
	FLAG("^xattr-name-filter", xattr_name_filter, false),
	FLAG("ztailpacking", ztailpacking, true),
	FLAG("48bit", layout_48bit, true),
	FLAG("legacy-compress", legacy_index, true),	/* full 8-byte indexes */
	FLAG("nosbcrc", sb_checksum, false),
	FLAG("plain-xattr-prefixes", plain_xattr_prefixes, true),
#undef FLAG
};

/* fragments[=BYTES] or all-fragments[=BYTES]; false if opt is neither */
static bool parse_fragments(const char *opt, struct erofs_build_options *opts, int *err)
{
	const char *size = strchr(opt, '=');
	size_t len = size ? (size_t)(size - opt) : strlen(opt);
	int64_t v;

	bool all = len == strlen("all-fragments") && !strncmp(opt, "all-fragments", len);

	if (!all && !(len == strlen("fragments") && !strncmp(opt, "fragments", len)))
		return false;
	opts->fragments = true;
	opts->all_fragments |= all;
	*err = 0;
	if (size && mkfs_parse_int64(size + 1, "packed inode pcluster size", 1,
				     EROFS_PCLUSTER_MAX_SIZE, &v))
		*err = -EINVAL;
	else if (size)
		opts->packed_pcluster_size = (uint32_t)v;
	return true;
}

/* One -E word that is not a plain flag; false if unknown. */
static bool parse_extended_word(const char *opt, struct erofs_build_options *opts, int *err)
{
	*err = 0;
	if (!strcmp(opt, "force-inode-compact"))
		opts->inode_form = EROFS_FORM_COMPACT;
	else if (!strcmp(opt, "force-inode-extended"))
		opts->inode_form = EROFS_FORM_EXTENDED;
	else if (!strcmp(opt, "dedupe") || !strcmp(opt, "^dedupe"))
		opts->dedupe = opt[0] != '^', opts->dedupe_declined = opt[0] == '^';
	else if (!strcmp(opt, "dot-omitted"))
		opts->layout_48bit = opts->dot_omitted = true;
	else if (!strcmp(opt, "force-inode-blockmap"))
		opts->chunk_form = EROFS_CHUNKS_BLOCKMAP;
	else if (!strcmp(opt, "force-chunk-indexes"))
		opts->chunk_form = EROFS_CHUNKS_INDEXES;
	else if (!strcmp(opt, "fragdedupe") || !strcmp(opt, "fragdedupe=full"))
		opts->fragdedupe = EROFS_FRAGDEDUPE_FULL;
	else if (!strcmp(opt, "fragdedupe=inode"))
		opts->fragdedupe = EROFS_FRAGDEDUPE_INODE;
	else if (!strcmp(opt, "^fragdedupe"))
		opts->fragdedupe = EROFS_FRAGDEDUPE_OFF;
	else
		return parse_fragments(opt, opts, err);
	return true;
}

int mkfs_parse_extended(char *list, struct erofs_build_options *opts)
{
	for (char *save = NULL, *opt = strtok_r(list, ",", &save); opt;
	     opt = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		int err;

		while (i < sizeof(flag_words) / sizeof(flag_words[0]) && strcmp(flag_words[i].word, opt))
			i++;
		if (i < sizeof(flag_words) / sizeof(flag_words[0])) {
			*(bool *)((char *)opts + flag_words[i].flag) = flag_words[i].value;
			continue;
		}
		if (!parse_extended_word(opt, opts, &err)) {
			erofs_err("unknown extended option '%s'", opt);
			return -EINVAL;
		}
		if (err)
			return err;
	}
	return 0;
}

int mkfs_parse_zfeature_bits(const char *arg, struct erofs_build_options *opts)
{
	/* bit n turns on words[n]; a clear bit turns nothing off (erofs-utils' order) */
	static const char *const words[] = {
		"legacy-compress", "ztailpacking", "fragments", "all-fragments",
		"dedupe", "fragdedupe", "48bit", "dot-omitted",
	};
	const unsigned int nr_words = sizeof(words) / sizeof(words[0]);
	char word[32];
	int64_t bits;

	if (mkfs_parse_int64(arg, "--zfeature-bits", 0, INT32_MAX, &bits))
		return -EINVAL;
	if (bits >> nr_words) {
		erofs_err("--zfeature-bits=%s: bit %u is no feature (bits 0-%u: %s ... %s)", arg,
			  (unsigned int)(63 - __builtin_clzll((unsigned long long)bits)), nr_words - 1,
			  words[0], words[nr_words - 1]);
		return -EINVAL;
	}
	for (unsigned int n = 0; n < nr_words; n++) {
		int err;

		if (!(bits & (1 << n)))
			continue;
		snprintf(word, sizeof(word), "%s", words[n]);
		if ((err = mkfs_parse_extended(word, opts)))
			return err;
	}
	return 0;
}

/* "N", "Nk" or "Nm" bytes into out; false if not a number. */
static bool parse_bytes(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno || end == text || *text == '-')
		return false;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	*out = v;
	return !*end && v <= UINT32_MAX;
}

/* dictsize=BYTES of one algorithm, checked as the kernel will check it. */
static int check_dict_size(const struct erofs_codec_info *info, const char *text, uint64_t v)
{
	bool ok = info->has_dict && v <= info->dict_max;

	if (info->kind == EROFS_COMPRESS_LZMA)
		ok = ok && v >= 4096;
	else if (info->kind == EROFS_COMPRESS_ZSTD)	/* a power of two, 1 KiB or more */
		ok = ok && v >= 1024 && !(v & (v - 1));
	else if (info->kind == EROFS_COMPRESS_DEFLATE)	/* libdeflate's window is fixed */
		ok = ok && v == 32768;
	if (ok)
		return 0;
	if (!info->has_dict)
		erofs_err("-z %s: takes no dictsize", info->name);
	else if (info->kind == EROFS_COMPRESS_DEFLATE)
		erofs_err("-z deflate: dictsize %s: only 32768 (DEFLATE's 32 KiB window)", text);
	else
		erofs_err("-z %s: dictsize %s: want %s%u bytes at most", info->name, text,
			  info->kind == EROFS_COMPRESS_ZSTD ? "a power of two from 1024 to "
							    : "4096 to ", info->dict_max);
	return -EINVAL;
}

/*
 * -z lzma,lc=N,lp=N,pb=N (erofs-utils' "LZMA advanced options"), with the
 * bounds of liblzma and of Linux's MicroLZMA decoder: each 0-4, lc + lp 4
 * at most (checked once the entry is read).
 */
static int parse_lzma_bits(const char *name, const char *value, struct erofs_algorithm *alg)
{
	int64_t v;
	uint8_t bit = name[1] == 'c' ? EROFS_LZMA_LC : name[1] == 'p' ? EROFS_LZMA_LP : EROFS_LZMA_PB;

	if (mkfs_parse_int64(value, name, 0, 4, &v))
		return -EINVAL;
	alg->lzma_bits_given |= bit;
	if (bit == EROFS_LZMA_LC)
		alg->lzma_lc = (uint8_t)v;
	else if (bit == EROFS_LZMA_LP)
		alg->lzma_lp = (uint8_t)v;
	else
		alg->lzma_pb = (uint8_t)v;
	return 0;
}

/*
 * One -z entry, as erofs-utils spells it: NAME[,level=N][,dictsize=BYTES],
 * and NAME,N for the level too (-zlz4hc,12).
 */
int mkfs_parse_algorithm(const char *arg, size_t len, struct erofs_algorithm *alg)
{
	const char *comma = memchr(arg, ',', len);
	const struct erofs_codec_info *info =
		erofs_codec_lookup(arg, comma ? (size_t)(comma - arg) : len);
	char opt[64];

	if (!info) {
		erofs_err("-z %.*s: unknown compressor (available: lz4, lz4hc, lzma, deflate, zstd)",
			  (int)len, arg);
		return -EOPNOTSUPP;
	}
	*alg = (struct erofs_algorithm){ .kind = info->kind, .level = info->level_default };
	while (comma) {
		const char *from = comma + 1;
		size_t n;
		int64_t level;
		uint64_t bytes;
		char *value;

		comma = memchr(from, ',', len - (size_t)(from - arg));
		n = (comma ? (size_t)(comma - from) : len - (size_t)(from - arg));
		if (n >= sizeof(opt))
			n = sizeof(opt) - 1;
		memcpy(opt, from, n);
		opt[n] = '\0';
		value = strchr(opt, '=');
		if (value)
			*value++ = '\0';
		if (value && !strcmp(opt, "dictsize")) {
			if (!parse_bytes(value, &bytes)) {
				erofs_err("-z %s: invalid dictsize '%s'", info->name, value);
				return -EINVAL;
			}
			if (check_dict_size(info, value, bytes))
				return -EINVAL;
			alg->dict_size = (uint32_t)bytes;
			continue;
		}
		if (value && info->kind == EROFS_COMPRESS_LZMA &&
		    (!strcmp(opt, "lc") || !strcmp(opt, "lp") || !strcmp(opt, "pb"))) {
			if (parse_lzma_bits(opt, value, alg))
				return -EINVAL;
			continue;
		}
		if (value && strcmp(opt, "level")) {
			erofs_err("-z %s: unknown option '%s' (level=, dictsize=%s)", info->name, opt,
				  info->kind == EROFS_COMPRESS_LZMA ? ", lc=, lp=, pb=" : "");
			return -EINVAL;
		}
		if (info->level_max == 0) {
			erofs_err("-z %s: takes no level", info->name);
			return -EINVAL;
		}
		if (mkfs_parse_int64(value ? value : opt, "compression level", info->level_min,
				info->level_max, &level))
			return -EINVAL;
		if (!erofs_codec_level_ok(info, level)) {
			erofs_err("-z %s: level %" PRId64 ": want 0-9 or 100-109 (extreme)",
				  info->name, level);
			return -EINVAL;
		}
		/* lz4hc level 0 is liblz4's default, 9 */
		alg->level = info->kind == EROFS_COMPRESS_LZ4HC && !level ? 9 : (int)level;
	}
	/* an unset lc or lp is the preset's: 3 and 0 at every level */
	if ((alg->lzma_bits_given & EROFS_LZMA_LC ? alg->lzma_lc : 3) +
	    (alg->lzma_bits_given & EROFS_LZMA_LP ? alg->lzma_lp : 0) > 4) {
		erofs_err("-z %.*s: lc + lp must not exceed 4", (int)len, arg);
		return -EINVAL;
	}
	return 0;
}

/*
 * -z ALG[,LEVEL][:ALG[,LEVEL]...]: the first compresses by default, the
 * others only files that --compress-hints sends to them by index.  Each
 * file's map header names its algorithm; the superblock lists those used.
 */
int mkfs_parse_compressor(const char *arg, struct erofs_build_options *opts)
{
	unsigned int n = 0;

	for (const char *p = arg;; n++) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		int err;

		if (n == EROFS_MAX_ALGORITHMS) {
			erofs_err("-z %s: at most %u algorithms", arg, EROFS_MAX_ALGORITHMS);
			return -EINVAL;
		}
		if ((err = mkfs_parse_algorithm(p, len, &opts->algorithms[n])))
			return err;
		if (!colon)
			break;
		p = colon + 1;
	}
	opts->nr_algorithms = n + 1;
	opts->compressor = opts->algorithms[0].kind;
	opts->compress_level = opts->algorithms[0].level;
	return 0;
}

/*
 * Reads --compress-hints FILE once -b and -C are known.  A size that is
 * not a multiple of the block size gets -C's instead, with a warning
 * naming the line, as erofs-utils does: the line still matches its files.
 */
int mkfs_read_compress_hints(const char *file, struct erofs_build_options *opts)
{
	FILE *f = fopen(file, "r");
	char line[4096];
	unsigned int lineno = 0;
	int err = 0;

	if (!f) {
		err = errno;
		erofs_err("%s: cannot open compress hints: %s", file, strerror(err));
		return -err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *tok[4], *save = NULL, *p = line;
		struct erofs_compress_hint *bigger, *hint;
		int n = 0, rc;
		int64_t size, alg = 0;

		lineno++;
		while (n < 4 && (tok[n] = strtok_r(p, " \t\r\n", &save)))
			n++, p = NULL;
		if (!n || tok[0][0] == '#')
			continue;
		if (n < 2 || n > 3) {
			erofs_err("%s:%u: expected 'BYTES [ALGORITHM-INDEX] REGEX'", file, lineno);
			err = -EINVAL;
			break;
		}
		if (mkfs_parse_int64(tok[0], "pcluster size", 0, EROFS_PCLUSTER_MAX_SIZE, &size) ||
		    (n == 3 && mkfs_parse_int64(tok[1], "algorithm index", 0,
					   EROFS_MAX_ALGORITHMS - 1, &alg))) {
			erofs_err("%s:%u: bad hint", file, lineno);
			err = -EINVAL;
			break;
		}
		if (size % (1u << opts->blkszbits)) {
			erofs_warn("%s:%u: pcluster size %" PRId64 " is not a multiple of the block "
				   "size %u: the line uses -C's %u bytes", file, lineno, size,
				   1u << opts->blkszbits, opts->pcluster_size);
			size = opts->pcluster_size;
		}
		bigger = realloc(opts->hints, (opts->nr_hints + 1) * sizeof(*bigger));
		if (!bigger) {
			err = -ENOMEM;
			break;
		}
		opts->hints = bigger;
		hint = &bigger[opts->nr_hints];
		hint->pcluster_size = (uint32_t)size;
		hint->algorithm = (unsigned int)alg;
		rc = regcomp(&hint->regex, tok[n - 1], REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];

			regerror(rc, &hint->regex, msg, sizeof(msg));
			erofs_err("%s:%u: invalid regex '%s': %s", file, lineno, tok[n - 1], msg);
			err = -EINVAL;
			break;
		}
		opts->nr_hints++;
	}
	if (!err && ferror(f)) {
		err = -EIO;
		erofs_err("%s: read error", file);
	}
	fclose(f);
	return err;
}

int mkfs_parse_uuid(const char *arg, struct erofs_build_options *opts)
{
	if (!strcmp(arg, "clear"))
		memset(opts->uuid, 0, sizeof(opts->uuid));
	else if (!strcmp(arg, "random"))
		uuid_generate(opts->uuid);
	else if (uuid_parse(arg, opts->uuid)) {
		erofs_err("invalid UUID '%s'", arg);
		return -EINVAL;
	}
	return 0;
}

/* --xattr-prefix: a longer prefix of user., trusted. or security. names (Linux 6.4+) */
int mkfs_add_xattr_prefix(struct erofs_build_options *opts, const char *prefix)
{
	const char **bigger;
	uint8_t base;

	if (erofs_xattr_prefix_base(prefix, &base)) {
		erofs_err("--xattr-prefix=%s: not a longer prefix of user., trusted. or security. "
			  "names (under %u bytes)", prefix, EROFS_NAME_LEN);
		return -EINVAL;
	}
	if (opts->nr_xattr_prefixes >= EROFS_XATTR_LONG_PREFIX_MAX) {
		erofs_err("--xattr-prefix=%s: at most %u long prefixes", prefix,
			  EROFS_XATTR_LONG_PREFIX_MAX);
		return -EINVAL;
	}
	bigger = realloc(opts->xattr_prefixes, (opts->nr_xattr_prefixes + 1) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	opts->xattr_prefixes = bigger;
	bigger[opts->nr_xattr_prefixes++] = prefix;
	return 0;
}

/*
 * --xattr-inode-digest[=NAME]: the digest xattr's name (erofs.fingerprint.v1);
 * an empty NAME means the default too, as in erofs-utils 1.9.4.
 */
int mkfs_set_inode_digest(struct erofs_build_options *opts, const char *name)
{
	size_t skip;
	uint8_t base;

	if (!name || !*name)
		name = EROFS_DIGEST_NAME_DEFAULT;
	if (erofs_xattr_digest_name(name, &base, &skip)) {
		erofs_err("--xattr-inode-digest=%s: the xattr name must have 1 to 255 bytes", name);
		return -EINVAL;
	}
	opts->inode_digest = name;
	return 0;
}

/*
 * --max-extent-bytes=-N: extents of N input bytes each, packed unaligned,
 * which only the encoded extents of -E48bit can address; what would move
 * or share pclusters (tails inline or in fragments, -E dedupe) or compress
 * the metadata is refused with it.
 */
int mkfs_check_fixed_extents(const struct erofs_build_options *opts)
{
	uint32_t n = opts->max_extent_bytes;
	const char *with = opts->fragments ? (opts->all_fragments ? "-E all-fragments"
								 : "-E fragments")
			   : opts->ztailpacking ? "-E ztailpacking"
			   : opts->dedupe ? "-E dedupe"
			   : opts->metabox ? "-m" : opts->chunkbits ? "--chunksize" : NULL;

	if (!opts->layout_48bit || opts->compressor == EROFS_COMPRESS_NONE) {
		erofs_err("--max-extent-bytes=-%u: fixed-input unaligned extents need -E48bit and -z",
			  n);
		return -EINVAL;
	}
	if (n < 1u << opts->blkszbits || n > EROFS_EXTENT_DECODED_MAX) {
		erofs_err("--max-extent-bytes=-%u: between the block size (%u) and %u bytes", n,
			  1u << opts->blkszbits, EROFS_EXTENT_DECODED_MAX);
		return -EINVAL;
	}
	if (with) {
		erofs_err("--max-extent-bytes=-%u: not with %s (fixed-input extents are packed "
			  "unaligned, each file's own)", n, with);
		return -EINVAL;
	}
	return 0;
}

int mkfs_add_exclude(struct erofs_build_options *opts, const char *arg, bool regex)
{
	struct erofs_exclude *ex, *bigger;

	bigger = realloc(opts->excludes, (opts->nr_excludes + 1) * sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	opts->excludes = bigger;
	ex = &bigger[opts->nr_excludes];
	memset(ex, 0, sizeof(*ex));
	if (regex) {
		int rc = regcomp(&ex->regex, arg, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char msg[256];

			regerror(rc, &ex->regex, msg, sizeof(msg));
			erofs_err("invalid --exclude-regex '%s': %s", arg, msg);
			return -EINVAL;
		}
	} else {
		/* compare against paths relative to the source root */
		while (arg[0] == '/' || (arg[0] == '.' && arg[1] == '/'))
			arg += arg[0] == '/' ? 1 : 2;
		if (!(ex->path = strdup(arg)))
			return -ENOMEM;
		for (size_t n = strlen(ex->path); n > 1 && ex->path[n - 1] == '/'; n--)
			ex->path[n - 1] = '\0';
	}
	opts->nr_excludes++;
	return 0;
}
