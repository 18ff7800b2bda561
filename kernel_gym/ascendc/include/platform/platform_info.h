// platform/platform_info.h: the platform-information types host tiling code reaches through
// `context->GetPlatformInfo()` (fe::PlatFormInfos), read with platform_ascendc::PlatformAscendC.
#pragma once
#include "tiling/platform/platform_ascendc.h"
#include <map>
#include <string>
#include <vector>

// CANN's platform_info.h makes these three names visible at global scope, and host code written
// against it uses them unqualified (`vector<int64_t> shape;`)
using std::map;
using std::string;
using std::vector;
