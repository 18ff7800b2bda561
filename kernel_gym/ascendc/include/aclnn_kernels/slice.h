// aclnn_kernels/slice.h for the kernel-gym Ascend C simulator: CANN's built-in l0 Slice, defined (a
// host function on the GM tensors) in opdev/kgsim_opdev_builtins.h.
#pragma once
#include "opdev/kgsim_opdev.h"
namespace l0op {
const aclTensor* Slice(const aclTensor* x, const aclIntArray* offsets, const aclIntArray* size,
                       aclOpExecutor* executor);
}
