// kgsim: opbase's header at its installed path (op_common/op_host/tiling_base_util.h), the simulator's op_host/tiling_base_util.h
#pragma once
#include "op_host/tiling_base_util.h"
