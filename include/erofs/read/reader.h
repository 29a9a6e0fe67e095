/* SPDX-License-Identifier: MIT */
/*
 * The image reader used by fsck.erofs (and later by a fuzzer and dump tools).
 *
 * Everything read from an image is treated as hostile: every offset, length
 * and count is checked against the image size before it is used, and every
 * loop is bounded by data that has been checked to lie inside the image.
 *
 * The reader keeps no global state.  Its context, struct erofs_reader, reads
 * either through pread(2) on a file descriptor or from a memory buffer (for
 * fuzzing and unit tests).  Functions return 0 (or a positive count) on
 * success and a negative errno on failure:
 *   -EUCLEAN      structural corruption (EROFS's -EFSCORRUPTED),
 *   -EOPNOTSUPP   a valid feature this reader does not handle (yet),
 *   -EIO          a read failed or came back short,
 *   -ENOMEM       out of memory.
 * On failure, erofs_reader_error() describes what is wrong in one line,
 * naming the nid, block or entry; callers prefix it with the path.  The
 * reader itself prints nothing.
 *
 * Compressed files (LZ4, full and compact lcluster indexes, big pclusters)
 * are read through lib/read/zread.c: their extents come back from
 * erofs_map_blocks() with EROFS_MAP_ENCODED and are decoded, whole, by
 * erofs_decode_extent().  The reader keeps the last extent mapped and the
 * last decoded, and their buffers; erofs_reader_close() frees them.  The
 * image must not change while a reader has it open.
 *
 * Fragments (INCOMPAT_FRAGMENTS): a compressed file's tail, or the whole
 * file, may live in the decoded data of the packed inode (packed_nid, a
 * regular file no directory names).  Such an extent comes back with
 * EROFS_MAP_FRAGMENT: its pa is an offset in the packed inode's data, not
 * in the image, and erofs_read_mapped() reads it through the packed
 * inode's own extents, decoded on demand (one extent at a time: the
 * packed inode is never decoded whole).  The packed inode is loaded and
 * checked once, on first use (erofs_packed_inode()).
 *
 * 48-bit images (Linux 6.15) and the metabox (6.17) are read too: the
 * root nid and block count come from r->root_nid and r->blocks, compressed
 * files may use encoded extent records (lib/read/zextread.c), and an inode whose
 * nid has EROFS_NID_METABOX_BIT keeps all its metadata in the decoded data
 * of the metabox inode (lib/read/rmetabox.c): vi->in_mbox, iloc and meta_end in
 * that data, inline tails mapped with EROFS_MAP_MBOX.
 */
#ifndef EROFS_READER_H
#define EROFS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/common/format.h"

/* Local constants of the 6.1 format not (yet) in format.h */
#define EROFS_SB_MAX_SIZE		3072u	/* 128 + 16 * extslots must stay below this */
#define EROFS_CHUNK_FORMAT_BLKBITS_MASK	0x001Fu
#define EROFS_CHUNK_FORMAT_INDEXES	0x0020u
#define EROFS_CHUNK_FORMAT_48BIT	0x0040u	/* Linux 6.15: indexes carry startblk_hi */
#define EROFS_CHUNK_FORMAT_KNOWN	0x003Fu	/* 6.1 rejects any other bit */
#define EROFS_BLOCK_MAP_ENTRY_SIZE	4u
#define EROFS_CHUNK_INDEX_SIZE		8u
#define EROFS_SYMLINK_MAXLEN		4096u	/* PATH_MAX, NUL included: targets < 4096 */
#define EROFS_ERRMSG_LEN		256u
#define EROFS_DEVT_TAG_LEN		64u

struct erofs_zcache;
struct erofs_mcache;
struct erofs_rd_packed;
struct erofs_rd_inode;

