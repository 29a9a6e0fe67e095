/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics for the fuzz harnesses: lib/common/diag.c is not linked;
 * fuzz-diag.c, linked into every harness that includes this file, replaces
 * its three functions by ones that format every message (so a bad
 * argument still shows up under the sanitizers) and print it only with
 * fz_verbose set (each harness sets it from FUZZ_VERBOSE in the
 * environment).
 */
#ifndef FUZZ_DIAG_H
#define FUZZ_DIAG_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "erofs/common/diag.h"

extern bool fz_verbose;

/* A broken promise of the code under test: report it as a sanitizer would. */
#define FZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: contract broken at %s:%d: %s\n", \
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

#endif
