// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: liberofs-forge's public calls
 * (include/erofs-forge/erofs-forge.h) on an image held in memory, as a
 * program linked to the library would make them: the superblock facts and
 * "needs Linux", then a walk from the root with eforge_readdir(), and for
 * every inode reached eforge_stat(), eforge_listxattr(), eforge_readlink(),
 * eforge_read() in pieces and eforge_extents(); a few eforge_lookup()s of
 * names the walk found.  The contract checked besides the sanitizers: a
 * failing call returns a negative errno and leaves a message, a read never
 * returns more than asked or past i_size, extents come in order with no
 * gap and cover the file.  Work is bounded (inodes, bytes, extents), so a
 * hostile image cannot make a run slow.  As fuzz-walk.h does, the
 * superblock checksum is fixed up unless bit 0 of byte 0 says otherwise,
 * so mutations reach past it.
 */
#include <string.h>
#include <sys/stat.h>

#include "fuzz-walk.h"

#include "erofs-forge/erofs-forge.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define API_MAX_INODES	4096
#define API_MAX_BYTES	(16u << 20)	/* read per image */
#define API_MAX_EXTENTS	65536
#define API_MAX_DEPTH	64

struct api {
	struct eforge_image *img;
	uint64_t seen[API_MAX_INODES];
	size_t nseen;
	uint64_t bytes_left;
	char some_path[1024];		/* a path the walk went down, for lookups */
	uint8_t buf[65536];
};

struct api_extents {
	uint64_t next, size;
	unsigned long count;
};

static void api_failed(struct api *a, long ret)
{
	FZ_CHECK(ret < 0 && ret >= -4095);
	FZ_CHECK(eforge_error(a->img) && eforge_error(a->img)[0]);
}

static int api_extent(void *arg, const struct eforge_extent *e)
{
	struct api_extents *s = arg;

	FZ_CHECK(e->logical == s->next && e->length && e->length <= s->size - e->logical);
	s->next = e->logical + e->length;
	if ((e->flags & EFORGE_EXTENT_COMPRESSED))
		FZ_CHECK(e->flags & EFORGE_EXTENT_MAPPED);
	return ++s->count >= API_MAX_EXTENTS;
}

static int api_xattr(void *arg, const struct eforge_xattr *x)
{
	FZ_CHECK(x->name && strlen(x->name) > 0);
	FZ_CHECK(!x->value_size || x->value);
	(void)arg;
	return 0;
}

static void api_visit(struct api *a, uint64_t nid, unsigned int depth, size_t pathlen);

struct api_dir {
	struct api *a;
	unsigned int depth;
	size_t pathlen;
};

static int api_dirent(void *arg, const struct eforge_dirent *de)
{
	struct api_dir *d = arg;
	struct api *a = d->a;
	size_t len = d->pathlen;

	FZ_CHECK(de->name_len > 0 && de->name_len <= 255 && de->name);
	if (len + 1 + de->name_len < sizeof(a->some_path)) {
		a->some_path[len] = '/';
		memcpy(a->some_path + len + 1, de->name, de->name_len);
		len += 1 + de->name_len;
		a->some_path[len] = '\0';
	}
	api_visit(a, de->nid, d->depth + 1, len);
	return a->nseen >= API_MAX_INODES;
}

static void api_visit(struct api *a, uint64_t nid, unsigned int depth, size_t pathlen)
{
	struct api_extents ext = { 0 };
	struct eforge_stat st;
	char target[4096];
	long ret;

	for (size_t i = 0; i < a->nseen; i++)
		if (a->seen[i] == nid)
			return;		/* hard links and directory loops: once */
	if (a->nseen >= API_MAX_INODES || depth > API_MAX_DEPTH)
		return;
	a->seen[a->nseen++] = nid;
	ret = eforge_stat(a->img, nid, &st);
	if (ret) {
		api_failed(a, ret);
		return;
	}
	FZ_CHECK(st.nid == nid);
	ret = eforge_listxattr(a->img, nid, api_xattr, NULL);
	if (ret < 0)
		api_failed(a, ret);
	if (S_ISLNK(st.mode)) {
		ret = eforge_readlink(a->img, nid, target, sizeof(target));
		if (ret < 0)
			api_failed(a, ret);
		else
			FZ_CHECK(strlen(target) == st.size);
	}
	if (S_ISREG(st.mode) || S_ISDIR(st.mode) || S_ISLNK(st.mode)) {
		uint64_t off = 0;

		ext.size = st.size;
		ret = eforge_extents(a->img, nid, api_extent, &ext);
		if (ret < 0)
			api_failed(a, ret);
		else if (!ret)
			FZ_CHECK(ext.next == st.size);
		while (off < st.size && a->bytes_left) {
			size_t want = sizeof(a->buf) - (off & 4095);
			ssize_t n;

			if (want > a->bytes_left)
				want = a->bytes_left;
			n = eforge_read(a->img, nid, a->buf, want, off);
			if (n < 0) {
				api_failed(a, n);
				break;
			}
			FZ_CHECK(n > 0 && (size_t)n <= want && (uint64_t)n <= st.size - off);
			off += (uint64_t)n;
			a->bytes_left -= (uint64_t)n;
		}
		if (off == st.size)
			FZ_CHECK(eforge_read(a->img, nid, a->buf, 1, off) == 0);
	}
	if (S_ISDIR(st.mode)) {
		struct api_dir d = { a, depth, pathlen };

		ret = eforge_readdir(a->img, nid, api_dirent, &d);
		if (ret < 0)
			api_failed(a, ret);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct api a;
	struct eforge_super sb;
	struct eforge_linux lx;
	unsigned int flags;
	uint8_t *img = fz_image(data, size, &flags);
	uint64_t nid;
	char err[256] = "";
	int ret;

	memset(&a, 0, offsetof(struct api, buf));
	a.bytes_left = API_MAX_BYTES;
	ret = eforge_open_mem(&a.img, img, size, err, sizeof(err));
	if (ret) {
		FZ_CHECK(ret < 0 && !a.img && err[0]);
		free(img);
		return 0;
	}
	FZ_CHECK(eforge_super(a.img, &sb) == 0 && sb.block_size >= 512);
	FZ_CHECK(eforge_needs_linux(a.img, &lx) == 0 && lx.major >= 5);
	api_visit(&a, sb.root_nid, 0, 0);
	/* lookups: the root, the deepest path the walk named, names that are not there */
	FZ_CHECK(eforge_lookup(a.img, "/", &nid) != 0 || nid == sb.root_nid);
	if (a.some_path[0] && (ret = eforge_lookup(a.img, a.some_path, &nid)) < 0)
		api_failed(&a, ret);
	ret = eforge_lookup(a.img, "/no/such/../path", &nid);
	if (ret < 0)
		api_failed(&a, ret);
	eforge_close(a.img);
	free(img);
	return 0;
}
