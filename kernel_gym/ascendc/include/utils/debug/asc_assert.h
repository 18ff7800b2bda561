// kgsim: the kernel-side assert header of the newer Ascend C layout: assert(expr) as in <cassert>
// (a failed assert ends the run; compiled out under NDEBUG, as on the NPU).
#pragma once
#include <cassert>
#include "kernel_operator.h"
