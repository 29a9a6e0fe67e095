// SPDX-License-Identifier: MIT
/* Command-line helpers (include/erofs/common/cmdline.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdlib.h>

#include "erofs/common/cmdline.h"
#include "erofs/common/diag.h"

bool erofs_parse_u64(const char *what, const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	/* strtoull skips blanks and takes a sign: neither is a number here */
	if (errno || end == s || *end || !isdigit((unsigned char)*s) || v > max) {
		if (!errno && end != s && !*end && isdigit((unsigned char)*s))
			erofs_err("invalid %s '%s' (at most %" PRIu64 ")", what, s, max);
		else
			erofs_err("invalid %s '%s'", what, s);
		return false;
	}
	*out = v;
	return true;
}

void erofs_getopt_error(int ret, char *const argv[])
{
	if (ret == ':')
		erofs_err("option '%s' needs an argument", argv[optind - 1]);
	else if (optopt)
		erofs_err("unknown option '-%c'", optopt);
	else
		erofs_err("unknown option '%s'", argv[optind - 1]);
}

bool erofs_add_device_arg(const char ***v, unsigned int *n, const char *path)
{
	const char **p;

	if (!*path) {
		erofs_err("--device= needs a path");
		return false;
	}
	p = realloc(*v, (*n + 1) * sizeof(*p));
	if (!p) {
		erofs_err("out of memory");
		return false;
	}
	p[(*n)++] = path;
	*v = p;
	return true;
}