/* An extra device of a multi-device image (lib/read/rdevice.c). */
struct erofs_rd_device {
	int fd;				/* -1: not given (yet) */
	uint64_t base;			/* byte of fd where the device starts (0, or
					 * appended to the image file) */
	uint64_t size;			/* bytes the caller says it holds */
	uint64_t blocks;		/* from the device table (48-bit: with blocks_hi) */
	uint64_t mapped_blkaddr;	/* 0, or where it appears in the flat block space */
	char tag[EROFS_DEVT_TAG_LEN + 1];
};

struct erofs_reader {
	int fd;				/* -1 when reading from mem */
	uint64_t base;			/* fd: byte of the file where the image starts */
	const uint8_t *mem;
	uint64_t size;			/* bytes of the filesystem: min(image, blocks) */

	struct erofs_super sb;
	uint64_t root_nid;		/* rootnid_8b or rootnid_2b (erofs_super_root_nid()) */
	uint64_t blocks;		/* with blocks_hi in 48-bit images */
	int64_t epoch;			/* base of compact inodes' mtime (build_time) */
	unsigned int blkszbits;
	uint32_t blksz;
	uint64_t meta_base;		/* byte address of nid 0 */
	uint64_t xattr_base;		/* byte address of shared xattr id 0 */
	uint64_t sb_end;		/* end of the superblock and its compression configs */

	/* compression, from the superblock (see erofs_z_load_config()) */
	uint16_t available_compr_algs;	/* bit per algorithm (1 << EROFS_COMPR_LZ4) */
	uint16_t lz4_max_distance;	/* 0: LZ4's own 64 KiB */
	uint16_t lz4_max_pclusterblks;	/* largest LZ4 pcluster, in blocks */
	uint32_t lzma_dict_size;	/* MicroLZMA's dictionary */
	unsigned int deflate_windowbits;
	unsigned int zstd_window_log;	/* log2 of zstd's largest window */
	struct erofs_zcache *zc;	/* decode buffers and caches, made on demand */
	struct erofs_rd_packed *pk;	/* the packed inode (lib/read/zpacked.c), on demand */
	struct erofs_mcache *mc;	/* metadata blocks (lib/read/rmcache.c), made on demand */
	unsigned int flags;		/* EROFS_READER_* given to erofs_reader_open_*_flags() */

	/* long xattr name prefixes, loaded on first use (lib/read/rxattr.c) */
	struct erofs_rd_prefix *prefixes;
	bool prefixes_in_packed;
	bool prefixes_in_mbox;		/* metabox images keep the table in the metabox */
	/* extra devices (INCOMPAT_DEVICE_TABLE), see lib/read/rdevice.c */
	struct erofs_rd_device *devs;
	unsigned int nr_devs;		/* extra_devices of the superblock */
	uint16_t device_id_mask;	/* what of a chunk's device_id counts, as in Linux */
	bool devs_borrowed;		/* a clone's: erofs_reader_close() leaves them */

	/* the metabox (INCOMPAT_METABOX, lib/read/rmetabox.c): inodes whose nid has
	 * EROFS_NID_METABOX_BIT live in the decoded data of this inode */
	struct erofs_rd_inode *mbox;	/* NULL: no metabox; owned unless a clone's */
	uint64_t mbox_vbase;		/* fsck's metadata map: metabox byte 0 sits here */
	unsigned int mbox_depth;	/* metabox reads in progress (no reentry) */

	/*
	 * The packed inode's and the metabox's data are themselves an inode's
	 * data: the files that find they need them (the metadata cache, the
	 * compressed map) sit below the inode and data readers, and reach them
	 * through these, which the opener (lib/read/ropen.c) sets to
	 * erofs_read_inode() and erofs_read_data().
	 */
	int (*load_inode)(struct erofs_reader *r, uint64_t nid, struct erofs_rd_inode *vi);
	int (*read_inode_data)(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			       void *buf, size_t len, uint64_t off);

	char err[EROFS_ERRMSG_LEN];	/* last error, see erofs_reader_error() */
};

/* Open an image and validate its superblock.  For the fd form the caller
 * owns the descriptor and passes the image size (st_size or BLKGETSIZE64). */
