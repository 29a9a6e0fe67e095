// SPDX-License-Identifier: MIT
/*
 * The image check behind fsck.erofs (include/erofs/check/check.h); how its
 * files share the work: include/erofs/check/checkwalk.h.
 *
 * The walk is depth-first over an explicit stack (no recursion, so nesting
 * depth cannot exhaust the C stack).  Every directory nid is visited once;
 * a second reference to a directory is reported as a loop / directory hard
 * link and not followed, so the total work is bounded by the directory
 * bytes plus the data in the image.
 *
 * The walk itself (inodes, directories, xattrs, symlinks, creating
 * directories and special files) runs on one thread, in a fixed order.
 * The data of each regular file is a job of an ordered queue: read and
 * decoded (check) or written out (--extract) on a worker thread, then
 * retired in walk order: what it found is recorded and printed then, and
 * a directory's own metadata (mtime last) is applied once every job
 * inside it is retired.  Anything the walk prints drains the queue first,
 * so the output is the same for every --workers value.
 *
 * With fragments, the packed inode (no directory names it) is checked
 * first, once: its inode, index and every extent.  A file's fragment is
 * then only checked to lie inside it (the reader does that when it loads
 * the file), not decoded again; --extract reads it through the packed
 * inode's extents, one at a time.
 *
 * No path is kept: each inode's node records the name it was reached by
 * and the directory holding it (lib/read/nidtab.c), each frame of the stack
 * the names of its directory's entries, and a path is put together only
 * for a message.  Memory is O(inodes + depth) and the walk's time linear,
 * however deep the tree.  With --extract, at most OPEN_DIRS directories of
 * the stack keep a descriptor; one closed to stay under that is reopened
 * through its child's "..", checked to be the directory made.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/check/checkwalk.h"
#include "erofs/common/ondisk.h"
#include "erofs/read/handle.h"

/* ---- the stack ---- */

/* Pushes a directory: reads and checks all its entries first. */
static void push_dir(struct checker *f, const struct erofs_rd_inode *vi, uint64_t parent,
		     const struct place *at, int dirfd)
{
	struct erofs_check_node *ni;
	struct frame *fr;
	struct stat st;

	if (f->depth == f->stackcap) {
		f->stackcap = f->stackcap ? f->stackcap * 2 : 64;
		f->stack = ck_xrealloc(f->stack, f->stackcap * sizeof(*f->stack));
	}
	fr = &f->stack[f->depth++];
	memset(fr, 0, sizeof(*fr));
	fr->vi = *vi;
	fr->dirfd = dirfd;
	if (dirfd >= 0 && !fstat(dirfd, &st)) {
		fr->dev = st.st_dev;
		fr->ino = st.st_ino;
	}
	ni = ck_nid_find(f, vi->nid);
	if (ni)
		ni->frame = (uint32_t)f->depth;
	if (dirfd >= 0 && f->depth > 1) {
		f->open_dirs++;
		ck_close_far_dirs(f);
	}
	f->st.ndirs++;
	if (f->o.debug >= 7) {
		char p[MSGPATH];

		ck_note(f, "checking directory %s", ck_show(f, at, p));
	}
	if (erofs_dir_iterate(f->r, vi, parent, ck_collect_dent, fr)) {
		ck_rfail(f, at, vi->nid);	/* the entries before the damage are still walked */
		fr->damaged = f->dirs_damaged = true;
	} else {
		ck_scan_data(f, at, vi, false, false);
	}
}

static void pop_dir(struct checker *f)
{
	struct frame *fr = &f->stack[f->depth - 1];
	const struct place at = { fr->vi.nid, NULL, 0, false, false };
	struct erofs_check_node *ni = ck_nid_find(f, fr->vi.nid);
	uint32_t want = 2 + fr->subdirs;

	/* a damaged directory's subdirectories were not all counted */
	if (!fr->damaged && fr->vi.di.nlink != want && fr->vi.di.nlink != 1)
		ck_report(f, &at, fr->vi.nid,
		       "directory link count %u, expected %u (2 + %u subdirectories)",
		       fr->vi.di.nlink, want, fr->subdirs);
	ck_reopen_parent(f);
	if (fr->dirfd >= 0) {
		ck_submit_dir_end(f, fr);
		if (f->depth > 1)
			f->open_dirs--;
	}
	if (ni)
		ni->frame = 0;
	free(fr->ents);
	free(fr->names);
	f->depth--;
	if (f->open_lo > f->depth)
		f->open_lo = f->depth;
}

static void check_special(struct checker *f, const struct place *at, const struct erofs_rd_inode *vi)
{
	if (vi->size)
		ck_warn(f, at, vi->nid, "special file with i_size %" PRIu64, vi->size);
	if ((S_ISFIFO(vi->di.mode) || S_ISSOCK(vi->di.mode)) && vi->di.u)
		ck_warn(f, at, vi->nid, "fifo or socket with non-zero rdev 0x%x", vi->di.u);
}

