// SPDX-License-Identifier: MIT
/* Rebuild mode's image source (see include/erofs/source/imgsrc.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/common/io.h"
#include "erofs/read/reader.h"
#include "erofs/source/imglayer.h"
#include "erofs/source/imgsrc.h"
#include "erofs/source/namedtree.h"
#include "erofs/source/nidmap.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

#define SPOOL_ALIGN	4096u		/* whole pages: copy_file_range can share them */
#define SPOOL_GROW_NOW	(1ull << 30)	/* files this big make the spool grow at once */

struct imgsrc {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_tree_builder b;

	/* the layer being merged */
	unsigned int layer;		/* 1-based: its extra device in index mode */
	struct erofs_layer l;
	unsigned int data_device;	/* where its files' blocks are: 0 the layer, 1 its device */
	struct erofs_nid_map seen;

	/* --clean=data and rvsp: the files' bytes, one after another */
	uint64_t spool_end;
};

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
/* --incremental keeps the base's data where it is, but rewrites its block 0 */
#define IN_BLOCK_0 "lies in block 0, the superblock's, which --incremental rewrites " \
		   "(the image is damaged)"

/* The device a layer's chunks name: its slot, or (--incremental's base) the image. */
static uint16_t chunk_device(const struct imgsrc *s)
{
	return s->opts->incremental && s->layer == 1 ? 0 : (uint16_t)s->layer;
}

/* Index mode: the file's chunks point at its blocks in the layer. */
static int index_file(struct imgsrc *s, struct erofs_inode *inode, const struct erofs_rd_inode *vi)
{
	const unsigned int bits = s->l.r.blkszbits;
	uint64_t size = vi->size;
	int err;

	if (vi->layout == EROFS_LAYOUT_FLAT_PLAIN || vi->layout == EROFS_LAYOUT_FLAT_INLINE) {
		unsigned int chunkbits = ceil_log2(size) < bits ? bits : ceil_log2(size);
		uint64_t blocks = (size + (1u << bits) - 1) >> bits;

		if (vi->flat_head < size)
			return erofs_layer_error(&s->l, -EOPNOTSUPP,
					   "its last %llu bytes are inlined in the layer's metadata, "
					   "where a chunk index cannot point; " CLEAN_HINT ", or build "
					   "the layer with -E^inline_data",
					   (unsigned long long)(size - vi->flat_head));
		if (s->data_device && !vi->flat_hole)
			return erofs_layer_error(&s->l, -EOPNOTSUPP,
					   "its data is in the layer image, but the layer's other "
					   "files are on its extra device; " CLEAN_HINT);
		if (chunkbits > bits + EROFS_CHUNK_FORMAT_BLKBITS_MASK)
			chunkbits = bits + EROFS_CHUNK_FORMAT_BLKBITS_MASK;
		if (!vi->flat_hole && vi->raw_blkaddr + blocks > UINT32_MAX)
			return erofs_layer_error(&s->l, -EFBIG, "its data lies past block 2^32 of the layer");
		if ((err = new_chunks(inode, chunkbits, (size + (1ull << chunkbits) - 1) >> chunkbits,
				      chunk_device(s))))
			return err;
		for (uint32_t i = 0; i < inode->chunks->count; i++)
			inode->chunks->blkaddr[i] = vi->flat_hole ? EROFS_NULL_ADDR
				: (uint32_t)(vi->raw_blkaddr + ((uint64_t)i << (chunkbits - bits)));
		return 0;
	}
	if (vi->layout != EROFS_LAYOUT_CHUNK_BASED)
		return erofs_layer_error(&s->l, -EOPNOTSUPP,
				   "compressed in the layer: a chunk index cannot point into "
				   "compressed data; " CLEAN_HINT " (decoded, and recompressed "
				   "with -z if given)");
	if (vi->nchunks > UINT32_MAX)
		return erofs_layer_error(&s->l, -EFBIG, "more than 2^32 chunks");
	if ((err = new_chunks(inode, vi->chunkbits, vi->nchunks, chunk_device(s))))
		return err;
	for (uint64_t i = 0; i < vi->nchunks; i++) {
		struct erofs_map map;

		if ((err = erofs_map_blocks(&s->l.r, vi, i << vi->chunkbits, &map)))
			return erofs_layer_reader_failed(&s->l, err);
		inode->chunks->blkaddr[i] = EROFS_NULL_ADDR;
		if (!(map.flags & EROFS_MAP_MAPPED))
			continue;
		if (map.device != s->data_device)
			return erofs_layer_error(&s->l, -EOPNOTSUPP,
					   "chunk %llu is on %s %u of the layer, its other files on "
					   "%s %u; " CLEAN_HINT, (unsigned long long)i,
					   map.device ? "device" : "the image, not device", map.device,
					   s->data_device ? "device" : "the image", s->data_device);
		if ((map.pa >> bits) > UINT32_MAX)
			return erofs_layer_error(&s->l, -EFBIG, "its data lies past block 2^32 of the layer");
		if (!chunk_device(s) && !(map.pa >> bits))
			return erofs_layer_error(&s->l, -EINVAL, "chunk %llu " IN_BLOCK_0,
						 (unsigned long long)i);
		inode->chunks->blkaddr[i] = (uint32_t)(map.pa >> bits);
	}
	return 0;
}

