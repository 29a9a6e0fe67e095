// SPDX-License-Identifier: MIT
/* Planning the image layout (see include/erofs/layout.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/chunk.h"
#include "erofs/compress.h"
#include "erofs/diag.h"
#include "erofs/dir.h"
#include "erofs/format.h"
#include "erofs/layout.h"
#include "erofs/tree.h"

struct mtime_key {
	int64_t sec;
	uint32_t nsec;
};

static int compare_mtimes(const void *a, const void *b)
{
	const struct mtime_key *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->nsec < y->nsec ? -1 : x->nsec > y->nsec;
}

/*
 * Compact inodes carry no mtime: they read back as the superblock epoch.
 * Unless the user fixed the epoch, use the most common mtime of the tree
 * (the earliest on a tie), so that as many inodes as possible stay compact.
 */
static int choose_epoch(const struct erofs_build_options *opts,
			const struct erofs_tree *tree, struct erofs_plan *plan)
{
	struct mtime_key *keys, best = { 0, 0 };
	uint32_t n = tree->nr_inodes, best_run = 0;

	if (opts->mkfs_time_set) {
		plan->epoch = opts->mkfs_time;
		plan->epoch_nsec = 0;
		return 0;
	}
	if (opts->time_policy != EROFS_TIME_KEEP) {
		plan->epoch = opts->fixed_time;
		plan->epoch_nsec = 0;
		return 0;
	}
	keys = malloc(n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		keys[i] = (struct mtime_key){ tree->inodes[i]->mtime, tree->inodes[i]->mtime_nsec };
	qsort(keys, n, sizeof(*keys), compare_mtimes);
	for (uint32_t start = 0, end; start < n; start = end) {
		for (end = start + 1; end < n && !compare_mtimes(&keys[start], &keys[end]); end++)
			;
		if (end - start > best_run) {
			best_run = end - start;
			best = keys[start];
		}
	}
	free(keys);
	plan->epoch = best.sec;
	plan->epoch_nsec = best.nsec;
	return 0;
}

static bool needs_extended(const struct erofs_build_options *opts,
			   const struct erofs_plan *plan, const struct erofs_inode *inode)
{
	bool mtime_fits = opts->ignore_mtime || opts->inode_form == EROFS_FORM_COMPACT ||
			  (inode->mtime == plan->epoch && inode->mtime_nsec == plan->epoch_nsec);

	return opts->inode_form == EROFS_FORM_EXTENDED || !mtime_fits ||
	       inode->size > UINT32_MAX || inode->uid > UINT16_MAX ||
	       inode->gid > UINT16_MAX || inode->nlink > UINT16_MAX;
}

static bool has_data(const struct erofs_inode *inode)
{
	return S_ISREG(inode->mode) || S_ISDIR(inode->mode) || S_ISLNK(inode->mode);
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

/*
 * Chooses FLAT_INLINE, when the tail fits in one block with the inode, or
 * FLAT_PLAIN, and places the inode.
 */
static int place_inode(const struct erofs_build_options *opts, struct erofs_plan *plan,
		       struct meta_allocator *alloc, struct erofs_inode *inode)
{
	const uint32_t blksz = 1u << plan->blkszbits;
	uint32_t meta = erofs_inode_core_size(inode->version) + inode->xattr_size;
	uint32_t tail = has_data(inode) ? (uint32_t)(inode->size & (blksz - 1)) : 0;
	uint64_t at;
	int err;

	inode->layout = EROFS_LAYOUT_FLAT_PLAIN;
	inode->inline_size = 0;
	inode->index_size = 0;
	if (inode->chunks) {
		inode->layout = EROFS_LAYOUT_CHUNK_BASED;
		inode->index_size = erofs_chunk_table_size(meta, inode->chunks->count);
	} else if (inode->z) {
		inode->layout = opts->legacy_index || inode->z->full_index
					? EROFS_LAYOUT_COMPRESSED_FULL : EROFS_LAYOUT_COMPRESSED_COMPACT;
		inode->index_size = erofs_zindex_size(opts, meta, inode->size, inode->z);
		inode->inline_size = inode->z->tail_size;	/* after the index */
	} else if (tail && opts->inline_data && meta + tail <= blksz) {
		inode->layout = EROFS_LAYOUT_FLAT_INLINE;
		inode->inline_size = tail;
		plan->inline_bytes += tail;
	}
	err = allocator_take(alloc, (meta + inode->inline_size + inode->index_size +
				     EROFS_SLOT_SIZE - 1) & ~(EROFS_SLOT_SIZE - 1), &at);
	inode->nid = (at - ((uint64_t)plan->meta_blkaddr << plan->blkszbits)) >> EROFS_SLOT_BITS;
	return err;
}

static int assign_data_blocks(struct erofs_tree *tree, struct erofs_plan *plan,
			      uint64_t chunk_area_bytes)
{
	const unsigned int bits = plan->blkszbits;
	uint64_t next = plan->data_blkaddr;

	/* the chunk area (every unique chunk) comes first */
	plan->chunk_blkaddr = (uint32_t)next;
	plan->chunk_blocks = (uint32_t)(chunk_area_bytes >> bits);
	next += plan->chunk_blocks;

	for (uint32_t i = 0; i < tree->nr_inodes + !!tree->packed; i++) {
		struct erofs_inode *inode = i < tree->nr_inodes ? tree->inodes[i] : tree->packed;
		uint64_t bytes = has_data(inode) ? inode->size - inode->inline_size : 0;
		const struct erofs_inode *orig = inode->same_data;

		if (inode->chunks) {
			inode->nr_blocks = 0;	/* its chunks are in the chunk area */
			inode->blkaddr = EROFS_NULL_ADDR;
			continue;
		}
		if (inode->in_chunk_area) {	/* flat, its blocks in the chunk area */
			inode->nr_blocks = (uint32_t)(bytes >> bits);
			inode->blkaddr = inode->nr_blocks ? plan->chunk_blkaddr + inode->chunk_area_block
							  : EROFS_NULL_ADDR;
			continue;
		}
		/* a duplicate shares the blocks when it lays them out the same way */
		if (orig && orig->layout == inode->layout &&
		    orig->inline_size == inode->inline_size) {
			inode->nr_blocks = orig->nr_blocks;
			inode->blkaddr = orig->blkaddr;
			plan->dedup_files++;
			plan->dedup_bytes += (uint64_t)orig->nr_blocks << bits;
			continue;
		}
		inode->same_data = NULL;

		inode->nr_blocks = inode->z ? inode->z->nr_blocks
					    : (uint32_t)((bytes + (1u << bits) - 1) >> bits);
		inode->blkaddr = inode->nr_blocks ? (uint32_t)next : EROFS_NULL_ADDR;
		next += inode->nr_blocks;
		if (next > UINT32_MAX) {
			erofs_err("the image needs more than 2^32 blocks of %u bytes",
				  1u << bits);
			return -EFBIG;
		}
	}
	plan->nr_blocks = (uint32_t)next;
	return 0;
}

/*
 * Feature bits for compressed files: 0-padding (data right-aligned in its
 * pcluster) always; big pclusters need the config records, whose LZ4 record
 * tells the kernel the largest pcluster.
 */
static void plan_compression(const struct erofs_build_options *opts,
			     const struct erofs_tree *tree, struct erofs_plan *plan)
{
	uint32_t largest = 0;

	for (uint32_t i = 0; i < tree->nr_inodes + !!tree->packed; i++) {
		const struct erofs_inode *inode = i < tree->nr_inodes ? tree->inodes[i] : tree->packed;
		const struct erofs_zinfo *zi = inode->z;

		if (!zi)
			continue;
		if (inode != tree->packed) {
			plan->nr_compressed++;
			plan->compressed_input += inode->size;
		}
		if (!inode->same_data)
			plan->zdedupe_blocks += zi->shared_blocks;
		if (zi->tail_size)
			plan->feature_incompat |= EROFS_INCOMPAT_ZTAILPACKING;
		if (zi->pcluster_size > largest)
			largest = zi->pcluster_size;
	}
	if (!plan->nr_compressed)
		return;
	plan->feature_incompat |= EROFS_INCOMPAT_ZERO_PADDING;
	/* the packed inode holds fragments; Linux 6.1 reads it (as "EXPERIMENTAL") */
	if (tree->packed)
		plan->feature_incompat |= EROFS_INCOMPAT_FRAGMENTS;
	plan->max_pclusterblks = (uint16_t)(largest >> opts->blkszbits);
	if (largest > 1u << opts->blkszbits) {
		plan->feature_incompat |= EROFS_INCOMPAT_COMPR_CFGS;
		plan->sb_u1 = 1u << EROFS_COMPR_LZ4;
		plan->lz4_config = true;
	}
}

int erofs_plan_image(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     uint64_t chunk_area_bytes, struct erofs_plan *plan)
{
	const uint32_t blksz = 1u << opts->blkszbits;
	struct meta_allocator alloc;
	uint64_t first_inode;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->blkszbits = opts->blkszbits;
	if ((err = choose_epoch(opts, tree, plan)))
		return err;

	plan_compression(opts, tree, plan);
	/* the shared xattr area follows the superblock (and its config
	 * record); xattr_blkaddr stays 0 */
	plan->shared_pos = EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE +
			   (plan->lz4_config ? 2 + EROFS_COMPR_CFG_LZ4_SIZE : 0);
	err = erofs_xattr_plan(opts, tree, (uint32_t)(plan->shared_pos / 4), &plan->shared);
	if (err)
		return err;
	first_inode = (plan->shared_pos + plan->shared.size + EROFS_SLOT_SIZE - 1) &
		      ~(uint64_t)(EROFS_SLOT_SIZE - 1);
	/* the root nid is 16 bits wide: move nid 0 up if the area is that large */
	if (first_inode >> EROFS_SLOT_BITS > UINT16_MAX)
		plan->meta_blkaddr = (uint32_t)(first_inode >> opts->blkszbits);

	for (uint32_t i = 0; i < tree->nr_inodes; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		inode->ino = i + 1;
		if (erofs_inode_is_dir(inode))
			inode->size = erofs_dir_data_size(inode, opts->blkszbits);
		inode->version = needs_extended(opts, plan, inode) ? EROFS_INODE_EXTENDED
								    : EROFS_INODE_COMPACT;
		plan->nr_extended += inode->version == EROFS_INODE_EXTENDED;
	}

	if ((err = allocator_init(&alloc, opts->blkszbits)))
		return err;
	alloc.fresh = (first_inode + blksz - 1) & ~(uint64_t)(blksz - 1);
	err = allocator_keep(&alloc, first_inode);
	for (uint32_t i = 0; i < tree->nr_inodes && !err; i++)
		err = place_inode(opts, plan, &alloc, tree->inodes[i]);
	if (tree->packed && !err) {
		struct erofs_inode *packed = tree->packed;

		packed->ino = tree->nr_inodes + 1;
		packed->mtime = plan->epoch;
		packed->mtime_nsec = plan->epoch_nsec;
		packed->version = needs_extended(opts, plan, packed) ? EROFS_INODE_EXTENDED
								      : EROFS_INODE_COMPACT;
		err = place_inode(opts, plan, &alloc, packed);
	}
	plan->meta_end = alloc.fresh;
	allocator_free(&alloc);
	if (err)
		return err;
	if (tree->root->nid > UINT16_MAX) {
		erofs_err("internal error: root nid %llu does not fit the superblock",
			  (unsigned long long)tree->root->nid);
		return -EFBIG;
	}
	plan->data_blkaddr = (uint32_t)(plan->meta_end >> opts->blkszbits);
	for (uint32_t i = 0; i < tree->nr_inodes; i++)
		if (tree->inodes[i]->chunks)
			plan->feature_incompat |= EROFS_INCOMPAT_CHUNKED_FILE;
	return assign_data_blocks(tree, plan, chunk_area_bytes);
}

void erofs_plan_free(struct erofs_plan *plan)
{
	erofs_xattr_table_free(&plan->shared);
}
