/* SPDX-License-Identifier: MIT */
/*
 * guest-loop: read-only loop devices over a window of a disk (QEMU guest).
 *
 *   guest-loop attach DISK OFFSET SIZE   prints the new /dev/loopN
 *   guest-loop detach /dev/loopN
 *
 * Busybox losetup cannot set a size limit.  Without one, an image that is
 * too short would silently read its neighbour on the shared data disk, so
 * this uses LOOP_CONFIGURE with lo_offset and lo_sizelimit: reads past the
 * image end fail like on a real device of that size.
 * Built statically by qemu-tests/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/*
 * Attach a read-only loop device over [OFF, OFF + SIZE) of DISK; its name
 * goes to DEV.  Returns 0, or -1 with errno set and *WHAT naming the step
 * that failed.  Also used by fuzz-guest.c (GUEST_LOOP_NO_MAIN).
 */
static int loop_attach(const char *disk, unsigned long long off, unsigned long long size,
		       char *dev, size_t devlen, const char **what)
{
	struct loop_config cfg;
	int ctl, nr, lfd = -1, bfd, ret = -1, err;

	*what = disk;
	bfd = open(disk, O_RDONLY | O_CLOEXEC);
	if (bfd < 0)
		return -1;
	*what = "/dev/loop-control";
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		goto out_bfd;
	for (int tries = 0; tries < 16; tries++) {
		*what = "LOOP_CTL_GET_FREE";
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0)
			goto out;
		snprintf(dev, devlen, "/dev/loop%d", nr);
		*what = dev;
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0)
			goto out;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned int)bfd;
		cfg.info.lo_offset = off;
		cfg.info.lo_sizelimit = size;
		cfg.info.lo_flags = LO_FLAGS_READ_ONLY;
		*what = "LOOP_CONFIGURE";
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			ret = 0;
			goto out;
		}
		if (errno != EBUSY)	/* EBUSY: lost a race, take another */
			goto out;
		close(lfd);
		lfd = -1;
	}
	*what = "no free loop device";
	errno = EBUSY;
out:
	err = errno;
	if (lfd >= 0)
		close(lfd);
	close(ctl);
	errno = err;
out_bfd:
	err = errno;
	close(bfd);	/* the loop device keeps its own reference */
	errno = err;
	return ret;
}

/* Detach DEV; returns 0, or -1 with errno set and *WHAT naming the step. */
static int loop_detach(const char *dev, const char **what)
{
	int fd = open(dev, O_RDONLY | O_CLOEXEC), err;

	*what = dev;
	if (fd < 0)
		return -1;
	*what = "LOOP_CLR_FD";
	for (int tries = 0; ioctl(fd, LOOP_CLR_FD) < 0; tries++) {
		if (errno != EBUSY || tries == 50) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		usleep(100000);	/* still held briefly after umount */
	}
	close(fd);
	return 0;
}

#ifndef GUEST_LOOP_NO_MAIN
static int fail(const char *what)
{
	fprintf(stderr, "guest-loop: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	const char *what;
	char dev[32];

	if (argc == 5 && !strcmp(argv[1], "attach")) {
		if (loop_attach(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
				dev, sizeof(dev), &what))
			return fail(what);
		printf("%s\n", dev);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "detach"))
		return loop_detach(argv[2], &what) ? fail(what) : 0;
	fprintf(stderr, "usage: guest-loop attach DISK OFFSET SIZE | detach DEV\n");
	return 2;
}
#endif
