// SPDX-License-Identifier: MIT
/*
 * dump.erofs --path / --nid: one inode's details in erofs-utils 1.9.4's
 * lines, then on request its directory listing (--ls), its extents (-e,
 * with each compressed extent's algorithm after a '#', and as erofs-utils
 * the device of one on an extra device), its extended attributes (-x,
 * ours) or its data (--cat).  Everything goes through the reader's checked
 * accessors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "erofs/common/compalg.h"
#include "erofs/common/diag.h"
#include "erofs/dump/dump.h"

static uint64_t on_disk_size(const struct erofs_reader *r, const struct erofs_rd_inode *vi)
{
	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	    vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT)
		return (uint64_t)vi->di.u << r->blkszbits;
	return vi->size;
}

static void print_details(struct erofs_dump *d, const struct erofs_rd_inode *vi,
			  const char *shown)
{
	FILE *out = d->out;
	uint64_t disk = on_disk_size(d->r, vi);
	unsigned int perm = vi->di.mode & 0777, i;
	char access[10], when[64];
	time_t t = (time_t)vi->mtime;
	struct tm tm;

	for (i = 0; i < 9; i++)
		access[i] = perm & (0400u >> i) ? "rwxrwxrwx"[i] : '-';
	access[9] = '\0';
	if ((int64_t)t != vi->mtime || !localtime_r(&t, &tm) ||
	    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(when, sizeof(when), "%" PRId64, vi->mtime);

	fputs("Path : ", out);
	erofs_fput_escaped(out, shown, strlen(shown));
	fputc('\n', out);
	fprintf(out, "Size: %" PRIu64 "  On-disk size: %" PRIu64 "  %s\n", vi->size, disk,
		erofs_dump_ftype_name(vi->di.mode));
	fprintf(out, "NID: %" PRIu64 "   Links: %u   Layout: %u   Compression ratio: %.2f%%\n",
		vi->nid, vi->di.nlink, vi->layout, (double)(100 * disk) / (double)vi->size);
	fprintf(out, "Inode size: %u   Xattr size: %u\n", vi->isize, vi->xattr_isize);
	fprintf(out, "Uid: %u   Gid: %u  Access: %04o/%s\n", vi->di.uid, vi->di.gid, perm, access);
	fprintf(out, "Timestamp: %s.%09u\n", when, vi->mtime_nsec);
}

/* ---- --ls ---- */

static int ls_entry(void *arg, const struct erofs_rd_dentry *de)
{
	FILE *out = arg;

	fprintf(out, "%10" PRIu64 "    %u  ", de->nid, de->file_type);
	erofs_fput_escaped(out, de->name, de->namelen);
	fputc('\n', out);
	return 0;
}

static int list_dir(struct erofs_dump *d, const struct erofs_rd_inode *vi, const char *shown,
		    uint64_t parent)
{
	int err;

	fputs("\n       NID TYPE  FILENAME\n", d->out);
	if (!S_ISDIR(vi->di.mode))
		return erofs_dump_fail(d, -ENOTDIR, "%s (nid %" PRIu64 "): not a directory",
				       shown, vi->nid);
	err = erofs_dir_iterate_flags(d->r, vi, parent, EROFS_DIR_WITH_DOTS, ls_entry, d->out);
	if (err)
		return erofs_dump_reader_fail(d, err, shown, vi->nid);
	return 0;
}

/* ---- -e ---- */

static void extent_note(struct erofs_dump *d, const struct erofs_map *map)
{
	const char *alg = erofs_compr_alg_name(map->alg);

	if (map->flags & EROFS_MAP_FRAGMENT) {
		fprintf(d->out, "  # fragment at %" PRIu64 " of the packed inode", map->pa);
	} else if (map->flags & EROFS_MAP_ENCODED) {
		if (alg)
			fprintf(d->out, "  # %s", alg);
		else
			fprintf(d->out, "  # algorithm %u", map->alg);
		if (map->flags & EROFS_MAP_META)
			fputs(", inline", d->out);
	} else if ((map->flags & EROFS_MAP_MAPPED) && map->device) {
		/* as erofs-utils: pa is then an offset on that device */
		fprintf(d->out, "  # device %u", map->device);
	} else if (!(map->flags & EROFS_MAP_MAPPED)) {
		fputs("  # hole", d->out);
	}
	fputc('\n', d->out);
}

static int list_extents(struct erofs_dump *d, const struct erofs_rd_inode *vi, const char *shown)
{
	const bool compressed = vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
				vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
	uint64_t la = 0, count = 0;

	fputs("\n Ext:   logical offset   |  length :     physical offset    |  length\n", d->out);
	if (S_ISREG(vi->di.mode) || S_ISDIR(vi->di.mode) || S_ISLNK(vi->di.mode)) {
		while (la < vi->size) {
			struct erofs_map map;
			uint64_t pa = 0, plen = 0;
			int err = erofs_map_blocks(d->r, vi, la, &map);

			if (err)
				return erofs_dump_reader_fail(d, err, shown, vi->nid);
			la = map.la + map.llen;
			/* erofs-utils shows fragments at 0, 0 bytes long, and
			 * holes of chunked files at the null block address */
			if ((map.flags & EROFS_MAP_MAPPED) && !(map.flags & EROFS_MAP_FRAGMENT)) {
				pa = map.pa;
				plen = map.plen;
			} else if (vi->flat_hole) {
				plen = map.llen;	/* 48-bit, no block: at 0, unpadded */
			} else if (!(map.flags & EROFS_MAP_MAPPED) && !compressed) {
				pa = (uint64_t)EROFS_NULL_ADDR << d->r->blkszbits;
				plen = map.llen;
			}
			/* and the last block of block-mapped data whole */
			if (!compressed && !(map.flags & EROFS_MAP_META) && !vi->flat_hole &&
			    la == vi->size && (la & (d->r->blksz - 1))) {
				uint64_t pad = d->r->blksz - (la & (d->r->blksz - 1));

				map.llen += pad;
				if (plen)
					plen += pad;
			}
			fprintf(d->out, "%4" PRIu64 ": %8" PRIu64 "..%8" PRIu64 " | %7" PRIu64
				" : %10" PRIu64 "..%10" PRIu64 " | %7" PRIu64, count++, map.la,
				map.la + map.llen, map.llen, pa, pa + plen, plen);
			extent_note(d, &map);
		}
	}
	erofs_fput_escaped(d->out, shown, strlen(shown));
	fprintf(d->out, ": %" PRIu64 " extents found\n", count);
	return 0;
}

