// SPDX-License-Identifier: MIT
/* Planning the metadata (see include/erofs/build/layout.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/build/chunk.h"
#include "erofs/codec/codec.h"
#include "erofs/common/compalg.h"
#include "erofs/common/diag.h"
#include "erofs/build/dir.h"
#include "erofs/build/epoch.h"
#include "erofs/common/format.h"
#include "erofs/build/layout.h"
#include "erofs/build/zextent.h"
#include "erofs/build/zindex.h"
#include "erofs/build/zdir.h"

static bool needs_extended(const struct erofs_build_options *opts,
			   const struct erofs_plan *plan, const struct erofs_inode *inode)
{
	bool mtime_fits = opts->ignore_mtime || opts->inode_form == EROFS_FORM_COMPACT ||
			  (opts->layout_48bit ? erofs_epoch_seconds_fit(&plan->epoch, inode->mtime) &&
						inode->mtime_nsec == plan->epoch.nsec :
			   inode->mtime == plan->epoch.sec && inode->mtime_nsec == plan->epoch.nsec);

	return opts->inode_form == EROFS_FORM_EXTENDED || !mtime_fits ||
	       inode->size > UINT32_MAX || inode->uid > UINT16_MAX ||
	       inode->gid > UINT16_MAX || inode->nlink > UINT16_MAX;
}

/*
 * Metadata blocks are filled best-fit: an inode record (core, xattrs and
 * inline tail) goes into the open block whose free end fits it most
 * tightly, and a fresh block is opened only when none does.  Records stay
 * inside one block, which is what an inline tail requires; a record larger
 * than a block starts a fresh one.  Open blocks are bucketed by free space
 * in 32-byte slots; each bucket is a stack, so the choice is deterministic.
 */
struct open_blocks {
	uint64_t *cursors;	/* write position inside an open block */
	uint32_t count, cap;
};

struct meta_allocator {
	unsigned int blkszbits;
	uint64_t fresh;		/* first byte of the next unused block */
	struct open_blocks *by_free;	/* index: free slots at the block's end */
};

static int allocator_init(struct meta_allocator *a, unsigned int blkszbits)
{
	a->blkszbits = blkszbits;
	a->fresh = 0;
	a->by_free = calloc((1u << (blkszbits - EROFS_SLOT_BITS)) + 1, sizeof(*a->by_free));
	return a->by_free ? 0 : -ENOMEM;
}

static void allocator_free(struct meta_allocator *a)
{
	for (uint32_t i = 0; a->by_free && i <= 1u << (a->blkszbits - EROFS_SLOT_BITS); i++)
		free(a->by_free[i].cursors);
	free(a->by_free);
}

