// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: dump.erofs itself.  dump/main.c is compiled into this
 * file with its main() renamed (lib/dump*.c, what it runs, is linked), and
 * each input is shown, on a memfd holding the image (the superblock
 * checksum resealed as in fuzz-walk.h), with every option:
 *     dump.erofs -s -S IMG
 *     dump.erofs --path=/ --ls -e -x IMG
 *     dump.erofs --nid=N --ls -e -x IMG      N from bytes 2-3 of the input
 *     dump.erofs --path=P -e -x IMG          P from bytes 4-15 (a name or two)
 *     dump.erofs --nid=N --cat IMG
 * Bytes 1..1023 are unused by the format (the superblock is at 1024), so
 * the fuzzer steers N and P there.  Every run must end with exit status 0
 * or 1 (2 is an operational error, impossible on a memfd); the sanitizers
 * catch the rest.  Standard output goes to /dev/null;
 * messages are formatted, and printed with FUZZ_VERBOSE set.
 */
#include "fuzz-walk.h"
#include "erofs/common/ondisk.h"

#define main dump_main
#include "../../dump/main.c"
#undef main

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static void fz_dump(const char *path, const char *a1, const char *a2, const char *a3,
		    const char *a4)
{
	char *argv[7];
	int argc = 0, ret;

	argv[argc++] = (char *)"dump.erofs";
	if (a1)
		argv[argc++] = (char *)a1;
	if (a2)
		argv[argc++] = (char *)a2;
	if (a3)
		argv[argc++] = (char *)a3;
	if (a4)
		argv[argc++] = (char *)a4;
	argv[argc++] = (char *)path;
	argv[argc] = NULL;
	optind = 0;	/* glibc: start getopt afresh */
	ret = dump_main(argc, argv);
	FZ_CHECK(ret == EXIT_OK || ret == EXIT_CORRUPT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags;
	uint8_t *img = fz_image(data, size, &flags);
	char path[64], nid[32], target[40], *t = target + 7;
	int fd = fz_memfd(img, size);
	size_t i;

	free(img);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	snprintf(nid, sizeof(nid), "--nid=%u", size >= 4 ? (unsigned int)get_le16(data + 2) : 0u);
	/* a path of printable bytes, '/' included, up to the first NUL */
	memcpy(target, "--path=", 7);
	for (i = 4; i < 16 && i < size && data[i]; i++)
		*t++ = (char)(0x20 + data[i] % 0x5f);
	*t = '\0';

	fz_dump(path, "-s", "-S", NULL, NULL);
	fz_dump(path, "--path=/", "--ls", "-e", "-x");
	fz_dump(path, nid, "--ls", "-e", "-x");
	fz_dump(path, target, "-e", "-x", NULL);
	fz_dump(path, nid, "--cat", NULL, NULL);
	close(fd);
	return 0;
}
