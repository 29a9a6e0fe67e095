// SPDX-License-Identifier: MIT
/* Rebuild mode's image source (see include/erofs/source/imgsrc.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/common/io.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/rdopen.h"
#include "erofs/read/reader.h"
#include "erofs/source/imgsrc.h"
#include "erofs/source/namedtree.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

#define COPY_BUFFER	(1u << 20)
#define SPOOL_ALIGN	4096u		/* whole pages: copy_file_range can share them */

/* nid -> the inode made for it in this layer: hard links, and loops. */
struct nid_map {
	uint64_t *keys;			/* nid + 1; 0: free */
	struct erofs_inode **inodes;
	size_t mask, used;
};

/* The entries of one directory of a layer, read before any is merged. */
struct entry_list {
	struct { uint64_t nid; uint32_t name_at; uint16_t len; } *e;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
};

struct imgsrc {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_tree_builder b;

	/* the layer being merged */
	unsigned int layer;		/* 1-based: its extra device in index mode */
	const char *name;
	struct erofs_rd_source src;
	struct erofs_reader r;
	bool open;
	unsigned int data_device;	/* where its files' blocks are: 0 the layer, 1 its device */
	struct nid_map seen;
	char *path;			/* of the entry being merged, "" for the root */
	size_t path_len, path_cap;

	/* --clean=data and rvsp: the files' bytes, one after another */
	uint64_t spool_end;
	uint8_t *buf;
};

static int layer_error(struct imgsrc *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int layer_error(struct imgsrc *s, int err, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	erofs_err("%s: /%.*s: %s", s->name, (int)(s->path_len > 1024 ? 1024 : s->path_len),
		  s->path ? s->path : "", why);
	return err;
}

static int reader_failed(struct imgsrc *s, int err)
{
	if (err == -ENOMEM)
		return err;
	return layer_error(s, err == -EOPNOTSUPP ? err : -EINVAL, "%s",
			   erofs_reader_error(&s->r));
}

/* ---- the nid map ---- */

static int nid_map_grow(struct nid_map *m)
{
	size_t mask = m->keys ? m->mask * 2 + 1 : 1023;
	uint64_t *keys = calloc(mask + 1, sizeof(*keys));
	struct erofs_inode **inodes = calloc(mask + 1, sizeof(*inodes));

	if (!keys || !inodes) {
		free(keys);
		free(inodes);
		return -ENOMEM;
	}
	for (size_t i = 0; m->keys && i <= m->mask; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = (m->keys[i] * 0x9E3779B97F4A7C15ull >> 20) & mask; keys[j];
		     j = (j + 1) & mask)
			;
		keys[j] = m->keys[i];
		inodes[j] = m->inodes[i];
	}
	free(m->keys);
	free(m->inodes);
	m->keys = keys;
	m->inodes = inodes;
	m->mask = mask;
	return 0;
}

/* The slot of nid: its inode, or where it goes. */
static size_t nid_map_slot(const struct nid_map *m, uint64_t nid)
{
	size_t i = ((nid + 1) * 0x9E3779B97F4A7C15ull >> 20) & m->mask;

	while (m->keys[i] && m->keys[i] != nid + 1)
		i = (i + 1) & m->mask;
	return i;
}

static struct erofs_inode *nid_map_get(const struct nid_map *m, uint64_t nid)
{
	return m->keys ? m->inodes[nid_map_slot(m, nid)] : NULL;
}

static int nid_map_put(struct nid_map *m, uint64_t nid, struct erofs_inode *inode)
{
	size_t i;

	if ((!m->keys || (m->used + 1) * 2 > m->mask) && nid_map_grow(m))
		return -ENOMEM;
	i = nid_map_slot(m, nid);
	m->used += !m->keys[i];
	m->keys[i] = nid + 1;
	m->inodes[i] = inode;
	return 0;
}

static void nid_map_free(struct nid_map *m)
{
	free(m->keys);
	free(m->inodes);
	memset(m, 0, sizeof(*m));
}

/* ---- the path, for messages ---- */

static int path_push(struct imgsrc *s, const char *name, size_t len, size_t *mark)
{
	size_t need = s->path_len + 1 + len + 1;

	if (need > s->path_cap) {
		size_t cap = need * 2;
		char *bigger = realloc(s->path, cap);

		if (!bigger)
			return -ENOMEM;
		s->path = bigger;
		s->path_cap = cap;
	}
	*mark = s->path_len;
	if (s->path_len)
		s->path[s->path_len++] = '/';
	memcpy(s->path + s->path_len, name, len);
	s->path_len += len;
	s->path[s->path_len] = '\0';
	return 0;
}

