// SPDX-License-Identifier: MIT
/* Writing the metadata (see include/erofs/build/writer.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/build/chunk.h"
#include "erofs/common/compalg.h"
#include "erofs/common/diag.h"
#include "erofs/build/dir.h"
#include "erofs/common/format.h"
#include "erofs/common/io.h"
#include "erofs/build/layout.h"
#include "erofs/build/metabox.h"
#include "erofs/build/zdir.h"
#include "erofs/common/ondisk.h"
#include "erofs/build/writer.h"
#include "erofs/source/xattr.h"
#include "erofs/build/zindex.h"

#define WRITE_BUFFER_SIZE (1u << 20)

struct write_ctx {
	const struct erofs_build_options *opts;
	const struct erofs_tree *tree;
	struct erofs_plan *plan;
	struct erofs_image *img;
	struct erofs_tails *tails;
	uint8_t *record;		/* one inode record being built */
	size_t record_cap;
	uint8_t *bytes;			/* a directory's data, encoded */
	size_t bytes_cap;
	struct erofs_seq_writer out;	/* everything from the end of the file data on */
	uint8_t *metabox;		/* -m: the metabox inode's data, being filled */
};

static uint32_t inode_u_field(const struct write_ctx *w, const struct erofs_inode *inode)
{
	switch (inode->mode & S_IFMT) {
	case S_IFCHR:
	case S_IFBLK:
		return erofs_encode_rdev(inode->rdev_major, inode->rdev_minor);
	case S_IFIFO:
	case S_IFSOCK:
		return 0;
	default:
		/* compressed files record their block count, chunked ones their format */
		if (inode->chunks)
			return erofs_chunk_format(w->opts, inode->chunks);
		/* (with -E dedupe, the blocks its extents use, its own or not) */
		return inode->z ? inode->nr_blocks + inode->z->shared_blocks : inode->blkaddr;
	}
}

/*
 * 48-bit: a compact inode's own mtime (seconds from the epoch; its
 * nanoseconds are the superblock's unless --ignore-mtime or
 * force-inode-compact let them go, and seconds out of reach read as the
 * mkfs time), and, as erofs-utils writes it, the high half of "no
 * block" in an extended flat inode's i_nb.
 */
static void set_48bit_fields(const struct write_ctx *w, const struct erofs_inode *inode,
			     struct erofs_dinode *di)
{
	const struct erofs_plan *plan = w->plan;

	if (inode->version == EROFS_INODE_COMPACT)
		di->compact_mtime = erofs_epoch_seconds_fit(&plan->epoch, inode->mtime)
					    ? (uint32_t)(inode->mtime - plan->epoch.sec)
					    : plan->epoch.delta;
	else if (!inode->z && !inode->chunks && di->u == EROFS_NULL_ADDR &&
		 (S_ISREG(inode->mode) || S_ISDIR(inode->mode) || S_ISLNK(inode->mode)))
		di->nb_hi = 0xFFFF;
}

static size_t record_size(const struct erofs_inode *inode)
{
	return erofs_inode_core_size(inode->version) + inode->xattr_size + inode->inline_size +
	       inode->index_size;
}

