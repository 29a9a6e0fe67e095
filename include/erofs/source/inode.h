/* SPDX-License-Identifier: MIT */
/*
 * The in-memory tree mkfs builds, as plain data: inodes, directory entries,
 * and what the data pipeline records about each file (compressed extents,
 * chunk maps, where its bytes went).  No code lives behind this header, so
 * every stage can include it without depending on another stage.
 *
 * An inode keeps no path: names live in the directory entries, and a path
 * is built from the parent chain only when a message or a lookup needs one
 * (tree.h), so memory grows with the inode count, not with path lengths.
 */
#ifndef EROFS_INODE_H
#define EROFS_INODE_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/common/format.h"

struct erofs_xattr_set;

struct erofs_dentry {
	const char *name;		/* in the parent's name arena, not NUL-free-checked */
	uint16_t name_len;
	struct erofs_inode *inode;
};

/* One extent: logical bytes [lofs, next extent's lofs) from one pcluster. */
struct erofs_zextent {
	uint64_t lofs;
	/* -E dedupe: the pcluster is another file's (NULL: this file's own) */
	const struct erofs_inode *owner;
	uint32_t pblk;		/* first block, counted from the owner's first block */
	uint16_t nblks;
	bool raw;		/* stored uncompressed (a PLAIN lcluster head) */
	uint16_t clen;		/* compressed bytes (raw: the extent's bytes in its block) */
	/* --max-extent-bytes=-N (zinfo->unaligned): the pcluster's bytes start
	 * boff bytes into block pblk; nblks: the blocks they touch */
	uint32_t bytes;
	uint16_t boff;
};

struct erofs_zinfo {
	struct erofs_zextent *extents;
	uint32_t nr_extents;
	uint32_t nr_blocks;	/* blocks the file stored itself */
	uint32_t pcluster_size;	/* bytes */
	uint8_t algorithm;	/* EROFS_COMPR_*: what its HEAD1 lclusters hold */
	/* -E ztailpacking: the last extent's pcluster is stored inline after
	 * the index instead of in a block of its own; its bytes wait in the
	 * tail store (inode->tail_pos) */
	uint16_t tail_size;
	/* -E fragments: the file's bytes from frag_lofs on (all of them when
	 * frag_lofs is 0) are in the packed inode's data at frag_off; the last
	 * extent, of no blocks, stands for them in the index */
	bool fragment;
	uint64_t frag_lofs, frag_off;
	/* -E dedupe: some extent uses a pcluster out of order, which only
	 * full indexes can address */
	bool full_index;
	/* no encoded extents (-E48bit) even where they are smaller: the
	 * metabox inode, whose index is sized before it is compressed */
	bool no_extents;
	uint32_t shared_blocks;	/* blocks its extents use that it did not store */
	/* --max-extent-bytes=-N: pclusters packed byte after byte (bytes, boff):
	 * only encoded extents (-E48bit) address them */
	bool unaligned;
};

static inline bool erofs_zinfo_whole_fragment(const struct erofs_zinfo *zi)
{
	return zi && zi->fragment && !zi->frag_lofs;
}

/* --chunksize: the file's block map. */
struct erofs_chunks {
	uint8_t chunkbits;		/* this file's chunk size: runs merged (see chunk.c) */
	uint16_t device_id;		/* the extra device its chunks are on; 0: the
					 * build's one (--blobdev, --tar=i) or none */
	uint32_t count;
	uint32_t *blkaddr;		/* per chunk: image block, or EROFS_NULL_ADDR */
};

struct erofs_inode {
	/* source */
	struct erofs_inode *parent;	/* directory that first named it (root: itself) */
	const struct erofs_dentry *dentry;	/* that name (root: NULL) */
	uint32_t depth;			/* root 0 */
	uint16_t mode;
	uint32_t uid, gid;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint64_t size;			/* data bytes (for directories: set by the planner) */
	uint32_t nlink;			/* links found inside the tree (+ subdirs for dirs) */
	union {
		struct {		/* devices */
			uint32_t rdev_major, rdev_minor;
		};
		char *symlink;		/* target of a symlink */
		struct {		/* regular files: what --compress-hints (or -C) gives */
			uint32_t pcluster_size;	/* 0: store plain */
			uint8_t algorithm;	/* index into the -z list */
		};
	};
	uint64_t data_pos;		/* regular files of a tar source: where its bytes
					 * start in tree->data_fd (the tar or a spool) */
	uint16_t data_layer;		/* rebuild mode: its bytes are read in place from
					 * tree->layer_fds[data_layer - 1] at data_pos
					 * (0: from data_fd, as above) */
	uint32_t kept_blkaddr;		/* --incremental: the base image's file whose
					 * whole blocks stay there (0: none; only its
					 * tail, at data_pos + those blocks, is new) */
	uint32_t ibody_bound;		/* largest xattr ibody it can need (all pairs inline) */
	struct erofs_xattr_set *xattrs;
	struct erofs_dentry *children;	/* directories: sorted by name bytes */
	uint32_t nr_children;
	char *names;			/* directories: the children's names */

