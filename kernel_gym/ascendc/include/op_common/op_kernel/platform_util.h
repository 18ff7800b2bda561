// kgsim: opbase's header at its installed path (op_common/op_kernel/platform_util.h), the simulator's op_kernel/platform_util.h
#pragma once
#include "op_kernel/platform_util.h"
