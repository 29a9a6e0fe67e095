// SPDX-License-Identifier: MIT
/* Chunk-based files with chunk dedup and holes (see include/erofs/chunk.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "erofs/chunk.h"
#include "erofs/diag.h"
#include "erofs/format.h"
#include "erofs/io.h"
#include "erofs/ondisk.h"
#include "erofs/tree.h"
#include "erofs/xattr.h"

/* Chunks already in the spool, by content: open addressing on the hash. */
struct chunk_entry {
	XXH128_hash_t hash;
	uint32_t len;
	uint32_t spool_block;	/* EROFS_NULL_ADDR: empty slot */
};

struct chunker {
	const struct erofs_build_options *opts;
	const struct erofs_tree *tree;
	uint32_t blksz, chunksize;
	uint8_t *buf, *other;		/* a chunk, and one read back for comparison */
	struct chunk_entry *table;
	size_t mask, used;
	struct erofs_seq_writer spool;
	int spool_fd;
	uint64_t spool_blocks;
	struct erofs_chunk_stats *stats;
	struct erofs_dir_cache dirs;
};

uint16_t erofs_chunk_format(const struct erofs_build_options *opts,
			    const struct erofs_chunks *chunks)
{
	return (uint16_t)(chunks->chunkbits - opts->blkszbits);
}

/* Whether groups of 2^shift chunks are each all holes or one contiguous run. */
static bool mergeable(const struct erofs_chunks *ch, unsigned int shift, uint32_t blocks_each)
{
	uint32_t group = 1u << shift;

	for (uint32_t g = 0; g < ch->count; g += group) {
		uint32_t first = ch->spool_block[g];

		for (uint32_t j = g + 1; j < g + group && j < ch->count; j++) {
			uint32_t want = first == EROFS_NULL_ADDR ? EROFS_NULL_ADDR
								 : first + (j - g) * blocks_each;

			if (ch->spool_block[j] != want)
				return false;
		}
	}
	return true;
}

/*
 * A file whose chunks lie in long contiguous runs (or long holes) gets a
 * larger chunk size of its own, so its block map shrinks: a file stored
 * whole needs one entry, a file of holes one null entry.
 */
static void merge_runs(const struct erofs_build_options *opts, struct erofs_chunks *ch)
{
	uint32_t blocks_each = 1u << (opts->chunkbits - opts->blkszbits);
	unsigned int shift = 0;

	while (ch->count > 1u << shift && opts->chunkbits + shift + 1 <= opts->blkszbits + 31 &&
	       mergeable(ch, shift + 1, blocks_each))
		shift++;
	if (!shift)
		return;
	for (uint32_t i = 0; i << shift < ch->count; i++)
		ch->spool_block[i] = ch->spool_block[i << shift];
	ch->count = (ch->count + (1u << shift) - 1) >> shift;
	ch->chunkbits = (uint8_t)(opts->chunkbits + shift);
}

uint32_t erofs_chunk_table_size(uint32_t meta_size, uint32_t count)
{
	return ((meta_size + 3) & ~3u) - meta_size + 4 * count;
}

void erofs_chunk_table_encode(const struct erofs_chunks *chunks, uint32_t meta_size,
			      uint32_t area_blkaddr, uint8_t *out)
{
	uint32_t pad = ((meta_size + 3) & ~3u) - meta_size;

	memset(out, 0, pad);
	for (uint32_t i = 0; i < chunks->count; i++)
		put_le32(out + pad + 4 * i, chunks->spool_block[i] == EROFS_NULL_ADDR ?
			 EROFS_NULL_ADDR : area_blkaddr + chunks->spool_block[i]);
}

void erofs_chunks_free(struct erofs_chunks *chunks)
{
	if (chunks)
		free(chunks->spool_block);
	free(chunks);
}

static size_t slot_of(const struct chunker *k, XXH128_hash_t h)
{
	return (size_t)h.low64 & k->mask;
}

static int table_grow(struct chunker *k)
{
	size_t mask = k->table ? k->mask * 2 + 1 : 4095;
	struct chunk_entry *bigger = malloc((mask + 1) * sizeof(*bigger));

	if (!bigger)
		return -ENOMEM;
	for (size_t i = 0; i <= mask; i++)
		bigger[i].spool_block = EROFS_NULL_ADDR;
	for (size_t i = 0; k->table && i <= k->mask; i++) {
		size_t s;

		if (k->table[i].spool_block == EROFS_NULL_ADDR)
			continue;
		for (s = (size_t)k->table[i].hash.low64 & mask;
		     bigger[s].spool_block != EROFS_NULL_ADDR; s = (s + 1) & mask)
			;
		bigger[s] = k->table[i];
	}
	free(k->table);
	k->table = bigger;
	k->mask = mask;
	return 0;
}

