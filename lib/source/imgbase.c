// SPDX-License-Identifier: MIT
/* --incremental added in place (see include/erofs/source/imgbase.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/diag.h"
#include "erofs/common/format.h"
#include "erofs/source/imgbase.h"
#include "erofs/source/imglayer.h"
#include "erofs/source/namedtree.h"
#include "erofs/source/nidmap.h"
#include "erofs/source/tree.h"
#include "erofs/source/xattr.h"

struct graft {
	const struct erofs_build_options *opts;
	struct erofs_tree *tree;
	struct erofs_layer l;
	struct erofs_nid_map seen;	/* nid -> its stub (files), or the directory */
	struct erofs_layer_entries ents;
	/* directories of the new layer still to merge, and the image's they merge into */
	struct pending { struct erofs_inode *dir; uint64_t nid; } *todo;
	size_t nr_todo, cap_todo;
	/* the directories rewritten: the slots [nid, end) of their old records */
	struct rewritten { uint64_t nid, end; const struct erofs_inode *dir; } *rw;
	size_t nr_rw, cap_rw;
	uint64_t dropped;		/* the image's inodes no name reaches any more */
};

/* An array of nr elements with room for one more (doubled when full). */
static int room_for_one(void **array, size_t nr, size_t *cap, size_t size)
{
	size_t more = *cap ? *cap * 2 : 64;
	void *bigger;

	if (nr < *cap)
		return 0;
	if (!(bigger = realloc(*array, more * size)))
		return -ENOMEM;
	*array = bigger;
	*cap = more;
	return 0;
}

static uint16_t mode_of_type(uint8_t file_type)
{
	static const uint16_t modes[EROFS_FT_MAX] = {
		[EROFS_FT_REG_FILE] = S_IFREG, [EROFS_FT_DIR] = S_IFDIR,
		[EROFS_FT_CHRDEV] = S_IFCHR, [EROFS_FT_BLKDEV] = S_IFBLK,
		[EROFS_FT_FIFO] = S_IFIFO, [EROFS_FT_SOCK] = S_IFSOCK,
		[EROFS_FT_SYMLINK] = S_IFLNK,
	};

	return file_type < EROFS_FT_MAX ? modes[file_type] : 0;
}

/* Said at -d 3 and up: why the build runs again, rewriting all metadata. */
static int rewrite_all_because(struct graft *g, const char *why)
{
	if (g->opts->debug_level >= 3)
		erofs_note("%s: /%s: %s", g->l.name, g->l.path ? g->l.path : "", why);
	return EROFS_REWRITE_ALL;
}

static int read_base_inode(struct graft *g, uint64_t nid, struct erofs_rd_inode *vi)
{
	int err = erofs_read_inode(&g->l.r, nid, vi);

	return err ? erofs_layer_reader_failed(&g->l, err) : 0;
}

/* The inode of entry e of the directory being merged; a failure names its path. */
static int read_entry_inode(struct graft *g, const struct erofs_layer_entry *e,
			    struct erofs_rd_inode *vi)
{
	size_t mark = 0;
	int err = erofs_layer_path_push(&g->l, g->ents.names + e->name_at, e->len, &mark);

	if (err)
		return err;
	err = read_base_inode(g, e->nid, vi);
	erofs_layer_path_pop(&g->l, mark);
	return err;
}

/* An error about entry e of the directory being merged, naming its path. */
static int entry_error(struct graft *g, const struct erofs_layer_entry *e, const char *why)
{
	size_t mark = 0;

	if (erofs_layer_path_push(&g->l, g->ents.names + e->name_at, e->len, &mark))
		return -ENOMEM;
	erofs_layer_error(&g->l, -EINVAL, "%s", why);
	erofs_layer_path_pop(&g->l, mark);
	return -EINVAL;
}

/*
 * An entry of the image the new layer leaves alone: its stub, one per
 * file (a hard link's names share it).  A nid named before as a directory,
 * or as a directory now, is a loop or a directory hard link: laid into the
 * tree it would make a directory its own ancestor, so it is refused; so is
 * a file named with two types (its kept entries would disagree).
 */
