// SPDX-License-Identifier: MIT
/* Android fs_config: canned files and rule files (see include/erofs/source/fsconfig.h). */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/diag.h"
#include "erofs/source/fsconfig.h"
#include "erofs/source/fsconfig_tables.h"
#include "erofs/common/ondisk.h"

struct canned_entry {
	char *path;
	uint32_t line;			/* later lines win over earlier ones */
	struct erofs_fsconfig_result res;
};

struct rule {
	char *pattern;			/* directory rules end in a slash and a star */
	struct erofs_fsconfig_result res;
};

struct rule_list {
	struct rule *rules;
	size_t count, cap;
};

struct erofs_fsconfig {
	bool canned;
	char *source;
	/* canned: sorted by path, one entry per path */
	struct canned_entry *entries;
	size_t nr_entries;
	/* rules: in the order they are tried */
	struct rule_list dirs, files;
};

/* ---- canned files ---- */

static int compare_canned(const void *a, const void *b)
{
	const struct canned_entry *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static bool parse_uint(const char *s, int base, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* Counts the key=value tokens that mean nothing here, to note them once. */
struct ignored_keys {
	char **keys;
	uint64_t *counts;
	size_t count;
};

static int note_ignored(struct ignored_keys *ig, const char *token)
{
	size_t len = (size_t)(strchr(token, '=') - token);
	char **keys;
	uint64_t *counts;

	for (size_t i = 0; i < ig->count; i++)
		if (strlen(ig->keys[i]) == len && !memcmp(ig->keys[i], token, len)) {
			ig->counts[i]++;
			return 0;
		}
	keys = realloc(ig->keys, (ig->count + 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ig->keys = keys;
	counts = realloc(ig->counts, (ig->count + 1) * sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	ig->counts = counts;
	if (!(keys[ig->count] = strndup(token, len)))
		return -ENOMEM;
	counts[ig->count++] = 1;
	return 0;
}

/* Parses one non-empty line into *e; returns 0, -EINVAL (after a message) or -ENOMEM. */
static int parse_canned_line(const char *file, uint32_t lineno, char *line,
			     struct canned_entry *e, struct ignored_keys *ig)
{
	char *tok[3], *save = NULL, *p, *path;
	uint64_t v[3];
	int n = 0, err;

	/* a line that starts with a space describes the root */
	if (line[0] == ' ') {
		line[0] = '\0';
		path = line;
		p = line + 1;
	} else {
		path = line;
		p = strpbrk(line, " \t");
		if (p)
			*p++ = '\0';
	}
	while (n < 3 && p && (tok[n] = strtok_r(n ? NULL : p, " \t", &save)))
		n++;
	if (n < 3) {
		erofs_err("%s:%" PRIu32 ": expected 'PATH UID GID MODE [capabilities=N]'",
			  file, lineno);
		return -EINVAL;
	}
	if (!parse_uint(tok[0], 10, UINT32_MAX, &v[0]) ||
	    !parse_uint(tok[1], 10, UINT32_MAX, &v[1]) ||
	    !parse_uint(tok[2], 8, 07777, &v[2])) {
		erofs_err("%s:%" PRIu32 ": bad uid, gid or mode in '%s %s %s' (decimal uid "
			  "and gid, octal mode up to 7777)", file, lineno, tok[0], tok[1], tok[2]);
		return -EINVAL;
	}
	e->res = (struct erofs_fsconfig_result){
		.uid = (uint32_t)v[0], .gid = (uint32_t)v[1], .mode = (uint16_t)v[2],
	};
	for (char *t; (t = strtok_r(NULL, " \t", &save)); ) {
		if (!strncmp(t, "capabilities=", 13)) {
			if (!parse_uint(t + 13, 0, UINT64_MAX, &e->res.capabilities)) {
				erofs_err("%s:%" PRIu32 ": bad capability mask '%s'", file, lineno,
					  t + 13);
				return -EINVAL;
			}
		} else if (strchr(t, '=') && t[0] != '=') {
			if ((err = note_ignored(ig, t)))
				return err;
		} else {
			erofs_err("%s:%" PRIu32 ": unexpected '%s' after the mode", file, lineno, t);
			return -EINVAL;
		}
	}

	/* "/system/bin/" and "system/bin" name the same path; "/" is the root */
	while (*path == '/')
		path++;
	for (size_t len = strlen(path); len && path[len - 1] == '/'; len--)
		path[len - 1] = '\0';
	e->path = strdup(path);
	e->line = lineno;
	return e->path ? 0 : -ENOMEM;
}

int erofs_fsconfig_load_canned(const char *file, struct erofs_fsconfig **out)
{
	struct erofs_fsconfig *fc = calloc(1, sizeof(*fc));
	struct ignored_keys ig = { 0 };
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t line_cap = 0, cap = 0, kept = 0;
	uint32_t lineno = 0;
	ssize_t len;
	int err = 0;

	*out = NULL;
	if (!f) {
		err = errno;
		erofs_err("%s: cannot open the fs_config file: %s", file, strerror(err));
		free(fc);
		return -err;
	}
	if (!fc || !(fc->source = strdup(file))) {
		err = -ENOMEM;
		goto out;
	}
	fc->canned = true;
	while ((len = getline(&line, &line_cap, f)) >= 0) {
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (fc->nr_entries == cap) {
			struct canned_entry *bigger;

			cap = cap ? cap * 2 : 256;
			bigger = realloc(fc->entries, cap * sizeof(*bigger));
			if (!bigger) {
				err = -ENOMEM;
				goto out;
			}
			fc->entries = bigger;
		}
		memset(&fc->entries[fc->nr_entries], 0, sizeof(fc->entries[0]));
		err = parse_canned_line(file, lineno, line, &fc->entries[fc->nr_entries], &ig);
		if (err) {
			free(fc->entries[fc->nr_entries].path);
			goto out;
		}
		fc->nr_entries++;
	}
	if (ferror(f)) {
		err = -EIO;
		erofs_err("%s: read error", file);
		goto out;
	}

	/* sort by path, later lines after earlier ones; keep the last of each run */
	qsort(fc->entries, fc->nr_entries, sizeof(*fc->entries), compare_canned);
	for (size_t i = 0; i < fc->nr_entries; i++) {
		if (i + 1 < fc->nr_entries &&
		    !strcmp(fc->entries[i].path, fc->entries[i + 1].path)) {
			free(fc->entries[i].path);
			continue;
		}
		fc->entries[kept++] = fc->entries[i];
	}
	fc->nr_entries = kept;
	for (size_t i = 0; i < ig.count; i++)
		erofs_note("%s: ignoring '%s=' on %" PRIu64 " line%s (only capabilities= is used)",
			   file, ig.keys[i], ig.counts[i], ig.counts[i] == 1 ? "" : "s");
out:
	for (size_t i = 0; i < ig.count; i++)
		free(ig.keys[i]);
	free(ig.keys);
	free(ig.counts);
	free(line);
	fclose(f);
	if (err == -ENOMEM)
		erofs_err("%s: out of memory reading the fs_config file", file);
	if (err) {
		erofs_fsconfig_free(fc);
		return err;
	}
	*out = fc;
	return 0;
}

/* ---- rule files ---- */

/* The partitions whose etc/fs_config_* are read, in the order they are tried. */
static const char *const rule_partitions[] = {
	"system", "vendor", "oem", "odm", "product", "system_ext",
};

/* A directory pattern matches the directory and everything below it. */
static char *dir_pattern(const char *prefix)
{
	size_t len = strlen(prefix);
	char *p = malloc(len + 3);

	if (!p)
		return NULL;
	memcpy(p, prefix, len + 1);
	if (len >= 2 && !strcmp(p + len - 2, "/*"))
		return p;
	if (len && p[len - 1] == '/')
		strcpy(p + len, "*");
	else
		strcpy(p + len, "/*");
	return p;
}

static int add_rule(struct rule_list *list, const char *prefix, bool dir,
		    const struct erofs_fsconfig_result *res)
{
	struct rule *r;

	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 64;
		struct rule *bigger = realloc(list->rules, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		list->rules = bigger;
		list->cap = cap;
	}
	r = &list->rules[list->count];
	r->pattern = dir ? dir_pattern(prefix) : strdup(prefix);
	if (!r->pattern)
		return -ENOMEM;
	r->res = *res;
	list->count++;
	return 0;
}

/*
 * One rule file: records of a 16-byte little-endian header (u16 record
 * length, u16 mode, u16 uid, u16 gid, u64 capabilities) and a NUL-terminated
 * path pattern padded to the record length.  Returns 1 when the file does not
 * exist.
 */
static int load_rule_file(const char *path, bool dir, struct rule_list *list)
{
	FILE *f = fopen(path, "rb");
	uint8_t hdr[16];
	uint64_t offset = 0;
	char *prefix = NULL;
	int err = 0;

	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		err = errno;
		erofs_err("%s: cannot open: %s", path, strerror(err));
		return -err;
	}
	for (;;) {
		size_t got = fread(hdr, 1, sizeof(hdr), f);
		struct erofs_fsconfig_result res;
		uint16_t reclen;

		if (!got)
			break;
		if (got < sizeof(hdr)) {
			erofs_err("%s: truncated record header at byte %" PRIu64, path, offset);
			err = -EINVAL;
			break;
		}
		reclen = get_le16(hdr);
		if (reclen <= sizeof(hdr)) {
			erofs_err("%s: record at byte %" PRIu64 " has a bad length %u", path,
				  offset, reclen);
			err = -EINVAL;
			break;
		}
		free(prefix);
		if (!(prefix = malloc(reclen - sizeof(hdr)))) {
			err = -ENOMEM;
			break;
		}
		if (fread(prefix, 1, reclen - sizeof(hdr), f) != reclen - sizeof(hdr)) {
			erofs_err("%s: record at byte %" PRIu64 " is truncated", path, offset);
			err = -EINVAL;
			break;
		}
		if (!memchr(prefix, '\0', reclen - sizeof(hdr))) {
			erofs_err("%s: record at byte %" PRIu64 " has no terminated path", path,
				  offset);
			err = -EINVAL;
			break;
		}
		res = (struct erofs_fsconfig_result){
			.mode = get_le16(hdr + 2) & 07777,
			.uid = get_le16(hdr + 4),
			.gid = get_le16(hdr + 6),
			.capabilities = get_le64(hdr + 8),
		};
		if ((err = add_rule(list, prefix, dir, &res)))
			break;
		offset += reclen;
	}
	if (!err && ferror(f)) {
		erofs_err("%s: read error", path);
		err = -EIO;
	}
	free(prefix);
	fclose(f);
	return err;
}

int erofs_fsconfig_load_rules(const char *product_out, struct erofs_fsconfig **out)
{
	struct erofs_fsconfig *fc = calloc(1, sizeof(*fc));
	size_t len = strlen(product_out), found = 0;
	struct stat st;
	int err = 0;

	*out = NULL;
	if (stat(product_out, &st)) {
		err = errno;
		erofs_err("--product-out %s: %s", product_out, strerror(err));
		free(fc);
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		erofs_err("--product-out %s: not a directory", product_out);
		free(fc);
		return -ENOTDIR;
	}
	if (!fc || !(fc->source = strdup(product_out))) {
		free(fc);
		return -ENOMEM;
	}
	/* product_out is usually $OUT/system: the partitions are its siblings */
	if (len && product_out[len - 1] == '/')
		len--;
	if (len >= 7 && !strncmp(product_out + len - 7, "/system", 7))
		len -= 7;
	for (size_t i = 0; !err && i < sizeof(rule_partitions) / sizeof(rule_partitions[0]); i++)
		for (int dir = 0; !err && dir < 2; dir++) {
			char *path;

			if (asprintf(&path, "%.*s/%s/etc/fs_config_%s", (int)len, product_out,
				     rule_partitions[i], dir ? "dirs" : "files") < 0) {
				err = -ENOMEM;
				break;
			}
			err = load_rule_file(path, dir, dir ? &fc->dirs : &fc->files);
			if (err == 1) {
				err = 0;
			} else if (!err) {
				found++;
			}
			free(path);
		}
	/* then libcutils' built-in tables, as fs_config() tries them */
	for (int dir = 0; !err && dir < 2; dir++) {
		size_t count;
		const struct erofs_fsconfig_builtin *table = erofs_fsconfig_builtin_table(dir, &count);

		for (size_t i = 0; !err && i < count; i++)
			err = add_rule(dir ? &fc->dirs : &fc->files, table[i].pattern, dir,
				       &table[i].res);
	}
	if (!err && !found)
		erofs_note("--product-out %s: no etc/fs_config_dirs or etc/fs_config_files "
			   "found: only libcutils' built-in tables (%s) apply", product_out,
			   EROFS_FSCONFIG_BUILTIN_VERSION);
	if (err) {
		if (err == -ENOMEM)
			erofs_err("out of memory reading the fs_config rules");
		erofs_fsconfig_free(fc);
		return err;
	}
	*out = fc;
	return 0;
}

/* The files of a partition nested in another ("system/vendor/...") also
 * answer to that partition's own patterns ("vendor/..."). */
static const char *const nested_partitions[] = {
	"system/product/", "system/system_ext/", "system/vendor/", "vendor/odm/",
};
static const char *const partition_prefixes[] = {
	"odm/", "oem/", "product/", "system_ext/", "vendor/",
};

static bool rule_matches(const char *pattern, const char *input)
{
	if (!fnmatch(pattern, input, FNM_NOESCAPE))
		return true;
	for (size_t i = 0; i < sizeof(nested_partitions) / sizeof(nested_partitions[0]); i++) {
		const char *inner;

		if (strncmp(input, nested_partitions[i], strlen(nested_partitions[i])))
			continue;
		inner = strchr(input, '/') + 1;
		for (size_t j = 0; j < sizeof(partition_prefixes) / sizeof(partition_prefixes[0]);
		     j++)
			if (!strncmp(inner, partition_prefixes[j], strlen(partition_prefixes[j])))
				return !fnmatch(pattern, inner, FNM_NOESCAPE);
	}
	return false;
}

static int lookup_rules(const struct erofs_fsconfig *fc, const char *key, bool dir,
			struct erofs_fsconfig_result *res)
{
	const struct rule_list *list = dir ? &fc->dirs : &fc->files;
	size_t len = strlen(key);
	char *input = malloc(len + 2);

	if (!input)
		return -ENOMEM;
	memcpy(input, key, len + 1);
	/* a directory is matched with a trailing slash, against the pattern plus a star */
	if (dir && (!len || key[len - 1] != '/'))
		strcpy(input + len, "/");
	for (size_t i = 0; i < list->count; i++)
		if (rule_matches(list->rules[i].pattern, input)) {
			*res = list->rules[i].res;
			free(input);
			return 0;
		}
	free(input);
	*res = (struct erofs_fsconfig_result){ .mode = dir ? 0755 : 0644 };
	return 0;
}

static int compare_key(const void *key, const void *entry)
{
	return strcmp(key, ((const struct canned_entry *)entry)->path);
}

int erofs_fsconfig_lookup(const struct erofs_fsconfig *fc, const char *key, bool dir,
			  struct erofs_fsconfig_result *res)
{
	const struct canned_entry *e;

	while (*key == '/')
		key++;
	if (!fc->canned)
		return lookup_rules(fc, key, dir, res);
	e = bsearch(key, fc->entries, fc->nr_entries, sizeof(*fc->entries), compare_key);
	if (!e)
		return -ENOENT;
	*res = e->res;
	return 0;
}

const char *erofs_fsconfig_source(const struct erofs_fsconfig *fc)
{
	return fc->source;
}

bool erofs_fsconfig_is_canned(const struct erofs_fsconfig *fc)
{
	return fc->canned;
}

static void free_rules(struct rule_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->rules[i].pattern);
	free(list->rules);
}

void erofs_fsconfig_free(struct erofs_fsconfig *fc)
{
	if (!fc)
		return;
	for (size_t i = 0; i < fc->nr_entries; i++)
		free(fc->entries[i].path);
	free(fc->entries);
	free_rules(&fc->dirs);
	free_rules(&fc->files);
	free(fc->source);
	free(fc);
}
