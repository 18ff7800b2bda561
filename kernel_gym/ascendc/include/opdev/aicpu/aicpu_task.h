// opdev/aicpu/aicpu_task.h for the kernel-gym Ascend C simulator: AI CPU tasks are not simulated
// (ADD_TO_LAUNCHER_LIST_AICPU reports so); the framework is opdev/kgsim_opdev.h.
#pragma once
#include "opdev/kgsim_opdev.h"
