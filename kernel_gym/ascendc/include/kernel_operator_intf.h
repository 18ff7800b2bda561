// kernel_operator_intf.h for the kgsim simulator: asc-devkit's interface header that gathers the
// basic API's interface headers (data copy, vector, scalar, cube, synchronisation, system variables)
// and the advanced APIs; kernel_operator.h declares the same set here, so this header is that one.
#pragma once
#include "kernel_operator.h"
