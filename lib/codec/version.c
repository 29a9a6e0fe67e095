// SPDX-License-Identifier: MIT
/*
 * The tools' --version (include/erofs/codec/version.h): it lists the
 * algorithms built in, so it sits with the codec table.
 */
#include <stdio.h>

#include "erofs/codec/codec.h"
#include "erofs/codec/version.h"

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
