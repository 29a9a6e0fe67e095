// SPDX-License-Identifier: MIT
/* The tar reader's byte stream (see include/erofs/source/tario.h). */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "erofs/common/diag.h"
#include "erofs/common/io.h"
#include "erofs/source/tario.h"

#define STREAM_BUFFER	(128u << 10)
/*
 * The most memory a decoder may take: an xz or lzma header names its
 * dictionary (up to 4 GiB), and a hostile one must not make us allocate
 * that.  xz -9 needs 65 MiB, zstd's default window limit is 128 MiB.
 */
#define DECODER_MEMORY	(256ull << 20)
#define SEEKABLE_READ	4096u

static const struct {
	const char *format, *option;
	uint8_t len;
	uint8_t magic[6];
} magics[] = {
	{ "gzip", "--ungzip", 2, { 0x1f, 0x8b } },
	{ "xz", "--unxz", 6, { 0xfd, '7', 'z', 'X', 'Z', 0 } },
	{ "zstd", "--unzstd", 4, { 0x28, 0xb5, 0x2f, 0xfd } },
	{ "bzip2", NULL, 3, { 'B', 'Z', 'h' } },
};

/* read() until len bytes or the end; returns bytes read or -errno (reported). */
static ssize_t read_some(struct erofs_tar_stream *s, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(s->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			erofs_err("%s: cannot read: %s", s->name, strerror(err));
			return -err;
		}
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int fill_input(struct erofs_tar_stream *s)
{
	ssize_t n;

	if (s->in_off < s->in_len || s->in_eof)
		return 0;
	n = read_some(s, s->in, STREAM_BUFFER);
	if (n < 0)
		return (int)n;
	s->in_len = (size_t)n;
	s->in_off = 0;
	s->in_eof = !n;
	return 0;
}

static int codec_error(const struct erofs_tar_stream *s, const char *what)
{
	static const char *const formats[] = { "tar", "gzip", "xz", "zstd" };

	erofs_err("%s: %s stream at decoded byte %llu: %s", s->name, formats[s->decoder],
		  (unsigned long long)s->pos, what);
	return -EIO;
}

static int decode_gzip(struct erofs_tar_stream *s)
{
	z_stream *z = s->codec;
	int ret;

	z->next_in = s->in + s->in_off;
	z->avail_in = (uInt)(s->in_len - s->in_off);
	z->next_out = s->out;
	z->avail_out = STREAM_BUFFER;
	ret = inflate(z, Z_NO_FLUSH);
	s->in_off = s->in_len - z->avail_in;
	s->out_len = STREAM_BUFFER - z->avail_out;
	if (ret == Z_STREAM_END) {
		/* concatenated members go on; trailing zeros (padding) end it */
		if (fill_input(s))
			return -EIO;
		while (s->in_off < s->in_len && !s->in[s->in_off])
			if (++s->in_off == s->in_len && fill_input(s))
				return -EIO;
		if (s->in_off == s->in_len)
			s->out_eof = true;
		else if (inflateReset(z) != Z_OK)
			return codec_error(s, "cannot restart");
		return 0;
	}
	if (ret == Z_OK || (ret == Z_BUF_ERROR && !s->in_eof))
		return 0;
	if (ret == Z_BUF_ERROR)
		return codec_error(s, "truncated");
	return codec_error(s, z->msg ? z->msg : "corrupt data");
}

static int decode_xz(struct erofs_tar_stream *s)
{
	lzma_stream *x = s->codec;
	lzma_ret ret;

	x->next_in = s->in + s->in_off;
	x->avail_in = s->in_len - s->in_off;
	x->next_out = s->out;
	x->avail_out = STREAM_BUFFER;
	ret = lzma_code(x, s->in_eof ? LZMA_FINISH : LZMA_RUN);
	s->in_off = s->in_len - x->avail_in;
	s->out_len = STREAM_BUFFER - x->avail_out;
	switch (ret) {
	case LZMA_STREAM_END:
		s->out_eof = true;
		/* fall through */
	case LZMA_OK:
		return 0;
	case LZMA_BUF_ERROR:
		return codec_error(s, "truncated");
	case LZMA_MEM_ERROR:
		return codec_error(s, "out of memory");
	case LZMA_MEMLIMIT_ERROR:
		return codec_error(s, "its dictionary needs more than 256 MiB");
	case LZMA_FORMAT_ERROR:
		return codec_error(s, "not xz or lzma data");
	default:
		return codec_error(s, "corrupt data");
	}
}

static int decode_zstd(struct erofs_tar_stream *s)
{
	ZSTD_inBuffer in = { s->in + s->in_off, s->in_len - s->in_off, 0 };
	ZSTD_outBuffer out = { s->out, STREAM_BUFFER, 0 };
	size_t ret = ZSTD_decompressStream(s->codec, &out, &in);

	s->in_off += in.pos;
	s->out_len = out.pos;
	if (ZSTD_isError(ret))
		return codec_error(s, ZSTD_getErrorName(ret));
	if (s->in_eof && s->in_off == s->in_len && !out.pos) {
		if (ret)
			return codec_error(s, "truncated");
		s->out_eof = true;
	}
	return 0;
}

/* Makes decoded bytes available; at the end, out_off == out_len and out_eof. */
static int refill(struct erofs_tar_stream *s)
{
	while (s->out_off == s->out_len && !s->out_eof) {
		int err;

		s->out_off = s->out_len = 0;
		if (s->decoder == EROFS_TAR_PLAIN) {
			/* read in place, the next header is usually a seek away:
			 * a page, not a whole buffer, after each */
			ssize_t n = read_some(s, s->out, s->seekable ? SEEKABLE_READ : STREAM_BUFFER);

			if (n < 0)
				return (int)n;
			s->out_len = (size_t)n;
			s->out_eof = !n;
			continue;
		}
		if ((err = fill_input(s)))
			return err;
		if (s->decoder == EROFS_TAR_GZIP)
			err = decode_gzip(s);
		else if (s->decoder == EROFS_TAR_XZ)
			err = decode_xz(s);
		else
			err = decode_zstd(s);
		if (!err && s->dump_fd >= 0 && s->out_len) {
			/* every decoded byte comes through here once, in order */
			err = erofs_pwrite_all(s->dump_fd, s->out, s->out_len, s->dumped);
			if (err)
				erofs_err("%s: writing the decoded stream: %s", s->name,
					  strerror(-err));
			s->dumped += s->out_len;
		}
		if (err)
			return err;
	}
	return 0;
}

static int start_codec(struct erofs_tar_stream *s)
{
	if (s->decoder == EROFS_TAR_GZIP) {
		z_stream *z = calloc(1, sizeof(*z));

		s->codec = z;
		/* 15 + 32: a zlib or gzip header, told apart by its magic */
		if (!z || inflateInit2(z, 15 + 32) != Z_OK)
			return -ENOMEM;
	} else if (s->decoder == EROFS_TAR_XZ) {
		lzma_stream *x = calloc(1, sizeof(*x));

		s->codec = x;
		if (!x)
			return -ENOMEM;
		*x = (lzma_stream)LZMA_STREAM_INIT;
		if (lzma_auto_decoder(x, DECODER_MEMORY, LZMA_CONCATENATED) != LZMA_OK)
			return -ENOMEM;
	} else if (s->decoder == EROFS_TAR_ZSTD) {
		if (!(s->codec = ZSTD_createDStream()))
			return -ENOMEM;
	}
	return 0;
}

int erofs_tar_stream_open(struct erofs_tar_stream *s, int fd, enum erofs_tar_decoder decoder,
			  const char *name)
{
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);
	ssize_t n;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->dump_fd = -1;
	s->decoder = decoder;
	s->name = name;
	s->in = malloc(STREAM_BUFFER);
	s->out = decoder == EROFS_TAR_PLAIN ? s->in : malloc(STREAM_BUFFER);
	if (!s->in || !s->out || start_codec(s)) {
		erofs_err("out of memory while opening %s", name);
		return -ENOMEM;
	}
	s->seekable = decoder == EROFS_TAR_PLAIN && at >= 0 && !fstat(fd, &st) &&
		      S_ISREG(st.st_mode);
	s->base = at >= 0 ? (uint64_t)at : 0;
	n = read_some(s, s->in, STREAM_BUFFER);
	if (n < 0)
		return (int)n;
	s->in_len = (size_t)n;
	s->in_eof = !n;
	if (decoder != EROFS_TAR_PLAIN)
		return 0;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		if (s->in_len < magics[i].len || memcmp(s->in, magics[i].magic, magics[i].len))
			continue;
		if (magics[i].option)
			erofs_err("%s: the input is %s-compressed: add %s", name,
				  magics[i].format, magics[i].option);
		else
			erofs_err("%s: the input is %s-compressed, which is not supported: "
				  "decompress it first", name, magics[i].format);
		return -EINVAL;
	}
	s->out_len = s->in_len;
	s->out_eof = s->in_eof;
	return 0;
}

