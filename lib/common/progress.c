// SPDX-License-Identifier: MIT
/* The build's progress line (see include/erofs/common/progress.h). */
#include <stdio.h>

#include "erofs/common/progress.h"

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void erofs_progress_start(struct erofs_progress *p, bool enabled)
{
	p->enabled = enabled;
	p->drawn = false;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->last = p->start;
}

static void draw(struct erofs_progress *p, const struct erofs_progress_state *s,
		 const struct timespec *now, const char *end)
{
	double elapsed = seconds_between(&p->start, now);
	double rate = elapsed > 0 ? (double)s->bytes_read / elapsed : 0;
	char eta[32] = "";

	if (s->phase) {
		fprintf(stderr, "\r\033[Kmkfs.erofs: %s, %llu files, %.1f MiB written%s",
			s->phase, (unsigned long long)s->files_total, s->bytes_written / 1048576.0,
			end);
		p->drawn = true;
		return;
	}
	if (s->totals_known && rate > 0 && s->bytes_total >= s->bytes_read) {
		unsigned long left = (unsigned long)((double)(s->bytes_total - s->bytes_read) / rate);

		snprintf(eta, sizeof(eta), ", ETA %lu:%02lu", left / 60, left % 60);
	}
	fprintf(stderr, "\r\033[Kmkfs.erofs: %llu/%llu%s files, %.1f/%.1f%s MiB read, "
		"%.1f MiB written, %.1f MiB/s%s%s",
		(unsigned long long)s->files_done, (unsigned long long)s->files_total,
		s->totals_known ? "" : "+", s->bytes_read / 1048576.0, s->bytes_total / 1048576.0,
		s->totals_known ? "" : "+", s->bytes_written / 1048576.0, rate / 1048576.0, eta,
		end);
	p->drawn = true;
}

void erofs_progress_update(struct erofs_progress *p, const struct erofs_progress_state *s)
{
	struct timespec now;

	if (!p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&p->last, &now) < 0.1)
		return;
	p->last = now;
	draw(p, s, &now, "");
}

void erofs_progress_finish(struct erofs_progress *p, const struct erofs_progress_state *s)
{
	struct timespec now;

	if (!p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	draw(p, s, &now, "\n");
}
