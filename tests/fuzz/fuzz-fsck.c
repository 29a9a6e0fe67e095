// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: fsck.erofs itself.  fsck/main.c is compiled into this
 * file with its main() renamed (lib/check/check-image.c, the check it runs, is linked),
 * and each input is checked by running
 *     fsck.erofs -d 9 /proc/self/fd/N
 * on a memfd that holds the image (the superblock checksum resealed as in
 * fuzz-walk.h).  This covers what fuzz-reader.c re-creates with library
 * calls but cannot reach: fsck's own bookkeeping (the block bitmap, extent
 * and decode caches, overlap and link-count checks, xattr duplicates, its
 * messages at the highest debug level) and the reader's pread path.
 *
 * Byte 0 of the image (unused, before the superblock) also picks options:
 *   bit 2  --workers=3 (else --workers=1): the job queue and its threads,
 *          each with a reader clone and scanner (lib/check/fsckq.c, lib/check/check-image.c)
 *   bit 3  --nid=N, N = bytes 1..2: a walk from any inode, ".." unknown
 *   bit 4  --path=P, P = bytes 16..63 (up to the first NUL): the lookup
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
	char path[64], nid[32], ipath[64], *argv[8];
	int fd = fz_memfd(img, size), ret, argc = 0;
	uint8_t opts = size ? data[0] : 0;
	/* an image whose device table lists devices needs --device: a usage error */
	bool wants_devices = size >= 1024 + 0x58 && (img[1024 + 0x50] & 0x08) &&
			     (img[1024 + 0x56] || img[1024 + 0x57]);

	free(img);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	argv[argc++] = (char *)"fsck.erofs";
	argv[argc++] = (char *)"-d9";
	argv[argc++] = (char *)(opts & 4 ? "--workers=3" : "--workers=1");
	if ((opts & 8) && size >= 3) {
		snprintf(nid, sizeof(nid), "--nid=%u", data[1] | (unsigned int)data[2] << 8);
		argv[argc++] = nid;
	}
	if ((opts & 16) && size >= 64) {
		size_t n = strnlen((const char *)data + 16, 48);

		memcpy(ipath, "--path=", 7);
		memcpy(ipath + 7, data + 16, n);
		ipath[7 + n] = '\0';
		if (n)
			argv[argc++] = ipath;
	}
	argv[argc++] = path;
	argv[argc] = NULL;
	optind = 0;	/* glibc: start getopt afresh */
	ret = fsck_main(argc, argv);
	/* EXIT_USAGE: a --path that names nothing, or devices the image wants */
	FZ_CHECK(ret == EXIT_CLEAN || ret == EXIT_CORRUPT ||
		 (ret == EXIT_USAGE && ((opts & 16) || wants_devices)));
	close(fd);
	return 0;
}
