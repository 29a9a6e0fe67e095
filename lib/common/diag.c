// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/common/diag.h"

static void vreport(const char *level, const char *fmt, va_list ap)
{
	char small[512], *msg = small;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small) && (msg = malloc((size_t)n + 1)))
		vsnprintf(msg, (size_t)n + 1, fmt, again);
	va_end(again);
	if (!msg) {	/* out of memory: the truncated message still says something */
		msg = small;
		n = (int)strlen(small);
	}
	flockfile(stderr);
	fprintf(stderr, "%s: %s", program_invocation_short_name, level);
	if (n > 0)
		erofs_fput_escaped(stderr, msg, (size_t)n);
	fputc('\n', stderr);
	funlockfile(stderr);
	if (msg != small)
		free(msg);
}

void erofs_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
}

void erofs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void erofs_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}
