// kgsim: aclnn/opdev/platform.h, the op-API framework's platform queries at their path in the aclnn package
// (op::GetCurrentPlatformInfo, SocVersion, NpuArch), the simulator's opdev/platform.h
#pragma once
#include "opdev/platform.h"
