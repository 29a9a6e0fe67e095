/* SPDX-License-Identifier: MIT */
#ifndef EROFS_DIR_H
#define EROFS_DIR_H
#endif