/* Records the free end [cursor, end of its block) for later records. */
static int allocator_keep(struct meta_allocator *a, uint64_t cursor)
{
	const uint64_t blksz = 1ull << a->blkszbits;
	uint32_t slots = (uint32_t)((blksz - (cursor & (blksz - 1))) >> EROFS_SLOT_BITS);
	struct open_blocks *b;

	if (!(cursor & (blksz - 1)) || !slots)
		return 0;	/* the block is full */
	b = &a->by_free[slots];
	if (b->count == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 16;
		uint64_t *bigger = realloc(b->cursors, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		b->cursors = bigger;
		b->cap = cap;
	}
	b->cursors[b->count++] = cursor;
	return 0;
}

/* Finds room for `bytes` (a multiple of 32); returns its position. */
static int allocator_take(struct meta_allocator *a, uint32_t bytes, uint64_t *pos)
{
	const uint64_t blksz = 1ull << a->blkszbits;
	const uint32_t max_slots = 1u << (a->blkszbits - EROFS_SLOT_BITS);

	for (uint32_t slots = bytes >> EROFS_SLOT_BITS; bytes <= blksz && slots <= max_slots;
	     slots++) {
		struct open_blocks *b = &a->by_free[slots];

		if (b->count) {
			*pos = b->cursors[--b->count];
			return allocator_keep(a, *pos + bytes);
		}
	}
	*pos = a->fresh;
	a->fresh += (bytes + blksz - 1) & ~(blksz - 1);
	return allocator_keep(a, *pos + bytes);
}

uint32_t erofs_devt_end(uint32_t sb_end, unsigned int nr_devices)
{
	uint32_t slotoff = (sb_end + EROFS_DEVT_SLOT_BYTES - 1) / EROFS_DEVT_SLOT_BYTES;

	return nr_devices ? (slotoff + nr_devices) * EROFS_DEVT_SLOT_BYTES : sb_end;
}

uint32_t erofs_super_end(uint16_t cfg_algs, unsigned int extslots)
{
	uint32_t end = EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE + extslots * EROFS_SB_EXTSLOT_SIZE;

	/* each record: u16 length and payload, starting 4-byte aligned */
	for (unsigned int alg = 0; alg < EROFS_COMPR_MAX; alg++)
		if (cfg_algs & (1u << alg))
			end = ((end + 3) & ~3u) + 2 + erofs_compr_cfg_size(alg);
	return end;
}

/*
 * The inode's layout and the bytes its record takes after the core and
 * xattrs.  Regular files were laid out as their data committed; a
 * directory or symlink keeps its tail inline when the record then fits in
 * one block.
 */
static void choose_layout(const struct erofs_build_options *opts, struct erofs_plan *plan,
			  struct erofs_inode *inode)
{
	const uint32_t blksz = 1u << plan->blkszbits;
	uint32_t meta = erofs_inode_core_size(inode->version) + inode->xattr_size;

	inode->layout = EROFS_LAYOUT_FLAT_PLAIN;
	inode->inline_size = 0;
	inode->index_size = 0;
	if (inode->chunks) {
		inode->layout = EROFS_LAYOUT_CHUNK_BASED;
		inode->index_size = erofs_chunk_table_size(opts, meta, inode->chunks->count);
	} else if (inode->z) {
		inode->layout = opts->legacy_index || inode->z->full_index ||
				erofs_zextent_recsz(opts, meta, inode->size, inode->z)
					? EROFS_LAYOUT_COMPRESSED_FULL : EROFS_LAYOUT_COMPRESSED_COMPACT;
		inode->index_size = erofs_zindex_size(opts, meta, inode->size, inode->z);
		inode->inline_size = inode->z->tail_size;	/* after the index */
	} else if (S_ISREG(inode->mode) && !inode->tail_late) {
		inode->inline_size = inode->tail_inline;
	} else if (S_ISREG(inode->mode) || S_ISDIR(inode->mode) || S_ISLNK(inode->mode)) {
		uint32_t tail = (uint32_t)(inode->size & (blksz - 1));

		/* (a directory rewritten over its old record: no room for more) */
		if (tail && opts->inline_data && meta + tail <= blksz &&
		    inode->base_state != EROFS_BASE_REWRITTEN)
			inode->inline_size = tail;
	}
	if (inode->inline_size && !inode->z)
		inode->layout = EROFS_LAYOUT_FLAT_INLINE;
	plan->inline_bytes += inode->inline_size;
}

static uint32_t record_bytes(const struct erofs_inode *inode)
{
	return (erofs_inode_core_size(inode->version) + inode->xattr_size + inode->inline_size +
		inode->index_size + EROFS_SLOT_SIZE - 1) & ~(EROFS_SLOT_SIZE - 1);
}

struct record_size {
	uint32_t bytes;
	uint32_t index;		/* for erofs_plan_area_record() */
};

static int by_size_descending(const void *a, const void *b)
{
	const struct record_size *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The order records are placed in: the root first, then the largest
 * first.  Best-fit over records sorted by decreasing size wastes less of
 * each block than best-fit in tree order (linux-6.1 -zlz4hc: 57 blocks
 * fewer), at the price of siblings' inodes sharing fewer blocks; the
 * metadata is about 1% of an image and read once, so size wins.
 */
static struct record_size *placement_order(const struct erofs_tree *tree,
					   const struct erofs_plan *plan, uint32_t total)
{
	struct record_size *order = malloc((total ? total : 1) * sizeof(*order));

	if (!order)
		return NULL;
	for (uint32_t i = 0; i < total; i++) {
		order[i].index = i;
		order[i].bytes = record_bytes(erofs_plan_area_record(tree, plan, i));
	}
	if (total > 2)
		qsort(order + 1, total - 1, sizeof(*order), by_size_descending);
	return order;
}

/*
 * The records of the metadata area, in placement order: the tree's inodes
 * (the root first) then the packed inode; with -m, the metabox inode then
 * the packed inode, the tree's records being in the metabox.
 */
uint32_t erofs_plan_nr_area_records(const struct erofs_tree *tree, const struct erofs_plan *plan)
{
	return (plan->metabox ? 1 : tree->nr_inodes) + !!tree->packed;
}

struct erofs_inode *erofs_plan_area_record(const struct erofs_tree *tree,
					   const struct erofs_plan *plan, uint32_t i)
{
	uint32_t before = plan->metabox ? 1 : tree->nr_inodes;

	if (i >= before)
		return tree->packed;
	return plan->metabox ? plan->metabox : tree->inodes[i];
}

/*
 * -m: the tree's records, best fit as in the area, fill the metabox
 * inode's data from its first byte (the root there, at nid 0 | METABOX
 * bit); the data is whole blocks, as erofs-utils writes it.
 */
static int place_in_metabox(struct erofs_tree *tree, struct erofs_plan *plan)
{
	struct meta_allocator alloc;
	int err;

	if ((err = allocator_init(&alloc, plan->blkszbits)))
		return err;
	for (uint32_t i = 0; i < tree->nr_inodes && !err; i++) {
		struct erofs_inode *inode = tree->inodes[i];
		uint64_t at;

		if (!(err = allocator_take(&alloc, record_bytes(inode), &at)))
			inode->nid = (at >> EROFS_SLOT_BITS) | EROFS_NID_METABOX_BIT;
	}
	plan->metabox_size = alloc.fresh;
	allocator_free(&alloc);
	return err;
}

/*
 * The metabox inode: a compact regular file of the mkfs time, its data
 * stored plain, or compressed with full indexes (their size known before
 * the writer compresses it).
 */
static int make_metabox_inode(const struct erofs_build_options *opts, struct erofs_tree *tree,
			      struct erofs_plan *plan)
{
	struct erofs_inode *mb = calloc(1, sizeof(*mb));
	struct erofs_zinfo *zi = NULL;

	if (!mb)
		return -ENOMEM;
	if (opts->metabox_alg >= 0) {
		zi = calloc(1, sizeof(*zi));
		if (!zi) {
			free(mb);
			return -ENOMEM;
		}
		zi->full_index = true;
		zi->no_extents = true;
		zi->pcluster_size = opts->metabox_pcluster_size;
		zi->algorithm = (uint8_t)erofs_codec_format(opts->algorithms[opts->metabox_alg].kind);
	}
	*mb = (struct erofs_inode){
		.parent = mb, .mode = S_IFREG | 0644, .nlink = 1,
		.mtime = erofs_epoch_mkfs_time(&plan->epoch), .mtime_nsec = plan->epoch.nsec,
		.size = plan->metabox_size, .z = zi, .ino = tree->nr_inodes + !!tree->packed + 1,
		.version = EROFS_INODE_COMPACT, .blkaddr = EROFS_NULL_ADDR,
	};
	mb->layout = zi ? EROFS_LAYOUT_COMPRESSED_FULL : EROFS_LAYOUT_FLAT_PLAIN;
	if (zi)
		mb->index_size = erofs_zindex_size(opts, erofs_inode_core_size(mb->version),
						   mb->size, zi);
	plan->metabox = mb;
	return 0;
}

/*
 * Places the records, the root first so that its nid stays small: beside
 * the superblock (whose block is used from sb_end on) when
 * root_beside_super and it fits there, else at the start of the area.  The
 * area starts at meta_start, after the shared xattrs.
 */
static int place_records(struct erofs_tree *tree, struct erofs_plan *plan, uint32_t sb_end,
			 uint64_t meta_start, bool root_beside_super)
{
	const uint64_t blksz = 1ull << plan->blkszbits;
	uint64_t base = (uint64_t)plan->meta_blkaddr << plan->blkszbits;
	struct meta_allocator alloc;
	struct record_size *order;
	uint32_t total;
	int err;

	if ((err = allocator_init(&alloc, plan->blkszbits)))
		return err;
	alloc.fresh = (meta_start + blksz - 1) & ~(blksz - 1);
	if (root_beside_super)	/* records start on a slot */
		err = allocator_keep(&alloc, (sb_end + EROFS_SLOT_SIZE - 1) & ~(EROFS_SLOT_SIZE - 1));
	total = erofs_plan_nr_area_records(tree, plan);
	order = err ? NULL : placement_order(tree, plan, total);
	if (!order && !err)
		err = -ENOMEM;
	for (uint32_t k = 0; k < total && !err; k++) {
		struct erofs_inode *inode = erofs_plan_area_record(tree, plan, order[k].index);
		uint64_t at;

		/* the rest of the block the shared xattrs end in, once the root has its place */
		if (k == 1 && !root_beside_super && (err = allocator_keep(&alloc, meta_start)))
			break;
		if ((err = allocator_take(&alloc, order[k].bytes, &at)))
			break;
		inode->nid = (at - base) >> EROFS_SLOT_BITS;
		if (k == 0 && root_beside_super && (err = allocator_keep(&alloc, meta_start)))
			break;
	}
	free(order);
	plan->nr_blocks = (uint32_t)(alloc.fresh >> plan->blkszbits);
	allocator_free(&alloc);
	return err;
}

/* A directory outgrew the record it was to be rewritten over (said at -d 3 and up). */
static int rewrite_all_because(const struct erofs_build_options *opts,
			       const struct erofs_inode *dir, uint32_t bytes)
{
	if (opts->debug_level >= 3) {
		const char *path = erofs_shown_path(dir);

		erofs_note("/%s: its new record (%u bytes) does not fit its old one (%u)",
			   path, bytes, dir->base_record);
		erofs_shown_path_free(path);
	}
	return EROFS_REWRITE_ALL;
}

/*
 * --incremental in place: the image's records stay (a rewritten directory
 * over its own, if it fits); the new ones fill blocks from meta_start on,
 * their nids counted from the image's meta_blkaddr.
 */
static int place_records_appended(const struct erofs_build_options *opts,
				  struct erofs_tree *tree, struct erofs_plan *plan, uint64_t meta_start)
{
	const uint64_t blksz = 1ull << plan->blkszbits;
	const uint64_t base = (uint64_t)plan->meta_blkaddr << plan->blkszbits;
	struct record_size *order = malloc((tree->nr_inodes + 1) * sizeof(*order));
	struct meta_allocator alloc;
	uint32_t n = 0;
	int err = order ? allocator_init(&alloc, plan->blkszbits) : -ENOMEM;

	if (err) {
		free(order);
		return err;
	}
	alloc.fresh = (meta_start + blksz - 1) & ~(blksz - 1);
	for (uint32_t i = 0; i < tree->nr_inodes && !err; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		if (inode->base_state == EROFS_BASE_NONE)
			order[n++] = (struct record_size){ record_bytes(inode), i };
		else if (inode->base_state == EROFS_BASE_REWRITTEN &&
			 record_bytes(inode) > inode->base_record)
			err = rewrite_all_because(opts, inode, record_bytes(inode));
		else
			inode->nid = inode->base_nid;
	}
	qsort(order, n, sizeof(*order), by_size_descending);
	for (uint32_t k = 0; k < n && !err; k++) {
		uint64_t at;

		if (!(err = allocator_take(&alloc, order[k].bytes, &at)))
			tree->inodes[order[k].index]->nid = (at - base) >> EROFS_SLOT_BITS;
	}
	free(order);
	plan->nr_blocks = (uint32_t)(alloc.fresh >> plan->blkszbits);
	allocator_free(&alloc);
	return err;
}

/*
 * --incremental in place: what the image's superblock said stays true
 * (the features its files use, its algorithms and their dictionaries,
 * its largest pcluster), and the new superblock may not grow past the old
 * one's config records: what follows them in its block is the image's.
 */
static int keep_base_features(const struct erofs_build_options *opts,
			      const struct erofs_tree *tree, struct erofs_plan *plan)
{
	const struct erofs_base_image *bi = tree->base;

	plan->feature_incompat |= bi->sb.feature_incompat;
	if (bi->max_pclusterblks > plan->max_pclusterblks)
		plan->max_pclusterblks = bi->max_pclusterblks;
	plan->cfg_algs |= bi->cfg_algs;
	if (plan->feature_incompat & EROFS_INCOMPAT_COMPR_CFGS) {
		/* (an image of LZ4 files without configs: they need one now) */
		if (!bi->cfg_algs && (bi->sb.feature_incompat & EROFS_INCOMPAT_ZERO_PADDING))
			plan->cfg_algs |= 1u << EROFS_COMPR_LZ4;
		plan->sb_u1 = plan->cfg_algs;
	} else {
		plan->sb_u1 = bi->sb.u1;	/* its lz4_max_distance */
	}
	for (unsigned int alg = 0; alg < EROFS_COMPR_MAX; alg++)
		if (tree->kept_dict_size[alg] > plan->dict_size[alg])
			plan->dict_size[alg] = tree->kept_dict_size[alg];
	plan->xattr_blkaddr = bi->sb.xattr_blkaddr;
	plan->meta_blkaddr = bi->sb.meta_blkaddr;
	if (erofs_super_end(plan->cfg_algs, 0) <= bi->sb_end)
		return 0;
	if (opts->debug_level >= 3)
		erofs_note("the superblock's config records would grow past the image's");
	return EROFS_REWRITE_ALL;
}

/* Whether the planner places the inode's data blocks (see place_late_blocks()). */
bool erofs_placed_late(const struct erofs_inode *inode)
{
	return S_ISDIR(inode->mode) || S_ISLNK(inode->mode) ||
	       (S_ISREG(inode->mode) && inode->tail_late);
}

/*
 * Blocks for the data of directories, symlinks and files under a block
 * that does not fit inline: after the file data, before the metadata
 * (zone_pass: --MZ=id's directories, after the records).
 */
static int place_late_blocks(struct erofs_tree *tree, struct erofs_plan *plan, uint32_t *next,
			     bool mz_dirdata, bool zone_pass)
{
	const unsigned int bits = plan->blkszbits;

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];
		uint64_t bytes;

		/* --zD: a directory's entries are in the packed inode;
		 * --MZ=id: its blocks are in the metadata zone, after the records */
		if (!erofs_placed_late(inode) || inode->base_state == EROFS_BASE_KEPT ||
		    (erofs_inode_is_dir(inode) && inode->z) ||
		    (erofs_inode_is_dir(inode) && mz_dirdata) != zone_pass)
			continue;
		bytes = inode->size - inode->inline_size;
		inode->nr_blocks = (uint32_t)((bytes + (1u << bits) - 1) >> bits);
		inode->blkaddr = inode->nr_blocks ? *next : EROFS_NULL_ADDR;
		if ((uint64_t)*next + inode->nr_blocks > UINT32_MAX) {
			erofs_err("the image needs more than 2^32 blocks of %u bytes", 1u << bits);
			return -EFBIG;
		}
		*next += inode->nr_blocks;
	}
	return 0;
}

