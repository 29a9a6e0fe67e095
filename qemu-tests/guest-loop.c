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

static int fail(const char *what)
{
	fprintf(stderr, "guest-loop: %s: %s\n", what, strerror(errno));
	return 1;
}

static int attach(const char *disk, unsigned long long off,
		  unsigned long long size)
{
	struct loop_config cfg;
	char dev[32];
	int ctl, nr, lfd, bfd;

	bfd = open(disk, O_RDONLY | O_CLOEXEC);
	if (bfd < 0)
		return fail(disk);
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return fail("/dev/loop-control");
	for (int tries = 0; tries < 16; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0)
			return fail("LOOP_CTL_GET_FREE");
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0)
			return fail(dev);
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned int)bfd;
		cfg.info.lo_offset = off;
		cfg.info.lo_sizelimit = size;
		cfg.info.lo_flags = LO_FLAGS_READ_ONLY;
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			printf("%s\n", dev);
			return 0;
		}
		if (errno != EBUSY)	/* EBUSY: lost a race, take another */
			return fail("LOOP_CONFIGURE");
		close(lfd);
	}
	errno = EBUSY;
	return fail("no free loop device");
}

static int detach(const char *dev)
{
	int fd = open(dev, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(dev);
	for (int tries = 0; ioctl(fd, LOOP_CLR_FD) < 0; tries++) {
		if (errno != EBUSY || tries == 50)
			return fail("LOOP_CLR_FD");
		usleep(100000);	/* still held briefly after umount */
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "attach"))
		return attach(argv[2], strtoull(argv[3], NULL, 0),
			      strtoull(argv[4], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "detach"))
		return detach(argv[2]);
	fprintf(stderr, "usage: guest-loop attach DISK OFFSET SIZE | detach DEV\n");
	return 2;
}
