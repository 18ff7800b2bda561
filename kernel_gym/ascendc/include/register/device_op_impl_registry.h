// kgsim operator-project shim: DEVICE_IMPL_OP_OPTILING.
#pragma once
#include "register/op_impl_registry.h"

// DEVICE_IMPL_OP_OPTILING(op).Tiling(fn): "tiling sink", the tiling function also run on the
// device. The simulator runs the OpDef's TilingFunc on the host for every launch, which gives the
// kernel the same tiling, so the registration is accepted and ignored.
#ifndef DEVICE_IMPL_OP_OPTILING
#define DEVICE_IMPL_OP_OPTILING(op) \
    static ::kgsim::OpTilingImplRegistrar g_kgsim_device_optiling_##op = ::kgsim::OpTilingImplRegistrar()
#endif
