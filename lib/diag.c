// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/diag.h"

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if none. */
static size_t utf8_length(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;	/* ASCII is not asked about; 0x80-0xc1 never start one */
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	cp = p[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates and past U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * Messages name paths, and a path may hold any byte but '/' and NUL: a
 * newline in a name must not split a message, nor an escape sequence drive
 * the terminal.  Control bytes are written as C escapes (\n, \t, \xNN),
 * and so are bytes that are not valid UTF-8; valid UTF-8 is kept as it is.
 */
static void put_escaped(const char *s, size_t n, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t len;

		if (c >= 0x20 && c < 0x7f) {
			fputc(c, f);
			i++;
		} else if (c >= 0x80 && (len = utf8_length(p + i, n - i))) {
			fwrite(p + i, 1, len, f);
			i += len;
		} else {
			if (c == '\n')
				fputs("\\n", f);
			else if (c == '\t')
				fputs("\\t", f);
			else if (c == '\r')
				fputs("\\r", f);
			else
				fprintf(f, "\\x%02x", c);
			i++;
		}
	}
}

void erofs_fput_escaped(FILE *f, const void *s, size_t n)
{
	put_escaped(s, n, f);
}

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
		put_escaped(msg, (size_t)n, stderr);
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
