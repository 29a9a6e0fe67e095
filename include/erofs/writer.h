/* SPDX-License-Identifier: MIT */
#ifndef EROFS_WRITER_H
#define EROFS_WRITER_H
#endif
