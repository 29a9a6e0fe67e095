// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "erofs/progress.h"

void erofs_progress_start(struct erofs_progress *p, bool enabled, const char *stage,
			  uint64_t total_bytes)
{
	p->enabled = enabled;
	p->stage = stage;
	p->total_bytes = total_bytes;
	p->last.tv_sec = 0;
	p->last.tv_nsec = 0;
}

static void draw(const struct erofs_progress *p, uint64_t done_bytes, uint64_t items,
		 const char *end)
{
	double pct = p->total_bytes ? 100.0 * (double)done_bytes / (double)p->total_bytes : 100.0;

	fprintf(stderr, "\r%s: %5.1f%% of %.1f MiB, %llu done%s", p->stage, pct,
		p->total_bytes / 1048576.0, (unsigned long long)items, end);
}

void erofs_progress_update(struct erofs_progress *p, uint64_t done_bytes, uint64_t items)
{
	struct timespec now;

	if (!p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - p->last.tv_sec) * 1000000000L + (now.tv_nsec - p->last.tv_nsec) <
	    100000000L)
		return;
	p->last = now;
	draw(p, done_bytes, items, "");
}

void erofs_progress_finish(struct erofs_progress *p, uint64_t items)
{
	if (p->enabled)
		draw(p, p->total_bytes, items, "\n");
}