static void path_pop(struct imgsrc *s, size_t mark)
{
	s->path_len = mark;
	s->path[mark] = '\0';
}

/* ---- one inode ---- */

struct xattr_walk {
	struct imgsrc *s;
	struct erofs_xattr_set **set;
	bool opaque;
};

static int put_xattr(void *arg, const struct erofs_rd_xattr *x)
{
	struct xattr_walk *xw = arg;
	const char *prefix = erofs_rd_xattr_prefix(x->index);
	char name[EROFS_NAME_LEN * 2 + 64];
	int n;

	if (!prefix)
		return layer_error(xw->s, -EINVAL, "xattr of unknown prefix index %u", x->index);
	n = snprintf(name, sizeof(name), "%s%.*s", prefix, (int)x->name_len, x->name);
	if (n < 0 || (size_t)n >= sizeof(name))
		return layer_error(xw->s, -EINVAL, "xattr name too long");
	if (!strcmp(name, EROFS_XATTR_OVL_OPAQUE) && x->value_size == 1 &&
	    *(const char *)x->value == 'y')
		xw->opaque = true;
	/* the empty origin marks a directory holding whiteouts, which go too */
	if (xw->s->opts->ovlfs_strip && !strcmp(name, EROFS_XATTR_OVL_ORIGIN) && !x->value_size)
		return 0;
	return erofs_xattrs_put(xw->set, name, x->value, x->value_size,
				xw->s->path ? xw->s->path : "");
}

/* vi's xattrs as a new set (NULL: none), and whether it is an opaque directory. */
static int read_xattrs(struct imgsrc *s, const struct erofs_rd_inode *vi,
		       struct erofs_xattr_set **set, bool *opaque)
{
	struct xattr_walk xw = { .s = s, .set = set };
	int err;

	*set = NULL;
	*opaque = false;
	if (s->opts->xattr_tolerance < 0)	/* -x -1: no xattrs at all */
		return 0;
	err = erofs_xattr_iterate(&s->r, vi, put_xattr, &xw);
	if (err > 0)
		err = 0;
	if (err < 0 && err != -ENOMEM && !erofs_reader_error(&s->r)[0])
		;	/* put_xattr reported it */
	else if (err < 0)
		err = reader_failed(s, err);
	if (err) {
		erofs_xattrs_free(*set);
		*set = NULL;
		return err;
	}
	*opaque = xw.opaque;
	return 0;
}

static void fill_common(struct imgsrc *s, struct erofs_inode *inode,
			const struct erofs_rd_inode *vi)
{
	inode->mode = vi->di.mode;
	erofs_set_owner(s->opts, inode, vi->di.uid, vi->di.gid);
	erofs_set_mtime(s->opts, inode, vi->mtime, vi->mtime_nsec);
}

static unsigned int ceil_log2(uint64_t v)
{
	unsigned int bits = 0;

	while (bits < 63 && (1ull << bits) < v)
		bits++;
	return bits;
}

static int new_chunks(struct erofs_inode *inode, unsigned int chunkbits, uint64_t count,
		      uint16_t device_id)
{
	struct erofs_chunks *ch = calloc(1, sizeof(*ch));

	if (!ch || !(ch->blkaddr = malloc(count * sizeof(*ch->blkaddr)))) {
		free(ch);
		return -ENOMEM;
	}
	ch->chunkbits = (uint8_t)chunkbits;
	ch->count = (uint32_t)count;
	ch->device_id = device_id;
	inode->chunks = ch;
	inode->blkaddr = EROFS_NULL_ADDR;
	return 0;
}

#define CLEAN_HINT "use --clean=data to copy the data in"

