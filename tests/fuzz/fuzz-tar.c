// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the tar source (lib/source/tar.c, lib/source/tario.c, lib/source/tarsrc.c),
 * the whole of mkfs.erofs --tar=f up to the data pipeline.  Byte 0 of an
 * input picks how the rest is read: bit 0 through a pipe (no seeking, data
 * spooled) instead of a memfd (read in place); bits 1-2 the decoder (plain,
 * gzip, xz, zstd); bit 3 --aufs, bit 4 --ovlfs-strip=1, bit 5 --sort=none,
 * bit 6 -x -1 (no xattrs).  The sink checks what the source hands over:
 * regular files with data, each once, whose bytes lie inside the data file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/common/build.h"
#include "erofs/source/tarsrc.h"
#include "erofs/source/tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "contract broken at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	abort(); } } while (0)

struct seen {
	const struct erofs_tree *tree;
	size_t files;
};

static int sink(void *arg, struct erofs_inode *const *files, size_t n)
{
	struct seen *s = arg;
	const struct erofs_tree *tree = s->tree;

	for (size_t i = 0; i < n; i++) {
		const struct erofs_inode *inode = files[i];
		int fd = erofs_tree_open_file(tree, inode, NULL);
		struct stat st;

		CHECK(erofs_inode_is_reg(inode) && inode->size && inode->nlink >= 1);
		CHECK(fd >= 0 && !fstat(fd, &st));
		CHECK(erofs_tree_data_base(tree, inode) + inode->size <= (uint64_t)st.st_size);
		close(fd);
		s->files++;
	}
	return 0;
}

/* The input as a file mkfs can open: a pipe (filled up front) or a memfd. */
static int input_fd(const uint8_t *data, size_t size, bool pipe_wanted)
{
	int fds[2];

	if (pipe_wanted && !pipe2(fds, O_CLOEXEC) &&
	    fcntl(fds[1], F_SETPIPE_SZ, size > 4096 ? (int)size : 4096) >= (int)size) {
		CHECK(write(fds[1], data, size) == (ssize_t)size);
		close(fds[1]);
		return fds[0];
	}
	if (pipe_wanted) {
		close(fds[0]);
		close(fds[1]);
	}
	fds[0] = memfd_create("tar", MFD_CLOEXEC);
	CHECK(fds[0] >= 0 && write(fds[0], data, size) == (ssize_t)size);
	lseek(fds[0], 0, SEEK_SET);
	return fds[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size ? data[0] : 0;
	struct erofs_build_options opts = {
		.blkszbits = 12, .force_uid = -1, .force_gid = -1, .inline_data = true,
		.xattr_tolerance = flags & 64 ? -1 : 2, .pcluster_size = 4096,
		.share_identical_files = true, .tar = true,
		.tar_decoder = (enum erofs_tar_decoder)((flags >> 1) & 3),
		.aufs = flags & 8, .ovlfs_strip = flags & 16, .tar_sort_none = flags & 32,
		.image = "/tmp/fuzz-tar.img",
	};
	struct erofs_tree tree = { .source_dirfd = -1 };
	struct erofs_tar_source src = { .opts = &opts, .tree = &tree };
	struct seen seen = { .tree = &tree };
	char path[64];
	int fd = input_fd(data + !!size, size - !!size, flags & 1), err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	opts.source = path;
	err = erofs_tar_source_run(&src, sink, &seen);
	CHECK(err <= 0);
	if (!err) {
		CHECK(tree.root && erofs_inode_is_dir(tree.root));
		CHECK(seen.files <= tree.nr_files);
	}
	erofs_tree_free(&tree);
	close(fd);
	return 0;
}
