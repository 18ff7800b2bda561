// platform/platform_info.h: the platform-information types host tiling code reaches through
// `context->GetPlatformInfo()` (fe::PlatFormInfos), read with platform_ascendc::PlatformAscendC.
#pragma once
#include "tiling/platform/platform_ascendc.h"
