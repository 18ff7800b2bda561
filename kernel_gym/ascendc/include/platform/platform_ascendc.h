// platform/platform_ascendc.h: the include path some direct-launch samples use for the
// platform queries; the declarations live in tiling/platform/platform_ascendc.h.
#pragma once
#include "tiling/platform/platform_ascendc.h"