static struct erofs_inode *stub_for(struct graft *g, const struct erofs_layer_entry *e,
				    uint16_t mode, int *err)
{
	/* --ovlfs-strip=1 drops whiteouts: a character device's numbers are read */
	bool read_rdev = S_ISCHR(mode) && g->opts->ovlfs_strip;
	struct erofs_inode *stub = erofs_nid_map_get(&g->seen, e->nid);
	struct erofs_rd_inode vi;
	char why[128];

	if (read_rdev) {
		if ((*err = read_entry_inode(g, e, &vi)))
			return NULL;
		mode = vi.di.mode & S_IFMT;	/* (read: the inode says) */
	}

	if (stub && (S_ISDIR(mode) || S_ISDIR(stub->mode) || stub->base_state != EROFS_BASE_KEPT)) {
		snprintf(why, sizeof(why), "nid %llu is named twice, and as a directory "
			 "(a loop or a directory hard link)", (unsigned long long)e->nid);
		*err = entry_error(g, e, why);
		return NULL;
	}
	if (stub && stub->mode != mode) {
		snprintf(why, sizeof(why), "nid %llu is named twice, with two file types "
			 "(mode 0%o, then 0%o)", (unsigned long long)e->nid, stub->mode, mode);
		*err = entry_error(g, e, why);
		return NULL;
	}
	if (stub) {
		stub->nlink++;		/* a name more in the tree (see erofs_tree_free()) */
		return stub;
	}
	if (!(stub = calloc(1, sizeof(*stub))) || erofs_nid_map_put(&g->seen, e->nid, stub)) {
		free(stub);
		*err = -ENOMEM;
		return NULL;
	}
	stub->mode = mode;
	stub->nlink = 1;
	stub->base_state = EROFS_BASE_KEPT;
	stub->base_nid = e->nid;
	if (read_rdev && S_ISCHR(mode))
		erofs_decode_rdev(vi.di.u, &stub->rdev_major, &stub->rdev_minor);
	return stub;
}

struct link_count { uint64_t nid; uint32_t nlink; };

static int by_nid(const void *a, const void *b)
{
	const struct link_count *x = a, *y = b;

	return x->nid < y->nid ? -1 : x->nid > y->nid;
}

/*
 * How many inodes of the image a dropped directory takes with it, itself
 * included: every directory below it, every file whose names all lie
 * below it.  The superblock counts inodes, and the kept ones lose these.
 * Only what the reader accepts is counted; a loop is walked once.
 */
static int dropped_subtree(struct graft *g, uint64_t nid, uint64_t *dropped)
{
	struct erofs_nid_map dirs = { 0 };
	struct erofs_layer_entries ents = { 0 };
	struct link_count *links = NULL;
	uint64_t *todo = NULL, count = 0;
	size_t nr_todo = 0, cap_todo = 0, nr_links = 0, cap_links = 0;
	int err = -ENOMEM;	/* until the walk ends: a partial count would lie */

	/* (the map only needs a non-NULL value: the root stands for "seen") */
	if (room_for_one((void **)&todo, 0, &cap_todo, sizeof(*todo)) ||
	    erofs_nid_map_put(&dirs, nid, g->tree->root))
		goto out;
	todo[nr_todo++] = nid;
	while (nr_todo) {
		struct erofs_rd_inode vi;

		nid = todo[--nr_todo];
		if (erofs_read_inode(&g->l.r, nid, &vi) || !S_ISDIR(vi.di.mode))
			continue;
		count++;
		ents.nr = ents.names_len = 0;
		if (erofs_dir_iterate(&g->l.r, &vi, EROFS_NID_UNKNOWN, erofs_layer_collect, &ents))
			continue;
		for (size_t i = 0; i < ents.nr; i++) {
			uint64_t child = ents.e[i].nid;
			struct erofs_rd_inode ci;

			if (erofs_read_inode(&g->l.r, child, &ci))
				continue;
			if (S_ISDIR(ci.di.mode)) {
				if (erofs_nid_map_get(&dirs, child))
					continue;
				if (erofs_nid_map_put(&dirs, child, g->tree->root) ||
				    room_for_one((void **)&todo, nr_todo, &cap_todo, sizeof(*todo)))
					goto out;
				todo[nr_todo++] = child;
			} else if (ci.di.nlink <= 1) {
				count++;
			} else {
				if (room_for_one((void **)&links, nr_links, &cap_links, sizeof(*links)))
					goto out;
				links[nr_links++] = (struct link_count){ child, ci.di.nlink };
			}
		}
	}
	/* a hard-linked file goes when all its names were below */
	qsort(links, nr_links, sizeof(*links), by_nid);
	for (size_t i = 0, end; i < nr_links; i = end) {
		for (end = i + 1; end < nr_links && links[end].nid == links[i].nid; end++)
			;
		count += end - i >= links[i].nlink;
	}
	*dropped = count;
	err = 0;
out:
	erofs_nid_map_free(&dirs);
	erofs_layer_entries_free(&ents);
	free(todo);
	free(links);
	return err;
}

