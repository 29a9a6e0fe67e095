// SPDX-License-Identifier: MIT
/*
 * dump.erofs -S: file counts by type, original and on-disk sizes, the
 * compression rate, size histograms and a file name extension table, in
 * erofs-utils 1.9.4's tables and with its counting rules (so that numbers
 * compare): every directory entry counts, hard links once per name; a
 * compressed file's on-disk size is its compressed block count times the
 * block size, any other file's its i_size; the packed inode adds its
 * on-disk size, as erofs-utils does.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/common/ondisk.h"
#include "erofs/dump/dump.h"

#define SIZE_BINS	17u	/* [0, 1 KiB), [1, 2), ... [32768 KiB, ...) */
#define BAR_WIDTH	50u

static const char *const ftype_names[EROFS_FT_MAX] = {
	"unknown type", "regular file", "directory", "char dev",
	"block dev", "FIFO file", "SOCK file", "symlink file",
};

/* the extensions erofs-utils counts, "others" last */
static const char *const ext_names[] = {
	".txt", ".so", ".xml", ".apk", ".odex", ".vdex", ".oat", ".rc", ".otf", "others",
};
#define NEXT	(sizeof(ext_names) / sizeof(ext_names[0]))

struct dump_stats {
	struct erofs_dump *d;
	uint64_t files, compressed, uncompressed;
	uint64_t origin_bytes, disk_bytes;
	uint64_t by_type[EROFS_FT_MAX];
	uint64_t by_ext[NEXT];
	uint64_t orig_bins[SIZE_BINS], disk_bins[SIZE_BINS];
};

const char *erofs_dump_ftype_name(uint16_t mode)
{
	return ftype_names[erofs_mode_to_ftype(mode)];
}

static bool compressed_layout(unsigned int layout)
{
	return layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	       layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
}

/* What the file takes on disk, counting it as compressed or not. */
static uint64_t occupied(struct dump_stats *s, const struct erofs_rd_inode *vi)
{
	if (compressed_layout(vi->layout)) {
		s->compressed++;
		return (uint64_t)vi->di.u << s->d->r->blkszbits;
	}
	s->uncompressed++;
	return vi->size;
}

static unsigned int size_bin(uint64_t bytes)
{
	unsigned int bin = 0;

	for (bytes >>= 10; bytes; bytes >>= 1)
		bin++;
	return bin < SIZE_BINS - 1 ? bin : SIZE_BINS - 1;
}

/* erofs-utils compares the text from the last '.' on as a prefix of each
 * extension: "a.t" counts as ".txt".  Kept, so that the tables agree. */
static unsigned int ext_index(const char *name, unsigned int len)
{
	const char *dot = NULL;
	unsigned int i, n;

	for (i = len; i-- > 0;)
		if (name[i] == '.') {
			dot = name + i;
			break;
		}
	if (!dot)
		return NEXT - 1;
	n = (unsigned int)(len - (dot - name));
	for (i = 0; i < NEXT - 1; i++)
		if (n <= strlen(ext_names[i]) && !memcmp(dot, ext_names[i], n))
			return i;
	return NEXT - 1;
}

static int stat_visit(void *arg, const struct erofs_dump_visit *v)
{
	struct dump_stats *s = arg;
	const struct erofs_rd_inode *vi = v->vi;
	uint64_t disk;

	s->files++;
	s->by_type[erofs_mode_to_ftype(vi->di.mode)]++;
	disk = occupied(s, vi);
	if (S_ISREG(vi->di.mode)) {
		s->origin_bytes += vi->size;
		s->disk_bytes += disk;
		s->by_ext[ext_index(v->name, v->namelen)]++;
		s->orig_bins[size_bin(vi->size)]++;
		s->disk_bins[size_bin(disk)]++;
	}
	return 0;
}

static void chart_row(FILE *out, const char *label, uint64_t count, uint64_t regular)
{
	double pct = regular ? (double)(100 * count) / (double)regular : 0.0;
	char bar[400];
	size_t n = (size_t)(pct / 2);

	if (n >= sizeof(bar))
		n = sizeof(bar) - 1;
	memset(bar, '#', n);
	bar[n] = '\0';
	fprintf(out, "%-16s\t%-11" PRIu64 " %8.2f%% |%-50s|\n", label, count, pct, bar);
}

static void chart_header(FILE *out, const char *first)
{
	fprintf(out, "%-16s %11s %16s |%-50s|\n", first, "count", "ratio", "distribution");
}

static void size_chart(FILE *out, const char *title, const uint64_t *bins, uint64_t regular)
{
	unsigned int i, lo = 0, hi = 1;
	char label[32];

	fprintf(out, "\n%s file size distribution:\n", title);
	chart_header(out, ">=(KB) .. <(KB) ");
	for (i = 0; i < SIZE_BINS; i++) {
		if (i == SIZE_BINS - 1)
			snprintf(label, sizeof(label), "%6u ..", lo);
		else
			snprintf(label, sizeof(label), "%6u .. %-6u", lo, hi);
		chart_row(out, label, bins[i], regular);
		lo = hi;
		hi <<= 1;
	}
}

static void print_stats(FILE *out, const struct dump_stats *s)
{
	uint64_t regular = s->by_type[EROFS_FT_REG_FILE];
	char label[32];
	unsigned int i;

	fprintf(out, "Filesystem total file count:\t\t%" PRIu64 "\n", s->files);
	for (i = 0; i < EROFS_FT_MAX; i++)
		fprintf(out, "Filesystem %s count:\t\t%" PRIu64 "\n", ftype_names[i], s->by_type[i]);
	fprintf(out, "Filesystem compressed files:            %" PRIu64 "\n", s->compressed);
	fprintf(out, "Filesystem uncompressed files:          %" PRIu64 "\n", s->uncompressed);
	fprintf(out, "Filesystem total original file size:    %" PRIu64 " Bytes\n", s->origin_bytes);
	fprintf(out, "Filesystem total file size:             %" PRIu64 " Bytes\n", s->disk_bytes);
	/* 0 / 0 prints as erofs-utils prints it (-nan) */
	fprintf(out, "Filesystem compress rate:               %.2f%%\n",
		(double)(100 * s->disk_bytes) / (double)s->origin_bytes);
	size_chart(out, "Original", s->orig_bins, regular);
	size_chart(out, "On-disk", s->disk_bins, regular);
	fprintf(out, "\nFile type distribution:\n");
	chart_header(out, "type");
	for (i = 0; i < NEXT; i++) {
		snprintf(label, sizeof(label), "%-17s", ext_names[i]);
		chart_row(out, label, s->by_ext[i], regular);
	}
}

int erofs_dump_statistics(struct erofs_dump *d)
{
	struct dump_stats s = { .d = d };
	const struct erofs_super *sb = &d->r->sb;
	int err = erofs_dump_walk(d, stat_visit, &s);

	if (err)
		return err;
	if ((sb->feature_incompat & EROFS_INCOMPAT_FRAGMENTS) && sb->packed_nid) {
		struct erofs_rd_inode vi;
		uint64_t disk;

		err = erofs_read_inode(d->r, sb->packed_nid, &vi);
		if (err)
			return erofs_dump_reader_fail(d, err, "the packed inode", sb->packed_nid);
		disk = occupied(&s, &vi);
		s.disk_bytes += disk;
		s.disk_bins[size_bin(disk)]++;
	}
	print_stats(d->out, &s);
	return 0;
}
