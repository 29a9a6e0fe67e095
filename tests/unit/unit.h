/* SPDX-License-Identifier: MIT */
/*
 * What every unit test shares: CHECK(), which counts a check and reports
 * a failed one by file, line and condition without stopping,
 * check_refusal() for tables of refused cases, unit_xorshift() for
 * test data that compressors must not see through, and the summary line
 * main() ends with (exit status 1 if any check failed).
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

/* A case of a table that expects a refusal: its return code and the words of its message. */
static inline void check_refusal(const char *what, int got, const char *message, int want,
				 const char *words)
{
	checks++;
	if (got != want || !strstr(message, words)) {
		failures++;
		fprintf(stderr, "%s: returned %d (\"%s\"), expected %d with \"%s\"\n", what, got,
			message, want, words);
	}
}

/* xorshift: an LCG's low bits repeat too soon, and libzstd finds the repeats */
static inline unsigned int unit_xorshift(unsigned int *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 17;
	*seed ^= *seed << 5;
	return *seed;
}

static inline int unit_summary(const char *test)
{
	printf("%s: %d checks, %d failed\n", test, checks, failures);
	return failures ? 1 : 0;
}

#endif
