// SPDX-License-Identifier: MIT
/*
 * The fuzz harnesses' erofs_err(), erofs_warn() and erofs_note(), in place
 * of lib/common/diag.c's (fuzz-diag.h).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "erofs/common/diag.h"

#include "fuzz-diag.h"

bool fz_verbose;

static void fz_vprint(const char *level, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (fz_verbose)
		fprintf(stderr, "fuzz: %s%s\n", level, msg);
}

void erofs_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fz_vprint("error: ", fmt, ap);
	va_end(ap);
}

void erofs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fz_vprint("warning: ", fmt, ap);
	va_end(ap);
}

void erofs_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fz_vprint("", fmt, ap);
	va_end(ap);
}
