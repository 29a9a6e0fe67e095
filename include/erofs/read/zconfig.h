/* SPDX-License-Identifier: MIT */
/*
 * The superblock's compression settings (lib/read/zconfig.c): available
 * algorithms and their configuration records, loaded when the image opens.
 */
#ifndef EROFS_ZCONFIG_H
#define EROFS_ZCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/read/reader.h"

/* Superblock: available algorithms and their configuration records. */
int erofs_z_load_config(struct erofs_reader *r);

#endif
