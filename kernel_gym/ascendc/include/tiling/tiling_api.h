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
#include "kgsim/layernorm_rstd_tiling.h"
#include "kgsim/confusion_transpose_tiling.h"
#include <map>
// Host code of the operator library writes `map<...>` unqualified after including this header:
// CANN's host headers make std::map visible at file scope.
using std::map;
#include "kgsim/topk_tiling.h"
#include "kgsim/sort_config_tiling.h"
#include "register/op_impl_registry.h"
