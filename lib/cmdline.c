// SPDX-License-Identifier: MIT
/* Command-line helpers (include/erofs/cmdline.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "erofs/cmdline.h"
#include "erofs/codec.h"
#include "erofs/diag.h"

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

void erofs_print_version(const char *prog, const char *codecs_label)
{
	const struct erofs_codec_info *info;

	printf("%s (erofs-forge %s, compatible with erofs-utils) %s\n", prog, PACKAGE_VERSION,
	       EROFS_UTILS_COMPAT_RELEASE);
	if (!codecs_label)
		return;
	printf("%s:", codecs_label);
	for (size_t i = 0; (info = erofs_codec_at(i)); i++)
		printf("%s %s", i ? "," : "", info->name);
	putchar('\n');
}
