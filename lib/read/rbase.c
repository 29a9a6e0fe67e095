// SPDX-License-Identifier: MIT
/*
 * The bottom of the image reader: its one-line error message, raw reads of
 * the image, and the escaping and bit naming its messages use.  Every other
 * file of lib/read/ sits on this one (see reader.h for the error convention).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "erofs/read/rbase.h"

#define EFSCORRUPTED	EUCLEAN
#define fail	erofs_reader_fail

int erofs_reader_fail(struct erofs_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err;
}

const char *erofs_reader_error(const struct erofs_reader *r)
{
	return r->err[0] ? r->err : "unknown error";
}

const char *erofs_name_bits(char *out, size_t len, uint32_t mask,
			    const struct erofs_bitname *names, size_t n)
{
	size_t used = 0, i;

	out[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		if (!(mask & names[i].bit))
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "",
					 names[i].name);
		mask &= ~names[i].bit;
	}
	if (mask && used < len)
		snprintf(out + used, len - used, "%sunknown bits 0x%x", used ? ", " : "", mask);
	return out;
}

const char *erofs_escape(char *out, size_t outlen, const void *name, size_t len)
{
	const unsigned char *s = name;
	size_t o = 0, i;

	if (!outlen)
		return out;
	if (outlen < 12) {
		out[0] = '\0';
		return out;
	}

	for (i = 0; i < len && o + 8 < outlen; i++) {
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '\\')
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", s[i]);
		else
			out[o++] = (char)s[i];
	}
	if (i < len && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

int erofs_dev_read(struct erofs_reader *r, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	if (off > r->size || len > r->size - off)
		return fail(r, -EFSCORRUPTED,
			    "read of %zu bytes at %" PRIu64 " beyond the end of the image (%" PRIu64 " bytes)",
			    len, off, r->size);
	if (r->mem) {
		memcpy(buf, r->mem + off, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)(r->base + off));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(r, -EIO, "read error at %" PRIu64 ": %s",
				    off, strerror(errno));
		}
		if (n == 0)
			return fail(r, -EIO, "unexpected end of image at %" PRIu64, off);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}
