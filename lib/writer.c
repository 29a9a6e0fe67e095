// SPDX-License-Identifier: MIT
/*
 * Writing the image the planner laid out.  One pass over the inodes in plan
 * order writes each inode record (core, xattrs, inline tail) in place and
 * feeds the data blocks, which ascend, through a sequential writer; each
 * source file is opened once.  The superblock and its checksum come last, because the
 * checksum covers the metadata that shares block 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/chunk.h"
#include "erofs/compress.h"
#include "erofs/diag.h"
#include "erofs/dir.h"
#include "erofs/format.h"
#include "erofs/io.h"
#include "erofs/ondisk.h"
#include "erofs/progress.h"
#include "erofs/writer.h"
#include "erofs/xattr.h"

#define WRITE_BUFFER_SIZE (1u << 20)

struct write_ctx {
	const struct erofs_build_options *opts;
	const struct erofs_tree *tree;
	const struct erofs_plan *plan;
	int fd, spool_fd;
	uint8_t *record;		/* one inode record being built */
	size_t record_cap;
	struct erofs_seq_writer data;
	struct erofs_dir_cache dirs;
	uint64_t bytes_done;
	struct erofs_progress progress;
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

static size_t record_size(const struct erofs_inode *inode)
{
	return erofs_inode_core_size(inode->version) + inode->xattr_size + inode->inline_size +
	       inode->index_size;
}

/* Builds the inode core and its xattrs; returns where the inline tail goes. */
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
		erofs_xattr_ibody_encode(inode, p + core);
	if (inode->chunks)
		erofs_chunk_table_encode(inode->chunks, core + inode->xattr_size,
					 w->plan->chunk_blkaddr, p + core + inode->xattr_size);
	if (inode->z) {
		erofs_zindex_encode(w->opts, core + inode->xattr_size, inode->size, inode->z,
				    inode->blkaddr, p + core + inode->xattr_size);
		if (inode->z->tail_size)
			memcpy(p + core + inode->xattr_size + inode->index_size, inode->z->tail,
			       inode->z->tail_size);
	}
	return p + core + inode->xattr_size;
}

static uint64_t block_pos(const struct write_ctx *w, uint32_t blkaddr)
{
	return (uint64_t)blkaddr << w->plan->blkszbits;
}

/* Data held in memory (directories, symlinks): blocks, then the tail. */
static void put_bytes(struct write_ctx *w, const struct erofs_inode *inode,
		      uint8_t *tail_at, const uint8_t *bytes)
{
	uint64_t in_blocks = inode->size - inode->inline_size;

	if (in_blocks)
		erofs_seq_write(&w->data, block_pos(w, inode->blkaddr), bytes, in_blocks);
	if (inode->inline_size && tail_at)
		memcpy(tail_at, bytes + in_blocks, inode->inline_size);
}

static int put_regular(struct write_ctx *w, const struct erofs_inode *inode, uint8_t *tail_at)
{
	const char *src = w->opts->source;
	uint64_t in_blocks = inode->size - inode->inline_size;
	struct stat st;
	int fd, err = 0;

	if (!inode->size || inode->chunks)
		return 0;	/* chunks are written with the chunk area */
	if (inode->z) {
		if (inode->same_data)
			return 0;	/* its pclusters and tail are its original's */
		err = erofs_seq_copy(&w->data, block_pos(w, inode->blkaddr), w->spool_fd,
				     inode->z->spool_pos, block_pos(w, inode->nr_blocks));
		if (err && !w->data.error)
			erofs_err("temporary spool: read failed: %s", strerror(-err));
		if (inode != w->tree->packed)	/* progress counts the tree's bytes */
			w->bytes_done += inode->size;
		return err;
	}
	fd = erofs_tree_open_file(w->tree, inode, &w->dirs);
	if (fd < 0) {
		err = errno;
		erofs_err("%s/%s: cannot open: %s", src, inode->path, erofs_tree_open_error(err));
		return -err;
	}
	/* a duplicate's blocks are its original's, and a flat file's in the
	 * chunk area are written with it: only the tail is its own */
	if (in_blocks && !inode->same_data && !inode->in_chunk_area)
		err = erofs_seq_copy(&w->data, block_pos(w, inode->blkaddr), fd, 0, in_blocks);
	if (!err && inode->inline_size && tail_at)
		err = erofs_pread_all(fd, tail_at, inode->inline_size, in_blocks);
	if (err == -ENODATA) {	/* the file ended early; -EIO is a read error */
		erofs_err("%s/%s: file shrank during the build", src, inode->path);
	} else if (err) {
		if (!w->data.error)
			erofs_err("%s/%s: cannot read: %s", src, inode->path, strerror(-err));
	} else if (fstat(fd, &st) || (uint64_t)st.st_size != inode->size) {
		erofs_err("%s/%s: file changed size during the build", src, inode->path);
		err = -EAGAIN;
	}
	close(fd);
	w->bytes_done += inode->size;
	return err;
}

static int put_inode_and_data(struct write_ctx *w, const struct erofs_inode *inode)
{
	uint8_t *tail_at = build_record(w, inode);
	int err = 0;

	if (!tail_at)
		return -ENOMEM;
	switch (inode->mode & S_IFMT) {
	case S_IFREG:
		err = put_regular(w, inode, tail_at);
		break;
	case S_IFLNK:
		put_bytes(w, inode, tail_at, (const uint8_t *)inode->symlink);
		break;
	case S_IFDIR: {
		uint8_t *bytes = malloc(inode->size);

		if (!bytes)
			return -ENOMEM;
		erofs_dir_encode(inode, w->plan->blkszbits, bytes);
		put_bytes(w, inode, tail_at, bytes);
		free(bytes);
		break;
	}
	}
	if (!err && (err = erofs_pwrite_all(w->fd, w->record, record_size(inode),
					    erofs_inode_pos(w->plan, inode->nid))))
		erofs_err("%s: write failed: %s", w->opts->image, strerror(-err));
	return err;
}