/* Index mode: the file's chunks point at its blocks in the layer. */
static int index_file(struct imgsrc *s, struct erofs_inode *inode, const struct erofs_rd_inode *vi)
{
	const unsigned int bits = s->r.blkszbits;
	uint64_t size = vi->size;
	int err;

	if (vi->layout == EROFS_LAYOUT_FLAT_PLAIN || vi->layout == EROFS_LAYOUT_FLAT_INLINE) {
		unsigned int chunkbits = ceil_log2(size) < bits ? bits : ceil_log2(size);
		uint64_t blocks = (size + (1u << bits) - 1) >> bits;

		if (vi->flat_head < size)
			return layer_error(s, -EOPNOTSUPP,
					   "its last %llu bytes are inlined in the layer's metadata, "
					   "where a chunk index cannot point; " CLEAN_HINT ", or build "
					   "the layer with -E^inline_data",
					   (unsigned long long)(size - vi->flat_head));
		if (s->data_device && !vi->flat_hole)
			return layer_error(s, -EOPNOTSUPP,
					   "its data is in the layer image, but the layer's other "
					   "files are on its extra device; " CLEAN_HINT);
		if (chunkbits > bits + EROFS_CHUNK_FORMAT_BLKBITS_MASK)
			chunkbits = bits + EROFS_CHUNK_FORMAT_BLKBITS_MASK;
		if (!vi->flat_hole && vi->raw_blkaddr + blocks > UINT32_MAX)
			return layer_error(s, -EFBIG, "its data lies past block 2^32 of the layer");
		if ((err = new_chunks(inode, chunkbits, (size + (1ull << chunkbits) - 1) >> chunkbits,
				      (uint16_t)s->layer)))
			return err;
		for (uint32_t i = 0; i < inode->chunks->count; i++)
			inode->chunks->blkaddr[i] = vi->flat_hole ? EROFS_NULL_ADDR
				: (uint32_t)(vi->raw_blkaddr + ((uint64_t)i << (chunkbits - bits)));
		return 0;
	}
	if (vi->layout != EROFS_LAYOUT_CHUNK_BASED)
		return layer_error(s, -EOPNOTSUPP,
				   "compressed in the layer: a chunk index cannot point into "
				   "compressed data; " CLEAN_HINT " (decoded, and recompressed "
				   "with -z if given)");
	if (vi->nchunks > UINT32_MAX)
		return layer_error(s, -EFBIG, "more than 2^32 chunks");
	if ((err = new_chunks(inode, vi->chunkbits, vi->nchunks, (uint16_t)s->layer)))
		return err;
	for (uint64_t i = 0; i < vi->nchunks; i++) {
		struct erofs_map map;

		if ((err = erofs_map_blocks(&s->r, vi, i << vi->chunkbits, &map)))
			return reader_failed(s, err);
		inode->chunks->blkaddr[i] = EROFS_NULL_ADDR;
		if (!(map.flags & EROFS_MAP_MAPPED))
			continue;
		if (map.device != s->data_device)
			return layer_error(s, -EOPNOTSUPP,
					   "chunk %llu is on %s %u of the layer, its other files on "
					   "%s %u; " CLEAN_HINT, (unsigned long long)i,
					   map.device ? "device" : "the image, not device", map.device,
					   s->data_device ? "device" : "the image", s->data_device);
		if ((map.pa >> bits) > UINT32_MAX)
			return layer_error(s, -EFBIG, "its data lies past block 2^32 of the layer");
		inode->chunks->blkaddr[i] = (uint32_t)(map.pa >> bits);
	}
	return 0;
}

/* --clean=data: the file's bytes, decoded, into the spool; zeros stay holes. */
static int copy_file(struct imgsrc *s, struct erofs_inode *inode, const struct erofs_rd_inode *vi)
{
	uint64_t pos = (s->spool_end + SPOOL_ALIGN - 1) / SPOOL_ALIGN * SPOOL_ALIGN;
	int err;

	inode->data_pos = pos;
	s->spool_end = pos + vi->size;
	if (s->opts->layer_data == EROFS_LAYER_DATA_RESERVE)
		return 0;	/* never written: reads back as zeros, stored as holes */
	for (uint64_t off = 0; off < vi->size; ) {
		size_t n = vi->size - off < COPY_BUFFER ? (size_t)(vi->size - off) : COPY_BUFFER;

		if ((err = erofs_read_data(&s->r, vi, s->buf, n, off)))
			return reader_failed(s, err);
		if (!erofs_is_zero(s->buf, n) &&
		    (err = erofs_pwrite_all(s->tree->data_fd, s->buf, n, pos + off))) {
			erofs_err("temporary copy of the layers' files: write failed: %s",
				  strerror(-err));
			return err;
		}
		off += n;
	}
	return 0;
}

/* A new inode for vi, a non-directory: its type's payload, its data. */
static int make_leaf(struct imgsrc *s, const struct erofs_rd_inode *vi,
		     struct erofs_inode **out)
{
	struct erofs_inode *inode = erofs_builder_new_inode(&s->b);
	char target[EROFS_SYMLINK_MAXLEN + 1];
	bool opaque;
	int err;