/* Builds the inode core, xattrs and index; returns where the inline tail goes. */
static uint8_t *build_record(struct write_ctx *w, const struct erofs_inode *inode)
{
	const unsigned int core = erofs_inode_core_size(inode->version);
	struct erofs_dinode di = {
		.format = erofs_inode_format(inode->version, inode->layout),
		.xattr_icount = inode->xattr_icount,
		.mode = inode->mode,
		.size = inode->size,
		.u = inode_u_field(w, inode),
		.ino = inode->ino,
		.uid = inode->uid,
		.gid = inode->gid,
		.mtime = inode->mtime,
		.mtime_nsec = inode->mtime_nsec,
		.nlink = inode->nlink,
	};
	uint8_t *p;

	if (w->opts->layout_48bit)
		set_48bit_fields(w, inode, &di);
	if (w->opts->dot_omitted && S_ISDIR(inode->mode))
		di.format |= EROFS_I_DOT_OMITTED;
	if (record_size(inode) > w->record_cap) {
		uint8_t *bigger = realloc(w->record, record_size(inode));

		if (!bigger)
			return NULL;
		w->record = bigger;
		w->record_cap = record_size(inode);
	}
	p = w->record;
	erofs_dinode_encode(&di, p);
	if (inode->xattr_size)
		erofs_xattr_ibody_encode(inode, w->opts->xattr_name_filter, p + core);
	if (inode->chunks)
		erofs_chunk_table_encode(w->opts, inode->chunks, core + inode->xattr_size,
					 p + core + inode->xattr_size);
	if (inode->z)
		erofs_zindex_encode(w->opts, core + inode->xattr_size, inode->size, inode->z,
				    inode->blkaddr, p + core + inode->xattr_size);
	/* the inline tail, if any, follows the index */
	return p + core + inode->xattr_size + inode->index_size;
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *bigger;

	if (need <= *cap)
		return 0;
	bigger = realloc(*buf, need);
	if (!bigger)
		return -ENOMEM;
	*buf = bigger;
	*cap = need;
	return 0;
}

/*
 * A directory's or symlink's data: the blocks (written in block order, as
 * planned) and the tail, copied to tail_at when it is inline.
 */
static int put_bytes(struct write_ctx *w, const struct erofs_inode *inode, uint8_t *tail_at,
		     const uint8_t *bytes)
{
	uint64_t in_blocks = inode->size - inode->inline_size;

	if (inode->inline_size && tail_at)
		memcpy(tail_at, bytes + in_blocks, inode->inline_size);
	if (in_blocks)
		erofs_seq_write(&w->out, (uint64_t)inode->blkaddr << w->plan->blkszbits, bytes,
				in_blocks);
	return w->out.error;
}

static int dir_bytes(struct write_ctx *w, const struct erofs_inode *inode, const uint8_t **out)
{
	if (grow(&w->bytes, &w->bytes_cap, inode->size ? inode->size : 1))
		return -ENOMEM;
	erofs_dir_encode(inode, w->plan->blkszbits, w->opts->dot_omitted, w->bytes);
	*out = w->bytes;
	return 0;
}

/*
 * The blocks the planner placed, in block order (see erofs_placed_late()):
 * before the records, or (zone_pass) --MZ=id's directories' after them.
 */
static int put_late_blocks(struct write_ctx *w, bool zone_pass)
{
	for (uint32_t i = 0; i < w->tree->nr_inodes; i++) {
		const struct erofs_inode *inode = w->tree->inodes[i];
		const uint8_t *bytes;
		int err;

		if (!inode->nr_blocks || !erofs_placed_late(inode) ||
		    (S_ISDIR(inode->mode) && w->opts->mz_dirdata) != zone_pass)
			continue;
		if (S_ISLNK(inode->mode)) {
			bytes = (const uint8_t *)inode->symlink;
		} else if (S_ISREG(inode->mode)) {	/* a small file's bytes, from the tail store */
			if (grow(&w->bytes, &w->bytes_cap, inode->size))
				return -ENOMEM;
			if ((err = erofs_tails_read(w->tails, w->bytes, inode->size, inode->tail_pos)))
				return err;
			bytes = w->bytes;
		} else if ((err = dir_bytes(w, inode, &bytes))) {
			return err;
		}
		if ((err = put_bytes(w, inode, NULL, bytes)))
			return err;
	}
	return 0;
}

