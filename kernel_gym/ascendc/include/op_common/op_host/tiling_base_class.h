// kgsim: opbase's header at its installed path (op_common/op_host/tiling_base_class.h), the simulator's op_host/tiling_base_class.h
#pragma once
#include "op_host/tiling_base_class.h"