	if (!inode)
		return -ENOMEM;
	if ((err = read_xattrs(s, vi, &inode->xattrs, &opaque)))
		return err;
	fill_common(s, inode, vi);
	*out = inode;
	switch (vi->di.mode & S_IFMT) {
	case S_IFLNK:
		if ((err = erofs_read_symlink(&s->r, vi, target, sizeof(target))))
			return reader_failed(s, err);
		if (!(inode->symlink = strdup(target)))
			return -ENOMEM;
		inode->size = strlen(target);
		return 0;
	case S_IFCHR:
	case S_IFBLK:
		erofs_decode_rdev(vi->di.u, &inode->rdev_major, &inode->rdev_minor);
		return 0;
	case S_IFREG:
		inode->size = vi->size;
		if (!vi->size)
			return 0;
		return erofs_opts_layer_index(s->opts) ? index_file(s, inode, vi)
						       : copy_file(s, inode, vi);
	default:		/* FIFOs and sockets */
		return 0;
	}
}

static int merge_dir(struct imgsrc *s, const struct erofs_rd_inode *dvi, uint64_t parent_nid,
		     struct erofs_inode *into);

static bool is_opaque(const struct erofs_xattr_set *set)
{
	for (uint32_t i = 0; set && i < set->count; i++)
		if (!strcmp(set->items[i].name, EROFS_XATTR_OVL_OPAQUE))
			return set->items[i].value_len == 1 && set->items[i].value[0] == 'y';
	return false;
}

/* Where a directory of the layer lands: the lower one it merges into, or a new one. */
static int place_dir(struct imgsrc *s, struct erofs_dentry *d, const struct erofs_rd_inode *vi,
		     struct erofs_inode **out)
{
	struct erofs_xattr_set *xattrs;
	struct erofs_inode *dir;
	bool opaque, lower_opaque = false, over_whiteout = false;
	int err = read_xattrs(s, vi, &xattrs, &opaque);

	if (err)
		return err;
	if (d && d->inode && erofs_inode_is_dir(d->inode) && !opaque) {
		dir = d->inode;		/* overlayfs merges them: the upper's attributes */
		lower_opaque = is_opaque(dir->xattrs);
		erofs_xattrs_free(dir->xattrs);
	} else {
		over_whiteout = d && d->inode && erofs_inode_is_whiteout(d->inode);
		if (!(dir = erofs_builder_new_inode(&s->b))) {
			erofs_xattrs_free(xattrs);
			return -ENOMEM;
		}
	}
	dir->xattrs = xattrs;
	fill_common(s, dir, vi);
	/*
	 * What hid the layers below this merge must hide them still: a lower
	 * opaque directory stays opaque, and so does one made where a lower
	 * layer had a whiteout.
	 */
	if ((lower_opaque || over_whiteout) && !opaque &&
	    (err = erofs_xattrs_put(&dir->xattrs, EROFS_XATTR_OVL_OPAQUE, "y", 1, s->path)))
		return err;
	*out = dir;
	return 0;
}

static int merge_entry(struct imgsrc *s, struct erofs_inode *parent, uint64_t parent_nid,
		       uint64_t nid, const char *name, size_t len)
{
	struct erofs_rd_inode vi;
	struct erofs_dentry *d;
	struct erofs_inode *inode;
	int err = erofs_read_inode(&s->r, nid, &vi);

	if (err)
		return reader_failed(s, err);
	d = erofs_builder_lookup(&s->b, parent, name, len, false);
	if (S_ISDIR(vi.di.mode)) {
		if (nid_map_get(&s->seen, nid))
			return layer_error(s, -EINVAL, "directory nid %llu is reached twice "
					   "(a loop in the layer)", (unsigned long long)nid);
		if ((err = place_dir(s, d, &vi, &inode)))
			return err;
		if (!d && !(d = erofs_builder_lookup(&s->b, parent, name, len, true)))
			return -ENOMEM;
		d->inode = inode;
		if ((err = nid_map_put(&s->seen, nid, inode)))
			return err;
		return merge_dir(s, &vi, parent_nid, inode);
	}
	inode = nid_map_get(&s->seen, nid);	/* a hard link inside the layer */
	if (!inode) {
		if ((err = make_leaf(s, &vi, &inode)))
			return err;
		if ((err = nid_map_put(&s->seen, nid, inode)))
			return err;
	}
	if (!d && !(d = erofs_builder_lookup(&s->b, parent, name, len, true)))
		return -ENOMEM;
	d->inode = inode;	/* what lower layers had under the name goes */
	return 0;
}