/* One inode record, with its inline tail. */
static int put_record(struct write_ctx *w, const struct erofs_inode *inode)
{
	uint8_t *tail_at;
	const uint8_t *bytes;
	uint64_t pos = erofs_inode_pos(w->plan, inode->nid);
	size_t size = record_size(inode);
	int err = 0;

	if (grow(&w->record, &w->record_cap, size))
		return -ENOMEM;
	tail_at = build_record(w, inode);
	if (inode->inline_size) {
		switch (inode->mode & S_IFMT) {
		case S_IFREG:	/* plain tails and inline pclusters wait in the tail store */
			err = erofs_tails_read(w->tails, tail_at, inode->inline_size, inode->tail_pos);
			break;
		case S_IFLNK:
			memcpy(tail_at, inode->symlink + (inode->size - inode->inline_size),
			       inode->inline_size);
			break;
		case S_IFDIR:
			if (!(err = dir_bytes(w, inode, &bytes)))
				memcpy(tail_at, bytes + (inode->size - inode->inline_size),
				       inode->inline_size);
			break;
		}
	}
	if (err)
		return err;
	if (inode->nid & EROFS_NID_METABOX_BIT) {	/* -m: into the metabox data */
		memcpy(w->metabox + ((inode->nid & ~EROFS_NID_METABOX_BIT) << EROFS_SLOT_BITS),
		       w->record, size);
		return 0;
	}
	/* --incremental in place: over the old record, which the rollback keeps */
	if (inode->base_state == EROFS_BASE_REWRITTEN)
		return erofs_image_overwrite(w->img, w->record, size, pos);
	/* records beside the superblock lie before the data: written on their own */
	if (pos < (uint64_t)w->plan->data_end << w->plan->blkszbits) {
		err = erofs_image_pwrite(w->img, w->record, size, pos);
		return err;
	}
	erofs_seq_write(&w->out, pos, w->record, size);
	return w->out.error;
}

/*
 * An xattr area (the long prefix table, the shared xattrs): beside the
 * superblock, or where the metadata area starts.
 */
static int put_xattr_area(struct write_ctx *w, uint64_t pos, uint32_t size,
			  void (*encode)(const struct write_ctx *w, uint8_t *out))
{
	const struct erofs_plan *plan = w->plan;
	uint8_t *area;
	int err;

	if (pos >= (uint64_t)plan->data_end << plan->blkszbits) {
		area = erofs_seq_reserve(&w->out, pos, size);
		if (area)
			encode(w, area);
		return w->out.error;
	}
	area = calloc(1, size);
	if (!area)
		return -ENOMEM;
	encode(w, area);
	err = erofs_image_pwrite(w->img, area, size, pos);
	free(area);
	return err;
}

static void encode_shared(const struct write_ctx *w, uint8_t *out)
{
	erofs_xattr_table_encode(&w->plan->shared, out);
}

static void encode_prefixes(const struct write_ctx *w, uint8_t *out)
{
	erofs_xattr_prefix_table_encode(w->opts, out);
}

static int compare_nids(const void *a, const void *b)
{
	const struct erofs_inode *x = *(const struct erofs_inode *const *)a;
	const struct erofs_inode *y = *(const struct erofs_inode *const *)b;

	return x->nid < y->nid ? -1 : x->nid > y->nid;
}

/* Every new record in position order, so the output stays sequential. */
static int put_records(struct write_ctx *w)
{
	const struct erofs_tree *tree = w->tree;
	uint32_t total = erofs_plan_nr_area_records(tree, w->plan), n = 0;
	const struct erofs_inode **order = malloc((total ? total : 1) * sizeof(*order));
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < total; i++) {
		const struct erofs_inode *inode = erofs_plan_area_record(tree, w->plan, i);

		if (inode->base_state == EROFS_BASE_NONE)	/* (the image's: put_rewritten()) */
			order[n++] = inode;
	}
	qsort(order, n, sizeof(*order), compare_nids);
	for (uint32_t i = 0; i < n && !err; i++)
		err = put_record(w, order[i]);
	free(order);
	return err;
}

/*
 * --incremental in place: the directories rewritten over their old
 * records, once everything new they point at is on disk.
 */
static int put_rewritten(struct write_ctx *w)
{
	int err = 0;

	for (uint32_t i = 0; i < w->tree->nr_inodes && !err; i++)
		if (w->tree->inodes[i]->base_state == EROFS_BASE_REWRITTEN)
			err = put_record(w, w->tree->inodes[i]);
	return err;
}

/*
 * The device table.  The blob or the tar: no tag (Linux then wants
 * -o device=), its blocks.  Rebuild mode: a slot per layer, its blocks and
 * its tag.  As erofs-utils does, each is mapped after the image's blocks
 * and the devices before it in the flat block space (the chunk indexes
 * name the device anyway).
 */