/* Another entry naming an inode reached before. */
static void visit_again(struct checker *f, struct frame *parent, const struct dent *d,
			struct erofs_check_node *ni, const struct place *at)
{
	const char *name = parent->names + d->name;
	struct erofs_check_xpath xp;
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;
	char p[MSGPATH];

	ni->refs++;
	if (ni->packed || ni->mbox) {
		ck_report(f, at, d->nid,
		       "the directory entry names the %s inode, which no directory may link",
		       ni->packed ? "packed" : "metabox");
		return;
	}
	if (ni->bad)
		return;
	if (erofs_mode_to_ftype(ni->mode) != d->ft)
		ck_report(f, at, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, ni->mode);
	if (S_ISDIR(ni->mode)) {
		ck_report(f, at, d->nid, "directory already reached as %s (directory hard link or loop)",
		       ck_show_node(f, ni, p));
		return;
	}
	f->st.nlinks_extra++;
	if (pfd < 0)
		return;
	if (ni->no_device) {	/* its first name was refused already */
		ck_not_extracted(f, at, d->nid, 0);
		return;
	}
	if (ni->pending)
		erofs_fq_drain(f->q);	/* whether its first copy made it */
	erofs_check_xpath(&xp, &f->nids, parent->vi.nid, name, d->len);
	if (ni->extracted) {
		char tname[EROFS_NAME_LEN + 1];
		int tfd = ck_link_dir_fd(f, ni->parent, at, d->nid);

		memcpy(tname, f->nids.names + ni->name, ni->namelen);
		tname[ni->namelen] = '\0';
		if (tfd >= 0)
			erofs_extract_hardlink(f->o.x, pfd, name, &xp.base, tfd, tname);
	} else if (!erofs_read_inode(f->r, d->nid, &vi) &&
		   !erofs_extract_node(f->o.x, pfd, name, &xp.base, &vi)) {
		/* the first copy extracted is the one later links point at */
		ck_nid_name(f, ni, parent->vi.nid, name, d->len);
		ni->extracted = true;
	}
}

