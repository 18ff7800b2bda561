// kgsim: opbase's header at its installed path (op_common/op_kernel/math_util.h), the simulator's op_kernel/math_util.h
#pragma once
#include "op_kernel/math_util.h"