static int write_device_table(const struct erofs_plan *plan, const struct erofs_tree *tree,
			      int fd)
{
	uint64_t mapped = plan->nr_blocks;

	for (uint16_t i = 0; i < plan->extra_devices; i++) {
		uint8_t slot[EROFS_DEVT_SLOT_BYTES] = { 0 };
		uint64_t blocks = tree->nr_devices ? tree->devices[i].blocks : plan->blob_blocks;
		int err;

		if (tree->nr_devices)
			memcpy(slot, tree->devices[i].tag, sizeof(tree->devices[i].tag));
		put_le32(slot + EROFS_DEVT_SLOT_BLOCKS, (uint32_t)blocks);
		put_le32(slot + EROFS_DEVT_SLOT_MAPPED, blocks ? (uint32_t)mapped : 0);
		err = erofs_pwrite_all(fd, slot, sizeof(slot),
				       ((uint64_t)plan->devt_slotoff + i) * EROFS_DEVT_SLOT_BYTES);
		if (err)
			return err;
		mapped += blocks;
	}
	return 0;
}

/* --incremental in place: what the image's superblock says of the records kept */
static void keep_base_super(const struct write_ctx *w, struct erofs_super *sb)
{
	const struct erofs_base_image *base = w->tree->base;
	const struct erofs_super *old = &base->sb;
	uint64_t added = 0;

	for (uint32_t i = 0; i < w->tree->nr_inodes; i++)
		added += w->tree->inodes[i]->base_state == EROFS_BASE_NONE;
	/* what the new layer replaced or deleted is no longer counted */
	sb->inos = old->inos - (base->inos_dropped < old->inos ? base->inos_dropped : old->inos) +
		   added;
	sb->feature_compat |= old->feature_compat &
			      (EROFS_COMPAT_XATTR_FILTER | EROFS_COMPAT_PLAIN_XATTR_PFX);
	sb->packed_nid = old->packed_nid;
	sb->xattr_prefix_count = old->xattr_prefix_count;
	sb->xattr_prefix_start = old->xattr_prefix_start;
	sb->xattr_filter_reserved = old->xattr_filter_reserved;
	sb->dirblkbits = old->dirblkbits;
}

