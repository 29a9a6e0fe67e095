// SPDX-License-Identifier: MIT
/*
 * Extended attributes.  Each inode's set is sorted by name then value, so
 * the image does not depend on the order listxattr reports; pairs found on
 * more inodes than the -x tolerance are stored once in the shared area, which
 * is itself sorted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "erofs/common/diag.h"
#include "erofs/common/digest.h"
#include "erofs/common/format.h"
#include "erofs/common/ondisk.h"
#include "erofs/source/inode.h"
#include "erofs/source/xattr.h"

static const struct {
	const char *prefix;
	uint8_t len;
	uint8_t index;
	bool whole_name;	/* the ACL names are indexed as a whole */
} name_indexes[] = {
	{ "user.", 5, EROFS_XATTR_INDEX_USER, false },
	{ "system.posix_acl_access", 23, EROFS_XATTR_INDEX_POSIX_ACL_ACCESS, true },
	{ "system.posix_acl_default", 24, EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT, true },
	{ "trusted.", 8, EROFS_XATTR_INDEX_TRUSTED, false },
	{ "security.", 9, EROFS_XATTR_INDEX_SECURITY, false },
};

static size_t name_index_prefix_len(uint8_t index)
{
	for (size_t i = 0; i < sizeof(name_indexes) / sizeof(name_indexes[0]); i++)
		if (name_indexes[i].index == index)
			return name_indexes[i].len;
	return 0;
}

static bool find_index(const char *name, size_t len, struct erofs_xattr *x)
{
	for (size_t i = 0; i < sizeof(name_indexes) / sizeof(name_indexes[0]); i++) {
		size_t plen = name_indexes[i].len;

		if (len < plen || memcmp(name, name_indexes[i].prefix, plen))
			continue;
		if (name_indexes[i].whole_name ? len != plen : len == plen)
			continue;
		x->index = name_indexes[i].index;
		x->prefix_len = (uint8_t)plen;
		return true;
	}
	return false;
}

int erofs_xattr_prefix_base(const char *prefix, uint8_t *base)
{
	struct erofs_xattr x;
	size_t len = strlen(prefix);

	/* the index then covers the whole prefix: it must fit prefix_len */
	if (len >= EROFS_NAME_LEN || !find_index(prefix, len, &x) ||
	    (x.index != EROFS_XATTR_INDEX_USER && x.index != EROFS_XATTR_INDEX_TRUSTED &&
	     x.index != EROFS_XATTR_INDEX_SECURITY))
		return -EINVAL;
	*base = x.index;
	return 0;
}

/* Each record: u16 length, base index, infix; 4-byte aligned. */
static uint32_t prefix_record_size(const char *prefix, uint8_t base)
{
	size_t infix = strlen(prefix) - name_index_prefix_len(base);

	return (uint32_t)((2 + 1 + infix + 3) & ~(size_t)3);
}

int erofs_xattr_digest_name(const char *name, uint8_t *base, size_t *base_len)
{
	size_t len = strlen(name);

	if (!len || len > 255)
		return -EINVAL;
	*base = 0;
	*base_len = 0;
	for (size_t i = 0; i < sizeof(name_indexes) / sizeof(name_indexes[0]); i++) {
		size_t plen = name_indexes[i].len;

		if (len < plen || memcmp(name, name_indexes[i].prefix, plen) ||
		    (name_indexes[i].whole_name && len != plen))
			continue;
		*base = name_indexes[i].index;
		*base_len = plen;
		break;
	}
	return 0;
}

uint32_t erofs_xattr_prefix_count(const struct erofs_build_options *opts)
{
	return opts->nr_xattr_prefixes + (opts->inode_digest ? 1 : 0);
}

/* The digest's record: u16 length, base index, the name after its base. */
static uint32_t digest_record(const struct erofs_build_options *opts, uint8_t *out)
{
	size_t skip, infix;
	uint32_t size;
	uint8_t base;

	if (!opts->inode_digest || erofs_xattr_digest_name(opts->inode_digest, &base, &skip))
		return 0;
	infix = strlen(opts->inode_digest) - skip;
	size = (uint32_t)((2 + 1 + infix + 3) & ~(size_t)3);
	if (out) {
		memset(out, 0, size);
		put_le16(out, (uint16_t)(1 + infix));
		out[2] = base;
		memcpy(out + 3, opts->inode_digest + skip, infix);
	}
	return size;
}

