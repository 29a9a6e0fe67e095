/* SPDX-License-Identifier: MIT */
#ifndef EROFS_IO_H
#define EROFS_IO_H
#endif
