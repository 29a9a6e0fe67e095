/* SPDX-License-Identifier: MIT */
#ifndef EROFS_XATTR_H
#define EROFS_XATTR_H
#endif
