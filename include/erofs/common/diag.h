/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: every message carries the program name, and callers name the
 * path or inode and the reason.  Verbosity lives in the caller's context; these
 * functions only format and print.  A message is one line: control bytes and
 * bytes that are not valid UTF-8 (from paths, which may hold any byte) are
 * printed as C escapes (\n, \t, \xNN).
 */
#ifndef EROFS_DIAG_H
#define EROFS_DIAG_H

#include <stdarg.h>

#define EROFS_PRINTF(a, b) __attribute__((format(printf, a, b)))

void erofs_err(const char *fmt, ...) EROFS_PRINTF(1, 2);
void erofs_warn(const char *fmt, ...) EROFS_PRINTF(1, 2);
void erofs_note(const char *fmt, ...) EROFS_PRINTF(1, 2);

#include <stddef.h>
#include <stdio.h>

/* Writes n bytes of a name from an image as messages do: valid UTF-8 as it
 * is, control bytes and invalid UTF-8 as C escapes (dump.erofs's listings). */
void erofs_fput_escaped(FILE *f, const void *s, size_t n);

#endif