uint32_t erofs_xattr_prefix_table_size(const struct erofs_build_options *opts)
{
	uint32_t size = 0;
	uint8_t base;

	for (uint32_t n = 0; n < opts->nr_xattr_prefixes; n++)
		if (!erofs_xattr_prefix_base(opts->xattr_prefixes[n], &base))
			size += prefix_record_size(opts->xattr_prefixes[n], base);
	return size + digest_record(opts, NULL);
}

void erofs_xattr_prefix_table_encode(const struct erofs_build_options *opts, uint8_t *out)
{
	uint8_t base;

	for (uint32_t n = 0; n < opts->nr_xattr_prefixes; n++) {
		const char *prefix = opts->xattr_prefixes[n];
		size_t skip, infix;
		uint32_t size;

		if (erofs_xattr_prefix_base(prefix, &base))
			continue;	/* mkfs refused it already */
		skip = name_index_prefix_len(base);
		infix = strlen(prefix) - skip;
		size = prefix_record_size(prefix, base);
		memset(out, 0, size);
		put_le16(out, (uint16_t)(1 + infix));
		out[2] = base;
		memcpy(out + 3, prefix + skip, infix);
		out += size;
	}
	digest_record(opts, out);
}

/*
 * The longest --xattr-prefix that covers the name (leaving a non-empty
 * suffix) replaces its short prefix.  Idempotent: planning runs twice.
 */
static void apply_long_prefix(const struct erofs_build_options *opts, struct erofs_xattr *x)
{
	size_t best = 0;
	uint8_t base;

	if (x->digest)
		return;		/* its own long prefix, set when it was added */
	if (!(x->index & EROFS_XATTR_LONG_PREFIX)) {
		x->base_index = x->index;
		x->base_len = x->prefix_len;
	}
	x->index = x->base_index;
	x->prefix_len = x->base_len;
	for (uint32_t n = 0; n < opts->nr_xattr_prefixes; n++) {
		const char *prefix = opts->xattr_prefixes[n];
		size_t len = strlen(prefix);

		if (len > best && len < x->name_len && !memcmp(x->name, prefix, len) &&
		    !erofs_xattr_prefix_base(prefix, &base) && base == x->base_index) {
			best = len;
			x->index = (uint8_t)(EROFS_XATTR_LONG_PREFIX | n);
			x->prefix_len = (uint8_t)len;
		}
	}
}

static int compare_xattrs(const struct erofs_xattr *a, const struct erofs_xattr *b)
{
	int c = strcmp(a->name, b->name);
	size_t n;

	if (c)
		return c;
	n = a->value_len < b->value_len ? a->value_len : b->value_len;
	c = memcmp(a->value, b->value, n);
	return c ? c : (int)a->value_len - (int)b->value_len;
}

static int compare_xattr_items(const void *a, const void *b)
{
	return compare_xattrs(a, b);
}

static int compare_xattr_ptrs(const void *a, const void *b)
{
	return compare_xattrs(*(const struct erofs_xattr *const *)a,
			      *(const struct erofs_xattr *const *)b);
}

/* Lists the names; the list can change between calls, so retry on ERANGE. */
static ssize_t list_names(const char *fs_path, const char *display, char **out)
{
	for (int tries = 0; tries < 8; tries++) {
		ssize_t len = llistxattr(fs_path, NULL, 0);
		char *buf;

		if (len <= 0) {
			if (len < 0 && errno != ENOTSUP && errno != ENODATA) {
				int err = errno;

				erofs_err("%s: cannot list xattrs: %s", display, strerror(err));
				return -err;
			}
			*out = NULL;
			return 0;
		}
		if (!(buf = malloc((size_t)len)))
			return -ENOMEM;
		len = llistxattr(fs_path, buf, (size_t)len);
		if (len >= 0) {
			*out = buf;
			return len;
		}
		free(buf);
		if (errno != ERANGE) {
			int err = errno;

			erofs_err("%s: cannot list xattrs: %s", display, strerror(err));
			return -err;
		}
	}
	erofs_err("%s: xattrs keep changing while being read", display);
	return -EAGAIN;
}

