// SPDX-License-Identifier: MIT
/*
 * Names from an image or a source tree on a terminal (include/erofs/common/diag.h):
 * messages and dump.erofs's listings print them through here.
 */
#include <stdio.h>

#include "erofs/common/diag.h"

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
void erofs_fput_escaped(FILE *f, const void *s, size_t n)
{
	const unsigned char *p = s;

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
