// kgsim operator-project shim: tiling API umbrella (platform queries + tiling data).
#pragma once
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"
