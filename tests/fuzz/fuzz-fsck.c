// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: fsck.erofs itself.  fsck/main.c is compiled into this
 * file with its main() renamed (lib/check.c, the check it runs, is linked),
 * and each input is checked by running
 *     fsck.erofs -d 9 /proc/self/fd/N
 * on a memfd that holds the image (the superblock checksum resealed as in
 * fuzz-walk.h).  This covers what fuzz-reader.c re-creates with library
 * calls but cannot reach: fsck's own bookkeeping (the block bitmap, extent
 * and decode caches, overlap and link-count checks, xattr duplicates, its
 * messages at the highest debug level) and the reader's pread path.
 */
#include "fuzz-walk.h"

#define main fsck_main
#include "../../fsck/main.c"
#undef main

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_verbose = getenv("FUZZ_VERBOSE") != NULL;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags;
	uint8_t *img = fz_image(data, size, &flags);
	char path[64], *argv[5];
	int fd = fz_memfd(img, size), ret;
	/* an image whose device table lists devices needs --device: a usage error */
	bool wants_devices = size >= 1024 + 0x58 && (img[1024 + 0x50] & 0x08) &&
			     (img[1024 + 0x56] || img[1024 + 0x57]);

	free(img);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	argv[0] = (char *)"fsck.erofs";
	argv[1] = (char *)"-d";
	argv[2] = (char *)"9";
	argv[3] = path;
	argv[4] = NULL;
	optind = 0;	/* glibc: start getopt afresh */
	ret = fsck_main(4, argv);
	FZ_CHECK(ret == EXIT_CLEAN || ret == EXIT_CORRUPT || (wants_devices && ret == EXIT_USAGE));
	close(fd);
	return 0;
}
