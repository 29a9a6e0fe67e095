/* SPDX-License-Identifier: MIT */
/*
 * The bottom of the reader (lib/read/rbase.c): beside erofs_reader_fail()
 * and erofs_dev_read() (reader.h, used by the layers above too), the names
 * of a mask's bits for messages.
 */
#ifndef EROFS_RBASE_H
#define EROFS_RBASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* Internal: names for the bits of a feature or algorithm mask. */
struct erofs_bitname {
	uint32_t bit;
	const char *name;
};

/* Writes the names of the bits set in mask ("a, b, unknown bits 0x..."). */
const char *erofs_name_bits(char *out, size_t len, uint32_t mask,
			    const struct erofs_bitname *names, size_t n);

#endif