/* The layer stays open for the pipeline to read in place (a descriptor of the tree's). */
static int keep_layer_open(struct imgsrc *s)
{
	int *fd = &s->tree->layer_fds[s->layer - 1];

	if (*fd < 0 && (*fd = fcntl(s->l.src.fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		int err = -errno;

		erofs_err("%s: %s", s->l.name, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * --clean=data: a plain file stored whole in the layer's blocks is read
 * there by the pipeline.
 */
static int read_in_place(struct imgsrc *s, struct erofs_inode *inode,
			 const struct erofs_rd_inode *vi)
{
	int err = keep_layer_open(s);

	if (err)
		return err;
	inode->data_layer = (uint16_t)s->layer;
	inode->data_pos = s->l.src.offset + (vi->raw_blkaddr << s->l.r.blkszbits);
	return 0;
}

/* A chunk-based file of the layer whose chunks are all holes. */
static int all_holes(struct imgsrc *s, const struct erofs_rd_inode *vi, bool *holes)
{
	*holes = vi->layout == EROFS_LAYOUT_CHUNK_BASED;
	for (uint64_t i = 0; *holes && i < vi->nchunks; i++) {
		struct erofs_map map;
		int err = erofs_map_blocks(&s->l.r, vi, i << vi->chunkbits, &map);

		if (err)
			return erofs_layer_reader_failed(&s->l, err);
		*holes = !(map.flags & EROFS_MAP_MAPPED);
	}
	return 0;
}

/* --clean=data: the file's bytes, decoded, into the spool; zeros stay holes. */
static int copy_file(struct imgsrc *s, struct erofs_inode *inode, const struct erofs_rd_inode *vi)
{
	uint64_t pos = (s->spool_end + SPOOL_ALIGN - 1) / SPOOL_ALIGN * SPOOL_ALIGN;
	bool holes = vi->flat_hole;
	int err;

	/* nothing stored: nothing to read (a hostile size would take hours) */
	if (!holes && (err = all_holes(s, vi, &holes)))
		return err;
	if (holes)
		return erofs_inode_make_hole(inode, vi->size, s->opts->blkszbits);

	if (vi->layout == EROFS_LAYOUT_FLAT_PLAIN && !vi->flat_hole && vi->flat_head == vi->size &&
	    s->opts->layer_data == EROFS_LAYER_DATA_COPY && !s->l.r.nr_devs)
		return read_in_place(s, inode, vi);

	inode->data_pos = pos;
	s->spool_end = pos + vi->size;
	/*
	 * A big file (a layer of a few blocks may claim mostly holes of an
	 * exabyte) grows the spool now, so that a size it cannot take is
	 * refused here, naming the file; its holes are never written.
	 */
	if (vi->size >= SPOOL_GROW_NOW &&
	    (s->spool_end > INT64_MAX || ftruncate(s->tree->data_fd, (off_t)s->spool_end)))
		return erofs_layer_error(&s->l, -EFBIG, "%llu bytes: more than the temporary copy "
					 "of the layers' files can hold (%s)",
					 (unsigned long long)vi->size, s->spool_end > INT64_MAX ?
					 "past 2^63" : strerror(errno));
	if (s->opts->layer_data == EROFS_LAYER_DATA_RESERVE && !(s->opts->incremental && s->layer == 1))
		return 0;	/* never written: reads back as zeros, stored as holes */
	return erofs_layer_copy(&s->l, vi, 0, vi->size, s->tree->data_fd, pos);
}

/* The dictionary the kept file's algorithm was configured with (read by now). */
static void keep_dictionary(struct imgsrc *s, unsigned int alg)
{
	const struct erofs_reader *r = &s->l.r;
	uint32_t dict = alg == EROFS_COMPR_LZMA ? r->lzma_dict_size
		      : alg == EROFS_COMPR_DEFLATE ? 1u << r->deflate_windowbits
		      : alg == EROFS_COMPR_ZSTD ? 1u << r->zstd_window_log : 0;

	if (dict > s->tree->kept_dict_size[alg])
		s->tree->kept_dict_size[alg] = dict;
}

/*
 * --incremental, the base image: a compressed file keeps its pclusters
 * where they are, its extents indexed again.  1 when kept; 0 when it cannot
 * be (a tail inline or in the packed inode, two algorithms, interlaced or
 * partial extents, a legacy image without zero padding, a 48-bit build):
 * then it is read back and stored again.
 */
static int keep_compressed(struct imgsrc *s, struct erofs_inode *inode,
			   const struct erofs_rd_inode *vi)
{
	const unsigned int bits = s->l.r.blkszbits;
	struct erofs_zinfo *zi;
	uint64_t la = 0;
	uint32_t cap = 16;
	int err = 0;

	if ((vi->z_advise & (EROFS_ZADVISE_INLINE_PCLUSTER | EROFS_ZADVISE_FRAGMENT |
			     EROFS_ZADVISE_INTERLACED)) || vi->z_idata_size || vi->z_whole_fragment ||
	    vi->in_mbox || vi->z_algtype[0] >= EROFS_COMPR_MAX || s->opts->layout_48bit ||
	    !(s->l.r.sb.feature_incompat & EROFS_INCOMPAT_ZERO_PADDING))
		return 0;
	if (!(zi = calloc(1, sizeof(*zi))) || !(zi->extents = malloc(cap * sizeof(*zi->extents)))) {
		free(zi);
		return -ENOMEM;
	}
	zi->algorithm = vi->z_algtype[0];
	while (la < vi->size && !err) {
		struct erofs_map map;
		struct erofs_zextent *e;

		if ((err = erofs_map_blocks(&s->l.r, vi, la, &map))) {
			err = erofs_layer_reader_failed(&s->l, err);
			break;
		}
		if (!(map.pa >> bits) && (map.flags & EROFS_MAP_MAPPED)) {
			err = erofs_layer_error(&s->l, -EINVAL, "a pcluster " IN_BLOCK_0);
			break;
		}
		if (!(map.flags & EROFS_MAP_MAPPED) || map.device ||
		    (map.flags & (EROFS_MAP_PARTIAL | EROFS_MAP_FRAGMENT | EROFS_MAP_META |
				  EROFS_MAP_INTERLACED | EROFS_MAP_MBOX)) ||
		    ((map.flags & EROFS_MAP_ENCODED) && map.alg != zi->algorithm) ||
		    (map.pa >> bits) + (map.plen >> bits) > UINT32_MAX || map.plen >> bits > UINT16_MAX ||
		    (map.pa | map.plen) & (s->l.r.blksz - 1) || map.la != la) {
			err = 1;	/* not kept: read back instead */
			break;
		}
		if (zi->nr_extents == cap) {
			struct erofs_zextent *bigger = realloc(zi->extents, 2 * cap * sizeof(*bigger));

			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			zi->extents = bigger;
			cap *= 2;
		}
		e = &zi->extents[zi->nr_extents++];
		*e = (struct erofs_zextent){
			.lofs = map.la, .pblk = (uint32_t)(map.pa >> bits),
			.nblks = (uint16_t)(map.plen >> bits), .raw = !(map.flags & EROFS_MAP_ENCODED),
			.clen = (uint16_t)(map.plen > UINT16_MAX ? UINT16_MAX : map.plen),
		};
		if (map.plen > zi->pcluster_size)
			zi->pcluster_size = (uint32_t)map.plen;
		zi->shared_blocks += e->nblks;
		/* compact indexes count pclusters on from one address */
		if (zi->nr_extents > 1 && e->pblk != e[-1].pblk + e[-1].nblks)
			zi->full_index = true;
		la = map.la + map.llen;
	}
	if (err) {
		free(zi->extents);
		free(zi);
		return err > 0 ? 0 : err;
	}
	inode->z = zi;
	inode->blkaddr = 0;	/* the extents' blocks count from block 0 */
	inode->nr_blocks = 0;
	keep_dictionary(s, zi->algorithm);
	return 1;
}

/*
 * --incremental, the base image: what lies in whole blocks stays there.  A
 * plain file keeps its blocks (its inline tail is read from the image to
 * go inline again); a chunk-based one its chunks; an LZ4 one its
 * pclusters; anything else is copied as --clean=data would.
 */
static int keep_file(struct imgsrc *s, struct erofs_inode *inode, const struct erofs_rd_inode *vi)
{
	const unsigned int bits = s->l.r.blkszbits;
	uint64_t whole = vi->size & ~(uint64_t)(s->l.r.blksz - 1);
	uint64_t pos, tail;

	if (s->l.r.nr_devs)	/* its data may be on devices we do not have */
		return copy_file(s, inode, vi);
	if (vi->layout == EROFS_LAYOUT_CHUNK_BASED) {
		s->data_device = 0;
		return index_file(s, inode, vi);
	}
	if (vi->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	    vi->layout == EROFS_LAYOUT_COMPRESSED_COMPACT) {
		int kept = keep_compressed(s, inode, vi);

		return kept ? (kept < 0 ? kept : 0) : copy_file(s, inode, vi);
	}
	if ((vi->layout != EROFS_LAYOUT_FLAT_PLAIN && vi->layout != EROFS_LAYOUT_FLAT_INLINE) ||
	    vi->flat_hole || vi->flat_head < whole)
		return copy_file(s, inode, vi);
	if (!whole)		/* all of it inline: copied into the spool */
		return copy_file(s, inode, vi);
	if (vi->raw_blkaddr + (whole >> bits) > UINT32_MAX)
		return erofs_layer_error(&s->l, -EFBIG, "its data lies past block 2^32");
	if (!vi->raw_blkaddr)	/* and kept_blkaddr 0 would mean "not kept" */
		return erofs_layer_error(&s->l, -EINVAL, "its data " IN_BLOCK_0);
	inode->kept_blkaddr = (uint32_t)vi->raw_blkaddr;
	tail = vi->size - whole;
	if (!tail)
		return 0;
	/* only the tail is new; read where the image has it, inline after its inode */
	if (!vi->in_mbox && vi->inline_pos >= whole) {
		int err = keep_layer_open(s);

		if (err)
			return err;
		inode->data_layer = (uint16_t)s->layer;
		inode->data_pos = s->l.src.offset + vi->inline_pos - whole;
		return 0;
	}
	/* (in the metabox: decoded into the spool, at data_pos + whole) */
	pos = (s->spool_end + SPOOL_ALIGN - 1) / SPOOL_ALIGN * SPOOL_ALIGN;
	inode->data_pos = pos;
	s->spool_end = pos + vi->size;
	return erofs_layer_copy(&s->l, vi, whole, tail, s->tree->data_fd, pos);
}

/* A new inode for vi, a non-directory: its type's payload, its data. */
static int make_leaf(struct imgsrc *s, const struct erofs_rd_inode *vi,
		     struct erofs_inode **out)
{
	struct erofs_inode *inode = erofs_builder_new_inode(&s->b);
	bool opaque;
	int err;

	if (!inode)
		return -ENOMEM;
	*out = inode;
	if ((err = erofs_layer_xattrs(&s->l, vi, &inode->xattrs, &opaque)) ||
	    (err = erofs_layer_leaf(&s->l, vi, inode)))
		return err;
	fill_common(s, inode, vi);
	if (!S_ISREG(vi->di.mode) || !vi->size)
		return 0;
	if (s->opts->incremental && s->layer == 1)
		return keep_file(s, inode, vi);
	return erofs_opts_layer_index(s->opts) ? index_file(s, inode, vi)
					       : copy_file(s, inode, vi);
}

/* Where a directory of the layer lands: the lower one it merges into, or a new one. */
static int place_dir(struct imgsrc *s, struct erofs_dentry *d, const struct erofs_rd_inode *vi,
		     struct erofs_inode **out)
{
	struct erofs_xattr_set *xattrs;
	struct erofs_inode *dir;
	bool opaque, lower_opaque = false, over_whiteout = false;
	int err = erofs_layer_xattrs(&s->l, vi, &xattrs, &opaque);

	if (err)
		return err;
	if (d && d->inode && erofs_inode_is_dir(d->inode) && !opaque) {
		dir = d->inode;		/* overlayfs merges them: the upper's attributes */
		lower_opaque = erofs_xattrs_opaque(dir->xattrs);
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
	    (err = erofs_xattrs_put(&dir->xattrs, EROFS_XATTR_OVL_OPAQUE, "y", 1,
				    s->l.path ? s->l.path : "")))
		return err;
	*out = dir;
	return 0;
}

/*
 * Merges one entry of the layer into parent.  A directory is placed and
 * returned in *dir_vi and *dir (1): its own entries come next, on the
 * walk's stack; anything else is done (0).
 */
static int merge_entry(struct imgsrc *s, struct erofs_inode *parent, uint64_t nid,
		       const char *name, size_t len, struct erofs_rd_inode *dir_vi,
		       struct erofs_inode **dir)
{
	struct erofs_rd_inode *vi = dir_vi;
	struct erofs_dentry *d;
	struct erofs_inode *inode;
	int err = erofs_read_inode(&s->l.r, nid, vi);

	if (err)
		return erofs_layer_reader_failed(&s->l, err);
	d = erofs_builder_lookup(&s->b, parent, name, len, false);
	if (S_ISDIR(vi->di.mode)) {
		if (erofs_nid_map_get(&s->seen, nid))
			return erofs_layer_error(&s->l, -EINVAL, "directory nid %llu is reached twice "
					   "(a loop in the layer)", (unsigned long long)nid);
		if ((err = place_dir(s, d, vi, &inode)))
			return err;
		if (!d && !(d = erofs_builder_lookup(&s->b, parent, name, len, true)))
			return -ENOMEM;
		d->inode = inode;
		if ((err = erofs_nid_map_put(&s->seen, nid, inode)))
			return err;
		*dir = inode;
		return 1;
	}
	inode = erofs_nid_map_get(&s->seen, nid);	/* a hard link inside the layer */
	if (!inode) {
		if ((err = make_leaf(s, vi, &inode)))
			return err;
		if ((err = erofs_nid_map_put(&s->seen, nid, inode)))
			return err;
	}
	if (!d && !(d = erofs_builder_lookup(&s->b, parent, name, len, true)))
		return -ENOMEM;
	d->inode = inode;	/* what lower layers had under the name goes */
	return 0;
}

/* A directory of the layer being merged: its entries, and where the walk is in them. */
struct walk_frame {
	struct erofs_layer_entries l;
	size_t next;
	uint64_t nid;
	struct erofs_inode *into;
	size_t path_mark;		/* the path before this directory's name */
};

struct walk {
	struct walk_frame *f;
	size_t depth, cap;
};

/* Reads a directory's entries onto the walk (parent_nid: what its ".." must name). */
static int walk_push(struct imgsrc *s, struct walk *w, const struct erofs_rd_inode *dvi,
		     uint64_t parent_nid, struct erofs_inode *into, size_t path_mark)
{
	struct walk_frame *f;
	int err;

	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct walk_frame *bigger = realloc(w->f, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		w->f = bigger;
		w->cap = cap;
	}
	f = &w->f[w->depth++];
	*f = (struct walk_frame){ .nid = dvi->nid, .into = into, .path_mark = path_mark };
	err = erofs_dir_iterate(&s->l.r, dvi, parent_nid, erofs_layer_collect, &f->l);
	if (err && err != -ENOMEM)
		err = erofs_layer_reader_failed(&s->l, err);
	return err;
}

static void walk_pop(struct imgsrc *s, struct walk *w)
{
	struct walk_frame *f = &w->f[--w->depth];

	if (w->depth)		/* the root's frame has no name of its own */
		erofs_layer_path_pop(&s->l, f->path_mark);
	erofs_layer_entries_free(&f->l);
}

/*
 * Merges the layer's tree from its root directory, depth first, on a stack
 * of its own: a layer may nest directories far deeper than the C stack.
 */
static int merge_tree(struct imgsrc *s, const struct erofs_rd_inode *root_vi,
		      struct erofs_inode *root)
{
	struct walk w = { 0 };
	int err = walk_push(s, &w, root_vi, root_vi->nid, root, 0);

	while (!err && w.depth) {
		struct walk_frame *f = &w.f[w.depth - 1];
		struct erofs_rd_inode vi;
		struct erofs_inode *dir = NULL;
		size_t mark, at, len;

		if (f->next == f->l.nr) {
			walk_pop(s, &w);
			continue;
		}
		at = f->l.e[f->next].name_at;
		len = f->l.e[f->next].len;
		if ((err = erofs_layer_path_push(&s->l, f->l.names + at, len, &mark)))
			break;
		err = merge_entry(s, f->into, f->l.e[f->next++].nid, f->l.names + at, len, &vi,
				  &dir);
		if (err == 1)
			err = walk_push(s, &w, &vi, f->nid, dir, mark);
		else if (!err)
			erofs_layer_path_pop(&s->l, mark);
	}
	while (w.depth)
		walk_pop(s, &w);
	free(w.f);
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
	if (s->l.r.blkszbits != s->opts->blkszbits)
		return erofs_layer_error(&s->l, -EINVAL, "%u-byte blocks, the merged image %u-byte ones: "
				   "chunk indexes count in the image's blocks; give -b %u, or "
				   "--clean=data", s->l.r.blksz, 1u << s->opts->blkszbits, s->l.r.blksz);
	if (s->l.r.nr_devs > 1)
		return erofs_layer_error(&s->l, -EOPNOTSUPP, "the layer has %u extra devices of its own; "
				   "a layer may have one (a --tar=i index): " CLEAN_HINT,
				   s->l.r.nr_devs);
	s->data_device = s->l.r.nr_devs;
	if (s->l.r.nr_devs) {	/* an index of a tar: the tar is what the chunks name */
		dev->blocks = s->l.r.devs[0].blocks;
		memcpy(dev->tag, s->l.r.devs[0].tag, sizeof(dev->tag));
	} else {
		dev->blocks = s->l.r.blocks;
	}
	if (!dev->tag[0])
		tag_from_uuid(dev->tag, s->l.r.sb.uuid);
	if (dev->blocks > UINT32_MAX)
		return erofs_layer_error(&s->l, -EFBIG, "more than 2^32 blocks: too large for a device slot");
	return 0;
}

static int merge_layer(struct imgsrc *s)
{
	struct erofs_tree *tree = s->tree;
	struct erofs_dentry lower = { .inode = tree->root };
	struct erofs_rd_inode vi;
	struct erofs_inode *root;
	int err;

	if ((err = erofs_layer_open(&s->l, s->opts, s->l.name)))
		return err;
	if (erofs_opts_layer_index(s->opts) && (err = layer_device(s)))
		return err;
	if ((err = erofs_read_inode(&s->l.r, s->l.r.root_nid, &vi)))
		return erofs_layer_reader_failed(&s->l, err);
	if (!S_ISDIR(vi.di.mode))
		return erofs_layer_error(&s->l, -EINVAL, "the root is not a directory");
	/* the root merges as any directory: a new one when it is opaque */
	if ((err = place_dir(s, tree->root ? &lower : NULL, &vi, &root)))
		return err;
	if (root != tree->root) {
		tree->root = root;
		root->parent = root;
	}
	if ((err = erofs_nid_map_put(&s->seen, vi.nid, root)))
		return err;
	return merge_tree(s, &vi, root);
}

static void close_layer(struct imgsrc *s)
{
	erofs_layer_close(&s->l);
	erofs_nid_map_free(&s->seen);
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
	if (!(tree->layer_fds = malloc(s->opts->nr_layers * sizeof(*tree->layer_fds))))
		return -ENOMEM;
	tree->nr_layer_fds = (uint16_t)s->opts->nr_layers;
	for (unsigned int i = 0; i < s->opts->nr_layers; i++)
		tree->layer_fds[i] = -1;
	return 0;
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
		s->l.name = opts->layers[i];
		err = merge_layer(s);
		close_layer(s);
	}

	if (!err && s->spool_end && ftruncate(s->tree->data_fd, (off_t)s->spool_end)) {
		err = -errno;
		erofs_err("temporary copy of the layers' files: %s", strerror(-err));
	}
	return err;
}

/*
 * Files whose data is settled already (chunks into the layers, a base
 * image's blocks with no tail) are only counted; the others go on to the
 * pipeline.  Returns how many do.
 */
static size_t settle_files(struct imgsrc *s, struct erofs_inode **files, size_t nr)
{
	const uint32_t blksz = 1u << s->opts->blkszbits;
	size_t kept = 0;

	for (size_t i = 0; i < nr; i++) {
		struct erofs_inode *inode = files[i];

		if (inode->chunks || inode->z ||
		    (inode->kept_blkaddr && !(inode->size & (blksz - 1)))) {
			if (!inode->chunks)
				inode->blkaddr = inode->kept_blkaddr;
			inode->kept_blkaddr = 0;
			s->tree->data_bytes += inode->size;
			continue;
		}
		files[kept++] = inode;
	}
	return kept;
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

	erofs_layer_release(&s.l);
	if (err)
		erofs_builder_release(&s.b, true);
	if (!err)
		err = erofs_builder_finish(&s.b, &files, &nr);
	if (!err)
		nr = settle_files(&s, files, nr);
	if (!err)
		err = erofs_builder_hand_over(&s.b, files, nr, sink, pipeline);
	if (err == -ENOMEM)
		erofs_err("out of memory while merging the layers");
	free(files);
	erofs_builder_release(&s.b, false);
	return err;
}