/*
 * Feature bits for compressed files: 0-padding (data right-aligned in its
 * pcluster) always; big pclusters and algorithms other than LZ4 need the
 * config records (one per algorithm the files use), whose LZ4 record tells
 * the kernel the largest pcluster.
 */
static void plan_features(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			  struct erofs_plan *plan)
{
	uint32_t largest = 0, compressed = 0;
	uint16_t used = 0;

	for (uint32_t i = 0; i < tree->nr_inodes + !!tree->packed; i++) {
		const struct erofs_inode *inode = i < tree->nr_inodes ? tree->inodes[i] : tree->packed;
		const struct erofs_zinfo *zi = inode->z;

		if (inode->chunks)
			plan->feature_incompat |= EROFS_INCOMPAT_CHUNKED_FILE;
		if (!zi || !zi->pcluster_size)	/* --zD: a directory, no pclusters */
			continue;
		compressed++;
		used |= (uint16_t)(1u << zi->algorithm);
		if (zi->tail_size)
			plan->feature_incompat |= EROFS_INCOMPAT_ZTAILPACKING;
		if (zi->pcluster_size > largest)
			largest = zi->pcluster_size;
	}
	if (opts->metabox && opts->metabox_alg >= 0) {	/* -m: the metabox inode's data */
		compressed++;
		used |= (uint16_t)(1u << erofs_codec_format(opts->algorithms[opts->metabox_alg].kind));
		if (opts->metabox_pcluster_size > largest)
			largest = opts->metabox_pcluster_size;
	}
	if (tree->packed)	/* fragments (--zD: perhaps only stored plain) */
		plan->feature_incompat |= EROFS_INCOMPAT_FRAGMENTS;
	/*
	 * --zD without -z: compressed inodes (the directories) and nothing to
	 * decompress.  Linux 7.x refuses compressed inodes in an image whose
	 * superblock names no algorithm ("invalid in a plain filesystem"; 6.12
	 * does not check), and 0-padding alone names LZ4, so set it.
	 * erofs-utils 1.9.4 does not: 7.3 refuses its --zD images without -z.
	 */
	if (!compressed && tree->packed)
		plan->feature_incompat |= EROFS_INCOMPAT_ZERO_PADDING;
	if (!compressed)
		return;
	plan->feature_incompat |= EROFS_INCOMPAT_ZERO_PADDING;
	/* the packed inode holds fragments; Linux 6.1 reads it (as "EXPERIMENTAL") */
	if (tree->packed)
		plan->feature_incompat |= EROFS_INCOMPAT_FRAGMENTS;
	plan->max_pclusterblks = (uint16_t)(largest >> opts->blkszbits);
	if (largest > 1u << opts->blkszbits || (used & ~(1u << EROFS_COMPR_LZ4))) {
		plan->feature_incompat |= EROFS_INCOMPAT_COMPR_CFGS;
		plan->sb_u1 = used;
		plan->cfg_algs = used;
	}
	/* as erofs-utils: the largest dictionary of the -z entries writing each
	 * format (--incremental: and of the image's files kept compressed) */
	for (unsigned int i = 0; i < opts->nr_algorithms; i++) {
		unsigned int alg = erofs_codec_format(opts->algorithms[i].kind);

		if (opts->algorithms[i].dict_size > plan->dict_size[alg])
			plan->dict_size[alg] = opts->algorithms[i].dict_size;
	}
	for (unsigned int alg = 0; alg < EROFS_COMPR_MAX; alg++)
		if (tree->kept_dict_size[alg] > plan->dict_size[alg])
			plan->dict_size[alg] = tree->kept_dict_size[alg];
}