static int make_opaque(struct erofs_inode *dir)
{
	int err = erofs_xattrs_put(&dir->xattrs, EROFS_XATTR_OVL_OPAQUE, "y", 1, "");

	if (err)
		return err;
	erofs_xattrs_sort(dir->xattrs);
	dir->ibody_bound = erofs_xattr_ibody_max(dir->xattrs);
	return 0;
}

/*
 * A name both have: the new layer's entry wins.  What it replaces decides
 * the rest: a directory it merges into (queued), a whiteout that makes it
 * opaque, a hard-linked file that stops the in-place form.  An entry whose
 * type says other than a directory has its inode read, which has the last
 * word (an image's entry may lie about a directory).
 */
static int both_have(struct graft *g, struct erofs_inode *upper, const struct erofs_layer_entry *e,
		     uint16_t mode)
{
	bool upper_dir = erofs_inode_is_dir(upper);
	bool upper_opaque = upper_dir && erofs_xattrs_opaque(upper->xattrs);
	struct erofs_rd_inode vi;
	int err;

	if (!S_ISDIR(mode)) {
		if ((err = read_entry_inode(g, e, &vi)))
			return err;
		if (!S_ISDIR(vi.di.mode)) {
			/* its other names keep a record whose link count would lie */
			if (vi.di.nlink > 1)
				return rewrite_all_because(g, "a hard-linked file loses a name");
			g->dropped++;
			/* made over a whiteout: what it hid stays hidden */
			return upper_dir && !upper_opaque && S_ISCHR(vi.di.mode) && !vi.di.u
				? make_opaque(upper) : 0;
		}
	}
	if (!upper_dir || upper_opaque) {
		uint64_t below = 0;

		err = dropped_subtree(g, e->nid, &below);
		g->dropped += below;
		return err;
	}
	if (room_for_one((void **)&g->todo, g->nr_todo, &g->cap_todo, sizeof(*g->todo)))
		return -ENOMEM;
	g->todo[g->nr_todo++] = (struct pending){ upper, e->nid };
	return 0;
}

