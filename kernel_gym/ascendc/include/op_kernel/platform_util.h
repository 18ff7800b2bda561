// kgsim: the kernel-side platform constants of CANN's operator base library (opbase,
// op_common/op_kernel/platform_util.h): the UB block (32 bytes) and the vector register (256 bytes)
// of the Atlas A2/A3 vector unit.
#pragma once
#include <cstdint>

#include "kernel_operator.h"

namespace Ops {
namespace Base {
__aicore__ inline constexpr uint32_t GetUbBlockSize() { return 32U; }
__aicore__ inline constexpr uint32_t GetVRegSize() { return 256U; }
}  // namespace Base
}  // namespace Ops