int erofs_reader_open_fd(struct erofs_reader *r, int fd, uint64_t size);
/* The same for an image of size bytes starting at byte base of the file. */
int erofs_reader_open_fd_at(struct erofs_reader *r, int fd, uint64_t base, uint64_t size);
int erofs_reader_open_mem(struct erofs_reader *r, const void *buf, size_t size);
/*
 * Gives extra device id (1..nr_devs) of a multi-device image: a file or
 * block device of size bytes, which must hold the blocks the device table
 * gives it.  Data on a device not given fails to read, naming it.
 */
int erofs_reader_set_device(struct erofs_reader *r, unsigned int id, int fd, uint64_t size);
/* The same for a device that starts base bytes into fd (a tar appended to its index). */
int erofs_reader_set_device_at(struct erofs_reader *r, unsigned int id, int fd, uint64_t base,
			       uint64_t size);
/* Whether extra device id (1..nr_devs) was given: data on one that was not
 * fails to read with -ENXIO (not -EIO: nothing is wrong with the image). */
static inline bool erofs_reader_has_device(const struct erofs_reader *r, unsigned int id)
{
	return id && id <= r->nr_devs && r->devs[id - 1].fd >= 0;
}
/* Names extra device id for a message, from its slot of the device table:
 * "device 1 (tag \"...\", 12 blocks)", the tag escaped, or "no tag".  buf. */
const char *erofs_reader_device_name(const struct erofs_reader *r, unsigned int id, char *buf,
				     size_t len);
#define EROFS_DEVICE_NAME_LEN	(EROFS_DEVT_TAG_LEN * 4 + 64)

/* Mapping (not decoding) accepts every algorithm the format names: LZMA,
 * DEFLATE and ZSTD extents are mapped, and erofs_decode_extent() still
 * refuses what it cannot decode.  For dump.erofs, which shows extents. */
#define EROFS_READER_MAP_ANY_ALGORITHM	0x1u
int erofs_reader_open_fd_flags(struct erofs_reader *r, int fd, uint64_t size,
			       unsigned int flags);
int erofs_reader_open_mem_flags(struct erofs_reader *r, const void *buf, size_t size,
				unsigned int flags);
/* Frees what the reader allocated (decode buffers); the fds stay open. */
/* A second reader of the same image for another thread: it shares the
 * descriptor (or memory), the extra devices and what the superblock said,
 * not the buffers. */
void erofs_reader_clone(struct erofs_reader *dst, const struct erofs_reader *src);
void erofs_reader_close(struct erofs_reader *r);
const char *erofs_reader_error(const struct erofs_reader *r);

/* Copies len bytes of an image name or path into out (always terminated),
 * escaping control bytes, DEL, non-ASCII and backslash as \xNN and
 * truncating with "..." when out is too small: names from an image must
 * never reach a terminal raw. */
const char *erofs_escape(char *out, size_t outlen, const void *s, size_t len);

/* Records the reader's error message and returns err: every file of the
 * read layer, and the layers above when they find an image wrong. */