/* -m, stored plain: the metabox inode's data follows the records */
static void place_plain_metabox(struct erofs_plan *plan)
{
	if (plan->metabox && !plan->metabox->z) {
		plan->metabox->blkaddr = plan->nr_blocks;
		plan->metabox->nr_blocks = (uint32_t)(plan->metabox_size >> plan->blkszbits);
		plan->nr_blocks += plan->metabox->nr_blocks;
	}
}

/*
 * --MZ: the records in a zone of their own, from a fresh block after
 * everything else (nothing beside the superblock), the root first;
 * meta_blkaddr is the block before the zone, as erofs-utils 1.9.4 sets
 * it, so the root's nid is a block's worth of slots.  --MZ=id: the
 * directories' blocks follow the records in the zone.
 */
static int place_zone(const struct erofs_build_options *opts, struct erofs_tree *tree,
		      struct erofs_plan *plan, uint32_t sb_end, uint64_t meta_start)
{
	const uint64_t blksz = 1ull << plan->blkszbits;
	uint64_t zone = (meta_start + blksz - 1) & ~(blksz - 1);
	uint32_t next;
	int err;

	plan->meta_blkaddr = (uint32_t)(zone >> plan->blkszbits) - 1;
	if ((err = place_records(tree, plan, sb_end, zone, false)))
		return err;
	next = plan->nr_blocks;
	if (opts->mz_dirdata && (err = place_late_blocks(tree, plan, &next, true, true)))
		return err;
	plan->nr_blocks = next;
	place_plain_metabox(plan);
	return 0;
}

