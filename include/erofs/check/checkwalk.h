/* SPDX-License-Identifier: MIT */
/*
 * Inside the check behind fsck.erofs (lib/check*.c; the interface is
 * include/erofs/check/check.h).  The walk (lib/check/check.c) is single-threaded and
 * deterministic; the data of regular files is read, decoded and, with
 * --extract, written by jobs of an ordered queue (include/erofs/check/fsckq.h)
 * on --workers threads, each with its own reader clone and scanner, and
 * retired in walk order, so messages and results do not depend on the
 * number of workers.
 *
 *   lib/check/check.c        the walk: directories, inodes, jobs, the entry point
 *   lib/check/check-data.c   reading and decoding data, each block or extent once
 *   lib/check/check-dirs.c   directory entries and descriptors (extraction)
 *   lib/check/check-final.c  xattrs, the packed inode, link counts, overlaps
 */
#ifndef EROFS_CHECKWALK_H
#define EROFS_CHECKWALK_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/check/check.h"
#include "erofs/common/diag.h"
#include "erofs/check/extract.h"
#include "erofs/check/fsckq.h"
#include "erofs/read/reader.h"

#define EXIT_NOMEM		EROFS_CHECK_EXIT_NOMEM
#define MAX_PRINTED_ERRORS	1000
#define MSGPATH			1024
#define READ_CHUNK		(1u << 20)
#define OPEN_DIRS		64	/* directory descriptors the stack keeps open */
#define FD_CLOSED		(-2)	/* extracted; descriptor closed for now */
#define BM_PAGE_BITS		15	/* 32768 blocks per 4 KiB bitmap page */
#define BM_PAGE_WORDS		((1u << BM_PAGE_BITS) / 64)
#define MM_PAGE_BITS		15	/* 32768 units (1 MiB of image) per 4 KiB page */

struct zseen {
	uint64_t pa, llen, plen;
	unsigned int flags, alg;
	bool valid;
};

struct dext {
	uint64_t start, end, nid;
	bool xattr;			/* a shared xattr entry, not file data */
};

struct dent {
	uint64_t nid;
	size_t name;			/* offset in the frame's names (NUL-terminated) */
	uint8_t len;
	uint8_t ft;
};

struct frame {
	struct erofs_rd_inode vi;
	struct dent *ents;
	size_t n, cap, next;
	char *names;			/* the entries' names, back to back */
	size_t names_len, names_cap;
	uint32_t subdirs;
	int dirfd;			/* -1: not extracted; FD_CLOSED: reopen */
	uint64_t dev, ino;		/* the extracted directory, to reopen it */
	bool damaged;			/* entries after the damage were not seen */
};

/* What a message is about: entry name of directory dir, or (name NULL)
 * dir itself; or the packed inode. */
struct place {
	uint64_t dir;
	const char *name;
	size_t len;
	bool packed;
	bool mbox;			/* the metabox inode */
};

extern const struct place ck_packed_place;
extern const struct place ck_mbox_place;

/* One thread's way of reading data: each image block and each compressed
 * extent at most once (per scanner), so that data shared by many inodes
 * cannot multiply the work. */
struct ck_scanner {
	struct erofs_reader *r;
	uint64_t **bitmap;		/* two-level bitmap of image blocks read */
	size_t bitmap_pages;
	uint64_t (*extent_cache)[2];	/* (pa, len) of extents read */
	struct zseen *zseen;		/* compressed extents decoded */
	uint8_t *buf;
	bool skip_missing;		/* --no-devices: data on a device not given is
					 * mapped, not read (ck_scan.missing_dev) */
};

/* What a scan of one inode's extents found, to be applied in walk order. */
struct ck_rext {
	uint64_t pa, plen;
};

struct ck_scan {
	struct ck_rext *v;		/* mapped data extents, in file order */
	size_t n, cap;
	uint64_t zblocks;		/* distinct pcluster blocks */
	unsigned int missing_dev;	/* the first extra device not given that
					 * holds some of the data (0: none) */
	uint64_t missing_bytes;		/* the file's bytes on such devices */
	bool failed;
	char msg[EROFS_ERRMSG_LEN];	/* the reader's message when failed */
};

/* A worker thread's context (the walk's own, too, without threads). */
struct ck_worker {
	struct checker *f;
	struct erofs_reader r;
	struct ck_scanner scan;
	struct erofs_xworker xw;
	int own_fd;			/* its own descriptor of the image, or -1 */
};

struct checker {
	struct erofs_check_opts o;
	struct erofs_reader *r;

	struct erofs_nidtab nids;

	struct ck_scanner scan;		/* the walk's own (packed inode) */
	uint64_t **metamap;		/* inode metadata claimed, by 32-byte unit */
	size_t metamap_pages;

	struct erofs_fq *q;		/* data jobs, retired in walk order */
	struct ck_worker *workers;
	unsigned int nworkers;

	struct frame *stack;
	size_t depth, stackcap;
	size_t open_dirs;		/* frames below the root with an open dirfd */
	size_t open_lo;			/* no frame in [1, open_lo) has one */
	uint64_t link_dir;		/* a hard link target's directory ... */
	int link_dirfd;			/* ... kept open for the next link to it */