/* ---- -x ---- */

static int count_xattr(void *arg, const struct erofs_rd_xattr *x)
{
	(*(unsigned int *)arg)++;
	return 0;
}

/* A value as getfattr --encoding=text writes it: quoted, with \ooo for
 * bytes that are not printable ASCII and for '"' and '\'. */
static void put_value(FILE *out, const uint8_t *v, unsigned int len)
{
	fputc('"', out);
	for (unsigned int i = 0; i < len; i++) {
		if (v[i] < 0x20 || v[i] >= 0x7f || v[i] == '"' || v[i] == '\\')
			fprintf(out, "\\%03o", v[i]);
		else
			fputc(v[i], out);
	}
	fputc('"', out);
}

static int print_xattr(void *arg, const struct erofs_rd_xattr *x)
{
	FILE *out = arg;
	const char *prefix = erofs_rd_xattr_prefix(x->index);

	fprintf(out, "%-8s", x->shared ? "shared" : "inline");
	/* index 0: the --xattr-inode-digest pair of no namespace, its whole name */
	fputs(prefix ? prefix : x->index ? "?" : "", out);
	erofs_fput_escaped(out, x->name, x->name_len);
	fputc('=', out);
	put_value(out, x->value, x->value_size);
	fputc('\n', out);
	return 0;
}

static int list_xattrs(struct erofs_dump *d, const struct erofs_rd_inode *vi, const char *shown)
{
	unsigned int n = 0;
	int err = erofs_xattr_iterate_all(d->r, vi, count_xattr, &n);

	if (!err) {
		fprintf(d->out, "\nXattrs: %u\n", n);
		err = erofs_xattr_iterate_all(d->r, vi, print_xattr, d->out);
	}
	if (err)
		return erofs_dump_reader_fail(d, err, shown, vi->nid);
	return 0;
}

int erofs_dump_inode(struct erofs_dump *d, uint64_t nid, const char *shown, uint64_t parent,
		     unsigned int what)
{
	struct erofs_rd_inode vi;
	int err = erofs_read_inode(d->r, nid, &vi);

	if (err)
		return erofs_dump_reader_fail(d, err, shown, nid);
	print_details(d, &vi, shown);
	if (what & EROFS_DUMP_XATTRS) {
		err = list_xattrs(d, &vi, shown);
		if (err)
			return err;
	}
	if (what & EROFS_DUMP_LS) {
		err = list_dir(d, &vi, shown, parent);
		if (err)
			return err;
	}
	if (what & EROFS_DUMP_EXTENTS)
		return list_extents(d, &vi, shown);
	return 0;
}

int erofs_dump_cat(struct erofs_dump *d, uint64_t nid)
{
	enum { CHUNK = 65536 };
	struct erofs_rd_inode vi;
	struct erofs_map map;
	uint64_t off;
	uint8_t *buf;
	int err = erofs_read_inode(d->r, nid, &vi);

	if (err)
		return erofs_dump_reader_fail(d, err, "--cat", nid);
	if (!S_ISREG(vi.di.mode) && !S_ISDIR(vi.di.mode) && !S_ISLNK(vi.di.mode))
		return 0;	/* no data */
	/* data on an extra device not given: refused before a byte is written */
	for (off = 0; off < vi.size; off = map.la + map.llen) {
		char name[EROFS_DEVICE_NAME_LEN];

		err = erofs_map_blocks(d->r, &vi, off, &map);
		if (err)
			return erofs_dump_reader_fail(d, err, "--cat", nid);
		if ((map.flags & EROFS_MAP_MAPPED) && map.device &&
		    !erofs_reader_has_device(d->r, map.device))
			return erofs_dump_fail(d, -ENXIO,
				"--cat (nid %" PRIu64 "): its data is on extra %s, which was not given (--device=PATH)",
				nid, erofs_reader_device_name(d->r, map.device, name, sizeof(name)));
	}
	buf = malloc(CHUNK);
	if (!buf)
		return erofs_dump_fail(d, -ENOMEM, "out of memory");
	for (off = 0; off < vi.size; off += CHUNK) {
		size_t n = vi.size - off < CHUNK ? (size_t)(vi.size - off) : CHUNK;

		err = erofs_read_data(d->r, &vi, buf, n, off);
		if (err) {
			err = erofs_dump_reader_fail(d, err, "--cat", nid);
			break;
		}
		if (fwrite(buf, 1, n, d->out) != n) {
			err = erofs_dump_fail(d, -EIO, "--cat: write error");
			break;
		}
	}
	free(buf);
	return err;
}