static void visit(struct checker *f, struct frame *parent, const struct dent *d)
{
	const char *name = parent->names + d->name;
	const struct place at = { parent->vi.nid, name, d->len, false, false };
	struct erofs_check_node *ni = ck_nid_find(f, d->nid);
	struct erofs_check_xpath xp;
	struct erofs_rd_inode vi;
	int pfd = parent->dirfd;
	unsigned int dev;

	if (d->ft == EROFS_FT_DIR)
		parent->subdirs++;
	if (f->o.debug >= 7) {
		char p[MSGPATH];

		ck_note(f, "checking %s", ck_show(f, &at, p));
	}
	if (ni) {
		visit_again(f, parent, d, ni, &at);
		return;
	}

	ni = ck_nid_add(f, d->nid);
	ni->refs = 1;
	ck_nid_name(f, ni, parent->vi.nid, name, d->len);
	if (erofs_read_inode(f->r, d->nid, &vi)) {
		ni->bad = true;
		ck_rfail(f, &at, d->nid);
		return;
	}
	if (!ck_meta_claim(f, erofs_meta_vaddr(f->r, &vi, vi.iloc),
			   erofs_meta_vaddr(f->r, &vi, vi.meta_end))) {
		ni->bad = true;
		if (S_ISDIR(vi.di.mode))
			f->dirs_damaged = true;
		ck_report(f, &at, d->nid,
		       "inode (bytes %" PRIu64 "..%" PRIu64 " of the %s with its metadata) overlaps an inode checked before; not checked further",
		       vi.iloc, vi.meta_end - 1, vi.in_mbox ? "metabox" : "image");
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = erofs_meta_vaddr(f->r, &vi, vi.iloc);
	ni->meta_end = erofs_meta_vaddr(f->r, &vi, vi.meta_end);
	if (erofs_mode_to_ftype(vi.di.mode) != d->ft)
		ck_report(f, &at, d->nid,
		       "file type %u in the directory entry does not match the inode (mode 0%o)",
		       d->ft, vi.di.mode);
	ck_check_xattrs(f, &at, &vi);
	erofs_check_xpath(&xp, &f->nids, parent->vi.nid, name, d->len);

	if (S_ISDIR(vi.di.mode)) {
		int fd = -1;

		if (pfd >= 0) {
			fd = erofs_extract_dir_begin(f->o.x, pfd, name, &xp.base);
			if (fd < 0)
				fd = -1;
		}
		push_dir(f, &vi, parent->vi.nid, &at, fd);	/* parent may move */
		return;
	}
	if (S_ISREG(vi.di.mode)) {
		f->st.nfiles++;
		f->st.data_bytes += vi.size;
		if (ck_is_compressed(&vi)) {
			f->st.nzfiles++;
			f->st.zlogical += vi.size;
			f->st.zphysical += (uint64_t)vi.z_blocks << f->r->blkszbits;
			if (vi.z_advise & EROFS_ZADVISE_FRAGMENT) {
				f->st.nfragfiles++;
				f->st.fragbytes += vi.size - vi.z_frag_la;
			}
		}
		if (pfd < 0) {
			ck_submit_file(f, CK_JOB_SCAN, &at, &vi, -1);
			return;
		}
		/* when extracting, the extractor reads and reports */
		dev = ck_scan_data(f, &at, &vi, false, false);
		if (dev && f->o.no_devices) {
			ni->no_device = true;
			ck_not_extracted(f, &at, d->nid, dev);
			return;
		}
		ck_submit_file(f, CK_JOB_EXTRACT, &at, &vi, pfd);
		return;
	} else if (S_ISLNK(vi.di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		f->st.nsymlinks++;
		if (erofs_read_symlink(f->r, &vi, target, sizeof(target)))
			ck_rfail(f, &at, vi.nid);
		else
			ck_scan_data(f, &at, &vi, false, false);
	} else {
		f->st.nspecial++;
		check_special(f, &at, &vi);
	}
	if (pfd >= 0 && !erofs_extract_node(f->o.x, pfd, name, &xp.base, &vi))
		ni->extracted = true;
}

/* A non-directory given by --nid/--path: checked alone. */
static void check_start_leaf(struct checker *f, const struct place *at,
			     const struct erofs_rd_inode *vi)
{
	struct erofs_xpath_str xp;
	unsigned int dev;

	ck_check_xattrs(f, at, vi);
	if (S_ISREG(vi->di.mode)) {
		f->st.nfiles++;
		f->st.data_bytes += vi->size;
		dev = ck_scan_data(f, at, vi, !f->o.x, !f->o.x);
		if (!f->o.x && f->digest_seen && !dev) {
			uint8_t got[32];

			if (ck_digest_compute(f->r, vi, got))
				ck_rfail(f, at, vi->nid);
			else
				ck_digest_compare(f, at, vi->nid, f->digest, got);
		}
		if (dev && f->o.no_devices && f->o.x) {
			ck_not_extracted(f, at, vi->nid, dev);
			return;
		}
	} else if (S_ISLNK(vi->di.mode)) {
		char target[EROFS_SYMLINK_MAXLEN + 1];

		f->st.nsymlinks++;
		if (erofs_read_symlink(f->r, vi, target, sizeof(target)))
			ck_rfail(f, at, vi->nid);
	} else {
		f->st.nspecial++;
		check_special(f, at, vi);
	}
	/* fsck opened the extractor on the target's parent (open_leaf) */
	if (f->o.x)
		erofs_extract_node(f->o.x, f->o.x->rootfd, f->o.x->leaf,
				   erofs_xpath_str(&xp, f->o.x->leaf), vi);
}

static void walk(struct checker *f)
{
	uint64_t root = f->o.has_start ? f->o.start_nid : f->r->root_nid;
	uint64_t parent = f->o.has_start ? f->o.start_parent : root;
	const struct place at = { root, NULL, 0, false, false };
	struct erofs_rd_inode vi;
	struct erofs_check_node *ni;
	int fd = -1;

	f->subtree = root != f->r->root_nid;
	ni = ck_nid_add(f, root);
	ck_nid_name(f, ni, root, "", 0);
	if (erofs_read_inode(f->r, root, &vi)) {
		ni->bad = true;
		ck_rfail(f, &at, root);
		return;
	}
	ni->mode = vi.di.mode;
	ni->nlink = vi.di.nlink;
	ni->iloc = erofs_meta_vaddr(f->r, &vi, vi.iloc);
	ni->meta_end = erofs_meta_vaddr(f->r, &vi, vi.meta_end);
	ck_meta_claim(f, ni->iloc, ni->meta_end);	/* the first: nothing to overlap */
	ck_check_packed(f);
	ck_check_metabox(f);
	if (!S_ISDIR(vi.di.mode) && f->subtree) {
		check_start_leaf(f, &at, &vi);
		erofs_fq_drain(f->q);
		ck_final_checks(f);
		return;
	}
	if (!S_ISDIR(vi.di.mode)) {
		ck_report(f, &at, root, "root inode is not a directory (mode 0%o)", vi.di.mode);
		return;
	}
	ck_check_xattrs(f, &at, &vi);
	if (f->o.x) {
		fd = erofs_extract_root(f->o.x);
		if (fd < 0)
			fd = -1;
	}
	push_dir(f, &vi, parent, &at, fd);

	while (f->depth) {
		struct frame *fr = &f->stack[f->depth - 1];

		if (fr->next < fr->n) {
			struct dent d = fr->ents[fr->next++];

			visit(f, fr, &d);
			continue;
		}
		pop_dir(f);
	}
	erofs_fq_drain(f->q);
	ck_final_checks(f);
}

/* ------------------------------------------------------------------ */
/* the check                                                           */

int erofs_check_image(struct erofs_reader *r, const struct erofs_check_opts *o,
		      struct erofs_check_result *res)
{
	struct checker c, *f = &c;
	size_t i;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.o = *o;
	c.r = r;
	c.link_dirfd = -1;
	/* the metabox's inodes are claimed after the image's bytes */
	c.metamap_pages = (size_t)((((r->mbox ? r->mbox_vbase + r->mbox->size : r->size) >>
				     EROFS_SLOT_BITS) >> MM_PAGE_BITS) + 1);
	c.metamap = calloc(c.metamap_pages, sizeof(*c.metamap));
	if (c.metamap && !ck_scanner_init(&c.scan, r) && !ck_start_workers(f)) {
		c.scan.skip_missing = o->no_devices;
		walk(f);
		ck_stop_workers(f);	/* every job retired */
		res->errors = c.errors;
		res->warnings = c.warnings;
		res->st = c.st;
	} else {
		ret = -ENOMEM;
	}

	ck_stop_workers(f);
	if (o->x) {
		o->x->before_print = NULL;
		o->x->before_print_arg = NULL;
	}
	if (c.link_dirfd >= 0)
		close(c.link_dirfd);
	erofs_nidtab_free(&c.nids);
	ck_scanner_fini(&c.scan);
	for (i = 0; c.metamap && i < c.metamap_pages; i++)
		free(c.metamap[i]);
	free(c.metamap);
	free(c.stack);
	free(c.dext);
	return ret;
}


/* ------------------------------------------------------------------ */
/* fsck.erofs on a liberofs-forge handle                               */

int erofs_check_image_handle(struct eforge_image *img, const struct erofs_check_opts *o,
			     struct erofs_check_result *res)
{
	return erofs_check_image(erofs_forge_reader(img), o, res);
}

int erofs_check_start_path(struct eforge_image *img, const char *path,
			   struct erofs_check_opts *o)
{
	int err = erofs_lookup_path(erofs_forge_reader(img), path, &o->start_nid,
				    &o->start_parent);

	if (!err)
		o->has_start = true;
	return err;
}

void erofs_check_start_nid(struct eforge_image *img, uint64_t nid, struct erofs_check_opts *o)
{
	o->has_start = true;
	o->start_nid = nid;
	o->start_parent = nid == erofs_forge_reader(img)->root_nid ? nid : EROFS_NID_UNKNOWN;
}

int erofs_check_extract_open(struct erofs_extractor *x, struct eforge_image *img,
			     const struct erofs_check_opts *o, const char *dir,
			     const struct erofs_extract_opts *xo)
{
	struct erofs_reader *r = erofs_forge_reader(img);
	struct erofs_rd_inode vi;

	/* --nid/--path names a non-directory: DIR is to become that entry itself */
	if (o->has_start && !erofs_read_inode(r, o->start_nid, &vi) && !S_ISDIR(vi.di.mode))
		return erofs_extract_open_leaf(x, r, dir, xo);
	return erofs_extract_open(x, r, dir, xo);
}

void erofs_check_print_super(FILE *out, struct eforge_image *img)
{
	const struct erofs_reader *r = erofs_forge_reader(img);
	const struct erofs_super *sb = &r->sb;

	fprintf(out, "superblock: block size %u, %" PRIu64 " blocks, root nid %" PRIu64 ", %" PRIu64 " inodes\n",
		r->blksz, r->blocks, r->root_nid, sb->inos);
	if (r->mbox)
		fprintf(out, "superblock: metabox nid %" PRIu64 " (%" PRIu64 " bytes of inodes)\n",
			r->mbox->nid, r->mbox->size);
	fprintf(out, "superblock: compat 0x%08x, incompat 0x%08x, meta_blkaddr %u, xattr_blkaddr %u\n",
		sb->feature_compat, sb->feature_incompat, sb->meta_blkaddr, sb->xattr_blkaddr);
	if (sb->feature_incompat & (EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS))
		fprintf(out, "superblock: compression algorithms 0x%x, LZ4 pclusters up to %u blocks, LZ4 distance %u\n",
			r->available_compr_algs, r->lz4_max_pclusterblks,
			r->lz4_max_distance ? r->lz4_max_distance : 65536u);
}

void erofs_check_image_size(struct eforge_image *img, uint64_t *bytes, uint64_t *blocks)
{
	const struct erofs_reader *r = erofs_forge_reader(img);

	*bytes = erofs_forge_source(img)->image_bytes;
	*blocks = r->size >> r->blkszbits;
}
