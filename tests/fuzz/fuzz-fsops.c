// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: erofsfuse's operations (lib/fsops/fsops.c) on an image, as
 * the kernel would call them through a mount: every inode reachable from
 * the root is looked up, stat'ed, its xattrs listed and read, symlinks
 * read, directories read in small batches resumed from their cookies,
 * files read in pieces of varying size (through the decoded-extent cache,
 * at 32 MiB or, with bit 2 of byte 0, 64 KiB so that it evicts) and again
 * at pseudo-random offsets, which must give the same bytes.
 *
 * Besides the sanitizers, the operations' contract (include/erofs/fsops/fsops.h)
 * is checked, and broken contracts abort: an error other than the ones an
 * operation may return (EIO and ENOMEM, and ENOENT, ENOTDIR, EISDIR,
 * EINVAL, ENODATA, ERANGE where they apply); EIO without a reason; a
 * lookup of a name readdir gave that finds another inode; cookies that do
 * not advance; a file that reads to another length than its size; two
 * reads of the same bytes that differ; sizes of xattr lists and values
 * that change between the size query and the read.
 *
 * Byte 0 of the image: bit 0 and 1 as in fuzz-walk.h (checksum kept,
 * read through a memfd), bit 2 the small cache.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-walk.h"
#include "erofs/fsops/fsops.h"

#define FZ_SMALL_CACHE	0x04u
#define FZ_INODES_MAX	(1u << 14)	/* inodes visited per input */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_verbose = getenv("FUZZ_VERBOSE") != NULL;
	return 0;
}

struct fo {
	struct fz f;		/* the reader, budgets, digest, visited set */
	struct erofs_fs fs;
	uint64_t *queue;	/* inodes to visit */
	size_t nqueue, capqueue;
	uint64_t rng;
};

/* An operation failed with err: allowed are EIO (with a reason), ENOMEM
 * and the listed others. */
static void fo_failed(struct fo *o, long err, int ok1, int ok2)
{
	FZ_CHECK(err < 0);
	if (err == -EIO) {
		FZ_CHECK(o->fs.err[0] != '\0');
		FZ_CHECK(memchr(o->fs.err, '\0', sizeof(o->fs.err)) != NULL);
		if (fz_verbose)
			fprintf(stderr, "fuzz: EIO: %s\n", erofs_fs_error(&o->fs));
		fz_fold_bytes(&o->f, o->fs.err, strlen(o->fs.err));
	} else {
		FZ_CHECK(err == -ENOMEM || err == -ok1 || err == -ok2);
	}
	o->f.problems++;
	fz_fold(&o->f, (uint64_t)-err);
}

static void fo_enqueue(struct fo *o, uint64_t ino)
{
	struct erofs_check_node *n;

	if (fz_find(&o->f, ino) || o->f.nids.count >= FZ_INODES_MAX)
		return;
	n = fz_add(&o->f, ino);
	(void)n;
	if (o->nqueue == o->capqueue) {
		o->capqueue = o->capqueue ? 2 * o->capqueue : 64;
		o->queue = fz_realloc(o->queue, o->capqueue * sizeof(*o->queue));
	}
	o->queue[o->nqueue++] = ino;
}

static void fo_xattrs(struct fo *o, uint64_t ino)
{
	ssize_t n = erofs_fs_listxattr(&o->fs, ino, NULL, 0), m;
	char *list, *p;

	if (n < 0) {
		fo_failed(o, n, 0, 0);
		return;
	}
	m = erofs_fs_getxattr(&o->fs, ino, "user.\001absent", NULL, 0);
	if (m < 0)
		fo_failed(o, m, ENODATA, 0);
	if (!n)
		return;
	list = fz_alloc((size_t)n);
	m = erofs_fs_listxattr(&o->fs, ino, list, (size_t)n);
	FZ_CHECK(m == n);
	FZ_CHECK(list[n - 1] == '\0');
	if (n > 1)
		FZ_CHECK(erofs_fs_listxattr(&o->fs, ino, list, (size_t)n - 1) == -ERANGE);
	fz_fold_bytes(&o->f, list, (size_t)n);
	for (p = list; p < list + n; p += strlen(p) + 1) {
		ssize_t v = erofs_fs_getxattr(&o->fs, ino, p, NULL, 0), w;
		uint8_t *val;

		if (v < 0) {
			/* a listed name is there: only EIO (a later entry broken) */
			fo_failed(o, v, 0, 0);
			continue;
		}
		val = fz_alloc((size_t)v);
		w = erofs_fs_getxattr(&o->fs, ino, p, val, (size_t)v);
		FZ_CHECK(w == v);
		if (v > 1)	/* (size 0 asks for the size) */
			FZ_CHECK(erofs_fs_getxattr(&o->fs, ino, p, val, (size_t)v - 1) == -ERANGE);
		fz_fold_bytes(&o->f, val, (size_t)v);
		free(val);
	}
	free(list);
}