static int put_superblock(struct write_ctx *w, int fd)
{
	const struct erofs_plan *plan = w->plan;
	size_t span = erofs_sb_checksum_span(plan->blkszbits);
	struct erofs_super sb = {
		.magic = EROFS_MAGIC,
		.feature_compat = (w->opts->sb_checksum ? EROFS_COMPAT_SB_CHKSUM : 0) |
				  EROFS_COMPAT_MTIME,
		.blkszbits = (uint8_t)plan->blkszbits,
		.root_nid = (uint16_t)w->tree->root->nid,
		.inos = w->tree->nr_inodes + !!w->tree->packed + !!plan->metabox,
		.build_time = (uint64_t)plan->epoch.sec,
		.build_time_nsec = plan->epoch.nsec,
		.blocks = plan->nr_blocks,
		.meta_blkaddr = plan->meta_blkaddr,
		.xattr_blkaddr = plan->xattr_blkaddr,
		.feature_incompat = plan->feature_incompat,
		.u1 = plan->sb_u1,
		.packed_nid = w->tree->packed ? w->tree->packed->nid : 0,
		.extra_devices = plan->extra_devices,
		.devt_slotoff = plan->devt_slotoff,
	};
	uint8_t raw[EROFS_SUPER_MAX_SIZE], *block;
	int err;

	if (w->opts->xattr_name_filter && plan->shared.xattr_inodes)
		sb.feature_compat |= EROFS_COMPAT_XATTR_FILTER;
	if (w->opts->layout_48bit) {
		/* the root nid moves to 64 bits when 16 do not hold it; the
		 * 16-bit field then holds the block count's high bits */
		sb.build_time_delta = plan->epoch.delta;
		if (w->tree->root->nid > UINT16_MAX) {
			sb.rootnid_8b = w->tree->root->nid;
			sb.root_nid = 0;
		}
	}
	if (plan->metabox) {
		sb.sb_extslots = 1;
		sb.metabox_nid = plan->metabox->nid;
	}
	if (plan->prefix_size) {
		sb.xattr_prefix_count = (uint8_t)erofs_xattr_prefix_count(w->opts);
		sb.xattr_prefix_start = (uint32_t)(plan->prefix_pos / 4);
		if (plan->prefix_pos)
			sb.feature_compat |= EROFS_COMPAT_PLAIN_XATTR_PFX;
		/* --xattr-inode-digest: its prefix follows the --xattr-prefix ones */
		if (w->opts->inode_digest) {
			sb.feature_compat |= EROFS_COMPAT_ISHARE_XATTRS;
			sb.ishare_xattr_prefix_id = (uint8_t)w->opts->nr_xattr_prefixes;
		}
	}
	if (w->tree->base)
		keep_base_super(w, &sb);
	memcpy(sb.uuid, w->opts->uuid, sizeof(sb.uuid));
	memcpy(sb.volume_name, w->opts->label, sizeof(sb.volume_name));
	erofs_super_encode(&sb, raw);
	if ((err = erofs_pwrite_all(fd, raw, EROFS_SUPER_SIZE + sb.sb_extslots * EROFS_SB_EXTSLOT_SIZE,
				    EROFS_SUPER_OFFSET)))
		return err;
	for (unsigned int alg = 0, at = EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE +
					   sb.sb_extslots * EROFS_SB_EXTSLOT_SIZE;
	     alg < EROFS_COMPR_MAX; alg++) {
		uint8_t cfg[2 + EROFS_COMPR_CFG_LZ4_SIZE] = { 0 };
		uint32_t size = erofs_compr_cfg_size(alg), dict = plan->dict_size[alg], log2 = 0;

		if (!(plan->cfg_algs & (1u << alg)))
			continue;
		while (log2 < 31 && (2u << log2) <= dict)
			log2++;
		/* u16 length, then the payload as erofs_fs.h lays it out;
		 * reserved bytes and format fields zero */
		put_le16(cfg, (uint16_t)size);
		if (alg == EROFS_COMPR_LZ4)	/* max_distance 0: the default 64 KiB */
			put_le16(cfg + 4, plan->max_pclusterblks);
		else if (alg == EROFS_COMPR_LZMA)
			put_le32(cfg + 2, dict);
		else if (alg == EROFS_COMPR_DEFLATE)
			cfg[2] = (uint8_t)log2;		/* windowbits */
		else
			cfg[3] = (uint8_t)(log2 - 10);	/* windowlog above zstd's 1 KiB */
		at = (at + 3) & ~3u;
		if ((err = erofs_pwrite_all(fd, cfg, 2 + size, at)))
			return err;
		at += 2 + size;
	}

	if (plan->extra_devices && (err = write_device_table(plan, w->tree, fd)))
		return err;

	if (!w->opts->sb_checksum)	/* -E nosbcrc: the field stays zero */
		return 0;
	/* the checksum covers the rest of the superblock's block as written */
	block = calloc(1, span);
	if (!block)
		return -ENOMEM;
	err = erofs_pread_all(fd, block, span, EROFS_SUPER_OFFSET);
	if (!err) {
		uint8_t crc[4];

		put_le32(crc, erofs_sb_checksum(block, span));
		err = erofs_pwrite_all(fd, crc, sizeof(crc),
				       EROFS_SUPER_OFFSET + EROFS_SB_CHECKSUM_OFFSET);
	}
	free(block);
	return err;
}

/*
 * -m: the tree's records into the metabox data, then that data, plain or
 * compressed, right after the metadata area (compressed: the metabox
 * inode's extents and blocks are known only now, and its record, written
 * with the area, needs them).  *blocks gets what follows the area.
 */
