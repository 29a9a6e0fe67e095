// SPDX-License-Identifier: MIT
/* The image file and its data area (see include/erofs/build/image.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erofs/common/diag.h"
#include "erofs/build/image.h"
#include "erofs/common/io.h"

#define COPY_BUFFER		(1u << 20)
#define HOLE_CHECK_MIN		(64u << 10)	/* smaller copies do not look for holes */

/*
 * Where O_TMPFILE is not available, a named temporary file must go when the
 * build is interrupted.  A signal handler can only reach it through static
 * storage: this is the one piece of global state, set while such a file
 * exists and read only by the handler.
 */
static char interrupted_cleanup[PATH_MAX];
static volatile sig_atomic_t cleanup_armed;

static void remove_on_signal(int sig)
{
	if (cleanup_armed)
		unlink(interrupted_cleanup);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void arm_cleanup(const char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	if (strlen(path) >= sizeof(interrupted_cleanup))
		return;
	strcpy(interrupted_cleanup, path);
	cleanup_armed = 1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa = { .sa_handler = remove_on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static void disarm_cleanup(void)
{
	cleanup_armed = 0;
}

/*
 * --incremental writes into the old image: its first block and size are
 * all an interrupted build must put back.  The same one piece of state for
 * the handler, as above (pwrite and ftruncate are async-signal-safe).
 */
static uint8_t append_block0[4096];
static size_t append_len;
static int append_fd = -1;
static off_t append_size;
static volatile sig_atomic_t append_armed;
/* --incremental in place: old records written over, put back newest first */
struct undo_record {
	uint64_t pos;
	size_t len;
	uint8_t *old;
};
static struct undo_record *volatile undo;
static volatile size_t undo_count;

static void append_rollback(void)
{
	bool restored = true;

	if (!append_armed)
		return;
	append_armed = 0;
	for (size_t i = undo_count; i-- > 0; )
		restored &= pwrite(append_fd, undo[i].old, undo[i].len, (off_t)undo[i].pos) ==
			    (ssize_t)undo[i].len;
	if (restored && pwrite(append_fd, append_block0, append_len, 0) == (ssize_t)append_len)
		(void)!ftruncate(append_fd, append_size);
	fsync(append_fd);
}

/* Forgets the old bytes (the build is committed, or rolled back). */
static void undo_release(void)
{
	struct undo_record *list = undo;
	size_t n = undo_count;
	sigset_t all, was;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &was);
	undo = NULL;
	undo_count = 0;
	sigprocmask(SIG_SETMASK, &was, NULL);
	for (size_t i = 0; i < n; i++)
		free(list[i].old);
	free(list);
}

static void rollback_on_signal(int sig)
{
	append_rollback();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void arm_append_rollback(int fd, off_t size)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	append_fd = fd;
	append_size = size;
	append_armed = 1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa = { .sa_handler = rollback_on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static bool is_device(const char *path)
{
	struct stat st;

	return !stat(path, &st) && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode));
}

/*
 * A device is written once the image is complete: it is built in a scratch
 * file meanwhile (erofs_scratch_open() puts it in $TMPDIR or /var/tmp).
 */
static int open_device(struct erofs_image *img)
{
	img->in_place = true;
	img->device_fd = open(img->final_path, O_RDWR | O_CLOEXEC);
	if (img->device_fd < 0) {
		int err = errno;

		erofs_err("%s: cannot open the device: %s", img->final_path, strerror(err));
		return -err;
	}
	img->fd = erofs_scratch_open(img->final_path);
	return img->fd < 0 ? img->fd : 0;
}

/* The directory a path is in, as open(2) takes it. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* A named temporary file beside the target, removed if the build is interrupted. */
static int open_named_tmp(struct erofs_image *img)
{
	size_t len = strlen(img->target_path);
	mode_t mask;

	img->tmp_path = malloc(len + sizeof(".tmp-XXXXXX"));
	if (!img->tmp_path)
		return -ENOMEM;
	memcpy(img->tmp_path, img->target_path, len);
	memcpy(img->tmp_path + len, ".tmp-XXXXXX", sizeof(".tmp-XXXXXX"));
	img->fd = mkostemp(img->tmp_path, O_CLOEXEC);
	if (img->fd < 0) {
		int err = errno;

		erofs_err("%s: cannot create the image: %s", img->final_path, strerror(err));
		free(img->tmp_path);
		img->tmp_path = NULL;
		return -err;
	}
	arm_cleanup(img->tmp_path);
	/* mkostemp makes 0600; an image is as readable as any new file */
	mask = umask(0);
	umask(mask);
	if (fchmod(img->fd, 0666 & ~mask))
		erofs_warn("%s: cannot set the image mode: %s", img->final_path, strerror(errno));
	return 0;
}

int erofs_image_open(struct erofs_image *img, const char *final_path, uint64_t offset,
		     unsigned int blkszbits, uint32_t first_blk)
{
	struct stat st;
	char *dir;

	memset(img, 0, sizeof(*img));
	img->fd = img->device_fd = -1;
	img->final_path = final_path;
	img->blkszbits = blkszbits;
	img->next_blk = first_blk;
	img->offset = offset;
	if (is_device(final_path))
		return open_device(img);
	if (offset) {		/* the file is truncated and written at commit */
		img->in_place = true;
		img->fd = erofs_scratch_open(final_path);
		return img->fd < 0 ? img->fd : 0;
	}
	/* through a symlink: replace its target, so the link stays */
	if (!lstat(final_path, &st) && S_ISLNK(st.st_mode))
		img->target_path = realpath(final_path, NULL);
	if (!img->target_path && !(img->target_path = strdup(final_path)))
		return -ENOMEM;
	dir = dir_of(img->target_path);
	if (!dir)
		return -ENOMEM;
	/* unnamed until complete: nothing is left behind, whatever happens */
	img->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	free(dir);
	if (img->fd >= 0)
		return 0;
	return open_named_tmp(img);
}

/* A device cannot grow: it must hold the whole image. */
static int check_device_size(struct erofs_image *img, uint64_t size)
{
	uint64_t dev_size = 0;
	struct stat st;

	if (!fstat(img->device_fd, &st) && S_ISBLK(st.st_mode) &&
	    !ioctl(img->device_fd, BLKGETSIZE64, &dev_size) && dev_size < size) {
		erofs_err("%s: the device holds %llu bytes, the image needs %llu",
			  img->final_path, (unsigned long long)dev_size,
			  (unsigned long long)size);
		return -ENOSPC;
	}
	return 0;
}

int erofs_image_resize(struct erofs_image *img, uint64_t size)
{
	if (ftruncate(img->fd, (off_t)size)) {
		int err = errno;

		erofs_err("%s: cannot set the image size: %s",
			  img->in_place ? "temporary image file" : img->final_path, strerror(err));
		return -err;
	}
	img->size = size;
	/* --incremental: what the superblock will point at is on disk before it */
	if (img->append && fsync(img->fd)) {
		int err = errno;

		erofs_err("%s: %s", img->final_path, strerror(err));
		return -err;
	}
	return 0;
}

/* The finished image onto the device; returns 1 once the device was written to. */
static int copy_to_device(struct erofs_image *img, int *err)
{
	uint8_t *buf = malloc(COPY_BUFFER);
	int touched = 0;

	if (img->device_fd < 0) {	/* --offset into a regular file */
		img->device_fd = open(img->final_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				      0666);
		if (img->device_fd < 0) {
			*err = -errno;
			erofs_err("%s: cannot open: %s", img->final_path, strerror(-*err));
			free(buf);
			return 0;
		}
	}
	*err = buf ? check_device_size(img, img->offset + img->size) : -ENOMEM;
	for (uint64_t pos = 0; !*err && pos < img->size; pos += COPY_BUFFER) {
		size_t n = img->size - pos < COPY_BUFFER ? (size_t)(img->size - pos) : COPY_BUFFER;

		if ((*err = erofs_pread_all(img->fd, buf, n, pos))) {
			erofs_err("temporary image file: read failed: %s", strerror(-*err));
			break;
		}
		touched = 1;
		if ((*err = erofs_pwrite_all(img->device_fd, buf, n, img->offset + pos)))
			erofs_err("%s: write failed: %s", img->final_path, strerror(-*err));
	}
	if (!*err && fsync(img->device_fd) && errno != EINVAL) {
		*err = -errno;
		erofs_err("%s: cannot finish the image: %s", img->final_path, strerror(-*err));
	}
	free(buf);
	return touched;
}

int erofs_image_open_append(struct erofs_image *img, const char *final_path,
			    unsigned int blkszbits, uint32_t first_blk)
{
	struct stat st;
	ssize_t n;
	int err;

	memset(img, 0, sizeof(*img));
	img->device_fd = -1;
	img->final_path = final_path;
	img->blkszbits = blkszbits;
	img->next_blk = first_blk;
	img->append = true;
	img->fd = open(final_path, O_RDWR | O_CLOEXEC);
	if (img->fd < 0 || fstat(img->fd, &st)) {
		err = errno;
		erofs_err("%s: cannot open the image to add to: %s", final_path, strerror(err));
		if (img->fd >= 0)
			close(img->fd);
		img->fd = -1;
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		erofs_err("%s: the image to add to is not a regular file", final_path);
		close(img->fd);
		img->fd = -1;
		return -EINVAL;
	}
	img->append_from = (uint64_t)st.st_size;
	img->written_end = img->append_from;
	/* what the new superblock overwrites, to put back on failure */
	append_len = img->append_from < sizeof(append_block0) ? (size_t)img->append_from
							      : sizeof(append_block0);
	n = pread(img->fd, append_block0, append_len, 0);
	if (n != (ssize_t)append_len) {
		err = n < 0 ? errno : EIO;
		erofs_err("%s: cannot read the image to add to: %s", final_path, strerror(err));
		close(img->fd);
		img->fd = -1;
		return -err;
	}
	arm_append_rollback(img->fd, (off_t)img->append_from);
	return 0;
}

/* Links the unnamed file at path (which must not exist). */
static int link_unnamed(int fd, const char *path)
{
	char proc[64];

	if (!linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH))
		return 0;
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc does not */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

/*
 * Gives the unnamed file its name: linked under a fresh name beside the
 * target, then renamed over it, so an existing image is replaced at once.
 */
static int name_unnamed(struct erofs_image *img)
{
	size_t len = strlen(img->target_path);
	char *tmp = malloc(len + 32);
	unsigned int seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
	sigset_t all, old;
	int err = -EEXIST;

	if (!tmp)
		return -ENOMEM;
	/* no signal between the link and the rename, which would leave the name */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (unsigned int attempt = 0; err == -EEXIST && attempt < 100; attempt++) {
		snprintf(tmp, len + 32, "%s.tmp-%08x", img->target_path, seed + attempt * 7919u);
		err = link_unnamed(img->fd, tmp);
	}
	if (!err && rename(tmp, img->target_path)) {
		err = -errno;
		unlink(tmp);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(tmp);
	return err;
}

static void release_paths(struct erofs_image *img)
{
	free(img->tmp_path);
	free(img->target_path);
	img->tmp_path = img->target_path = NULL;
}

int erofs_image_commit(struct erofs_image *img)
{
	int err = 0;

	if (img->append) {	/* the superblock is written: it only has to last */
		if (fsync(img->fd))
			err = -errno;
		if (err)
			append_rollback();
		if (close(img->fd) && !err)
			err = -errno;
		img->fd = -1;
		if (err) {
			erofs_err("%s: cannot finish the image: %s", img->final_path, strerror(-err));
			return err;
		}
		append_armed = 0;
		undo_release();
		return 0;
	}

	if (img->in_place) {
		bool touched = copy_to_device(img, &err);

		close(img->fd);
		img->fd = -1;
		if (close(img->device_fd) && !err)
			err = -errno;
		img->device_fd = -1;
		if (err && touched)
			erofs_err("%s: the device now holds an incomplete image", img->final_path);
		return err;
	}
	err = img->tmp_path ? (rename(img->tmp_path, img->target_path) ? -errno : 0)
			    : name_unnamed(img);
	if (close(img->fd) && !err)
		err = -errno;
	img->fd = -1;
	if (err) {
		erofs_err("%s: cannot finish the image: %s", img->final_path, strerror(-err));
		erofs_image_abort(img);
		return err;
	}
	disarm_cleanup();
	release_paths(img);
	return 0;
}

void erofs_image_abort(struct erofs_image *img)
{
	if (img->append && img->fd >= 0)
		append_rollback();	/* the old image, as it was */
	if (img->append)
		undo_release();
	img->append = false;
	if (img->fd >= 0)
		close(img->fd);
	if (img->device_fd >= 0)
		close(img->device_fd);
	img->fd = img->device_fd = -1;
	if (img->tmp_path) {
		unlink(img->tmp_path);
		disarm_cleanup();
	}
	release_paths(img);
}

int erofs_image_alloc(struct erofs_image *img, uint32_t n, uint32_t *blk)
{
	if ((uint64_t)img->next_blk + n > UINT32_MAX) {
		erofs_err("%s: the image needs more than 2^32 blocks of %u bytes",
			  img->final_path, 1u << img->blkszbits);
		return -EFBIG;
	}
	*blk = img->next_blk;
	img->next_blk += n;
	return 0;
}

void erofs_image_rewind(struct erofs_image *img, uint32_t blk)
{
	img->next_blk = blk;
}

static int write_failed(struct erofs_image *img, int err)
{
	if (!img->error) {
		img->error = err;
		erofs_err("%s: write failed: %s", img->final_path, strerror(-err));
	}
	return img->error;
}

int erofs_image_pwrite(struct erofs_image *img, const void *buf, size_t len, uint64_t pos)
{
	int err;

	if (img->error)
		return img->error;
	if ((err = erofs_pwrite_all(img->fd, buf, len, pos)))
		return write_failed(img, err);
	if (pos + len > img->written_end)
		img->written_end = pos + len;
	return 0;
}

int erofs_image_overwrite(struct erofs_image *img, const void *buf, size_t len, uint64_t pos)
{
	struct undo_record *bigger;
	uint8_t *old = malloc(len ? len : 1);
	sigset_t all, was;
	int err;

	if (!img->append || pos + len > img->append_from) {
		free(old);
		erofs_err("internal error: an overwrite outside the image added to");
		return -EINVAL;
	}
	if (!old)
		return -ENOMEM;
	if ((err = erofs_pread_all(img->fd, old, len, pos))) {
		free(old);
		return write_failed(img, err);
	}
	/* the signal handler sees the list whole, before and after */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &was);
	bigger = realloc(undo, (undo_count + 1) * sizeof(*bigger));
	if (bigger) {
		bigger[undo_count] = (struct undo_record){ .pos = pos, .len = len, .old = old };
		undo = bigger;
		undo_count++;
	}
	sigprocmask(SIG_SETMASK, &was, NULL);
	if (!bigger) {
		free(old);
		return -ENOMEM;
	}
	return erofs_image_pwrite(img, buf, len, pos);
}

int erofs_image_pread(struct erofs_image *img, void *buf, size_t len, uint64_t pos)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(img->fd, p, len, (off_t)pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			erofs_err("%s: cannot read back: %s", img->final_path, strerror(-err));
			return err;
		}
		if (!n) {	/* past the end so far: holes, which the final size makes zeros */
			memset(p, 0, len);
			break;
		}
		p += n;
		len -= (size_t)n;
		pos += (uint64_t)n;
	}
	return 0;
}

