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

#endif
