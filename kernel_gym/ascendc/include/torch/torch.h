// torch/torch.h for the simulator: the slice of torch that operator bindings use (kgsim/aten_shim.h).
#pragma once
#include "kgsim/aten_shim.h"