/* Finds an identical stored chunk; returns its spool block or EROFS_NULL_ADDR. */
static int find_same(struct chunker *k, XXH128_hash_t h, uint32_t len, uint32_t *found)
{
	*found = EROFS_NULL_ADDR;
	for (size_t s = slot_of(k, h); k->table[s].spool_block != EROFS_NULL_ADDR;
	     s = (s + 1) & k->mask) {
		const struct chunk_entry *e = &k->table[s];
		int err;

		if (e->len != len || !XXH128_isEqual(e->hash, h))
			continue;
		/* confirm byte by byte against the spooled copy */
		if ((err = erofs_seq_flush(&k->spool)))
			return err;
		if ((err = erofs_pread_all(k->spool_fd, k->other, len,
					   (uint64_t)e->spool_block << k->opts->blkszbits)))
			return err;
		if (!memcmp(k->other, k->buf, len)) {
			*found = e->spool_block;
			return 0;
		}
	}
	return 0;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

/* Reads one chunk, or tells it lies in a hole without reading it. */
static int read_chunk(struct chunker *k, int fd, const struct erofs_inode *inode,
		      uint64_t off, uint32_t len, bool *hole)
{
	off_t data = lseek(fd, (off_t)off, SEEK_DATA);
	uint32_t done = 0;

	*hole = (data < 0 && errno == ENXIO) || (data >= 0 && (uint64_t)data >= off + len);
	if (*hole)
		return 0;
	while (done < len) {
		ssize_t n = pread(fd, k->buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n ? errno : ENODATA;

			if (n)
				erofs_err("%s/%s: cannot read: %s", k->opts->source, inode->path,
					  strerror(err));
			else
				erofs_err("%s/%s: file shrank during the build", k->opts->source,
					  inode->path);
			return -err;
		}
		done += (uint32_t)n;
	}
	return 0;
}

/*
 * Whether a file whose last chunk (len bytes) is new can stay a flat file
 * instead: every earlier chunk was stored for it, in order, right before
 * this one, and its tail surely fits inline beside the largest record the
 * inode can have.  Its last chunk is then stored without the tail and kept
 * out of the chunk index (its stored form is not the whole chunk).
 */
static bool stays_flat(const struct chunker *k, const struct erofs_inode *inode,
		       const struct erofs_chunks *ch, uint32_t len)
{
	uint32_t tail = len & (k->blksz - 1), blocks_each = k->chunksize / k->blksz;

	if (!k->opts->inline_data || !tail ||
	    EROFS_EXTENDED_INODE_SIZE + erofs_xattr_ibody_max(inode->xattrs) + tail > k->blksz)
		return false;
	if (ch->count > 1 && ch->spool_block[0] == EROFS_NULL_ADDR)
		return false;	/* a hole: only a chunk table can say so */
	for (uint32_t i = 0; i + 1 < ch->count; i++)
		if (ch->spool_block[i] != ch->spool_block[0] + i * blocks_each)
			return false;
	return ch->count == 1 ||
	       (uint64_t)ch->spool_block[ch->count - 2] + blocks_each == k->spool_blocks;
}

static int chunk_file(struct chunker *k, struct erofs_inode *inode)
{
	struct erofs_chunks *ch = calloc(1, sizeof(*ch));
	uint64_t size = inode->size;
	struct stat st;
	int fd, err = 0;

	if (!ch)
		return -ENOMEM;
	inode->chunks = ch;
	ch->chunkbits = (uint8_t)k->opts->chunkbits;
	ch->count = (uint32_t)((size + k->chunksize - 1) / k->chunksize);
	ch->spool_block = malloc(ch->count * sizeof(*ch->spool_block));
	if (!ch->spool_block)
		return -ENOMEM;
	fd = erofs_tree_open_file(k->tree, inode, &k->dirs);
	if (fd < 0) {
		err = errno;
		erofs_err("%s/%s: cannot open: %s", k->opts->source, inode->path,
			  erofs_tree_open_error(err));
		return -err;
	}
	for (uint32_t i = 0; i < ch->count && !err; i++) {
		uint64_t off = (uint64_t)i * k->chunksize;
		uint32_t len = size - off < k->chunksize ? (uint32_t)(size - off) : k->chunksize;
		uint32_t blocks = (len + k->blksz - 1) / k->blksz, found;
		XXH128_hash_t h;
		bool hole;

		k->stats->chunks++;
		if ((err = read_chunk(k, fd, inode, off, len, &hole)))
			break;
		if (hole || all_zero(k->buf, len)) {
			ch->spool_block[i] = EROFS_NULL_ADDR;	/* reads back as zeros */
			k->stats->null++;
			k->stats->saved_bytes += (uint64_t)blocks * k->blksz;
			continue;
		}
		h = XXH3_128bits(k->buf, len);
		if ((err = find_same(k, h, len, &found)))
			break;
		if (found != EROFS_NULL_ADDR) {
			ch->spool_block[i] = found;
			k->stats->shared++;
			k->stats->saved_bytes += (uint64_t)blocks * k->blksz;
			continue;
		}
		if (i + 1 == ch->count && stays_flat(k, inode, ch, len)) {
			/* only its whole blocks: the tail goes inline */
			erofs_seq_write(&k->spool, k->spool_blocks << k->opts->blkszbits, k->buf,
					len & ~(k->blksz - 1));
			inode->in_chunk_area = true;
			inode->chunk_area_block = ch->count > 1 ? ch->spool_block[0]
								: (uint32_t)k->spool_blocks;
			k->spool_blocks += len / k->blksz;
			k->stats->flat++;
			err = k->spool.error;
			break;
		}
		if (k->spool_blocks + blocks > UINT32_MAX / 2) {
			erofs_err("the chunk area grows past 2^31 blocks");
			err = -EFBIG;
			break;
		}
		ch->spool_block[i] = (uint32_t)k->spool_blocks;
		erofs_seq_write(&k->spool, k->spool_blocks << k->opts->blkszbits, k->buf, len);
		k->spool_blocks += blocks;
		if (k->used * 2 >= k->mask && (err = table_grow(k)))
			break;
		{
			size_t s = slot_of(k, h);

			while (k->table[s].spool_block != EROFS_NULL_ADDR)
				s = (s + 1) & k->mask;
			k->table[s] = (struct chunk_entry){ h, len, ch->spool_block[i] };
			k->used++;
		}
		err = k->spool.error;
	}
	if (!err && (fstat(fd, &st) || (uint64_t)st.st_size != size)) {
		erofs_err("%s/%s: file changed size during the build", k->opts->source,
			  inode->path);
		err = -EAGAIN;
	}
	close(fd);
	if (!err && inode->in_chunk_area) {
		erofs_chunks_free(ch);
		inode->chunks = NULL;
	} else if (!err) {
		merge_runs(k->opts, ch);
	}
	return err;
}

int erofs_chunk_tree(const struct erofs_build_options *opts, struct erofs_tree *tree,
		     struct erofs_spool *spool, struct erofs_chunk_stats *stats)
{
	struct chunker k = {
		.opts = opts, .tree = tree, .blksz = 1u << opts->blkszbits,
		.chunksize = 1u << opts->chunkbits, .stats = stats, .dirs = { .fd = -1 },
	};
	int err;

	memset(stats, 0, sizeof(*stats));
	if (!opts->chunkbits)
		return 0;
	if ((err = erofs_spool_open(opts, spool)))
		return err;
	k.spool_fd = spool->fd;
	k.buf = malloc(k.chunksize);
	k.other = malloc(k.chunksize);
	err = k.buf && k.other ? table_grow(&k) : -ENOMEM;
	if (!err)
		err = erofs_seq_init(&k.spool, spool->fd, "temporary spool", 1u << 20);
	for (uint32_t i = 0; i < tree->nr_inodes && !err; i++) {
		struct erofs_inode *inode = tree->inodes[i];

		/* files within one block keep their inline tails */
		if (S_ISREG(inode->mode) && inode->size > k.blksz)
			err = chunk_file(&k, inode);
	}
	if (!err)
		err = erofs_seq_flush(&k.spool);
	/* the last chunk may end inside its last block */
	if (!err && ftruncate(spool->fd, (off_t)(k.spool_blocks << opts->blkszbits)))
		err = -errno;
	spool->size = k.spool_blocks << opts->blkszbits;
	erofs_seq_release(&k.spool);
	erofs_dir_cache_release(&k.dirs);
	free(k.table);
	free(k.buf);
	free(k.other);
	if (err == -ENOMEM)
		erofs_err("out of memory while chunking");
	return err;
}
