// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>

#include "erofs/diag.h"

static void vreport(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", program_invocation_short_name, level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
