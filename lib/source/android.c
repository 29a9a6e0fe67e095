// SPDX-License-Identifier: MIT
/*
 * The Android image step (see include/erofs/source/android.h): fs_config and
 * SELinux labels applied to each inode as the scan finds it.  The two xattrs it writes,
 * security.capability and security.selinux, replace any the host had, and
 * each inode's set stays sorted by name as xattr.c expects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/source/android.h"
#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/source/fsconfig.h"
#include "erofs/common/ondisk.h"
#include "erofs/source/selinux.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

#define XATTR_NAME_CAPS		"security.capability"
#define XATTR_NAME_SELINUX	"security.selinux"
#define SECURITY_PREFIX_LEN	9	/* "security." */

/* struct vfs_cap_data, revision 2: magic, then permitted/inheritable x 2 */
#define VFS_CAP_REVISION_2	0x02000000u
#define VFS_CAP_FLAGS_EFFECTIVE	0x000001u
#define VFS_CAP_DATA_SIZE	20u

/* Shown in the "missing from the canned fs_config" error before summing up. */
#define MAX_MISSING_SHOWN	20

int erofs_android_mount_point(const struct erofs_build_options *opts, char **out)
{
	const char *mp = opts->mount_point;
	size_t len;

	*out = NULL;
	if (!mp)
		return 0;
	while (*mp == '/')
		mp++;
	for (len = strlen(mp); len && mp[len - 1] == '/'; len--)
		;
	*out = strndup(mp, len);
	return *out ? 0 : -ENOMEM;
}

/* ---- editing an inode's xattr set ---- */

static void xattr_remove(struct erofs_xattr_set **pset, const char *name)
{
	struct erofs_xattr_set *set = *pset;
	uint32_t kept = 0;

	if (!set)
		return;
	for (uint32_t i = 0; i < set->count; i++) {
		if (!strcmp(set->items[i].name, name)) {
			free(set->items[i].name);
			free(set->items[i].value);
			continue;
		}
		set->items[kept++] = set->items[i];
	}
	set->count = kept;
	if (!kept) {
		free(set);
		*pset = NULL;
	}
}

/* Adds a security.* pair (after xattr_remove of that name), keeping the order. */
static int xattr_add_security(struct erofs_xattr_set **pset, const char *name,
			      const void *value, size_t value_len)
{
	struct erofs_xattr_set *set = *pset;
	uint32_t count = set ? set->count : 0, at = 0;
	struct erofs_xattr x = {
		.name_len = (uint16_t)strlen(name),
		.value_len = (uint16_t)value_len,
		.index = EROFS_XATTR_INDEX_SECURITY,
		.prefix_len = SECURITY_PREFIX_LEN,
		.shared_id = -1,
	};

	if (value_len > EROFS_XATTR_MAX_VALUE)
		return -E2BIG;
	x.name = strdup(name);
	x.value = malloc(value_len ? value_len : 1);
	if (!x.name || !x.value)
		goto nomem;
	memcpy(x.value, value, value_len);
	set = realloc(set, sizeof(*set) + (count + 1) * sizeof(set->items[0]));
	if (!set)
		goto nomem;
	set->count = count;
	*pset = set;
	while (at < count && strcmp(set->items[at].name, name) < 0)
		at++;
	memmove(&set->items[at + 1], &set->items[at], (count - at) * sizeof(set->items[0]));
	set->items[at] = x;
	set->count++;
	return 0;
nomem:
	free(x.name);
	free(x.value);
	return -ENOMEM;
}

static int set_capabilities(struct erofs_inode *inode, uint64_t caps)
{
	uint8_t v[VFS_CAP_DATA_SIZE] = { 0 };

	xattr_remove(&inode->xattrs, XATTR_NAME_CAPS);
	if (!caps)
		return 0;
	put_le32(v, VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE);
	put_le32(v + 4, (uint32_t)caps);		/* data[0].permitted */
	put_le32(v + 12, (uint32_t)(caps >> 32));	/* data[1].permitted */
	return xattr_add_security(&inode->xattrs, XATTR_NAME_CAPS, v, sizeof(v));
}

/* ---- keys ---- */

/* "<mount point>/<path>": what fs_config knows the file as. */
static char *fsconfig_key(const char *mp, bool canned, const char *path)
{
	char *key;

	/* no mount point, or the root in a canned file (listed as "") */
	if (!mp || (canned && !path[0]))
		return strdup(path);
	return asprintf(&key, "%s/%s", mp, path) < 0 ? NULL : key;
}