/* Reads one value; returns its length, 0 with *value NULL when it vanished. */
static ssize_t read_value(const char *fs_path, const char *display, const char *name,
			  uint8_t **value)
{
	for (int tries = 0; tries < 8; tries++) {
		ssize_t len = lgetxattr(fs_path, name, NULL, 0);
		uint8_t *buf;

		if (len < 0) {
			int err = errno;

			if (err == ENODATA) {
				*value = NULL;
				return 0;
			}
			erofs_err("%s: cannot read xattr %s: %s", display, name, strerror(err));
			return -err;
		}
		if (!(buf = malloc(len ? (size_t)len : 1)))
			return -ENOMEM;
		len = lgetxattr(fs_path, name, buf, (size_t)len);
		if (len >= 0) {
			*value = buf;
			return len;
		}
		free(buf);
		if (errno != ERANGE) {
			int err = errno;

			erofs_err("%s: cannot read xattr %s: %s", display, name, strerror(err));
			return -err;
		}
	}
	erofs_err("%s: xattr %s keeps changing while being read", display, name);
	return -EAGAIN;
}

int erofs_xattrs_read(const char *fs_path, const char *display_path,
		      struct erofs_xattr_set **out)
{
	const char *display = display_path[0] ? display_path : "/";
	struct erofs_xattr_set *set;
	ssize_t list_len = 0;
	char *names = NULL;
	uint32_t cap = 0;

	*out = NULL;
	list_len = list_names(fs_path, display, &names);
	if (list_len <= 0)
		return (int)list_len;
	for (ssize_t off = 0; off < list_len; off += (ssize_t)strlen(names + off) + 1)
		cap++;
	set = calloc(1, sizeof(*set) + cap * sizeof(set->items[0]));
	if (!set) {
		free(names);
		return -ENOMEM;
	}
	for (ssize_t off = 0; off < list_len; off += (ssize_t)strlen(names + off) + 1) {
		const char *name = names + off;
		struct erofs_xattr *x = &set->items[set->count];
		size_t name_len = strlen(name);
		ssize_t vlen;

		if (!find_index(name, name_len, x)) {
			erofs_warn("%s: xattr %s skipped: EROFS has no name index for it",
				   display, name);
			continue;
		}
		vlen = read_value(fs_path, display, name, &x->value);
		if (vlen < 0) {
			erofs_xattrs_free(set);
			free(names);
			return (int)vlen;
		}
		if (!x->value)
			continue;	/* removed since it was listed */
		if (vlen > EROFS_XATTR_MAX_VALUE) {
			erofs_err("%s: xattr %s: value of %zd bytes exceeds the EROFS limit of %u",
				  display, name, vlen, EROFS_XATTR_MAX_VALUE);
			free(x->value);
			erofs_xattrs_free(set);
			free(names);
			return -E2BIG;
		}
		x->name = strdup(name);
		if (!x->name) {
			free(x->value);
			erofs_xattrs_free(set);
			free(names);
			return -ENOMEM;
		}
		x->name_len = (uint16_t)name_len;
		x->value_len = (uint16_t)vlen;
		x->shared_id = -1;
		set->count++;
	}
	free(names);
	if (!set->count) {
		free(set);
		return 0;
	}
	qsort(set->items, set->count, sizeof(set->items[0]), compare_xattr_items);
	*out = set;
	return 0;
}

int erofs_xattrs_put(struct erofs_xattr_set **set, const char *name, const void *value,
		     size_t len, const char *display)
{
	struct erofs_xattr_set *s = *set;
	struct erofs_xattr x = { .shared_id = -1 }, *slot = NULL;
	size_t name_len = strlen(name);

	if (!find_index(name, name_len, &x)) {
		erofs_warn("%s: xattr %s skipped: EROFS has no name index for it", display, name);
		return 0;
	}
	if (name_len - x.prefix_len > 255 || len > EROFS_XATTR_MAX_VALUE) {
		erofs_err("%s: xattr %s: %s", display, name, len > EROFS_XATTR_MAX_VALUE ?
			  "value exceeds the EROFS limit" : "name longer than 255 bytes");
		return -E2BIG;
	}
	for (uint32_t i = 0; s && i < s->count && !slot; i++)
		if (!strcmp(s->items[i].name, name))
			slot = &s->items[i];
	x.name = strdup(name);
	x.value = malloc(len ? len : 1);
	if (!x.name || !x.value) {
		free(x.name);
		free(x.value);
		return -ENOMEM;
	}
	memcpy(x.value, value, len);
	x.name_len = (uint16_t)name_len;
	x.value_len = (uint16_t)len;
	if (!slot) {
		uint32_t count = s ? s->count : 0;
		struct erofs_xattr_set *bigger = realloc(s, sizeof(*s) +
							 (count + 1) * sizeof(s->items[0]));

		if (!bigger) {
			free(x.name);
			free(x.value);
			return -ENOMEM;
		}
		bigger->count = count + 1;
		*set = s = bigger;
		slot = &s->items[count];
	} else {
		free(slot->name);
		free(slot->value);
	}
	*slot = x;
	return 0;
}

