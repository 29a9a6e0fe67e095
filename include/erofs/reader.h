/* SPDX-License-Identifier: MIT */
#ifndef EROFS_READER_H
#define EROFS_READER_H
#endif