struct fo_dir {
	struct fo *o;
	uint64_t dir;
	bool sorted;		/* the whole directory passes erofs_dir_iterate() */
	uint64_t cookie;
	unsigned int left;
	size_t taken;
};

static int fo_entry(void *arg, const char *name, size_t namelen, uint64_t ino, mode_t type,
		    uint64_t next_cookie)
{
	struct fo_dir *d = arg;
	struct fo *o = d->o;
	struct stat st;
	uint64_t found;
	int err;

	if (!d->left)
		return 1;
	FZ_CHECK(next_cookie > d->cookie);
	FZ_CHECK(namelen >= 1 && namelen <= EROFS_NAME_LEN);
	FZ_CHECK(!memchr(name, '/', namelen) && !memchr(name, '\0', namelen));
	FZ_CHECK(ino != 0);
	d->cookie = next_cookie;
	d->left--;
	d->taken++;
	fz_fold_bytes(&o->f, name, namelen);
	fz_fold(&o->f, ino);
	if (!o->f.dents_left)
		return 1;
	o->f.dents_left--;
	if ((namelen == 1 && name[0] == '.') || (namelen == 2 && !memcmp(name, "..", 2)))
		return 0;
	fo_enqueue(o, ino);
	/* each lookup walks the directory: a sample of its names keeps the
	 * cost linear (the first ones, then one in eight) */
	if (d->taken > 16 && fz_rand(&o->rng) % 8)
		return 0;
	err = erofs_fs_lookup(&o->fs, d->dir, name, namelen, &found, &st);
	if (err) {
		/* the inode is broken; or names out of order across blocks
		 * (the binary search, as the kernel's, may miss them) */
		fo_failed(o, err, d->sorted ? 0 : ENOENT, 0);
	} else {
		FZ_CHECK(found == ino || !d->sorted);
		FZ_CHECK(st.st_ino == found);
		if (type)
			fz_fold(&o->f, (uint64_t)(type == (st.st_mode & S_IFMT)));
	}
	return 0;
}

static void fo_dir(struct fo *o, uint64_t ino)
{
	struct fo_dir d = { .o = o, .dir = ino };
	struct erofs_rd_inode vi;
	uint64_t found, nid;
	struct stat st;
	int err;

	/* names sorted across the blocks, none twice: every lookup must hit */
	d.sorted = !erofs_fs_nid_of(&o->fs, ino, &nid) && !erofs_read_inode(&o->f.r, nid, &vi) &&
		   !erofs_dir_iterate(&o->f.r, &vi, EROFS_NID_UNKNOWN, NULL, NULL);

	for (;;) {
		/* batches of 1..8 entries, as a kernel buffer that fills up */
		d.left = 1 + (unsigned int)(fz_rand(&o->rng) % 8);
		err = erofs_fs_readdir(&o->fs, ino, d.cookie, fo_entry, &d);
		if (err) {
			fo_failed(o, err, 0, 0);
			break;
		}
		if (d.left || !o->f.dents_left)
			break;	/* the batch was not filled: the end */
	}
	err = erofs_fs_lookup(&o->fs, ino, "\x01no such name", 13, &found, &st);
	if (err != -ENOENT)
		fo_failed(o, err, 0, 0);
}