void erofs_xattrs_remove(struct erofs_xattr_set **set, const char *name)
{
	struct erofs_xattr_set *s = *set;

	for (uint32_t i = 0; s && i < s->count; i++) {
		if (strcmp(s->items[i].name, name))
			continue;
		free(s->items[i].name);
		free(s->items[i].value);
		memmove(&s->items[i], &s->items[i + 1], (s->count - i - 1) * sizeof(s->items[0]));
		if (!--s->count) {
			free(s);
			*set = NULL;
		}
		return;
	}
}

int erofs_xattrs_add_digest(const struct erofs_build_options *opts, struct erofs_xattr_set **set)
{
	struct erofs_xattr x = { .shared_id = -1, .digest = true };
	struct erofs_xattr_set *bigger;
	uint32_t count;
	size_t skip;

	if (erofs_xattr_digest_name(opts->inode_digest, &x.base_index, &skip))
		return -EINVAL;	/* mkfs refused it already */
	erofs_xattrs_remove(set, opts->inode_digest);
	x.name = strdup(opts->inode_digest);
	x.value = calloc(1, EROFS_DIGEST_VALUE_LEN);
	if (!x.name || !x.value) {
		free(x.name);
		free(x.value);
		return -ENOMEM;
	}
	x.name_len = (uint16_t)strlen(x.name);
	x.prefix_len = (uint8_t)x.name_len;
	x.base_len = (uint8_t)skip;
	x.value_len = EROFS_DIGEST_VALUE_LEN;
	x.index = (uint8_t)(EROFS_XATTR_LONG_PREFIX | opts->nr_xattr_prefixes);
	count = *set ? (*set)->count : 0;
	bigger = realloc(*set, sizeof(*bigger) + (count + 1) * sizeof(bigger->items[0]));
	if (!bigger) {
		free(x.name);
		free(x.value);
		return -ENOMEM;
	}
	bigger->count = count + 1;
	bigger->items[count] = x;
	*set = bigger;
	erofs_xattrs_sort(bigger);
	return 0;
}

struct erofs_xattr *erofs_xattrs_digest(struct erofs_xattr_set *set)
{
	for (uint32_t i = 0; set && i < set->count; i++)
		if (set->items[i].digest)
			return &set->items[i];
	return NULL;
}

void erofs_xattrs_sort(struct erofs_xattr_set *set)
{
	if (set)
		qsort(set->items, set->count, sizeof(set->items[0]), compare_xattr_items);
}

void erofs_xattrs_free(struct erofs_xattr_set *set)
{
	if (!set)
		return;
	for (uint32_t i = 0; i < set->count; i++) {
		free(set->items[i].name);
		free(set->items[i].value);
	}
	free(set);
}

static uint32_t entry_size(const struct erofs_xattr *x)
{
	return erofs_xattr_entry_size(x->name_len - x->prefix_len, x->value_len);
}

uint32_t erofs_xattr_ibody_max(const struct erofs_xattr_set *set)
{
	uint32_t size = EROFS_XATTR_IBODY_HEADER_SIZE;

	if (!set)
		return 0;
	for (uint32_t i = 0; i < set->count; i++)
		size += entry_size(&set->items[i]);
	return size;
}

int erofs_xattr_plan(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     uint32_t first_id, struct erofs_xattr_table *table,
		     struct erofs_inode **too_big)
{
	const struct erofs_xattr **all;
	size_t total = 0, n = 0;

	memset(table, 0, sizeof(*table));
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		if (tree->inodes[i]->xattrs)
			total += tree->inodes[i]->xattrs->count;
	all = malloc((total ? total : 1) * sizeof(*all));
	table->entries = malloc((total ? total : 1) * sizeof(*table->entries));
	if (!all || !table->entries) {
		free(all);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_xattr_set *set = tree->inodes[i]->xattrs;

		for (uint32_t j = 0; set && j < set->count; j++) {
			apply_long_prefix(opts, &set->items[j]);
			/* digests stay inline, as erofs-utils keeps them */
			if (!set->items[j].digest)
				all[n++] = &set->items[j];
		}
	}

