// SPDX-License-Identifier: MIT
/* placeholder until written */
#include "erofs/writer.h"