static int put_superblock(struct write_ctx *w, int fd)
{
	const struct erofs_plan *plan = w->plan;
	size_t span = erofs_sb_checksum_span(plan->blkszbits);
	struct erofs_super sb = {
		.magic = EROFS_MAGIC,
		.feature_compat = EROFS_COMPAT_SB_CHKSUM | EROFS_COMPAT_MTIME,
		.blkszbits = (uint8_t)plan->blkszbits,
		.root_nid = (uint16_t)w->tree->root->nid,
		.inos = w->tree->nr_inodes + !!w->tree->packed,
		.build_time = (uint64_t)plan->epoch,
		.build_time_nsec = plan->epoch_nsec,
		.blocks = plan->nr_blocks,
		.meta_blkaddr = plan->meta_blkaddr,
		.xattr_blkaddr = 0,
		.feature_incompat = plan->feature_incompat,
		.u1 = plan->sb_u1,
		.packed_nid = w->tree->packed ? w->tree->packed->nid : 0,
	};
	uint8_t raw[EROFS_SUPER_SIZE], *block;
	int err;

	memcpy(sb.uuid, w->opts->uuid, sizeof(sb.uuid));
	memcpy(sb.volume_name, w->opts->label, sizeof(sb.volume_name));
	erofs_super_encode(&sb, raw);
	if ((err = erofs_pwrite_all(fd, raw, sizeof(raw), EROFS_SUPER_OFFSET)))
		return err;
	if (plan->lz4_config) {
		/* u16 length, then max_distance (0: the default 64 KiB) and
		 * max_pclusterblks; the rest reserved */
		uint8_t cfg[2 + EROFS_COMPR_CFG_LZ4_SIZE] = { 0 };

		put_le16(cfg, EROFS_COMPR_CFG_LZ4_SIZE);
		put_le16(cfg + 4, plan->max_pclusterblks);
		err = erofs_pwrite_all(fd, cfg, sizeof(cfg), EROFS_SUPER_OFFSET + EROFS_SUPER_SIZE);
		if (err)
			return err;
	}

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

int erofs_write_image(const struct erofs_build_options *opts, const struct erofs_tree *tree,
		      const struct erofs_plan *plan, int spool_fd)
{
	struct write_ctx w = { .opts = opts, .tree = tree, .plan = plan, .spool_fd = spool_fd,
			       .dirs = { .fd = -1 } };
	struct erofs_image_file img;
	uint64_t image_size = (uint64_t)plan->nr_blocks << plan->blkszbits;
	int err;

	if ((err = erofs_image_create(&img, opts->image)))
		return err;
	/* a device too small is refused before anything is written to it */
	if ((err = erofs_image_check_size(&img, image_size)))
		goto out;
	w.fd = img.fd;
	erofs_progress_start(&w.progress, opts->show_progress, "writing", tree->data_bytes);
	if ((err = erofs_seq_init(&w.data, img.fd, opts->image, WRITE_BUFFER_SIZE)))
		goto out;
	w.data.buf_pos = block_pos(&w, plan->data_blkaddr);
	if (plan->chunk_blocks) {
		err = erofs_seq_copy(&w.data, block_pos(&w, plan->chunk_blkaddr), spool_fd, 0,
				     block_pos(&w, plan->chunk_blocks));
		if (err) {
			if (!w.data.error)
				erofs_err("temporary spool: read failed: %s", strerror(-err));
			goto out;
		}
	}

	if (plan->shared.count) {
		uint8_t *area = calloc(1, plan->shared.size);

		if (!area) {
			err = -ENOMEM;
			goto out;
		}
		erofs_xattr_table_encode(&plan->shared, area);
		err = erofs_pwrite_all(img.fd, area, plan->shared.size, plan->shared_pos);
		free(area);
		if (err) {
			erofs_err("%s: write failed: %s", opts->image, strerror(-err));
			goto out;
		}
	}
	for (uint32_t i = 0; i < tree->nr_inodes && !err; i++) {
		err = put_inode_and_data(&w, tree->inodes[i]);
		if (!err)
			err = w.data.error;
		erofs_progress_update(&w.progress, w.bytes_done, i + 1);
	}
	/* the packed inode's blocks come last, as planned */
	if (!err && tree->packed && !(err = put_inode_and_data(&w, tree->packed)))
		err = w.data.error;
	if (!err)
		err = erofs_seq_flush(&w.data);
	if (!err)
		err = erofs_image_resize(&img, image_size);
	/* the superblock lies inside the first metadata block: write it after */
	if (!err && (err = put_superblock(&w, img.fd)))
		erofs_err("%s: write failed: %s", opts->image, strerror(-err));
	if (!err)
		erofs_progress_finish(&w.progress, tree->nr_inodes);
out:
	free(w.record);
	erofs_dir_cache_release(&w.dirs);
	erofs_seq_release(&w.data);
	if (!err)
		return erofs_image_commit(&img);
	erofs_image_abort(&img);
	return err;
}