	/* equal pairs are adjacent once sorted: share runs longer than -x */
	qsort(all, n, sizeof(*all), compare_xattr_ptrs);
	for (size_t start = 0, end; start < n; start = end) {
		for (end = start + 1; end < n && !compare_xattrs(all[start], all[end]); end++)
			;
		if (end - start <= (size_t)opts->xattr_tolerance)
			continue;
		for (size_t k = start; k < end; k++)
			((struct erofs_xattr *)all[k])->shared_id =
				(int32_t)(first_id + table->size / 4);
		table->entries[table->count++] = all[start];
		table->size += entry_size(all[start]);
	}
	free(all);

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];
		struct erofs_xattr_set *set = inode->xattrs;
		uint32_t shared = 0, size = EROFS_XATTR_IBODY_HEADER_SIZE;
		/* --root-xattr-isize: room kept in the root's inline xattrs */
		uint32_t at_least = inode == tree->root ? opts->root_xattr_isize : 0;

		if (!set && !at_least)
			continue;
		for (uint32_t j = 0; set && j < set->count; j++) {
			struct erofs_xattr *x = &set->items[j];

			/* h_shared_count is a u8: the rest stays inline */
			if (x->shared_id >= 0 && shared < EROFS_XATTR_MAX_SHARED) {
				shared++;
				size += 4;
			} else {
				x->shared_id = -1;
				size += entry_size(x);
			}
		}
		/* zero bytes after the entries read as empty entries of no
		 * namespace, which Linux and erofs-utils skip */
		if (size < at_least)
			size = (at_least + 3) & ~3u;
		if (size - EROFS_XATTR_IBODY_HEADER_SIZE > 4u * 0xFFFEu) {
			*too_big = inode;
			return -E2BIG;
		}
		inode->xattr_size = size;
		table->xattr_inodes++;
		inode->xattr_icount = (uint16_t)((size - EROFS_XATTR_IBODY_HEADER_SIZE) / 4 + 1);
	}
	return 0;
}

void erofs_xattr_table_free(struct erofs_xattr_table *table)
{
	free(table->entries);
	memset(table, 0, sizeof(*table));
}

/* Writes one entry record; returns its padded size. */
static uint32_t encode_entry(const struct erofs_xattr *x, uint8_t *out)
{
	struct erofs_xattr_entry e = {
		.name_len = (uint8_t)(x->name_len - x->prefix_len),
		.name_index = x->index,
		.value_size = x->value_len,
	};
	uint32_t size = entry_size(x);

	memset(out, 0, size);
	erofs_xattr_entry_encode(&e, out);
	memcpy(out + EROFS_XATTR_ENTRY_HEADER_SIZE, x->name + x->prefix_len, e.name_len);
	memcpy(out + EROFS_XATTR_ENTRY_HEADER_SIZE + e.name_len, x->value, x->value_len);
	return size;
}

void erofs_xattr_table_encode(const struct erofs_xattr_table *table, uint8_t *out)
{
	for (uint32_t i = 0; i < table->count; i++)
		out += encode_entry(table->entries[i], out);
}

/* Bit set: no xattr of the set hashes there, so a lookup may stop at once. */
static uint32_t name_filter(const struct erofs_xattr_set *set)
{
	uint32_t present = 0;

	for (uint32_t j = 0; set && j < set->count; j++) {
		const struct erofs_xattr *x = &set->items[j];

		/* the name after its short prefix, whatever long prefix covers it */
		present |= 1u << erofs_xattr_filter_bit(x->base_index, x->name + x->base_len,
						       x->name_len - x->base_len);
	}
	return ~present;
}

void erofs_xattr_ibody_encode(const struct erofs_inode *inode, bool filter, uint8_t *out)
{
	const struct erofs_xattr_set *set = inode->xattrs;
	uint8_t *p = out + EROFS_XATTR_IBODY_HEADER_SIZE;
	uint8_t shared = 0;

	memset(out, 0, inode->xattr_size);	/* with --root-xattr-isize's padding */
	if (filter)
		put_le32(out, name_filter(set));
	if (!set)
		return;
	/* shared ids first: items are sorted like the shared area, so ids ascend */
	for (uint32_t j = 0; j < set->count; j++)
		if (set->items[j].shared_id >= 0) {
			put_le32(p, (uint32_t)set->items[j].shared_id);
			p += 4;
			shared++;
		}
	out[4] = shared;
	for (uint32_t j = 0; j < set->count; j++)
		if (set->items[j].shared_id < 0)
			p += encode_entry(&set->items[j], p);
}
