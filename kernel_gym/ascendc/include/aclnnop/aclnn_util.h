// aclnnop/aclnn_util.h for the kernel-gym Ascend C simulator: the aclnn layer's shared helpers, on
// the op-API framework of opdev/kgsim_opdev.h.
#pragma once
#include "opdev/kgsim_opdev.h"
