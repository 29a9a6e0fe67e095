/* SPDX-License-Identifier: MIT */
/*
 * fuzz-mutate's generic edits, the ones every campaign makes (value, arith,
 * flip, splice, struct, bits, payload, trunc: fuzz-mutate.c's header says
 * what each does), and -E's named edits of the findings' reproducers.
 * Every random choice draws from the campaign's generator, so the order
 * of the draws is part of what mutant N is.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-mutate.h"

/* appends to M's log line (what is past its 4 KiB is dropped) */
void note(struct mutant *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->loglen >= sizeof(m->log) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(m->log + m->loglen, sizeof(m->log) - m->loglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		m->loglen += (size_t)n < sizeof(m->log) - m->loglen ? (size_t)n
							  : sizeof(m->log) - m->loglen - 1;
}

/*
 * Bit k of a 64-bit value, k taken modulo 64: fields wider than 64 bits
 * (the 128-bit volume name) draw k up to their width, and x86's shift,
 * which the campaigns so far were made with, wraps it the same way.
 */
static uint64_t bit_at(unsigned int k)
{
	return 1ull << (k & 63);
}

/* a value that often breaks readers, for a field of any kind */
static uint64_t interesting(struct campaign *c, const struct seed *s, const struct field *f,
			    uint64_t old)
{
	unsigned int w = f->nbits, k;
	uint64_t blksz = 1ull << s->blkbits;

	switch (below(c, 18)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return ~0ull;
	case 3: return w > 1 ? mask_of(w - 1) : 1;		/* signed max */
	case 4: return w > 1 ? bit_at(w - 1) : 1;		/* signed min */
	case 5: k = (unsigned int)below(c, w); return bit_at(k);
	case 6: k = (unsigned int)below(c, w); return bit_at(k) - 1;
	case 7: k = (unsigned int)below(c, w); return bit_at(k) + 1;
	case 8: return blksz + below(c, 3) - 1;
	case 9: return 4096 + below(c, 3) - 1;
	case 10: return f->isize + below(c, 3) - 1;
	case 11: return (1ull << 31) + below(c, 3) - 1;
	case 12: return (1ull << 32) + below(c, 3) - 1;
	case 13: return old + below(c, 3) - 1;
	case 14: return old * 2;
	case 15: return old + blksz;
	case 16: return (uint64_t)-(int64_t)(below(c, 4) + 1);	/* -1..-4 */
	default: return rand64(c);
	}
}

/* a value that often breaks readers, for a field of F's kind */
uint64_t kind_value(struct campaign *c, const struct seed *s, const struct field *f,
			   uint64_t old)
{
	uint64_t blksz = 1ull << s->blkbits;
	uint64_t nblocks = s->size >> s->blkbits;

	switch (f->kind) {
	case K_NID:
		switch (below(c, 8)) {
		case 0: return s->nids[below(c, s->ninodes)];
		case 1: return f->nid;				/* itself: loops */
		case 2: for (size_t i = 0; i < s->ninodes; i++)	/* its parent */
				if (s->nids[i] == f->nid)
					return s->parents[i];
			return 0;
		case 3: return s->nids[below(c, s->ninodes)] + 1;	/* mid-inode */
		case 4:						/* past the end */
			return (s->size - meta_base(s)) / 32 + below(c, 4);
		case 5: return get16(s->img + SB_OFF + 14);	/* the root */
		default: break;
		}
		break;
	case K_BLKADDR:
		switch (below(c, 8)) {
		case 0: return s->nblk ? s->blkaddrs[below(c, s->nblk)] : 0;
		case 1: return get32(s->img + SB_OFF + 40);	/* metadata area */
		case 2: return nblocks + below(c, 3) - 1;		/* the end */
		case 3: return 0xFFFFFFFFu;			/* hole marker */
		case 4: return old + below(c, 3) - 1;
		default: break;
		}
		break;
	case K_NAMEOFF:
		switch (below(c, 6)) {
		case 0: return below(c, blksz + 2);
		case 1: return 12 * below(c, 16);
		case 2: return old + below(c, 3) - 1;
		case 3: return f->isize + below(c, 3) - 1;	/* the block's end */
		default: break;
		}
		break;
	case K_MODE:
		if (chance(c, 50)) {
			static const uint16_t types[] = { 0010000, 0020000, 0040000, 0060000,
							  0100000, 0120000, 0140000, 0, 0170000 };

			return (old & 07777) | types[below(c, 9)];
		}
		break;
	case K_FORMAT:
		if (chance(c, 60))
			return (old & ~0xEull) | below(c, 8) << 1;	/* another layout */
		if (chance(c, 50))
			return old ^ 1;				/* compact <-> extended */
		if (c->format_edits && chance(c, 50))
			return old ^ 0x10;			/* NLINK_1 / DOT_OMITTED */
		break;
	case K_ENUM:
		if (chance(c, 60))
			return below(c, 1ull << (f->nbits < 4 ? f->nbits : 4));
		break;
	case K_CLUSTERBITS:
		return below(c, 8);
	case K_HI16:		/* high address bits: past any device */
		switch (below(c, 4)) {
		case 0: return 1;
		case 1: return 0xffff;
		case 2: return 1ull << below(c, f->nbits);
		default: break;
		}
		break;
	case K_BYTEADDR:	/* a byte address: unaligned, past the end, in the metadata */
		switch (below(c, 6)) {
		case 0: return old + 1 + below(c, blksz - 1);
		case 1: return s->size + below(c, 2 * blksz);
		case 2: return SB_OFF;
		case 3: return old - blksz;
		default: break;
		}
		break;
	case K_PLEN:		/* extent plen: length lies, partial bit, format */
		switch (below(c, 6)) {
		case 0: return old + below(c, 3) - 1;
		case 1: return (old & ~0x1fffffull) | (1 + below(c, 0x1fffff));
		case 2: return old ^ (1u << 27);
		case 3: return (old & 0x0fffffffull) | below(c, 16) << 28;
		case 4: return (old & ~0x1fffffull) | ((old & 0x1fffff) + blksz);
		default: break;
		}
		break;
	case K_BLKBITS:
		if (chance(c, 60))
			return 8 + below(c, 6);
		break;
	case K_FLAGS:
		if (chance(c, 60))
			return old ^ (1ull << below(c, f->nbits));
		break;
	case K_DELTA:
		switch (below(c, 5)) {
		case 0: return 1;
		case 1: return 0x800 | below(c, 300);		/* CBLKCNT */
		case 2: return 0x7ff;
		default: break;
		}
		break;
	default:
		break;
	}
	return interesting(c, s, f, old);
}

static const struct field *pick_field(struct campaign *c, const struct seed *s,
				      const struct mutant *m)
{
	for (int tries = 0; tries < 16; tries++) {
		const struct field *f = &s->f[below(c, s->nf)];

		/* the magic and the checksum only rarely: they end at mount */
		if ((f->kind == K_MAGIC || f->kind == K_CSUM) && !chance(c, 5))
			continue;
		if (f->off + (f->bit + f->nbits + 7) / 8 <= m->size)
			return f;
	}
	return NULL;
}

/* F of the mutant set to V, logged as edit OP */
void set_field(struct mutant *m, const struct field *f, uint64_t v, const char *op)
{
	uint64_t old = field_get(m->img, f);

	field_put(m->img, f, v);
	note(m, " %s %s@%" PRIu64 ".%u/%u %" PRIx64 "->%" PRIx64 ";", op, f->name, f->off,
	     f->bit, f->nbits, old, field_get(m->img, f));
}

void op_value(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_field(c, s, m);

	if (f)
		set_field(m, f, kind_value(c, s, f, field_get(m->img, f)), "value");
}

void op_arith(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_field(c, s, m);
	uint64_t d = 1 + below(c, 35);

	if (f)
		set_field(m, f, field_get(m->img, f) + (chance(c, 50) ? d : -d), "arith");
}

void op_flip(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct field *f = pick_field(c, s, m);

	if (f)
		set_field(m, f, field_get(m->img, f) ^ (1ull << below(c, f->nbits)), "flip");
}

static void copy_bytes(struct mutant *m, uint64_t dst, const unsigned char *src, uint64_t len,
		       const char *what)
{
	if (dst + len > m->size)
		return;
	memmove(m->img + dst, src, len);
	note(m, " splice %s @%" PRIu64 "+%" PRIu64 ";", what, dst, len);
}

void op_splice(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct seed *o = &c->seeds[below(c, c->nseeds)];

	switch (below(c, 3)) {
	case 0: {	/* an inode over another */
		size_t a = below(c, s->ninodes);
		uint64_t src, len = s->inode_len[a];
		const unsigned char *from;

		if (o != s && o->ninodes && chance(c, 50)) {
			size_t b = below(c, o->ninodes);

			from = o->img + o->inode_off[b];
			len = o->inode_len[b];
			src = 0;
		} else {
			src = s->inode_off[below(c, s->ninodes)];
			from = m->img + src;
		}
		(void)src;
		copy_bytes(m, s->inode_off[a], from, len, "inode");
		break;
	}
	case 1:		/* a dirent over another */
		if (s->ndirents > 1) {
			/* the source is drawn before the destination: C leaves
			 * the order of a call's arguments open, and gcc, which
			 * built every campaign so far, drew the source first */
			uint64_t src = s->dirents[below(c, s->ndirents)];

			copy_bytes(m, s->dirents[below(c, s->ndirents)], m->img + src, 12, "dirent");
		}
		break;
	default: {	/* a block from another seed with the same block size */
		uint64_t bs = 1ull << s->blkbits, nb, ob, src;

		if (o->blkbits != s->blkbits)
			break;
		nb = m->size / bs;
		ob = o->size / bs;
		if (nb < 2 || ob < 2)
			break;
		/* the source first, as for dirents */
		src = (1 + below(c, ob - 1)) * bs;
		copy_bytes(m, (1 + below(c, nb - 1)) * bs, o->img + src, bs, "block");
	}
	}
}

void op_struct(struct campaign *c, const struct seed *s, struct mutant *m)
{
	switch (below(c, 6)) {
	case 0:		/* swap two dirents of the same block: unsorted names */
	case 1: {	/* or duplicate one name: point a nameoff at another's */
		uint64_t a, b;
		unsigned char t[12];

		if (s->ndirents < 2)
			return;
		a = s->dirents[below(c, s->ndirents)];
		b = s->dirents[below(c, s->ndirents)];
		if (a == b || a + 12 > m->size || b + 12 > m->size)
			return;
		if (below(c, 2)) {
			memcpy(t, m->img + a, 12);
			memcpy(m->img + a, m->img + b, 12);
			memcpy(m->img + b, t, 12);
			note(m, " struct swap-dirents @%" PRIu64 ",@%" PRIu64 ";", a, b);
		} else {
			memcpy(m->img + a + 8, m->img + b + 8, 2);
			note(m, " struct dup-name @%" PRIu64 "<-@%" PRIu64 ";", a, b);
		}
		return;
	}
	default: {
		/* compressed-file edits need a map header: find an h_advise field */
		const struct field *hf = NULL;

		for (int tries = 0; tries < 64 && !hf; tries++) {
			const struct field *f = &s->f[below(c, s->nf)];

			if (!strcmp(f->name, "h_advise") && f->off + 4 <= m->size)
				hf = f;
		}
		if (!hf)
			return;
		switch (below(c, 4)) {
		case 0: {	/* whole-file fragment bit with a huge i_size */
			uint64_t ioff = nid_off(s, hf->nid);

			m->img[hf->off + 3] |= 0x80;
			if (ioff != UINT64_MAX && ioff + 16 <= m->size) {
				if (get16(m->img + ioff) & 1)
					put64(m->img + ioff + 8, 1ull << (20 + below(c, 20)));
				else
					put32(m->img + ioff + 8, 1u << (20 + below(c, 12)));
			}
			put32(m->img + SB_OFF + 80, get32(m->img + SB_OFF + 80) | 0x20);
			note(m, " struct fragment-flood nid %" PRIu64 ";", hf->nid);
			break;
		}
		case 1:		/* wider lclusters */
			m->img[hf->off + 3] = (m->img[hf->off + 3] & ~7) | (1 + below(c, 7));
			note(m, " struct lclusterbits nid %" PRIu64 " -> %u;", hf->nid,
			     m->img[hf->off + 3] & 7);
			break;
		case 2:		/* interlaced plain pclusters */
			put16(m->img + hf->off, get16(m->img + hf->off) | 0x10);
			note(m, " struct interlaced nid %" PRIu64 ";", hf->nid);
			break;
		default: {	/* a NONHEAD chain over the full indexes that follow */
			uint64_t p = hf->off + 12;	/* header + 8 bytes of padding */
			unsigned int n = 2 + (unsigned int)below(c, 30), i,
				     back = chance(c, 50) ? 1 : 2047;

			for (i = 1; i <= n && p + 8 * i + 8 <= m->size; i++) {
				put16(m->img + p + 8 * i, 2);
				put16(m->img + p + 8 * i + 4, i < back ? i : back);
				put16(m->img + p + 8 * i + 6, n - i + 1);
			}
			note(m, " struct nonhead-chain nid %" PRIu64 " x%u;", hf->nid, n);
		}
		}
	}
	}
}

void op_bits(struct campaign *c, const struct seed *s, struct mutant *m)
{
	uint64_t lo = s->meta_lo, hi = s->meta_hi < m->size ? s->meta_hi : m->size;
	unsigned int n = 1 + (unsigned int)below(c, 4);

	if (hi <= lo)
		return;
	while (n--) {
		uint64_t at = lo + below(c, hi - lo);
		unsigned int b = (unsigned int)below(c, 8);

		m->img[at] ^= (unsigned char)(1u << b);
		note(m, " bits @%" PRIu64 "^%02x;", at, 1u << b);
	}
}

void op_payload(struct campaign *c, const struct seed *s, struct mutant *m)
{
	const struct region *r;
	uint64_t at;

	if (!s->npayload)
		return;
	r = &s->payload[below(c, s->npayload)];
	at = r->off + below(c, r->len);
	if (at >= m->size)
		return;
	m->img[at] = (unsigned char)rand64(c);
	note(m, " payload @%" PRIu64 ";", at);
}

void op_trunc(struct campaign *c, const struct seed *s, struct mutant *m)
{
	uint64_t bs = 1ull << s->blkbits, nb = m->size / bs;
	uint64_t keep;

	if (nb < 3)
		return;
	keep = (2 + below(c, nb - 2)) * bs;
	if (keep < SB_OFF + bs)
		keep = (SB_OFF + bs + bs - 1) / bs * bs;
	if (keep >= m->size)
		return;
	note(m, " trunc %zu->%" PRIu64 ";", m->size, keep);
	m->size = keep;
}

/*
 * -E NAME[#WHO]=VALUE: set the field NAME (as -p prints it) of inode WHO (a
 * nid, or root, mbox, packed; default: the first field of that name) to
 * VALUE.  Findings are kept as a seed image plus such edits
 * (qemu-tests/fuzz-findings.list), so the reproducer survives format
 * changes of the tree it was found on.
 */
void apply_named(const struct seed *s, struct mutant *m, const char *edit)
{
	char name[64], who[32] = "";
	const char *eq = strchr(edit, '='), *hash = strchr(edit, '#');
	uint64_t nid = UINT64_MAX, val;
	const struct field *f = NULL;
	size_t nl;

	if (!eq)
		die("-E %s: NAME[#WHO]=VALUE", edit);
	nl = (size_t)((hash && hash < eq ? hash : eq) - edit);
	if (nl >= sizeof(name))
		die("-E %s: name too long", edit);
	memcpy(name, edit, nl);
	name[nl] = 0;
	if (hash && hash < eq)
		snprintf(who, sizeof(who), "%.*s", (int)(eq - hash - 1), hash + 1);
	val = strtoull(eq + 1, NULL, 0);
	if (!strcmp(who, "root"))
		nid = (s->is48 && get64(s->img + SB_OFF + 0x70)) ? get64(s->img + SB_OFF + 0x70)
								 : get16(s->img + SB_OFF + 14);
	else if (!strcmp(who, "mbox"))
		nid = s->mbox_nid;
	else if (!strcmp(who, "packed"))
		nid = get64(s->img + SB_OFF + 96);
	else if (who[0])
		nid = strtoull(who, NULL, 0);
	for (size_t i = 0; i < s->nf && !f; i++)
		if (!strcmp(s->f[i].name, name) && (nid == UINT64_MAX || s->f[i].nid == nid))
			f = &s->f[i];
	if (!f)
		die("-E %s: no field %s%s%s in %s", edit, name, who[0] ? " of " : "", who, s->path);
	set_field(m, f, val, "named");
}
