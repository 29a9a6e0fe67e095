/* SPDX-License-Identifier: MIT */
/*
 * fuzz-mutate -F's format-aware edits, for the layouts of the newer
 * kernels (fuzz-mutate.c's header lists them: ext-*, stream, mbox-*,
 * addr48, pfx-*, filter, dev-*).  Each fmt_* edit returns 0 when the seed
 * has nothing it could edit; op_format then tries another.  They are
 * built on the generic edits' set_field and kind_value, and leave the
 * campaigns without -F untouched.
 */
#include <inttypes.h>
#include <string.h>

#include "fuzz-mutate.h"

/* a random field named NAME (a prefix with a trailing '*'), of inode NID
 * unless NID is UINT64_MAX, that fits the mutant */
static const struct field *pick_named(struct campaign *c, const struct seed *s,
				      const struct mutant *m, const char *name, uint64_t nid)
{
	size_t len = strlen(name), seen = 0;
	const struct field *got = NULL;
	int prefix = len && name[len - 1] == '*';

	for (size_t i = 0; i < s->nf; i++) {
		const struct field *f = &s->f[i];

		if (prefix ? strncmp(f->name, name, len - 1) : strcmp(f->name, name))
			continue;
		if (nid != UINT64_MAX && f->nid != nid)
			continue;
		if (f->off + (f->bit + f->nbits + 7) / 8 > m->size)
			continue;
		if (below(c, ++seen) == 0)
			got = f;
	}
	return got;
}

/* i_size of inode NID in the seed, or 0 */
static uint64_t inode_isize(const struct seed *s, uint64_t nid)
{
	uint64_t ioff = nid_off(s, nid);

	if (ioff == UINT64_MAX || !in_image(s, ioff, 16))
		return 0;
	return (get16(s->img + ioff) & 1) ? get64(s->img + ioff + 8) : get32(s->img + ioff + 8);
}

