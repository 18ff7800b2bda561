// kgsim operator-project shim: tiling API umbrella (platform queries + tiling data).
#pragma once
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"
#include "kgsim/math_tiling.h"
#include "kgsim/matmul_tiling.h"
#include "kgsim/quantization_tiling.h"
#include "kgsim/index_tiling.h"
#include "kgsim/filter_tiling.h"
#include "kgsim/normalization_tiling.h"
#include "kgsim/topk_tiling.h"
#include "kgsim/sort_config_tiling.h"
#include "register/op_impl_registry.h"
