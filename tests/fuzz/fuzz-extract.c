// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: fsck.erofs --extract=DIR on an image held in memory.
 * The same walk as fuzz-reader.c (fuzz-walk.h), with lib/check/extract.c
 * recreating the tree in a private directory, which is emptied after each
 * input.
 *
 * The private directory is $FUZZ_EXTRACT_DIR when set (run.sh makes one
 * and removes it), else a new one under /dev/shm or $TMPDIR, removed at
 * exit.  It holds:
 *   out/     the extraction target (created by erofs_extract_open, then
 *            removed entry by entry, never following a symlink);
 *   canary/  an empty directory next to out/; a symlink in an image
 *            pointing at "../canary" is the natural way to escape out/.
 * After each input the private directory must hold exactly these two
 * entries and canary/ must still be empty, or the harness aborts: the
 * extractor wrote outside its target.
 *
 * Files are capped at FZ_FSIZE bytes (RLIMIT_FSIZE, SIGXFSZ ignored, so an
 * oversized write fails with EFBIG, which the extractor reports); work
 * is bounded as in fuzz-walk.h.  Extraction is slower than checking:
 * expect far fewer executions per second than fuzz-reader.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-walk.h"

#define FZ_FSIZE	(64ull << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[4096];
static int fz_dirfd = -1;
static bool fz_made_dir;

/* Removes name below dirfd, never following a symlink. */
static void fz_rm(int dirfd, const char *name)
{
	struct stat st;
	struct dirent *de;
	unsigned long removed;
	DIR *d;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0)) {
			fprintf(stderr, "fuzz: cannot remove %s: %s\n", name, strerror(errno));
			abort();
		}
		return;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* extracted without search or read permission */
		fchmodat(dirfd, name, 0700, 0);
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		fprintf(stderr, "fuzz: cannot open %s: %s\n", name, strerror(errno));
		abort();
	}
	fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d)
		abort();
	/* entries removed while reading may hide others: pass until empty */
	do {
		removed = 0;
		rewinddir(d);
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			fz_rm(fd, de->d_name);
			removed++;
		}
	} while (removed);
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR)) {
		fprintf(stderr, "fuzz: cannot remove directory %s: %s\n", name, strerror(errno));
		abort();
	}
}

static void fz_cleanup(void)
{
	if (fz_dirfd < 0)
		return;
	fz_rm(fz_dirfd, "out");
	if (fz_made_dir) {
		fz_rm(fz_dirfd, "canary");
		close(fz_dirfd);
		fz_dirfd = -1;
		rmdir(fz_dir);
	}
}

/* Nothing but out/ and an empty canary/ may be in the private directory. */
static void fz_check_confined(void)
{
	int fd = dup(fz_dirfd), n = 0;
	struct dirent *de;
	DIR *d;

	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d)
		abort();
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (strcmp(de->d_name, "out") && strcmp(de->d_name, "canary")) {
			fprintf(stderr, "fuzz: extraction wrote '%s' outside its target\n", de->d_name);
			abort();
		}
		n++;
	}
	closedir(d);
	FZ_CHECK(n <= 2);
	fd = openat(fz_dirfd, "canary", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	FZ_CHECK(fd >= 0);
	d = fdopendir(fd);
	if (!d)
		abort();
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			fprintf(stderr, "fuzz: extraction wrote canary/%s outside its target\n",
				de->d_name);
			abort();
		}
	}
	closedir(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("FUZZ_EXTRACT_DIR");
	struct rlimit rl = { FZ_FSIZE, FZ_FSIZE };

	(void)argc;
	(void)argv;
	fz_verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (env && *env) {
		snprintf(fz_dir, sizeof(fz_dir), "%s", env);
		if (mkdir(fz_dir, 0700) && errno != EEXIST) {
			perror(fz_dir);
			exit(1);
		}
	} else {
		const char *tmp = access("/dev/shm", W_OK) ? getenv("TMPDIR") : "/dev/shm";

		snprintf(fz_dir, sizeof(fz_dir), "%s/erofs-fuzz-extract.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fz_dir)) {
			perror(fz_dir);
			exit(1);
		}
		fz_made_dir = true;
	}
	fz_dirfd = open(fz_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fz_dirfd < 0) {
		perror(fz_dir);
		exit(1);
	}
	fz_rm(fz_dirfd, "out");		/* left over from a crash */
	if (mkdirat(fz_dirfd, "canary", 0700) && errno != EEXIST) {
		perror("canary");
		exit(1);
	}
	setrlimit(RLIMIT_FSIZE, &rl);
	signal(SIGXFSZ, SIG_IGN);
	atexit(fz_cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct erofs_extract_opts xo = { false, false, false, false, true };
	struct erofs_extractor x;
	unsigned int flags;
	uint8_t *img = fz_image(data, size, &flags);
	char target[sizeof(fz_dir) + 8];
	struct fz f;
	int fd, err;

	fz_init(&f);
	err = fz_open(&f, img, size, flags, &fd);
	if (err) {
		fz_failed(&f, err);
	} else {
		snprintf(target, sizeof(target), "%s/out", fz_dir);
		if (erofs_extract_open(&x, &f.r, target, &xo))
			abort();	/* a fresh, empty directory of ours */
		fz_walk(&f, &x);
		while (f.depth)	/* closes the directories' descriptors */
			fz_pop_dir(&f);
		if (fz_verbose)
			fprintf(stderr, "fuzz: %zu inodes, %lu problem(s), extraction: %lu error(s), %lu warning(s)\n",
				f.nids.count, f.problems, x.errors, x.warnings);
		erofs_extract_close(&x);
	}
	fz_free(&f);
	if (fd >= 0)
		close(fd);
	free(img);
	fz_check_confined();
	fz_rm(fz_dirfd, "out");
	return 0;
}