int erofs_reader_fail(struct erofs_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Read len bytes at off; anything past the image end is -EUCLEAN. */
int erofs_dev_read(struct erofs_reader *r, void *buf, size_t len, uint64_t off);
/* ---- inodes ---- */

struct erofs_rd_inode {
	uint64_t nid;
	struct erofs_dinode di;		/* decoded core, as on disk */
	unsigned int version;		/* EROFS_INODE_COMPACT / _EXTENDED */
	unsigned int layout;		/* enum erofs_data_layout */
	uint64_t iloc;			/* byte address of the inode (in_mbox: in the metabox data) */
	bool in_mbox;			/* nid has EROFS_NID_METABOX_BIT: all its metadata
					 * (core, xattrs, inline data, indexes) is in the
					 * metabox inode's decoded data */
	bool dot_omitted;		/* directory without "." (48-bit DOT_OMITTED) */
	unsigned int isize;		/* 32 or 64 */
	unsigned int xattr_isize;	/* inline xattr region size */
	uint64_t size;			/* i_size (checked: < 2^63) */
	int64_t mtime;			/* compact inodes: superblock build time */
	uint32_t mtime_nsec;

	/* derived, per layout */
	uint64_t raw_blkaddr;		/* flat layouts (48-bit: with startblk_hi) */
	uint64_t inline_pos;		/* FLAT_INLINE: byte address of the tail */
	uint64_t flat_head;		/* flat: bytes stored from raw_blkaddr on */
	bool flat_hole;			/* FLAT_PLAIN without a block (48-bit): all zeros */
	uint16_t chunkformat;		/* CHUNK_BASED */
	unsigned int chunkbits;
	unsigned int chunk_unit;	/* 4 (block map) or 8 (indexes) */
	uint64_t chunk_table;		/* byte address of the chunk table */
	uint64_t nchunks;
	uint64_t meta_end;		/* end of inode + xattrs + inline data/table/index */

	/* COMPRESSED_FULL / COMPRESSED_COMPACT (checked map header) */
	uint32_t z_blocks;		/* i_u: compressed blocks of the file */
	uint16_t z_advise;		/* h_advise (0 when the kernel ignores the header) */
	uint8_t z_algtype[2];		/* HEAD1, HEAD2 algorithms */
	unsigned int z_lclusterbits;
	uint64_t z_header;		/* byte address of the map header */
	uint64_t z_index;		/* first index entry (full) or ebase (compact) */
	uint64_t z_nlclusters;		/* index entries: ceil(i_size / lcluster size) */
	uint64_t z_initial_4b;		/* compact: 4-byte entries before the 2-byte packs */
	uint64_t z_compacted_2b;	/* compact: entries in 2-byte packs */
	uint64_t z_idataoff;		/* ztailpacking: byte address of the inline tail pcluster */
	uint16_t z_idata_size;		/* ztailpacking: its size (0: no inline tail) */
	/* fragments (z_advise has EROFS_ZADVISE_FRAGMENT); checked to lie
	 * inside the packed inode: z_fragoff + i_size - z_frag_la <= its size */
	bool z_whole_fragment;		/* map header bit 63: no index at all */
	uint64_t z_fragoff;		/* offset of the fragment in the packed inode's data */
	uint64_t z_frag_la;		/* file offset it starts at (0: the whole file) */
	uint64_t z_tail_lcn;		/* tail fragment: lcluster of the tail extent's head */
	/* encoded extents (48-bit, COMPRESSED_FULL with EROFS_ZADVISE_EXTENTS) */
	unsigned int z_recsz;		/* 0: lcluster indexes; else 4, 8, 16 or 32 */
	uint64_t z_extents;		/* records (recsz >= 16; else one per lcluster) */
	uint64_t z_ext_base;		/* recsz 4: the first extent's physical address */
};

/* Where byte pos of vi's metadata sits in one space for the image and the
 * metabox (fsck's overlap checks): the metabox's bytes follow the image's. */
static inline uint64_t erofs_meta_vaddr(const struct erofs_reader *r,
					const struct erofs_rd_inode *vi, uint64_t pos)
{
	return vi->in_mbox ? r->mbox_vbase + pos : pos;
}

/* Loads and fully checks the inode core at nid (bounds, i_format, mode,
 * size, layout addressing).  Does not read xattrs or data. */
int erofs_read_inode(struct erofs_reader *r, uint64_t nid, struct erofs_rd_inode *vi);

/* ---- data ---- */

#define EROFS_MAP_MAPPED	0x1u	/* pa is valid; otherwise a hole (zeros) */
#define EROFS_MAP_META		0x2u	/* inline tail inside the metadata area */
#define EROFS_MAP_ENCODED	0x4u	/* [pa, pa + plen) is compressed: erofs_decode_extent() */
#define EROFS_MAP_PARTIAL	0x8u	/* encoded: the extent is only the start of the stream */
#define EROFS_MAP_FRAGMENT	0x10u	/* in the packed inode's data at pa (not an image address) */
#define EROFS_MAP_INTERLACED	0x20u	/* uncompressed block kept as a ring: byte p at pa + p % blksz */
#define EROFS_MAP_MBOX		0x40u	/* META of a metabox inode: pa is in the metabox data */

struct erofs_map {
	uint64_t la;		/* logical start of the extent */
	uint64_t llen;		/* logical length (> 0) */
	uint64_t pa;		/* physical byte address when MAPPED */
	uint64_t plen;		/* physical bytes: llen, or the pcluster's size */
	unsigned int flags;
	unsigned int alg;	/* ENCODED: algorithm (EROFS_COMPR_LZ4, ...) */
	unsigned int device;	/* 0: the image; else pa is on extra device n */
};

/* Maps logical offset la (< i_size) to the extent containing it.  The
 * extent returned always contains la, lies inside the image when mapped
 * ([pa, pa + plen)), and ends at or before i_size.  Unencoded mapped data
 * is read from pa + (la - map.la) on, except for the two kinds that
 * erofs_read_mapped() knows how to read:
 *   EROFS_MAP_FRAGMENT    [pa, pa + llen) of the packed inode's data
 *                         (plen = llen), checked to lie inside it;
 *   EROFS_MAP_INTERLACED  an uncompressed one-block pcluster stored as a
 *                         ring (advise INTERLACED): byte p of the file at
 *                         pa + p % blksz.
 * Compressed files map whole extents (a pcluster each, every index entry
 * of the extent checked). */
int erofs_map_blocks(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		     uint64_t la, struct erofs_map *map);

/* Reads [pos, pos + len) of a file from its mapped, unencoded extent map
 * (which must contain that range): plain, interlaced or fragment. */
int erofs_read_mapped(struct erofs_reader *r, const struct erofs_map *map,
		      void *buf, size_t len, uint64_t pos);

/* The packed inode: 1 with *out set when the image has one (FRAGMENTS
 * and a non-zero packed_nid), 0 when it has none, or a negative errno
 * when it is unusable (not a regular file, itself stored in fragments,
 * corrupt inode...).  Loaded and checked once; *out stays valid until
 * erofs_reader_close(). */
int erofs_packed_inode(struct erofs_reader *r, const struct erofs_rd_inode **out);

/* Reads [off, off + len) of the packed inode's decoded data. */
int erofs_read_packed(struct erofs_reader *r, void *buf, size_t len, uint64_t off);

/* Decodes an EROFS_MAP_ENCODED extent, whole: *out points at map->llen
 * bytes owned by the reader, valid until its next call.  The stream must
 * decode to exactly map->llen bytes (to at least that many with
 * EROFS_MAP_PARTIAL).  The last extent decoded is kept (one for the files,
 * one for the packed inode, so that reading a file's fragment does not
 * throw away the file's own extent). */
int erofs_decode_extent(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			const struct erofs_map *map, const uint8_t **out);

/* Reads [off, off + len) of the file's data; off + len must be <= i_size. */
int erofs_read_data(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		    void *buf, size_t len, uint64_t off);

/* Reads a symlink target into buf (bufsz > i_size), NUL-terminated;
 * refuses empty targets, targets over EROFS_SYMLINK_MAXLEN and NULs. */
int erofs_read_symlink(struct erofs_reader *r, const struct erofs_rd_inode *vi,
		       char *buf, size_t bufsz);

/* ---- directories ---- */

struct erofs_rd_dentry {
	uint64_t nid;
	const char *name;	/* not NUL-terminated */
	unsigned int namelen;
	uint8_t file_type;
};

/* Return 0 to go on, anything else stops the iteration and is returned. */
typedef int (*erofs_dirent_fn)(void *arg, const struct erofs_rd_dentry *de);

/* State carried across the blocks of one directory. */
/* parent_nid when the caller does not know it (a FUSE lookup, fsck --nid,
 * dump.erofs --nid): ".." must still be there and name a directory, and
 * the cursor records which.  The one spelling of "parent unknown". */
#define EROFS_NID_UNKNOWN	UINT64_MAX

struct erofs_dir_cursor {
	uint64_t dir_nid;		/* "." must point here */
	uint64_t parent_nid;		/* ".." must point here (see EROFS_NID_UNKNOWN) */
	uint64_t blkno;			/* block being parsed, for messages */
	uint64_t nentries;		/* entries seen so far, dots included */
	bool seen_dot, seen_dotdot;
	unsigned int flags;		/* EROFS_DIR_* (0 after erofs_dir_cursor_init()) */
	unsigned int prevlen;		/* previous name, for the sort check */
	uint8_t prev[EROFS_NAME_LEN];
};

void erofs_dir_cursor_init(struct erofs_dir_cursor *cur, uint64_t dir_nid,
			   uint64_t parent_nid);

/* Parses and checks one directory block of maxsize valid bytes (the rest of
 * a block may be absent for the tail); calls fn for every entry except "."
 * and "..".  On corruption returns -EUCLEAN with a message in err. */
int erofs_dirblock_parse(const uint8_t *blk, unsigned int maxsize,
			 unsigned int blksz, struct erofs_dir_cursor *cur,
			 erofs_dirent_fn fn, void *arg, char *err, size_t errlen);

/* After the last block: "." and ".." must both have been seen. */
int erofs_dir_cursor_finish(const struct erofs_dir_cursor *cur, char *err,
			    size_t errlen);

/* Iterates a whole directory, with every check of erofs_dirblock_parse()
 * across its blocks (names strictly sorted by memcmp over the directory). */
int erofs_dir_iterate(struct erofs_reader *r, const struct erofs_rd_inode *dir,
		      uint64_t parent_nid, erofs_dirent_fn fn, void *arg);

/* The same, with flags: EROFS_DIR_WITH_DOTS hands "." and ".." to fn as
 * well (checked first). */
#define EROFS_DIR_WITH_DOTS	0x1u
int erofs_dir_iterate_flags(struct erofs_reader *r, const struct erofs_rd_inode *dir,
			    uint64_t parent_nid, unsigned int flags, erofs_dirent_fn fn, void *arg);

/* ---- extended attributes ---- */

struct erofs_rd_xattr {
	unsigned int index;	/* enum erofs_xattr_index (0 only from erofs_xattr_iterate_all) */
	const char *name;	/* suffix after the prefix, not NUL-terminated */
	unsigned int name_len;
	const void *value;
	unsigned int value_size;
	bool shared;
	uint64_t addr;		/* byte address of the entry in the image */
	unsigned int entry_size;	/* header + name + value, unpadded */
	bool ishare;		/* under the superblock's ishare_xattr_prefix_id: the
				 * content digest of --xattr-inode-digest */
};

typedef int (*erofs_xattr_fn)(void *arg, const struct erofs_rd_xattr *x);

/* Iterates shared then inline xattrs with full checks; index 0 (hidden
 * full-name) entries are checked and skipped.  An entry under a long
 * prefix is handed over with the prefix's base index and the name that
 * follows it (infix and suffix), as if it had been stored that way. */
int erofs_xattr_iterate(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			erofs_xattr_fn fn, void *arg);

/* The same, and the digest of --xattr-inode-digest when its long prefix
 * has no namespace: index 0, the whole name in name (as dump shows it). */
int erofs_xattr_iterate_all(struct erofs_reader *r, const struct erofs_rd_inode *vi,
			    erofs_xattr_fn fn, void *arg);

/* Frees the long prefix table (erofs_reader_close() does). */
void erofs_xattr_prefixes_free(struct erofs_reader *r);

/* "user.", "system.posix_acl_access", ...; NULL for an unknown index. */
const char *erofs_rd_xattr_prefix(unsigned int index);

#endif
