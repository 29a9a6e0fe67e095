/* SPDX-License-Identifier: MIT */
/*
 * fuzz-mutate's helpers that know nothing of EROFS: ending with an error,
 * memory that never comes back NULL, and reading a whole file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-mutate.h"

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz-mutate: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* the whole of PATH, its length in *SIZE */
unsigned char *read_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	unsigned char *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s: %s", path, strerror(errno));
	*size = (size_t)st.st_size;
	p = xrealloc(NULL, *size ? *size : 1);
	for (size_t got = 0; got < *size;) {
		ssize_t n = pread(fd, p + got, *size - got, (off_t)got);

		if (n <= 0)
			die("%s: read failed", path);
		got += (size_t)n;
	}
	close(fd);
	return p;
}
