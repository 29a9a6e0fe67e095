/* SPDX-License-Identifier: MIT */
#ifndef EROFS_BUILD_H
#define EROFS_BUILD_H
#endif
