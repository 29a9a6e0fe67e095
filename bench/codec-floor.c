// SPDX-License-Identifier: MIT
/*
 * The codec library alone on a tree's bytes (bench/codec-floor.sh): the
 * CPU time below which neither mkfs can go, whatever it does around it.
 *
 *   codec-floor FILE CODEC LEVEL blocks SIZE [ROUNDS]   independent compressions of
 *       SIZE input bytes each, mksquashfs's model (-b SIZE), through the
 *       library and call mksquashfs uses: zstd ZSTD_compressCCtx, gzip
 *       zlib's compress2, xz an .xz stream of LZMA2 with a dictionary of
 *       SIZE, lz4hc LZ4_compress_HC
 *   codec-floor FILE CODEC LEVEL fill CAP [ROUNDS]      frames one after another, each
 *       holding as much input as fits CAP output bytes: the fixed-output
 *       ideal of one compression per pcluster.  lz4hc and lzma (MicroLZMA,
 *       dictionary 4 CAPs) stop at CAP themselves.  zstd (window 8 CAPs up to
 *       1 MiB) and deflate (libdeflate, raw DEFLATE) have no such mode: each
 *       frame's input is searched first, untimed, and then compressed once.
 *
 * FILE is the tree's regular files, one after another.  Prints
 * "SECONDS OUTPUT_BYTES FRAMES": the process CPU time of the timed
 * compressions (the least of ROUNDS rounds, default 3), their output, and
 * their count.
 */
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_c_srcSizeHint */
#include <libdeflate.h>
#include <lz4hc.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

struct job {
	const uint8_t *in;
	size_t len;
	const char *codec;
	int level;
	size_t size;		/* blocks: input per block; fill: output cap */
	uint8_t *out;
	size_t out_cap;
	ZSTD_CCtx *zstd;
	struct libdeflate_compressor *deflate;
	void *lz4hc;
};

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "codec-floor: %s\n", what);
	exit(1);
}

/* One of mksquashfs's blocks: its compressed size (or its own size when stored). */
static size_t squash_block(struct job *j, const uint8_t *src, size_t n)
{
	size_t out = 0;

	if (!strcmp(j->codec, "zstd")) {
		out = ZSTD_compressCCtx(j->zstd, j->out, j->out_cap, src, n, j->level);
		if (ZSTD_isError(out))
			die("zstd failed");
	} else if (!strcmp(j->codec, "gzip")) {
		uLongf len = (uLongf)j->out_cap;

		if (compress2(j->out, &len, src, (uLong)n, j->level) != Z_OK)
			die("zlib failed");
		out = len;
	} else if (!strcmp(j->codec, "xz")) {
		lzma_options_lzma opt;
		lzma_filter filters[2] = { { LZMA_FILTER_LZMA2, &opt }, { LZMA_VLI_UNKNOWN, NULL } };

		if (lzma_lzma_preset(&opt, (uint32_t)j->level))
			die("no such xz preset");
		opt.dict_size = (uint32_t)j->size;
		if (lzma_stream_buffer_encode(filters, LZMA_CHECK_CRC32, NULL, src, n, j->out, &out,
					      j->out_cap) != LZMA_OK)
			die("xz failed");
	} else if (!strcmp(j->codec, "lz4hc")) {
		out = (size_t)LZ4_compress_HC_extStateHC(j->lz4hc, (const char *)src, (char *)j->out,
							 (int)n, (int)j->out_cap, j->level);
	} else {
		die("blocks: codec is zstd, gzip, xz or lz4hc");
	}
	return out < n ? out : n;
}

/* One frame of src[0, n) into at most cap bytes: its size, SIZE_MAX when it failed. */
typedef size_t frame_fn(struct job *j, const uint8_t *src, size_t n, size_t cap);

