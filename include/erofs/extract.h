/* SPDX-License-Identifier: MIT */
#ifndef EROFS_EXTRACT_H
#define EROFS_EXTRACT_H
#endif
