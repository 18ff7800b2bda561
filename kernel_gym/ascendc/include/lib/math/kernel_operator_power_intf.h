// lib/math/kernel_operator_power_intf.h: the advanced math API header; the simulator declares its math
// APIs in kernel_operator.h (as CANN's kernel_operator.h includes this header too).
#pragma once
#include "kernel_operator.h"
