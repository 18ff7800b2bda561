// aclnn_kernels/pad.h for the kernel-gym Ascend C simulator: CANN's built-in l0 ops, declared in
// opdev/kgsim_opdev.h and defined (host functions on the GM tensors) in opdev/kgsim_opdev_builtins.h.
#pragma once
#include "opdev/kgsim_opdev.h"
namespace l0op {
// zeros around self: paddings holds (before, after) per axis (opdev/kgsim_opdev_builtins.h)
const aclTensor* Pad(const aclTensor* self, const aclTensor* paddings, aclOpExecutor* executor);
}  // namespace l0op