static int build_metabox(struct write_ctx *w, uint8_t **blocks)
{
	struct erofs_plan *plan = w->plan;
	struct erofs_inode *mb = plan->metabox;
	int err = 0;

	w->metabox = calloc(1, plan->metabox_size ? plan->metabox_size : 1);
	if (!w->metabox)
		return -ENOMEM;
	for (uint32_t i = 0; i < w->tree->nr_inodes && !err; i++)
		err = put_record(w, w->tree->inodes[i]);
	if (err)
		return err;
	if (!mb->z) {
		*blocks = w->metabox;
		w->metabox = NULL;
		return 0;
	}
	if ((err = erofs_buffer_compress(w->opts, (unsigned int)w->opts->metabox_alg, w->metabox,
					 plan->metabox_size, mb->z, blocks)))
		return err;
	mb->blkaddr = plan->nr_blocks;
	mb->nr_blocks = mb->z->nr_blocks;
	plan->nr_blocks += mb->nr_blocks;
	return 0;
}

int erofs_write_metadata(const struct erofs_build_options *opts, const struct erofs_tree *tree,
			 struct erofs_plan *plan, struct erofs_image *img,
			 struct erofs_tails *tails)
{
	uint8_t *metabox_blocks = NULL, *packed_blocks = NULL;
	struct write_ctx w = { .opts = opts, .tree = tree, .plan = plan, .img = img,
			       .tails = tails };
	int err;

	if ((err = erofs_tails_seal(tails)) ||
	    (err = erofs_seq_init(&w.out, img->fd, opts->image, WRITE_BUFFER_SIZE)))
		return err;
	w.out.buf_pos = (uint64_t)plan->data_end << plan->blkszbits;
	err = put_late_blocks(&w, false);
	if (!err && plan->prefix_pos)
		err = put_xattr_area(&w, plan->prefix_pos, plan->prefix_size, encode_prefixes);
	if (!err && plan->shared.count)
		err = put_xattr_area(&w, plan->shared_pos, plan->shared.size, encode_shared);
	if (!err && plan->metabox)
		err = build_metabox(&w, &metabox_blocks);
	if (!err && opts->compress_dirs)	/* its record, with the area, needs its blocks */
		err = erofs_zdir_write(opts, tree, plan->blkszbits, &plan->nr_blocks, &packed_blocks);
	if (!err)
		err = put_records(&w);
	if (!err && opts->mz_dirdata)
		err = put_late_blocks(&w, true);
	if (!err && plan->metabox)
		erofs_seq_write(&w.out, (uint64_t)plan->metabox->blkaddr << plan->blkszbits,
				metabox_blocks, (size_t)plan->metabox->nr_blocks << plan->blkszbits);
	if (!err && packed_blocks && tree->packed->nr_blocks)
		erofs_seq_write(&w.out, (uint64_t)tree->packed->blkaddr << plan->blkszbits,
				packed_blocks, (size_t)tree->packed->nr_blocks << plan->blkszbits);
	if (!err)
		err = erofs_seq_flush(&w.out);
	/* --fsalignblks: zero blocks at the end, counted in the superblock
	 * (and before a blob or tar mapped after the image) */
	if (!err && opts->fsalign_blocks && plan->nr_blocks % opts->fsalign_blocks) {
		uint64_t aligned = (uint64_t)plan->nr_blocks + opts->fsalign_blocks -
				   plan->nr_blocks % opts->fsalign_blocks;

		if (aligned > UINT32_MAX) {
			erofs_err("--fsalignblks=%u: the image would pass 2^32 blocks",
				  opts->fsalign_blocks);
			err = -EFBIG;
		}
		plan->nr_blocks = (uint32_t)aligned;
	}
	if (!err)
		err = erofs_image_resize(img, (uint64_t)plan->nr_blocks << plan->blkszbits);
	if (!err && tree->base)
		err = put_rewritten(&w);
	/* the superblock lies inside the first metadata block: written last */
	if (!err && (err = put_superblock(&w, img->fd)))
		erofs_err("%s: write failed: %s", opts->image, strerror(-err));
	if (err == -ENOMEM)
		erofs_err("out of memory writing the metadata");
	free(w.record);
	free(w.bytes);
	free(w.metabox);
	free(metabox_blocks);
	free(packed_blocks);
	erofs_seq_release(&w.out);
	return err;
}
