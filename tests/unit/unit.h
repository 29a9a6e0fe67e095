/* SPDX-License-Identifier: MIT */
/*
 * What every unit test shares: CHECK(), which counts a check and reports
 * a failed one by file, line and condition without stopping, and the
 * summary line main() ends with (exit status 1 if any check failed).
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

static inline int unit_summary(const char *test)
{
	printf("%s: %d checks, %d failed\n", test, checks, failures);
	return failures ? 1 : 0;
}

#endif
