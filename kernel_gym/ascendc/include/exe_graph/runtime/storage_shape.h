// exe_graph/runtime/storage_shape.h for the kernel-gym Ascend C simulator: gert's runtime types, all in
// register/op_def_registry.h.
#pragma once
#include "register/op_def_registry.h"
