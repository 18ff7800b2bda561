// kgsim: CANN's internal header of the Atlas A2 (dav_c220) register helpers, which some of the
// library's older kernels include by name; what they use of it is in kernel_operator.h.
#pragma once
#include "kernel_operator.h"
