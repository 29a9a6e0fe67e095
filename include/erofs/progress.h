/* SPDX-License-Identifier: MIT */
/* A progress line on a terminal, redrawn at most ten times a second. */
#ifndef EROFS_PROGRESS_H
#define EROFS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct erofs_progress {
	bool enabled;
	const char *stage;		/* "compressing", "writing" */
	uint64_t total_bytes;
	struct timespec last;
};

void erofs_progress_start(struct erofs_progress *p, bool enabled, const char *stage,
			  uint64_t total_bytes);
/* done_bytes of total_bytes; items counts what the stage handles (files, inodes) */
void erofs_progress_update(struct erofs_progress *p, uint64_t done_bytes, uint64_t items);
void erofs_progress_finish(struct erofs_progress *p, uint64_t items);

#endif
