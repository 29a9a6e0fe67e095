/* SPDX-License-Identifier: MIT */
/*
 * One progress line for the whole build on a terminal, redrawn at most ten
 * times a second: files and bytes read of the total the scan found so far,
 * bytes written, the rate, and once the scan is complete an estimate of
 * the time left.
 */
#ifndef EROFS_PROGRESS_H
#define EROFS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct erofs_progress {
	bool enabled;
	bool drawn;
	struct timespec start, last;
};

struct erofs_progress_state {
	uint64_t files_done, files_total;
	uint64_t bytes_read, bytes_total;
	uint64_t bytes_written;
	bool totals_known;		/* the scan is complete */
	const char *phase;		/* NULL: the data; else what follows it */
};

void erofs_progress_start(struct erofs_progress *p, bool enabled);
void erofs_progress_update(struct erofs_progress *p, const struct erofs_progress_state *s);
/* Draws the final state and ends the line. */
void erofs_progress_finish(struct erofs_progress *p, const struct erofs_progress_state *s);

#endif