int erofs_plan_image(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     uint32_t data_end, struct erofs_plan *plan)
{
	const unsigned int bits = opts->blkszbits;
	struct erofs_inode *too_big = NULL;
	uint32_t next = data_end, sb_end, sb_block_end;
	uint64_t meta_start;
	bool prefix_plain;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->blkszbits = bits;
	plan->data_end = data_end;
	if ((err = erofs_tree_list(tree)) || (err = erofs_choose_epoch(opts, tree, &plan->epoch)))
		return err;
	/* the long prefix table starts the fragments the pipeline stored */
	prefix_plain = !(tree->packed || tree->pending_packed) || opts->metabox ||
		       opts->plain_xattr_prefixes;
	if (opts->compress_dirs && (err = erofs_zdir_plan(opts, tree)))
		return err;
	if (opts->layout_48bit)
		plan->feature_incompat |= EROFS_INCOMPAT_48BIT;
	if (opts->metabox)
		plan->feature_incompat |= EROFS_INCOMPAT_METABOX;
	plan_features(opts, tree, plan);
	if (tree->base && (err = keep_base_features(opts, tree, plan)))
		return err;
	sb_end = erofs_super_end(plan->cfg_algs, opts->metabox);
	if (erofs_opts_extra_device(opts)) {
		/* the device table: a 128-byte slot per device (the blob or
		 * tar: one; rebuild mode: a layer each), on a slot boundary */
		plan->feature_incompat |= EROFS_INCOMPAT_DEVICE_TABLE;
		plan->extra_devices = tree->nr_devices ? tree->nr_devices : 1;
		plan->devt_slotoff = (uint16_t)((sb_end + EROFS_DEVT_SLOT_BYTES - 1) /
						EROFS_DEVT_SLOT_BYTES);
		sb_end = erofs_devt_end(sb_end, plan->extra_devices);
	}
	sb_block_end = (sb_end + (1u << bits) - 1) & ~((1u << bits) - 1);
	/* --incremental: block 0 is the old image's until the superblock, the
	 * commit, is written; nothing else of the new metadata goes there */
	if (opts->incremental)
		sb_block_end = sb_end;

	for (uint32_t i = 0, fresh = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		if (inode->base_state == EROFS_BASE_KEPT)
			continue;
		/* (added in place: the image's inode numbers stay, the new follow) */
		if (inode->base_state == EROFS_BASE_NONE)
			inode->ino = tree->base ? (uint32_t)tree->base->sb.inos + ++fresh : i + 1;
		if (erofs_inode_is_dir(inode))
			inode->size = erofs_dir_data_size(inode, bits, opts->dot_omitted);
		inode->version = needs_extended(opts, plan, inode) ? EROFS_INODE_EXTENDED
								    : EROFS_INODE_COMPACT;
		plan->nr_extended += inode->version == EROFS_INODE_EXTENDED;
	}
	if (tree->packed) {
		struct erofs_inode *packed = tree->packed;

		packed->ino = tree->nr_inodes + 1;
		packed->mtime = erofs_epoch_mkfs_time(&plan->epoch);
		packed->mtime_nsec = plan->epoch.nsec;
		packed->version = needs_extended(opts, plan, packed) ? EROFS_INODE_EXTENDED
								      : EROFS_INODE_COMPACT;
	}

	/*
	 * A long xattr prefix table lies at the start of the packed inode's
	 * data when there is one (where Linux 6.4 looks), else in the image:
	 * beside the superblock when it fits, else first in the metadata area.
	 * With -m, always in the image (COMPAT_PLAIN_XATTR_PFX): without that
	 * bit a metabox image's readers look for it in the metabox data.  So
	 * with -E plain-xattr-prefixes, which Linux reads from 6.17 on.
	 */
	plan->prefix_size = erofs_xattr_prefix_table_size(opts);
	if (plan->prefix_size) {
		plan->feature_incompat |= EROFS_INCOMPAT_XATTR_PREFIXES;
		sb_end = (sb_end + 3) & ~3u;
		if (prefix_plain && sb_end + plan->prefix_size <= sb_block_end) {
			plan->prefix_pos = sb_end;
			sb_end += plan->prefix_size;
		}
	}

	/*
	 * The shared xattrs go beside the superblock when they fit there (ids
	 * count from block 0), else they start the metadata area, after the
	 * directories' blocks.  Their size does not depend on where they go.
	 */
	if (tree->base) {	/* the image's shared area stays; the new pairs go inline */
		struct erofs_build_options inline_only = *opts;

		inline_only.xattr_tolerance = INT_MAX;
		err = erofs_xattr_plan(&inline_only, tree, 0, &plan->shared, &too_big);
	} else {
		err = erofs_xattr_plan(opts, tree, 0, &plan->shared, &too_big);
	}
	if (!err && plan->shared.count && sb_end + plan->shared.size <= sb_block_end) {
		erofs_xattr_table_free(&plan->shared);
		err = erofs_xattr_plan(opts, tree, sb_end / 4, &plan->shared, &too_big);
		plan->shared_pos = sb_end;
		sb_end += plan->shared.size;
	}
	if (err == -E2BIG) {
		const char *path = erofs_shown_path(too_big);

		erofs_err("%s: xattrs need more bytes than an inode can hold", path[0] ? path : "/");
		erofs_shown_path_free(path);
	}
	if (err)
		return err;
	for (uint32_t i = 0; i < tree->nr_inodes + !!tree->packed; i++)
		if (i >= tree->nr_inodes || tree->inodes[i]->base_state != EROFS_BASE_KEPT)
			choose_layout(opts, plan, i < tree->nr_inodes ? tree->inodes[i] : tree->packed);
	if ((err = place_late_blocks(tree, plan, &next, opts->mz_dirdata, false)))
		return err;
	meta_start = (uint64_t)next << bits;
	if (plan->prefix_size && prefix_plain && !plan->prefix_pos) {
		plan->prefix_pos = meta_start;
		meta_start += (plan->prefix_size + EROFS_SLOT_SIZE - 1) & ~(EROFS_SLOT_SIZE - 1);
	}
	if (plan->shared.count && !plan->shared_pos) {
		plan->xattr_blkaddr = next;
		plan->shared_pos = meta_start;
		meta_start += (plan->shared.size + EROFS_SLOT_SIZE - 1) & ~(EROFS_SLOT_SIZE - 1);
	}

	if (opts->metabox && ((err = place_in_metabox(tree, plan)) ||
			      (err = make_metabox_inode(opts, tree, plan))))
		return err;
	if (tree->base)
		return place_records_appended(opts, tree, plan, meta_start);
	if (opts->mz_inodes)
		return place_zone(opts, tree, plan, sb_end, meta_start);
	/* nid 0 at block 0, the rest of the superblock's block holding records
	 * (not when adding to an image: its block 0 is its own until the new
	 * superblock is written)... */
	plan->meta_blkaddr = 0;
	if ((err = place_records(tree, plan, sb_end, meta_start, !opts->incremental)))
		return err;
	/* ...unless the root ended up too far for the superblock's 16 bits:
	 * then nid 0 is where the area starts (48-bit: rootnid_8b holds it) */
	if (tree->root->nid > UINT16_MAX && !opts->layout_48bit) {
		plan->meta_blkaddr = (uint32_t)(meta_start >> bits);
		if ((err = place_records(tree, plan, sb_end, meta_start, false)))
			return err;
	}
	place_plain_metabox(plan);
	if (tree->root->nid > UINT16_MAX && !opts->layout_48bit) {
		erofs_err("internal error: root nid %llu does not fit the superblock",
			  (unsigned long long)tree->root->nid);
		return -EFBIG;
	}
	return 0;
}

void erofs_plan_free(struct erofs_plan *plan)
{
	if (plan->metabox)
		free(plan->metabox->z);
	free(plan->metabox);
	plan->metabox = NULL;
	erofs_xattr_table_free(&plan->shared);
}