int erofs_tar_stream_read(struct erofs_tar_stream *s, void *buf, size_t len, size_t *got)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		size_t n;
		int err = refill(s);

		if (err) {
			*got = done;
			return err;
		}
		if (s->out_off == s->out_len)
			break;
		n = s->out_len - s->out_off;
		if (n > len - done)
			n = len - done;
		memcpy(p + done, s->out + s->out_off, n);
		s->out_off += n;
		s->pos += n;
		done += n;
	}
	*got = done;
	return done == len ? 0 : -ENODATA;
}

int erofs_tar_stream_skip(struct erofs_tar_stream *s, uint64_t len)
{
	while (len) {
		uint64_t n = s->out_len - s->out_off;
		int err;

		if (n > len)
			n = len;
		s->out_off += (size_t)n;
		s->pos += n;
		len -= n;
		if (!len)
			break;
		if (s->seekable) {
			/* past what is buffered: seek, and check that the file is that long */
			struct stat st;
			uint64_t to = s->base + s->pos + len;

			if (fstat(s->fd, &st) || (uint64_t)st.st_size < to)
				return -ENODATA;
			if (lseek(s->fd, (off_t)to, SEEK_SET) < 0) {
				err = errno;
				erofs_err("%s: cannot seek: %s", s->name, strerror(err));
				return -err;
			}
			s->pos += len;
			s->out_off = s->out_len = 0;
			return 0;
		}
		if ((err = refill(s)))
			return err;
		if (s->out_off == s->out_len)
			return -ENODATA;
	}
	return 0;
}

void erofs_tar_stream_close(struct erofs_tar_stream *s)
{
	if (s->decoder == EROFS_TAR_GZIP && s->codec)
		inflateEnd(s->codec);
	else if (s->decoder == EROFS_TAR_XZ && s->codec)
		lzma_end(s->codec);
	else if (s->decoder == EROFS_TAR_ZSTD)
		ZSTD_freeDStream(s->codec);
	if (s->decoder != EROFS_TAR_ZSTD)
		free(s->codec);
	if (s->out != s->in)
		free(s->out);
	free(s->in);
	memset(s, 0, sizeof(*s));
}
