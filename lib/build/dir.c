// SPDX-License-Identifier: MIT
/*
 * Directory data.  The kernel binary-searches names across blocks and then
 * inside a block, so all entries, "." and ".." included, are in byte order
 * over the whole directory.  A block holds its dirent array first and the
 * names after it; the last name of a block ends at the first NUL or at the
 * end of the block (or of i_size for the last one).
 */
#include <string.h>
#include <sys/stat.h>

#include "erofs/build/dir.h"
#include "erofs/common/format.h"
#include "erofs/common/ondisk.h"
#include "erofs/source/inode.h"

struct dir_entry {
	const char *name;
	uint16_t len;
	const struct erofs_inode *inode;
};

/* Walks ".", ".." and the sorted children as one sorted sequence. */
struct dir_cursor {
	const struct erofs_inode *dir;
	uint32_t child;
	uint8_t dots;		/* how many of ".", ".." were returned */
};

static int compare_name(const char *a, uint16_t alen, const char *b, uint16_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (int)alen - (int)blen;
}

static bool dir_next(struct dir_cursor *c, struct dir_entry *e)
{
	static const char dots[] = "..";
	const struct erofs_dentry *child =
		c->child < c->dir->nr_children ? &c->dir->children[c->child] : NULL;

	if (c->dots < 2) {
		uint16_t len = (uint16_t)(c->dots + 1);

		if (!child || compare_name(dots, len, child->name, child->name_len) < 0) {
			e->name = dots;
			e->len = len;
			e->inode = c->dots ? c->dir->parent : c->dir;
			c->dots++;
			return true;
		}
	}
	if (!child)
		return false;
	e->name = child->name;
	e->len = child->name_len;
	e->inode = child->inode;
	c->child++;
	return true;
}

/*
 * Greedy packing shared by sizing and encoding: calls back once per block
 * with the entries [first, first + count) of the sorted sequence.
 */
typedef void (*dir_block_fn)(void *arg, const struct dir_entry *entries, uint32_t count,
			     uint32_t used, bool last);

static void pack_blocks(const struct erofs_inode *dir, unsigned int blkszbits,
			bool dot_omitted, dir_block_fn emit, void *arg)
{
	const uint32_t blksz = 1u << blkszbits;
	/* at most blksz / (12 + 1) entries fit one block */
	struct dir_entry block[4096 / (EROFS_DIRENT_SIZE + 1) + 1];
	struct dir_cursor c = { .dir = dir, .dots = dot_omitted };
	struct dir_entry e;
	uint32_t count = 0, used = 0;

	while (dir_next(&c, &e)) {
		uint32_t need = EROFS_DIRENT_SIZE + e.len;

		if (used + need > blksz) {
			emit(arg, block, count, used, false);
			count = used = 0;
		}
		block[count++] = e;
		used += need;
	}
	emit(arg, block, count, used, true);
}

struct size_state {
	uint64_t size;
	uint32_t blksz;
};

static void add_block(void *arg, const struct dir_entry *entries, uint32_t count,
		      uint32_t used, bool last)
{
	struct size_state *st = arg;

	(void)entries;
	(void)count;
	st->size += last ? used : st->blksz;
}

uint64_t erofs_dir_data_size(const struct erofs_inode *dir, unsigned int blkszbits,
			     bool dot_omitted)
{
	struct size_state st = { .blksz = 1u << blkszbits };

	pack_blocks(dir, blkszbits, dot_omitted, add_block, &st);
	return st.size;
}

struct encode_state {
	uint8_t *out;
	uint32_t blksz;
};

static void encode_block(void *arg, const struct dir_entry *entries, uint32_t count,
			 uint32_t used, bool last)
{
	struct encode_state *st = arg;
	uint32_t nameoff = count * EROFS_DIRENT_SIZE;

	for (uint32_t i = 0; i < count; i++) {
		struct erofs_dirent de = {
			.nid = entries[i].inode->nid,
			.nameoff = (uint16_t)nameoff,
			.file_type = erofs_mode_to_ftype(entries[i].inode->mode),
		};

		erofs_dirent_encode(&de, st->out + i * EROFS_DIRENT_SIZE);
		memcpy(st->out + nameoff, entries[i].name, entries[i].len);
		nameoff += entries[i].len;
	}
	if (!last)
		memset(st->out + used, 0, st->blksz - used);
	st->out += last ? used : st->blksz;
}

void erofs_dir_encode(const struct erofs_inode *dir, unsigned int blkszbits, bool dot_omitted,
		      uint8_t *out)
{
	struct encode_state st = { .out = out, .blksz = 1u << blkszbits };

	pack_blocks(dir, blkszbits, dot_omitted, encode_block, &st);
}
