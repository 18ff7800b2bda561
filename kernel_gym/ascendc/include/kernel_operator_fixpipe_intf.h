// kgsim: Ascend C's basic-API header kernel_operator_fixpipe_intf.h (asc-devkit include/basic_api), one part of kernel_operator.h:
// the simulator declares the whole API there
#pragma once
#include "kernel_operator.h"
