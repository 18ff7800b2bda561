// kgsim: the kernel-side integer helpers of CANN's operator base library (opbase,
// op_common/op_kernel/math_util.h): Ops::Base::CeilDiv / FloorDiv / CeilAlign / FloorAlign, the same
// functions as the host side's util/math_util.h (one definition, so a unit may include both).
#pragma once
#include "util/math_util.h"
