// aclnn_kernels/contiguous.h for the kernel-gym Ascend C simulator: CANN's built-in l0 ops, declared in
// opdev/kgsim_opdev.h and defined (host functions on the GM tensors) in opdev/kgsim_opdev_builtins.h.
#pragma once
#include "opdev/kgsim_opdev.h"
