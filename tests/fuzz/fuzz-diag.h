/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics for the fuzz harnesses: lib/common/diag.c is not linked; its three
 * functions are replaced by ones that format every message (so a bad
 * argument still shows up under the sanitizers) and print it only with
 * FUZZ_VERBOSE set in the environment.
 */
#ifndef FUZZ_DIAG_H
#define FUZZ_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "erofs/common/diag.h"

static bool fz_verbose;

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

/* A broken promise of the code under test: report it as a sanitizer would. */
#define FZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: contract broken at %s:%d: %s\n", \
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

#endif
