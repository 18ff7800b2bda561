// exe_graph/runtime/range.h for the kernel-gym Ascend C simulator: gert::Range, in
// register/op_def_registry.h.
#pragma once
#include "register/op_def_registry.h"