static int collect(void *arg, const struct erofs_rd_dentry *de)
{
	struct entry_list *l = arg;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *bigger = realloc(l->e, cap * sizeof(*l->e));

		if (!bigger)
			return -ENOMEM;
		l->e = bigger;
		l->cap = cap;
	}
	if (l->names_len + de->namelen > l->names_cap) {
		size_t cap = (l->names_len + de->namelen) * 2 + 1024;
		char *bigger = realloc(l->names, cap);

		if (!bigger)
			return -ENOMEM;
		l->names = bigger;
		l->names_cap = cap;
	}
	memcpy(l->names + l->names_len, de->name, de->namelen);
	l->e[l->nr].nid = de->nid;
	l->e[l->nr].name_at = (uint32_t)l->names_len;
	l->e[l->nr].len = (uint16_t)de->namelen;
	l->names_len += de->namelen;
	l->nr++;
	return 0;
}

static int merge_dir(struct imgsrc *s, const struct erofs_rd_inode *dvi, uint64_t parent_nid,
		     struct erofs_inode *into)
{
	struct entry_list l = { 0 };
	int err = erofs_dir_iterate(&s->r, dvi, parent_nid, collect, &l);

	if (err == -ENOMEM)
		;
	else if (err)
		err = reader_failed(s, err);
	for (size_t i = 0; i < l.nr && !err; i++) {
		size_t mark;

		if ((err = path_push(s, l.names + l.e[i].name_at, l.e[i].len, &mark)))
			break;
		err = merge_entry(s, into, dvi->nid, l.e[i].nid, l.names + l.e[i].name_at,
				  l.e[i].len);
		path_pop(s, mark);
	}
	free(l.e);
	free(l.names);
	return err;
}

/* ---- layers ---- */

static void tag_from_uuid(char *tag, const uint8_t uuid[16])
{
	static const char hex[] = "0123456789abcdef";

	for (unsigned int i = 0; i < 16; i++) {
		tag[2 * i] = hex[uuid[i] >> 4];
		tag[2 * i + 1] = hex[uuid[i] & 15];
	}
}

/* Index mode: the layer's device slot, and where its files' blocks are. */
static int layer_device(struct imgsrc *s)
{
	struct erofs_tree_device *dev = &s->tree->devices[s->layer - 1];

	memset(dev, 0, sizeof(*dev));
	if (s->r.blkszbits != s->opts->blkszbits)
		return layer_error(s, -EINVAL, "%u-byte blocks, the merged image %u-byte ones: "
				   "chunk indexes count in the image's blocks; give -b %u, or "
				   "--clean=data", s->r.blksz, 1u << s->opts->blkszbits, s->r.blksz);
	if (s->r.nr_devs > 1)
		return layer_error(s, -EOPNOTSUPP, "the layer has %u extra devices of its own; "
				   "a layer may have one (a --tar=i index): " CLEAN_HINT,
				   s->r.nr_devs);
	s->data_device = s->r.nr_devs;
	if (s->r.nr_devs) {	/* an index of a tar: the tar is what the chunks name */
		dev->blocks = s->r.devs[0].blocks;
		memcpy(dev->tag, s->r.devs[0].tag, sizeof(dev->tag));
	} else {
		dev->blocks = s->r.blocks;
	}
	if (!dev->tag[0])
		tag_from_uuid(dev->tag, s->r.sb.uuid);
	if (dev->blocks > UINT32_MAX)
		return layer_error(s, -EFBIG, "more than 2^32 blocks: too large for a device slot");
	return 0;
}

static int merge_layer(struct imgsrc *s)
{
	struct erofs_tree *tree = s->tree;
	struct erofs_dentry lower = { .inode = tree->root };
	struct erofs_rd_inode vi;
	struct erofs_inode *root;
	int err;

	erofs_rd_source_init(&s->src, s->name);
	if ((err = erofs_rd_source_open(&s->src, &s->r))) {
		erofs_err("%s", s->src.err);
		erofs_rd_source_close(&s->src);
		return err == -ENOMEM ? err : -EINVAL;
	}
	s->open = true;
	if (erofs_opts_layer_index(s->opts) && (err = layer_device(s)))
		return err;
	if ((err = erofs_read_inode(&s->r, s->r.root_nid, &vi)))
		return reader_failed(s, err);
	if (!S_ISDIR(vi.di.mode))
		return layer_error(s, -EINVAL, "the root is not a directory");
	/* the root merges as any directory: a new one when it is opaque */
	if ((err = place_dir(s, tree->root ? &lower : NULL, &vi, &root)))
		return err;
	if (root != tree->root) {
		tree->root = root;
		root->parent = root;
	}
	if ((err = nid_map_put(&s->seen, vi.nid, root)))
		return err;
	return merge_dir(s, &vi, vi.nid, root);
}

