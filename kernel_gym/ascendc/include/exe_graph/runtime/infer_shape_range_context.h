// exe_graph/runtime/infer_shape_range_context.h for the kernel-gym Ascend C simulator:
// gert::InferShapeRangeContext, in register/op_def_registry.h.
#pragma once
#include "register/op_def_registry.h"
