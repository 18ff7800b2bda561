// kernel_operator.h for the kernel-gym Ascend C simulator (kgsim): the Ascend C kernel API,
// implemented for the CPU. See kernel_gym/ascendc/README.md for the supported subset.
#pragma once
#include "kgsim/base.h"
#include "kgsim/tensor.h"
#include "kgsim/copy.h"
#include "kgsim/vector.h"
#include "kgsim/math.h"
#include "kgsim/rearrange.h"
#include "kgsim/static_tensor.h"
#include "kgsim/cube.h"
#include "kgsim/cores.h"
#include "kgsim/launch.h"
#include "tiling/platform/platform_ascendc.h"