	/* data, filled in by the pipeline as the file commits */
	struct erofs_zinfo *z;		/* compressed: its extents (shared by its duplicates) */
	struct erofs_inode *same_data;	/* dedup: another file holds identical data */
	struct erofs_chunks *chunks;	/* --chunksize: where each chunk is */
	uint64_t tail_pos;		/* inline tail bytes: offset in the tail store */
	uint32_t blkaddr;		/* first data block, or EROFS_NULL_ADDR */
	uint32_t nr_blocks;		/* data blocks it stored (plain or compressed) */
	uint16_t tail_inline;		/* plain: bytes of the tail kept for the inode */
	bool tail_late;			/* plain, under a block: the planner puts the tail
					 * inline, or in a block after the data */
	bool size_seen;			/* an earlier file had this size (dedup candidate) */

	/* metadata plan */
	uint64_t nid;
	uint32_t ino;
	uint8_t version;		/* EROFS_INODE_COMPACT / _EXTENDED */
	uint8_t layout;			/* EROFS_LAYOUT_* */
	uint16_t xattr_icount;
	uint32_t xattr_size;
	uint32_t inline_size;		/* tail bytes stored after the inode */
	uint32_t index_size;		/* compressed: map header and lcluster index */

	/* --incremental, added in place (tree->base): the base image's inode at
	 * base_nid.  KEPT: unchanged, its record stays and nothing of it is
	 * written (only its type, from its entry, is known); REWRITTEN: a
	 * directory whose new record goes over its old one, base_record bytes */
	uint8_t base_state;
	uint32_t base_record;
	uint64_t base_nid;
};

enum { EROFS_BASE_NONE, EROFS_BASE_KEPT, EROFS_BASE_REWRITTEN };

/*
 * --incremental, added in place: the image added to, whose metadata stays
 * where it is.  New records go after its blocks, their nids counted from
 * its meta_blkaddr; its epoch, shared xattrs, prefix table and packed
 * inode stay; its superblock block is rewritten up to sb_end only.
 */
struct erofs_base_image {
	struct erofs_super sb;
	uint32_t sb_end;		/* the end of its superblock and config records */
	uint16_t cfg_algs;		/* its config records, a bit per algorithm */
	uint16_t max_pclusterblks;	/* its LZ4 config's largest pcluster */
	uint64_t inos_dropped;		/* its inodes no name reaches any more */
};

/* An extra device of the image (rebuild mode: a layer image), for its slot. */
struct erofs_tree_device {
	uint64_t blocks;
	char tag[64];			/* not NUL-terminated when all 64 are used */
};

struct erofs_tree {
	struct erofs_inode *root;
	struct erofs_inode **inodes;	/* breadth-first, children in name order (planner) */
	uint32_t nr_inodes;
	uint64_t nr_files, nr_dirs, data_bytes;
	int source_dirfd;		/* the source root, kept open for the pipeline */
	/* a tar source: every regular file's bytes are in data_fd, from its
	 * inode's data_pos on (files are not opened by path); or in spool_fd
	 * when data_pos has EROFS_DATA_SPOOLED (sparse files of a tar read in
	 * place) */
	bool data_in_one_file;
	int data_fd, spool_fd;
	/* rebuild mode: the layer images whose plain files are read in place */
	int *layer_fds;
	uint16_t nr_layer_fds;
	uint64_t tar_size;		/* --tar=i from a stream: its bytes, read to the end */
	/* -E fragments: the hidden inode holding fragments (no directory
	 * names it; not in inodes[]), or NULL */
	struct erofs_inode *packed;
	/* --zD: the fragments' bytes the pipeline stored (not compressed
	 * yet: the directories' entries follow them) */
	bool pending_packed;
	int pending_packed_fd;
	uint64_t pending_packed_size;
	/* --incremental: the dictionaries (bytes) of the image's compressed
	 * files kept as they are; the configs written must allow them */
	uint32_t kept_dict_size[EROFS_COMPR_MAX];
	/* rebuild mode's metadata-only image: extra devices 1..n (else none) */
	struct erofs_tree_device *devices;
	uint16_t nr_devices;
	/* --incremental added in place (see struct erofs_base_image), or NULL */
	struct erofs_base_image *base;
};

static inline bool erofs_inode_is_dir(const struct erofs_inode *inode)
{
	return (inode->mode & 0170000) == 0040000;
}

static inline bool erofs_inode_is_reg(const struct erofs_inode *inode)
{
	return (inode->mode & 0170000) == 0100000;
}

#endif
