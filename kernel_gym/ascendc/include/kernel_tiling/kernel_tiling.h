// kernel_tiling/kernel_tiling.h for the kernel-gym Ascend C simulator: the tiling structs of the
// high-level APIs as the kernel sees them (TCubeTiling for Matmul), shared with the host side.
// Samples define their own tiling structs next to these; kernels copy them from GM by value.
#pragma once
#include <cstdint>
#include "kgsim/matmul_tiling.h"