/* extent tables: records out of order, overlapping, past i_size */
static int fmt_ext_order(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct exttab *t;
	uint64_t a, b, i;
	unsigned char tmp[32];

	if (!s->nexttabs)
		return 0;
	t = &s->exttabs[below(c, s->nexttabs)];
	if (t->nrecs < 2 && t->recsz < 16)
		return 0;
	i = t->nrecs > 1 ? 1 + below(c, t->nrecs - 1) : 0;
	a = t->off + t->recsz * i;
	b = i ? a - t->recsz : a;
	if (a + t->recsz > m->size)
		return 0;
	switch (t->recsz >= 16 ? below(c, 5) : 3 + below(c, 2)) {
	case 0:		/* lstart equal to the previous one's, or inside it */
		put32(m->img + a + 12,
		      get32(m->img + b + 12) + (uint32_t)below(c, 1u << s->blkbits));
		note(m, " format ext-overlap-l nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	case 1:		/* lstart at or past i_size */
		put32(m->img + a + 12, (uint32_t)(t->isize + below(c, 3)));
		note(m, " format ext-past-isize nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	case 2:		/* lstart going backwards by a little */
		put32(m->img + a + 12, get32(m->img + a + 12) - 1 - (uint32_t)below(c, 64));
		note(m, " format ext-back nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	case 3:		/* two records swapped */
		if (a == b)
			return 0;
		memcpy(tmp, m->img + a, t->recsz);
		memcpy(m->img + a, m->img + b, t->recsz);
		memcpy(m->img + b, tmp, t->recsz);
		note(m, " format ext-swap nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	default:	/* physically overlapping: pstart of the previous one (+ a bit) */
		if (t->recsz < 8) {	/* 4-byte records: a plen swallowing the next */
			put32(m->img + a, get32(m->img + a) + (1u << s->blkbits));
			note(m, " format ext-plen-swallow nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
			return 1;
		}
		put32(m->img + a + 4, get32(m->img + b + 4) + (uint32_t)below(c, 16));
		note(m, " format ext-overlap-p nid %" PRIu64 " rec %" PRIu64 ";", t->nid, i);
		return 1;
	}
}

/* compressed streams whose lengths lie: plen, i_size, idata size, block counts */
static int fmt_stream_lie(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_named(c, s, m, "h_advise", UINT64_MAX), *g;
	uint64_t bs = 1ull << s->blkbits, d = 1 + below(c, bs);

	if (!f)
		return 0;
	switch (below(c, 5)) {
	case 0:
		if ((g = pick_named(c, s, m, "ext.plen", f->nid))) {
			set_field(m, g, kind_value(c, s, g, field_get(m->img, g)), "format-plen");
			return 1;
		}
		/* fall through */
	case 1:		/* the file decodes shorter or longer than its extents */
		if ((g = pick_named(c, s, m, "i_size", f->nid))) {
			uint64_t v = field_get(m->img, g);

			set_field(m, g, chance(c, 50) ? v + d : v > d ? v - d : v + 1,
				  "format-isize");
			return 1;
		}
		return 0;
	case 2:
		if ((g = pick_named(c, s, m, "h_idata_size", f->nid))) {
			set_field(m, g, field_get(m->img, g) + (chance(c, 50) ? d : -d),
				  "format-idata");
			return 1;
		}
		return 0;
	case 3:
		if ((g = pick_named(c, s, m, "i_compressed_blocks", f->nid))) {
			set_field(m, g, field_get(m->img, g) + below(c, 3) - 1, "format-cblocks");
			return 1;
		}
		return 0;
	default:	/* a pcluster shifted by a block (or a byte, in byte addresses) */
		if ((g = pick_named(c, s, m, "ci.blkaddr", f->nid)) ||
		    (g = pick_named(c, s, m, "li.blkaddr", f->nid)) ||
		    (g = pick_named(c, s, m, "ext.pstart_lo", f->nid)) ||
		    (g = pick_named(c, s, m, "ext.base", f->nid))) {
			set_field(m, g, field_get(m->img, g) + (chance(c, 50) ? 1 : -1),
				  "format-shift");
			return 1;
		}
		return 0;
	}
}

/* metabox nids into themselves, past the metabox, the root as the metabox */
static int fmt_metabox(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f;
	uint64_t msz, slot;

	if (s->mbox_nid == UINT64_MAX) {
		/* a 48-bit image that suddenly claims a metabox: its own root */
		if (!s->is48 || !chance(c, 30) || m->size < SB_OFF + 0x88)
			return 0;
		put32(m->img + SB_OFF + 80, get32(m->img + SB_OFF + 80) | INCOMPAT_METABOX);
		m->img[SB_OFF + 13] = 1;
		put64(m->img + SB_OFF + 0x80, get16(m->img + SB_OFF + 14));
		note(m, " format mbox-claimed;");
		return 1;
	}
	msz = inode_isize(s, s->mbox_nid);
	slot = msz / 32;
	switch (below(c, 6)) {
	case 0:		/* the metabox inode inside its own data */
		f = pick_named(c, s, m, "sb.metabox_nid", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, NID_METABOX | (chance(c, 50) ? 0 : below(c, slot + 1)),
			  "format-mbox-self");
		return 1;
	case 1:		/* the root is the metabox inode, or past its data */
		f = pick_named(c, s, m, "sb.rootnid_8b", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, chance(c, 50) ? s->mbox_nid : NID_METABOX | (slot + below(c, 4)),
			  "format-mbox-root");
		return 1;
	case 2:		/* the packed inode in the metabox, past it */
		f = pick_named(c, s, m, "sb.packed_nid", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f,
			  NID_METABOX | (chance(c, 50) ? slot - 1 : slot + below(c, 1u << 20)),
			  "format-mbox-packed");
		return 1;
	case 3:		/* the metabox inode's size: longer or shorter than its data */
		f = pick_named(c, s, m, "i_size", s->mbox_nid);
		if (!f)
			return 0;
		set_field(m, f, chance(c, 50) ? msz * 2 + below(c, 64) : msz / 2 + below(c, 32),
			  "format-mbox-size");
		return 1;
	case 4:		/* the metabox inode is a directory, a symlink, a device */
		f = pick_named(c, s, m, "i_mode", s->mbox_nid);
		if (!f)
			return 0;
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "format-mbox-mode");
		return 1;
	default:	/* the metabox inode's map: any of its fields */
		f = pick_named(c, s, m, "*", s->mbox_nid);
		if (!f)
			return 0;
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "format-mbox-field");
		return 1;
	}
}

/* 48-bit addresses past the device: the high 16 bits of every address */
static int fmt_addr48(struct campaign *c, const struct seed *s, struct mutant *m)
{
	static const char *const names[] = {
		"i_startblk_hi", "ext.pstart_hi", "devslot.blocks_hi", "devslot.mapped_hi",
		"sb.blocks_hi", "chunk.advise", "ext.lstart_hi",
	};
	const struct field *f;

	if (!s->is48)
		return 0;
	f = pick_named(c, s, m, names[below(c, sizeof(names) / sizeof(names[0]))], UINT64_MAX);
	if (!f)
		return 0;
	set_field(m, f, chance(c, 50) ? 1 + below(c, 4) : mask_of(f->nbits) - below(c, 4),
		  "format-addr48");
	return 1;
}

/* long xattr name prefixes: indexes past the table, lying lengths */
static int fmt_prefix(struct campaign *c, const struct seed *s, struct mutant *m)
{
	unsigned int count = m->img[SB_OFF + 91];
	const struct field *f;

	if (!(get32(m->img + SB_OFF + 80) & INCOMPAT_XATTR_PREFIXES))
		return 0;
	switch (below(c, 4)) {
	case 0:
	case 1:
		f = pick_named(c, s, m, "e_name_index", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, chance(c, 70) ? 0x80 | ((count + below(c, 3)) & 0x7f)
					      : 0x80 | below(c, 128), "format-pfx-index");
		return 1;
	case 2:
		f = pick_named(c, s, m, "sb.xattr_prefix_count", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f,
			  chance(c, 50) ? (count ? count - 1 : 0) : chance(c, 50) ? count + 1 : 255,
			  "format-pfx-count");
		return 1;
	default:
		f = pick_named(c, s, m, "pfx.*", UINT64_MAX);
		if (!f)
			f = pick_named(c, s, m, "sb.xattr_prefix_start", UINT64_MAX);
		if (!f)
			return 0;
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "format-pfx-table");
		return 1;
	}
}

/* name-filter bits that lie: the filter claims names absent (or all present) */
static int fmt_filter(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_named(c, s, m, "h_name_filter", UINT64_MAX);
	static const uint64_t vals[] = { 0xffffffff, 0, 0x7fffffff, 0xfffffffe };

	if (!f)
		return 0;
	put32(m->img + SB_OFF + 8, get32(m->img + SB_OFF + 8) | COMPAT_XATTR_FILTER);
	m->img[SB_OFF + 0x6B] = 0;
	set_field(m, f,
		  chance(c, 60) ? vals[below(c, 4)] : field_get(m->img, f) ^ (1ull << below(c, 32)),
		  "format-filter");
	return 1;
}

/* device slots with absurd sizes, device ids past the table */
static int fmt_devices(struct campaign *c, const struct seed *s, struct mutant *m)
{
	unsigned int ndev = get16(m->img + SB_OFF + 86);
	const struct { const char *field, *op; uint64_t v[4]; } e[] = {
		{ "devslot.blocks", "format-dev-blocks", { 0, 1, 0xffffffff, 0x80000000 } },
		{ "devslot.mapped_blkaddr", "format-dev-mapped", { 0, 1, 0xffffffff, 0xfffffff0 } },
		{ "chunk.device_id", "format-dev-id", { 0, ndev + 1, 0xffff, ndev + 2 } },
		{ "sb.extra_devices", "format-dev-count", { 0, ndev + 1, 0xffff, 255 } },
		{ "sb.devt_slotoff", "format-dev-slotoff", { 0, 1, 8, 0xffff } },
	};
	unsigned int i = (unsigned int)below(c, sizeof(e) / sizeof(e[0]));
	const struct field *f;

	if (!ndev || !(f = pick_named(c, s, m, e[i].field, UINT64_MAX)))
		return 0;
	set_field(m, f, e[i].v[below(c, 4)], e[i].op);
	return 1;
}

/* one format-aware edit the seed allows (tries a few kinds, else a value edit) */
void op_format(struct campaign *c, const struct seed *s, struct mutant *m)
{
	/* weights: the filter applies to nearly every seed, so it gets one slot */
	static int (*const ops[])(struct campaign *, const struct seed *, struct mutant *) = {
		fmt_ext_order, fmt_ext_order, fmt_ext_order, fmt_stream_lie, fmt_stream_lie,
		fmt_metabox, fmt_metabox, fmt_metabox, fmt_addr48, fmt_addr48, fmt_prefix,
		fmt_prefix, fmt_filter, fmt_devices, fmt_devices,
	};

	for (int tries = 0; tries < 6; tries++)
		if (ops[below(c, sizeof(ops) / sizeof(ops[0]))](c, s, m))
			return;
	op_value(c, s, m);
}