/* zstd as mkfs configures it for a frame of about hint bytes. */
static size_t zstd_frame(struct job *j, const uint8_t *src, size_t n, size_t cap)
{
	unsigned int wlog = 10;

	while (wlog < 20 && (1ul << (wlog + 1)) <= 8 * j->size)
		wlog++;
	ZSTD_CCtx_reset(j->zstd, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(j->zstd, ZSTD_c_compressionLevel, j->level);
	ZSTD_CCtx_setParameter(j->zstd, ZSTD_c_windowLog, (int)wlog);
	ZSTD_CCtx_setParameter(j->zstd, ZSTD_c_srcSizeHint,
			       (int)(n < ZSTD_SRCSIZEHINT_MAX ? n : ZSTD_SRCSIZEHINT_MAX));
	n = ZSTD_compress2(j->zstd, j->out, cap, src, n);
	return ZSTD_isError(n) ? SIZE_MAX : n;
}

static size_t deflate_frame(struct job *j, const uint8_t *src, size_t n, size_t cap)
{
	size_t out = libdeflate_deflate_compress(j->deflate, src, n, j->out, cap);

	return out ? out : SIZE_MAX;
}

/*
 * About the longest input from src (at most left bytes) that frame() fits
 * in the cap: within 1/1024 of the cap, as mkfs's searches stop.  guess:
 * the last frame's input.
 */
static size_t search_cut(struct job *j, frame_fn *frame, const uint8_t *src, size_t left,
			 size_t guess)
{
	const size_t cap = j->size, slack = cap / 1024;
	size_t lo = 0, lo_out = 0, hi = left + 1, hi_out = 0, m = guess ? guess : 4 * cap;

	for (int tries = 0; tries < 40 && hi - lo > 1; tries++) {
		size_t out;

		if (m <= lo)
			m = lo + 1;
		if (m >= hi)
			m = hi - 1;
		out = frame(j, src, m, j->out_cap);
		if (out == SIZE_MAX)
			die("a try failed");
		if (out <= cap) {
			lo = m;
			lo_out = out;
			if (cap - out <= slack || m == left)
				break;
		} else {
			hi = m;
			hi_out = out;
		}
		if (hi <= left)		/* between the two */
			m = lo + (size_t)((double)(hi - lo) * (double)(cap - slack / 2 - lo_out) /
					  (double)(hi_out - lo_out));
		else			/* in proportion */
			m = (size_t)((double)lo * (double)(cap - slack / 2) / (double)lo_out);
	}
	return lo ? lo : 1;
}

/* MicroLZMA into the cap: the input it took. */
static size_t microlzma_frame(struct job *j, const uint8_t *src, size_t left, size_t *out)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_options_lzma opt;

	if (lzma_lzma_preset(&opt, (uint32_t)j->level))
		die("no such lzma preset");
	opt.dict_size = (uint32_t)(4 * j->size);
	if (lzma_microlzma_encoder(&s, &opt) != LZMA_OK)
		die("lzma failed");
	s.next_in = src;
	s.avail_in = left;
	s.next_out = j->out;
	s.avail_out = j->size;
	if (lzma_code(&s, LZMA_FINISH) != LZMA_STREAM_END)
		die("lzma failed");
	*out = (size_t)s.total_out;
	left = (size_t)s.total_in;
	lzma_end(&s);
	return left;
}

int main(int argc, char **argv)
{
	struct job j = { 0 };
	size_t *cuts = NULL, nr = 0;
	double best = 0;
	uint64_t total_out = 0;
	FILE *f;
	long n;
	uint8_t *buf;
	bool fill;
	int rounds;

	if (argc != 6 && argc != 7)
		die("usage: codec-floor FILE CODEC LEVEL blocks|fill SIZE [ROUNDS]");
	rounds = argc == 7 ? atoi(argv[6]) : 3;
	j.codec = argv[2];
	j.level = atoi(argv[3]);
	fill = !strcmp(argv[4], "fill");
	j.size = strtoul(argv[5], NULL, 0);
	if (!(f = fopen(argv[1], "rb")) || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) || !(buf = malloc((size_t)n)) ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("cannot read the input file");
	fclose(f);
	j.in = buf;
	j.len = (size_t)n;
	j.out_cap = 2 * (fill ? j.size * 64 : j.size) + 65536;
	j.out = malloc(j.out_cap);
	j.zstd = ZSTD_createCCtx();
	j.lz4hc = malloc((size_t)LZ4_sizeofStateHC());
	if (!j.out || !j.zstd || !j.lz4hc)
		die("out of memory");
	if (!strcmp(j.codec, "deflate") && !(j.deflate = libdeflate_alloc_compressor(j.level)))
		die("no such libdeflate level, or out of memory");
	if (fill && (!strcmp(j.codec, "zstd") || !strcmp(j.codec, "deflate"))) {
		/* the cuts, untimed: each frame then costs one compression */
		frame_fn *frame = !strcmp(j.codec, "zstd") ? zstd_frame : deflate_frame;
		const size_t window = j.size * 64;

		cuts = malloc((j.len / 64 + 2) * sizeof(*cuts));
		for (size_t pos = 0; pos < j.len; nr++) {
			const size_t left = j.len - pos < window ? j.len - pos : window;

			cuts[nr] = search_cut(&j, frame, j.in + pos, left, nr ? cuts[nr - 1] : 0);
			pos += cuts[nr];
		}
	}
	for (int round = 0; round < rounds; round++) {
		const double start = cpu_seconds();
		size_t frames = 0, pos = 0;

		total_out = 0;
		while (pos < j.len) {
			size_t take = j.len - pos, out = 0;

			if (!fill) {
				take = take < j.size ? take : j.size;
				out = squash_block(&j, j.in + pos, take);
			} else if (cuts) {
				take = cuts[frames];
				out = !strcmp(j.codec, "zstd") ? zstd_frame(&j, j.in + pos, take, j.out_cap)
							       : deflate_frame(&j, j.in + pos, take, j.out_cap);
			} else if (!strcmp(j.codec, "lzma")) {
				take = microlzma_frame(&j, j.in + pos, take < 64 * j.size ? take : 64 * j.size,
						       &out);
			} else if (!strcmp(j.codec, "lz4hc")) {
				int src_len = take < 0x7e000000 ? (int)take : 0x7e000000;

				out = (size_t)LZ4_compress_HC_destSize(j.lz4hc, (const char *)j.in + pos,
								       (char *)j.out, &src_len, (int)j.size,
								       j.level);
				take = (size_t)src_len;
			} else {
				die("fill: codec is zstd, deflate, lzma or lz4hc");
			}
			if (!take || out == SIZE_MAX)
				die("a frame took no input");
			total_out += out;
			pos += take;
			frames++;
		}
		if (!round || cpu_seconds() - start < best)
			best = cpu_seconds() - start;
		nr = frames;
	}
	printf("%.3f %llu %zu\n", best, (unsigned long long)total_out, nr);
	return 0;
}
