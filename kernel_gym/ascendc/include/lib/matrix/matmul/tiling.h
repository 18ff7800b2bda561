// lib/matrix/matmul/tiling.h: the Matmul tiling structures the kernel side reads.
#pragma once
#include "lib/matmul_intf.h"
