/* SPDX-License-Identifier: MIT */
/* The features a build's options need of the kernel (lib/build/kneeds.c). */
#ifndef EROFS_KNEEDS_H
#define EROFS_KNEEDS_H

#include "erofs/common/build.h"
#include "erofs/common/kernel.h"

/* Fills needs from what the options will write. */
void erofs_kneeds_from_options(const struct erofs_build_options *opts,
			       struct erofs_kneeds *needs);

#endif
