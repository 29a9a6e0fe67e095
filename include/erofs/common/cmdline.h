/* SPDX-License-Identifier: MIT */
/* Command-line helpers shared by the front ends (fsck.erofs, dump.erofs). */
#ifndef EROFS_CMDLINE_H
#define EROFS_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A whole number (decimal, 0x hex or 0 octal, as strtoull base 0 and
 * erofs-utils read them) up to max into *out.  Anything else (empty, a
 * sign, trailing bytes, overflow, above max) is refused with "invalid
 * WHAT 'S'" on stderr, and false.
 */
bool erofs_parse_u64(const char *what, const char *s, uint64_t max, uint64_t *out);

/*
 * The message for what getopt_long() returned instead of an option (with
 * ":" first in its optstring): ':' for a missing argument, '?' for an
 * unknown option, short or long, named as the user typed it.
 */
void erofs_getopt_error(int ret, char *const argv[]);

/*
 * Appends a --device=PATH (kept, not copied: argv's) to the list *v of *n
 * paths.  An empty path ("--device= needs a path") and running out of
 * memory are refused on stderr, and false.
 */
bool erofs_add_device_arg(const char ***v, unsigned int *n, const char *path);

/* The erofs-utils release whose command lines our programs take. */
#define EROFS_UTILS_COMPAT_RELEASE "1.9.4"

#endif