static void close_layer(struct imgsrc *s)
{
	if (s->open) {
		erofs_reader_close(&s->r);
		erofs_rd_source_close(&s->src);
		s->open = false;
	}
	nid_map_free(&s->seen);
	s->path_len = 0;
	if (s->path)
		s->path[0] = '\0';
}

static int open_spool(struct imgsrc *s)
{
	struct erofs_tree *tree = s->tree;
	int fd;

	tree->data_in_one_file = true;
	tree->data_fd = tree->spool_fd = -1;
	if (erofs_opts_layer_index(s->opts))
		return 0;
	if ((fd = erofs_scratch_open(s->opts->image)) < 0)
		return fd;
	tree->data_fd = fd;
	return (s->buf = malloc(COPY_BUFFER)) ? 0 : -ENOMEM;
}

static int read_layers(struct imgsrc *s)
{
	const struct erofs_build_options *opts = s->opts;
	int err;

	if (opts->nr_layers > UINT16_MAX - 1) {
		erofs_err("%u layers: a device table holds at most %u", opts->nr_layers,
			  UINT16_MAX - 1);
		return -EINVAL;
	}
	if (erofs_opts_layer_index(opts)) {
		s->tree->devices = calloc(opts->nr_layers, sizeof(*s->tree->devices));
		if (!s->tree->devices)
			return -ENOMEM;
		s->tree->nr_devices = (uint16_t)opts->nr_layers;
	}
	if ((err = open_spool(s)))
		return err;
	for (unsigned int i = 0; i < opts->nr_layers && !err; i++) {
		s->layer = i + 1;
		s->name = opts->layers[i];
		err = merge_layer(s);
		close_layer(s);
	}
	if (!err && s->spool_end && ftruncate(s->tree->data_fd, (off_t)s->spool_end)) {
		err = -errno;
		erofs_err("temporary copy of the layers' files: %s", strerror(-err));
	}
	return err;
}

/* Index mode: the files are done (chunks into the layers); only counted. */
static void count_indexed(struct imgsrc *s, struct erofs_inode **files, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		s->tree->data_bytes += files[i]->size;
}

int erofs_image_source_run(void *arg, erofs_file_sink sink, void *pipeline)
{
	struct erofs_image_source *src = arg;
	struct imgsrc s = {
		.opts = src->opts, .tree = src->tree,
		.b = { .opts = src->opts, .tree = src->tree },
	};
	struct erofs_inode **files = NULL;
	size_t nr = 0;
	int err = read_layers(&s);

	free(s.buf);
	free(s.path);
	if (err)
		erofs_builder_release(&s.b, true);
	if (!err)
		err = erofs_builder_finish(&s.b, &files, &nr);
	if (!err && erofs_opts_layer_index(s.opts)) {
		count_indexed(&s, files, nr);
		nr = 0;
	}
	if (!err)
		err = erofs_builder_hand_over(&s.b, files, nr, sink, pipeline);
	if (err == -ENOMEM)
		erofs_err("out of memory while merging the layers");
	free(files);
	erofs_builder_release(&s.b, false);
	return err;
}

int erofs_layer_probe(const char *path, unsigned int *blkszbits)
{
	uint8_t sb[EROFS_SUPER_OFFSET + 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0) {
		err = errno;
		erofs_err("%s: cannot open: %s", path, strerror(err));
		return -err;
	}
	n = pread(fd, sb, sizeof(sb), 0);
	if (n < 0)
		err = errno;
	close(fd);
	if (err) {
		erofs_err("%s: cannot read: %s", path, strerror(err));
		return -err;
	}
	if ((size_t)n < sizeof(sb) || get_le32(sb + EROFS_SUPER_OFFSET) != EROFS_MAGIC)
		return 0;
	*blkszbits = sb[EROFS_SUPER_OFFSET + 12];
	return 1;
}
