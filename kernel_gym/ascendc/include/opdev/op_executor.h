// opdev/op_executor.h for the kernel-gym Ascend C simulator: CANN's op-API framework, as opdev/kgsim_opdev.h
// models it (one header for the whole framework).
#pragma once
#include "opdev/kgsim_opdev.h"