char *erofs_android_device_path(const char *mp, const char *path)
{
	char *key, *r, *w;

	if (asprintf(&key, "/%s%s%s", mp ? mp : "", mp ? "/" : "", path) < 0)
		return NULL;
	for (r = w = key; *r; r++)
		if (r[0] != '/' || w == key || w[-1] != '/')
			*w++ = *r;
	*w = '\0';
	return key;
}

static const char *shown(const char *path)
{
	return path[0] ? path : "/";
}

struct erofs_android {
	const struct erofs_build_options *opts;
	char *mp;
	struct erofs_fsconfig *fc;
	struct erofs_selabel *se;
	bool xattrs;			/* -x >= 0: xattrs are stored */
	uint64_t missing;		/* paths the canned file lacks */
};

static int apply_fsconfig(struct erofs_android *c, struct erofs_inode *inode, const char *path)
{
	const struct erofs_build_options *opts = c->opts;
	struct erofs_fsconfig_result res;
	char *key = fsconfig_key(c->mp, erofs_fsconfig_is_canned(c->fc), path);
	int err;

	if (!key)
		return -ENOMEM;
	err = erofs_fsconfig_lookup(c->fc, key, erofs_inode_is_dir(inode), &res);
	if (err == -ENOENT) {
		if (c->missing++ < MAX_MISSING_SHOWN)
			erofs_err("%s: failed to find '%s' in the canned fs_config %s",
				  shown(path), key, erofs_fsconfig_source(c->fc));
		free(key);
		return 0;	/* reported together once the tree is done */
	}
	free(key);
	if (err)
		return err;

	/* the owner options still apply on top, as for the host's owners */
	erofs_set_owner(opts, inode, res.uid, res.gid);
	inode->mode = (uint16_t)((inode->mode & S_IFMT) | (res.mode & 07777));
	return c->xattrs ? set_capabilities(inode, res.capabilities) : 0;
}

static int apply_selabel(struct erofs_android *c, struct erofs_inode *inode, const char *path)
{
	char *key = erofs_android_device_path(c->mp, path), *label = NULL;
	int err;

	if (!key)
		return -ENOMEM;
	err = erofs_selabel_lookup(c->se, key, inode->mode, shown(path), &label);
	free(key);
	if (err)
		return err;
	xattr_remove(&inode->xattrs, XATTR_NAME_SELINUX);
	if (label) {
		err = xattr_add_security(&inode->xattrs, XATTR_NAME_SELINUX, label, strlen(label));
		if (err == -E2BIG)
			erofs_err("%s: SELinux label of %zu bytes is too long", shown(path),
				  strlen(label));
		free(label);
	}
	return err;
}

int erofs_android_begin(const struct erofs_build_options *opts, struct erofs_android **out)
{
	struct erofs_android *c;
	int err;

	*out = NULL;
	if (!opts->fs_config_file && !opts->product_out && !opts->file_contexts)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*out = c;
	c->opts = opts;
	c->xattrs = opts->xattr_tolerance >= 0;
	if ((err = erofs_android_mount_point(opts, &c->mp)))
		return err;
	if (opts->fs_config_file)
		err = erofs_fsconfig_load_canned(opts->fs_config_file, &c->fc);
	else if (opts->product_out)
		err = erofs_fsconfig_load_rules(opts->product_out, &c->fc);
	if (!err && opts->file_contexts && c->xattrs)
		err = erofs_selabel_open(opts->file_contexts, &c->se);
	if (err)
		return err;
	if (!c->xattrs && (opts->file_contexts || c->fc))
		erofs_warn("-x %d: extended attributes are off, so no SELinux labels and no "
			   "capabilities are stored", opts->xattr_tolerance);
	return 0;
}

int erofs_android_inode(struct erofs_android *c, struct erofs_inode *inode, const char *path)
{
	int err = 0;

	if (!c)
		return 0;
	if (c->fc)
		err = apply_fsconfig(c, inode, path);
	if (!err && c->se)
		err = apply_selabel(c, inode, path);
	if (err == -ENOMEM)
		erofs_err("out of memory applying fs_config and SELinux labels");
	return err;
}

int erofs_android_end(struct erofs_android *c, bool complete)
{
	int err = 0;

	if (!c)
		return 0;
	if (complete && c->missing) {
		if (c->missing > MAX_MISSING_SHOWN)
			erofs_err("... and %llu more paths missing",
				  (unsigned long long)(c->missing - MAX_MISSING_SHOWN));
		erofs_err("%s: the canned fs_config must list every file and directory of the "
			  "tree", erofs_fsconfig_source(c->fc));
		err = -ENOENT;
	}
	erofs_selabel_close(c->se);
	erofs_fsconfig_free(c->fc);
	free(c->mp);
	free(c);
	return err;
}
