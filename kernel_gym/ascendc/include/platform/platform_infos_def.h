// kgsim: platform/platform_infos_def.h of CANN's platform package: fe::PlatFormInfos, what a
// TilingContext's GetPlatformInfo() points to (the simulator's, answered from the SoC profile).
#pragma once
#include "tiling/platform/platform_ascendc.h"