static void fo_file(struct fo *o, uint64_t ino, uint64_t size)
{
	uint8_t *whole = o->f.whole;
	uint64_t off = 0;
	ssize_t n;
	int i;

	while (off < size) {
		size_t want = 1 + (size_t)(fz_rand(&o->rng) % FZ_READ_CHUNK);

		if (o->f.data_left < want) {
			o->f.data_left = 0;
			return;
		}
		o->f.data_left -= want;
		n = erofs_fs_read(&o->fs, ino, o->f.buf, want, off);
		if (n < 0) {
			fo_failed(o, n, 0, 0);
			return;
		}
		FZ_CHECK((uint64_t)n == (want < size - off ? want : size - off));
		if (off + (uint64_t)n <= FZ_CMP_MAX)
			memcpy(whole + off, o->f.buf, (size_t)n);
		fz_fold_bytes(&o->f, o->f.buf, (size_t)n);
		off += (uint64_t)n;
	}
	FZ_CHECK(erofs_fs_read(&o->fs, ino, o->f.buf, 16, size) == 0);
	if (size > FZ_CMP_MAX || !size)
		return;
	for (i = 0; i < 4; i++) {
		uint64_t at = fz_rand(&o->rng) % size;
		size_t len = 1 + (size_t)(fz_rand(&o->rng) % FZ_READ_CHUNK);

		if (o->f.data_left < len)
			return;
		o->f.data_left -= len;
		n = erofs_fs_read(&o->fs, ino, o->f.buf, len, at);
		if (n < 0) {
			fo_failed(o, n, 0, 0);	/* the cache evicted what read before */
			continue;
		}
		FZ_CHECK((uint64_t)n == (len < size - at ? len : size - at));
		FZ_CHECK(!memcmp(o->f.buf, whole + at, (size_t)n));
	}
}

static void fo_visit(struct fo *o, uint64_t ino)
{
	char target[EROFS_SYMLINK_MAXLEN];
	struct stat st;
	ssize_t n;
	int err = erofs_fs_getattr(&o->fs, ino, &st);

	if (err) {
		fo_failed(o, err, 0, 0);
		return;
	}
	FZ_CHECK(st.st_ino == ino);
	FZ_CHECK(st.st_size >= 0);
	fz_fold_bytes(&o->f, &st.st_mode, sizeof(st.st_mode));
	fz_fold(&o->f, (uint64_t)st.st_size);
	fo_xattrs(o, ino);
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		FZ_CHECK(erofs_fs_read(&o->fs, ino, o->f.buf, 1, 0) == -EISDIR);
		fo_dir(o, ino);
		break;
	case S_IFLNK:
		n = erofs_fs_readlink(&o->fs, ino, target, sizeof(target));
		if (n < 0) {
			fo_failed(o, n, 0, 0);
		} else {
			FZ_CHECK(n == st.st_size && strlen(target) == (size_t)n);
			fz_fold_bytes(&o->f, target, (size_t)n);
		}
		break;
	case S_IFREG:
		FZ_CHECK(erofs_fs_readdir(&o->fs, ino, 0, fo_entry, NULL) == -ENOTDIR);
		err = erofs_fs_open(&o->fs, ino);
		if (err)
			fo_failed(o, err, 0, 0);
		else
			fo_file(o, ino, (uint64_t)st.st_size);
		break;
	default:
		FZ_CHECK(erofs_fs_readlink(&o->fs, ino, target, sizeof(target)) == -EINVAL);
		FZ_CHECK(erofs_fs_read(&o->fs, ino, o->f.buf, 1, 0) == -EINVAL);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags;
	uint8_t *img = fz_image(data, size, &flags);
	struct statvfs sv;
	struct fo o;
	size_t i;
	int fd, err;

	memset(&o, 0, sizeof(o));
	fz_init(&o.f);
	o.f.data_left = FZ_DATA_BUDGET;
	o.f.dents_left = FZ_DENT_BUDGET;
	o.rng = size * 0x9E3779B97F4A7C15ULL + 1;
	err = fz_open(&o.f, img, size, flags, &fd);
	if (err) {
		fz_failed(&o.f, err);
	} else if (!erofs_fs_init(&o.fs, &o.f.r, flags & FZ_SMALL_CACHE ? 65536 : 0)) {
		FZ_CHECK(erofs_fs_statfs(&o.fs, &sv) == 0);
		fo_enqueue(&o, EROFS_FS_ROOT_INO);
		for (i = 0; i < o.nqueue; i++)
			fo_visit(&o, o.queue[i]);
		FZ_CHECK(o.fs.cache_used <= o.fs.cache_bytes);
		if (fz_verbose)
			fprintf(stderr, "fuzz: %zu inodes, %lu problem(s), cache %llu hits %llu misses\n",
				o.nqueue, o.f.problems, (unsigned long long)o.fs.hits,
				(unsigned long long)o.fs.misses);
		erofs_fs_close(&o.fs);
	}
	free(o.queue);
	fz_free(&o.f);
	if (fd >= 0)
		close(fd);
	free(img);
	return 0;
}
