// kernel_log.h for the kernel-gym Ascend C simulator: the kernel debug log (KERNEL_LOG) and
// assertions, compiled out of an NPU build as in kgsim/vector.h.
#pragma once
#include "kernel_operator.h"
