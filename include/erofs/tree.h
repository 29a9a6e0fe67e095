/* SPDX-License-Identifier: MIT */
#ifndef EROFS_TREE_H
#define EROFS_TREE_H
#endif