	struct dext *dext;		/* data extents seen */
	size_t ndext, dextcap;

	unsigned long errors, warnings;
	bool dirs_damaged;		/* some entries could not be read */
	bool subtree;			/* --nid/--path: not from the root */
	struct erofs_check_stats st;
	/* the inode's content digest (--xattr-inode-digest), noted with its xattrs */
	bool digest_seen;
	uint8_t digest[32];
};

/* ---- messages and bookkeeping (lib/check/checkwalk.c) ---- */
void ck_report(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
	EROFS_PRINTF(4, 5);
void ck_warn(struct checker *f, const struct place *at, uint64_t nid, const char *fmt, ...)
	EROFS_PRINTF(4, 5);
void ck_report_image(struct checker *f, const char *msg);
void ck_rfail(struct checker *f, const struct place *at, uint64_t nid);
void ck_note(struct checker *f, const char *fmt, ...) EROFS_PRINTF(2, 3);
const char *ck_show(const struct checker *f, const struct place *at, char *buf);
const char *ck_show_node(const struct checker *f, const struct erofs_check_node *ni, char *buf);
struct place ck_node_place(const struct checker *f, const struct erofs_check_node *ni);
void *ck_xrealloc(void *p, size_t n);
void ck_nomem(void);
struct erofs_check_node *ck_nid_find(struct checker *f, uint64_t nid);
struct erofs_check_node *ck_nid_add(struct checker *f, uint64_t nid);
void ck_nid_name(struct checker *f, struct erofs_check_node *ni, uint64_t dir,
		 const char *name, size_t len);

/* ---- data (lib/check/check-data.c) ---- */
int ck_scanner_init(struct ck_scanner *s, struct erofs_reader *r);
void ck_scanner_fini(struct ck_scanner *s);
bool ck_meta_claim(struct checker *f, uint64_t start, uint64_t end);
void ck_record_extent(struct checker *f, uint64_t pa, uint64_t len, uint64_t nid, bool xattr);
bool ck_is_compressed(const struct erofs_rd_inode *vi);
/* Maps every extent of vi and, with read, reads or decodes it; stops at
 * the first failure.  Any thread, with its own scanner. */
void ck_scan_extents(struct ck_scanner *s, const struct erofs_rd_inode *vi, bool read,
		     struct ck_scan *out);
/* Records what a scan found and, with report, reports its failure and a
 * block count the extents do not bear out; frees out's list. */
void ck_scan_apply(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi,
		   struct ck_scan *out, bool report);
/* Both at once, on the walk's thread; the scan's missing_dev. */
unsigned int ck_scan_data(struct checker *f, const struct place *at,
			  const struct erofs_rd_inode *vi, bool read, bool report);
/* With an extractor and --no-devices: the file (or another name of it) at
 * at is not created, its data being on extra device dev, not given (0:
 * not named again, for a hard link to a file refused before). */
void ck_not_extracted(struct checker *f, const struct place *at, uint64_t nid,
		      unsigned int dev);

/* ---- content digests (lib/check/check-digest.c) ---- */
/* The ishare pair x of the inode: f->digest, or a report of a bad value. */
void ck_digest_note(struct checker *f, const struct place *at, uint64_t nid,
		    const struct erofs_rd_xattr *x);
/* The SHA-256 of the file's bytes as r decodes them; the read's error. */
int ck_digest_compute(struct erofs_reader *r, const struct erofs_rd_inode *vi, uint8_t out[32]);
/* Reports a mismatch, naming the file and both digests. */
void ck_digest_compare(struct checker *f, const struct place *at, uint64_t nid,
		       const uint8_t want[32], const uint8_t got[32]);

/* ---- directories (lib/check/check-dirs.c) ---- */
int ck_collect_dent(void *arg, const struct erofs_rd_dentry *de);
void ck_close_far_dirs(struct checker *f);
void ck_reopen_parent(struct checker *f);
int ck_link_dir_fd(struct checker *f, uint64_t dir, const struct place *at, uint64_t nid);

/* ---- data jobs on the workers, retired in walk order (lib/check/check-jobs.c) ---- */
enum ck_job_kind { CK_JOB_SCAN, CK_JOB_EXTRACT, CK_JOB_DIR_END, CK_JOB_CLOSE };
/* Workers (at least one context, even without threads) and the queue. */
int ck_start_workers(struct checker *f);
void ck_stop_workers(struct checker *f);
/* A regular file's data: checked (CK_JOB_SCAN) or extracted below pfd. */
void ck_submit_file(struct checker *f, int kind, const struct place *at,
		    const struct erofs_rd_inode *vi, int pfd);
/* A directory's metadata (mtime last) once every job inside it is done. */
void ck_submit_dir_end(struct checker *f, struct frame *fr);
/* Closes a stack directory once the jobs borrowing it are retired. */
void ck_close_dir_later(struct checker *f, int fd);

/* ---- the rest (lib/check/check-final.c) ---- */
void ck_check_xattrs(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi);
void ck_check_packed(struct checker *f);
/* The metabox inode (48-bit metadata compression): checked like the packed one. */
void ck_check_metabox(struct checker *f);
void ck_final_checks(struct checker *f);

#endif
