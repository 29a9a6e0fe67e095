// SPDX-License-Identifier: MIT
/* placeholder until written */
#include "erofs/io.h"
