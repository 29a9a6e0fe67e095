/* SPDX-License-Identifier: MIT */
#ifndef EROFS_LAYOUT_H
#define EROFS_LAYOUT_H
#endif