int erofs_image_zero(struct erofs_image *img, uint64_t pos, uint64_t len)
{
	static const uint8_t zeros[65536];

	if (img->error)
		return img->error;
	/* past everything written, the image's final size makes it zeros */
	if (pos >= img->written_end)
		return 0;
	if (!fallocate(img->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)pos, (off_t)len))
		return 0;
	/* a filesystem without holes: write the zeros */
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		int err = erofs_image_pwrite(img, zeros, n, pos);

		if (err)
			return err;
		pos += n;
		len -= n;
	}
	return 0;
}

/* Copies without holes: in the kernel if it can, else through a buffer. */
static int copy_data(struct erofs_image *img, uint64_t pos, int src_fd, uint64_t src_pos,
		     uint64_t len)
{
	uint64_t done = 0;
	uint8_t *buf;

#ifdef HAVE_COPY_FILE_RANGE
	{
		loff_t in = (loff_t)src_pos, out = (loff_t)pos;

		while (done < len) {
			ssize_t n = copy_file_range(src_fd, &in, img->fd, &out,
						    (size_t)(len - done), 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += (uint64_t)n;
		}
		if (done && pos + done > img->written_end)
			img->written_end = pos + done;
		if (done == len)
			return 0;
		/* the rest through user memory, which alone can tell whether
		 * the source (EIO, shrank) or the image (ENOSPC) failed */
	}
#endif
	buf = malloc(len - done < COPY_BUFFER ? (size_t)(len - done) : COPY_BUFFER);
	if (!buf)
		return -ENOMEM;
	while (done < len) {
		size_t chunk = len - done < COPY_BUFFER ? (size_t)(len - done) : COPY_BUFFER;
		int err = erofs_pread_all(src_fd, buf, chunk, src_pos + done);

		if (!err)
			err = erofs_image_pwrite(img, buf, chunk, pos + done);
		if (err) {
			free(buf);
			return err;
		}
		done += chunk;
	}
	free(buf);
	return 0;
}

int erofs_image_copy(struct erofs_image *img, uint64_t pos, int src_fd, uint64_t src_pos,
		     uint64_t len)
{
	const uint64_t end = src_pos + len;

	if (img->error)
		return img->error;
	if (len < HOLE_CHECK_MIN)
		return copy_data(img, pos, src_fd, src_pos, len);
	while (src_pos < end) {
		off_t data = lseek(src_fd, (off_t)src_pos, SEEK_DATA), hole;
		int err;

		if (data < 0 && errno != ENXIO)	/* no SEEK_DATA here: copy it all */
			return copy_data(img, pos, src_fd, src_pos, end - src_pos);
		if (data < 0 || (uint64_t)data >= end)	/* a hole to the end */
			return erofs_image_zero(img, pos, end - src_pos);
		if ((uint64_t)data > src_pos) {
			if ((err = erofs_image_zero(img, pos, (uint64_t)data - src_pos)))
				return err;
			pos += (uint64_t)data - src_pos;
			src_pos = (uint64_t)data;
		}
		hole = lseek(src_fd, (off_t)src_pos, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > end)
			hole = (off_t)end;
		if ((err = copy_data(img, pos, src_fd, src_pos, (uint64_t)hole - src_pos)))
			return err;
		pos += (uint64_t)hole - src_pos;
		src_pos = (uint64_t)hole;
	}
	return 0;
}