static int compare_names(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

/* The directory's new entries: both lists merged in name order, names in a new arena. */
static int merge_entries(struct graft *g, struct erofs_inode *dir, bool hide_base)
{
	const struct erofs_layer_entries *b = &g->ents;
	size_t nb = hide_base ? 0 : b->nr, total = dir->nr_children + nb, bytes = 0, used = 0;
	struct erofs_dentry *old = dir->children, *merged = calloc(total ? total : 1, sizeof(*merged));
	char *arena;
	uint32_t n = 0, i = 0;
	size_t j = 0;
	int err = 0;

	for (uint32_t k = 0; k < dir->nr_children; k++)
		bytes += old[k].name_len + 1u;
	for (size_t k = 0; k < nb; k++)
		bytes += b->e[k].len + 1u;
	if (!merged || !(arena = malloc(bytes ? bytes : 1))) {
		free(merged);
		return -ENOMEM;
	}
	while (i < dir->nr_children || j < nb) {
		const struct erofs_layer_entry *e;

		if (err) {	/* the new layer's entries still move over, to be freed */
			j = nb;
			if (i == dir->nr_children)
				break;
		}
		e = j < nb ? &b->e[j] : NULL;
		int c = !e ? -1 : i == dir->nr_children ? 1
			: compare_names(old[i].name, old[i].name_len, b->names + e->name_at, e->len);
		struct erofs_dentry *d = &merged[n++];
		uint16_t mode = e ? mode_of_type(e->type) : 0;

		if (e && c >= 0 && !mode) {	/* EROFS_FT_UNKNOWN: the inode says */
			struct erofs_rd_inode vi;

			if ((err = read_entry_inode(g, e, &vi))) {
				n--;
				continue;
			}
			mode = vi.di.mode & S_IFMT;
		}
		if (c <= 0) {		/* the new layer's */
			if (!c)
				err = both_have(g, old[i].inode, e, mode);
			*d = old[i];
			if (d->inode->dentry == &old[i])
				d->inode->dentry = d;
			i++;
			j += !c;
		} else {		/* the image's, kept */
			d->inode = stub_for(g, e, mode, &err);
			if (!d->inode) {
				n--;
				continue;
			}
			d->name_len = e->len;
			d->inode->parent = d->inode->parent ? d->inode->parent : dir;
			d->inode->dentry = d->inode->dentry ? d->inode->dentry : d;
			d->inode->depth = dir->depth + 1;
			dir->nlink += S_ISDIR(mode);
			j++;
		}
		memcpy(arena + used, c > 0 ? b->names + e->name_at : d->name, d->name_len);
		arena[used + d->name_len] = '\0';
		d->name = arena + used;
		used += d->name_len + 1u;
	}
	/* the new array and arena take over, whatever failed: stubs are named */
	free(dir->names);
	free(old);
	dir->children = merged;
	dir->nr_children = n;
	dir->names = arena;
	return err;
}

/* A directory of the new layer over the image's at nid: rewritten over its record. */
static int graft_dir(struct graft *g, struct erofs_inode *dir, uint64_t nid)
{
	struct erofs_xattr_set *base_xattrs = NULL;
	struct erofs_rd_inode vi;
	bool base_opaque;
	int err = read_base_inode(g, nid, &vi);

	if (err)
		return err;
	if (!S_ISDIR(vi.di.mode) && dir == g->tree->root)
		return erofs_layer_error(&g->l, -EINVAL, "the root, nid %llu, is not a directory "
					 "(mode 0%o)", (unsigned long long)nid, vi.di.mode);
	if (!S_ISDIR(vi.di.mode))
		return erofs_layer_error(&g->l, -EINVAL, "nid %llu is named as a directory, "
					 "mode 0%o", (unsigned long long)nid, vi.di.mode);
	if (vi.in_mbox || (vi.layout != EROFS_LAYOUT_FLAT_PLAIN &&
			   vi.layout != EROFS_LAYOUT_FLAT_INLINE) || vi.meta_end <= vi.iloc)
		return rewrite_all_because(g, "a directory to merge into is compressed or in a metabox");
	if (erofs_nid_map_get(&g->seen, nid))
		return erofs_layer_error(&g->l, -EINVAL, "directory nid %llu is reached twice",
					 (unsigned long long)nid);
	if ((err = erofs_nid_map_put(&g->seen, nid, dir)))
		return err;
	dir->base_state = EROFS_BASE_REWRITTEN;
	dir->base_nid = nid;
	dir->base_record = (uint32_t)(vi.meta_end - vi.iloc < UINT32_MAX ? vi.meta_end - vi.iloc
									 : UINT32_MAX);
	if (room_for_one((void **)&g->rw, g->nr_rw, &g->cap_rw, sizeof(*g->rw)))
		return -ENOMEM;
	g->rw[g->nr_rw++] = (struct rewritten){
		nid, nid + ((dir->base_record + EROFS_SLOT_SIZE - 1ull) >> EROFS_SLOT_BITS), dir
	};
	if (erofs_xattrs_opaque(dir->xattrs)) {	/* (only the root gets here opaque) */
		uint64_t below = 0;

		if ((err = dropped_subtree(g, nid, &below)))
			return err;
		g->dropped += below ? below - 1 : 0;	/* (the root itself stays) */
		return merge_entries(g, dir, true);
	}
	if ((err = erofs_layer_xattrs(&g->l, &vi, &base_xattrs, &base_opaque)))
		return err;
	erofs_xattrs_free(base_xattrs);
	/* merged over an opaque directory: still opaque to what lies below */
	if (base_opaque && (err = make_opaque(dir)))
		return err;
	g->ents.nr = g->ents.names_len = 0;
	err = erofs_dir_iterate(&g->l.r, &vi, EROFS_NID_UNKNOWN, erofs_layer_collect, &g->ents);
	if (err)
		return err == -ENOMEM ? err : erofs_layer_reader_failed(&g->l, err);
	return merge_entries(g, dir, false);
}

static int by_first_slot(const void *a, const void *b)
{
	const struct rewritten *x = a, *y = b;

	return x->nid < y->nid ? -1 : x->nid > y->nid;
}

/* The rewritten record whose slots hold nid past its first (g->rw sorted, disjoint). */
static const struct rewritten *covering(const struct graft *g, uint64_t nid)
{
	size_t lo = 0, hi = g->nr_rw;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->rw[mid].nid <= nid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && nid > g->rw[lo - 1].nid && nid < g->rw[lo - 1].end ? &g->rw[lo - 1] : NULL;
}

/*
 * "IMAGE: /PATH[/NAME]: nid N lies in the record of /OTHER (nids A..B),
 * rewritten in place", or without in, "nid N out of range (... slots)"
 */
static int slot_error(const struct graft *g, const struct erofs_inode *dir,
		      const struct erofs_dentry *d, uint64_t nid, const struct rewritten *in,
		      uint64_t slots)
{
	char *path = erofs_inode_path(dir), *other = in ? erofs_inode_path(in->dir) : strdup("");
	char why[160];

	if (path && other) {
		if (in)
			snprintf(why, sizeof(why), "lies in the record of /%.40s (nids %llu..%llu), "
				 "which is rewritten in place", other, (unsigned long long)in->nid,
				 (unsigned long long)in->end - 1);
		else
			snprintf(why, sizeof(why), "out of range (the image has %llu inode slots)",
				 (unsigned long long)slots);
		erofs_err("%s: /%s%s%.*s: nid %llu %s", g->l.name, path, d && *path ? "/" : "",
			  d ? (int)d->name_len : 0, d ? d->name : "", (unsigned long long)nid, why);
	}
	free(path);
	free(other);
	return path && other ? -EINVAL : -ENOMEM;
}

/*
 * The image's records are not read, but for the directories rewritten over
 * theirs: what those write over must be theirs alone.  A record reaching
 * into the next one rewritten, or a kept entry naming a nid inside a
 * rewritten record, is damage the rewrite would only change; a kept entry
 * naming a nid past the image's end would name a new record or block once
 * the layer is appended.  Both refused.
 */
static int check_rewritten_slots(struct graft *g)
{
	const struct erofs_reader *r = &g->l.r;
	uint64_t slots = r->size > r->meta_base ? (r->size - r->meta_base) >> EROFS_SLOT_BITS : 0;

	qsort(g->rw, g->nr_rw, sizeof(*g->rw), by_first_slot);
	for (size_t i = 0; i + 1 < g->nr_rw; i++)
		if (g->rw[i].end > g->rw[i + 1].nid)
			return slot_error(g, g->rw[i + 1].dir, NULL, g->rw[i + 1].nid, &g->rw[i], 0);
	for (size_t i = 0; i < g->nr_rw; i++) {
		const struct erofs_inode *dir = g->rw[i].dir;

		for (uint32_t k = 0; k < dir->nr_children; k++) {
			const struct erofs_dentry *d = &dir->children[k];
			const struct rewritten *in;

			if (d->inode->base_state != EROFS_BASE_KEPT)
				continue;
			if (d->inode->base_nid >= slots)
				return slot_error(g, dir, d, d->inode->base_nid, NULL, slots);
			if ((in = covering(g, d->inode->base_nid)))
				return slot_error(g, dir, d, d->inode->base_nid, in, 0);
		}
	}
	return 0;
}

/*
 * --ovlfs-strip=1, once the whiteouts and opaque markers did their work on
 * the image: gone from every directory of the new layer.
 */
static int strip_overlay(struct erofs_tree *tree, uint64_t *dropped)
{
	struct erofs_inode **queue = malloc(sizeof(*queue)), **bigger;
	size_t head = 0, tail = 0, cap = 1;

	if (!queue)
		return -ENOMEM;
	queue[tail++] = tree->root;
	while (head < tail) {
		struct erofs_inode *dir = queue[head++];
		uint32_t kept = 0;

		erofs_xattrs_remove(&dir->xattrs, EROFS_XATTR_OVL_OPAQUE);
		dir->ibody_bound = erofs_xattr_ibody_max(dir->xattrs);
		for (uint32_t i = 0; i < dir->nr_children; i++) {
			struct erofs_dentry *d = &dir->children[i];
			struct erofs_inode *child = d->inode;

			if (erofs_inode_is_whiteout(child)) {
				*dropped += child->base_state == EROFS_BASE_KEPT && child->nlink == 1;
				if (!--child->nlink) {
					erofs_xattrs_free(child->xattrs);
					free(child);
				}
				continue;
			}
			if (child->dentry == d)
				child->dentry = &dir->children[kept];
			dir->children[kept++] = *d;
			if (!erofs_inode_is_dir(child) || child->base_state == EROFS_BASE_KEPT ||
			    child->dentry != &dir->children[kept - 1])
				continue;
			if (tail == cap) {
				if (!(bigger = realloc(queue, 2 * cap * sizeof(*queue)))) {
					free(queue);
					return -ENOMEM;
				}
				queue = bigger;
				cap *= 2;
			}
			queue[tail++] = child;
		}
		dir->nr_children = kept;
	}
	free(queue);
	return 0;
}

bool erofs_base_options_allow(const struct erofs_build_options *opts)
{
	return !opts->metabox && !opts->layout_48bit && !opts->fragments && !opts->all_fragments &&
	       !opts->nr_xattr_prefixes && !erofs_opts_extra_device(opts) &&
	       !opts->compress_dirs && !opts->mz_inodes;
}

/* What in the options or the image keeps the records from staying. */
static bool in_place_possible(const struct erofs_build_options *opts, const struct erofs_reader *r)
{
	return erofs_base_options_allow(opts) &&
	       r->blkszbits == opts->blkszbits && !r->nr_devs && !r->sb.sb_extslots &&
	       !(r->sb.feature_incompat & (EROFS_INCOMPAT_48BIT | EROFS_INCOMPAT_METABOX));
}

static int describe_base(struct graft *g)
{
	const struct erofs_reader *r = &g->l.r;
	struct erofs_base_image *bi = calloc(1, sizeof(*bi));

	if (!bi)
		return -ENOMEM;
	bi->sb = r->sb;
	bi->sb_end = (uint32_t)r->sb_end;
	bi->cfg_algs = (r->sb.feature_incompat & EROFS_INCOMPAT_COMPR_CFGS) ? r->sb.u1 : 0;
	bi->max_pclusterblks = r->lz4_max_pclusterblks;
	g->tree->base = bi;
	/* its compressed files keep the dictionaries they were made with */
	if (bi->cfg_algs & (1u << EROFS_COMPR_LZMA))
		g->tree->kept_dict_size[EROFS_COMPR_LZMA] = r->lzma_dict_size;
	if (bi->cfg_algs & (1u << EROFS_COMPR_DEFLATE))
		g->tree->kept_dict_size[EROFS_COMPR_DEFLATE] = 1u << r->deflate_windowbits;
	if (bi->cfg_algs & (1u << EROFS_COMPR_ZSTD))
		g->tree->kept_dict_size[EROFS_COMPR_ZSTD] = 1u << r->zstd_window_log;
	return 0;
}

int erofs_base_graft(const struct erofs_build_options *opts, struct erofs_tree *tree)
{
	struct graft g = { .opts = opts, .tree = tree };
	int err = erofs_layer_open(&g.l, opts, opts->image);

	if (!err && !in_place_possible(opts, &g.l.r))
		err = rewrite_all_because(&g, "the image or the options change what its records mean");
	if (!err)
		err = describe_base(&g);
	if (!err)
		err = graft_dir(&g, tree->root, g.l.r.root_nid);
	/* breadth first, as the tree's own directories were made */
	for (size_t next = 0; !err && next < g.nr_todo; next++) {
		char *path = erofs_inode_path(g.todo[next].dir);
		size_t mark = 0;

		if (!path || (err = erofs_layer_path_push(&g.l, path, strlen(path), &mark))) {
			free(path);
			err = -ENOMEM;
			break;
		}
		free(path);
		err = graft_dir(&g, g.todo[next].dir, g.todo[next].nid);
		erofs_layer_path_pop(&g.l, mark);
	}
	if (!err)
		err = check_rewritten_slots(&g);
	if (!err && opts->ovlfs_strip)
		err = strip_overlay(tree, &g.dropped);
	if (!err)
		tree->base->inos_dropped = g.dropped;
	if (err == -ENOMEM)
		erofs_err("out of memory while reading %s", opts->image);
	erofs_layer_release(&g.l);
	erofs_nid_map_free(&g.seen);
	erofs_layer_entries_free(&g.ents);
	free(g.todo);
	free(g.rw);
	return err;
}
