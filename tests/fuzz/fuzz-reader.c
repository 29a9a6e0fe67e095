// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: fsck.erofs's whole check of an image held in memory
 * (superblock, every reachable inode, directories, xattrs, symlinks, all
 * data incl. compressed and chunk-based files, link counts), through the
 * reader library.  With bit 1 of byte 0 set, the image is also read through
 * a descriptor, as fsck reads it, and the two walks must agree.  See
 * fuzz-walk.h for what is checked and bounded, and tests/fuzz/README.md
 * for how to build and run it.
 */
#include <unistd.h>

#include "fuzz-walk.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_verbose = getenv("FUZZ_VERBOSE") != NULL;
	return 0;
}

struct fz_result {
	uint64_t digest;
	unsigned long problems;
	size_t inodes;
};

static void fz_check_image(const uint8_t *img, size_t size, unsigned int flags,
			   struct fz_result *res)
{
	struct fz f;
	int fd, err;

	fz_init(&f);
	err = fz_open(&f, img, size, flags, &fd);
	if (err) {
		fz_failed(&f, err);
	} else {
		FZ_CHECK(f.r.size <= size);
		fz_walk(&f, NULL);
	}
	if (fz_verbose)
		fprintf(stderr, "fuzz: %s: %zu inodes, %llu bytes read, %lu problem(s); last: %s\n",
			flags & FZ_USE_FD ? "fd" : "memory", f.nids.count,
			(unsigned long long)(FZ_DATA_BUDGET - f.data_left),
			f.problems, erofs_reader_error(&f.r));
	res->digest = f.sink;
	res->problems = f.problems;
	res->inodes = f.nids.count;
	fz_free(&f);
	if (fd >= 0)
		close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags;
	uint8_t *img = fz_image(data, size, &flags);
	struct fz_result a, b;

	fz_check_image(img, size, flags & ~FZ_USE_FD, &a);
	if (flags & FZ_USE_FD) {
		fz_check_image(img, size, flags, &b);
		FZ_CHECK(a.digest == b.digest && a.problems == b.problems &&
			 a.inodes == b.inodes);
	}
	free(img);
	return 0;
}
