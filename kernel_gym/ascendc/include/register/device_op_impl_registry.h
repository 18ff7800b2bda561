// kgsim operator-project shim: DEVICE_IMPL_OP_OPTILING.
#pragma once
#include "register/op_impl_registry.h"

// DEVICE_IMPL_OP_OPTILING(op).Tiling(fn): "tiling sink", the tiling function also run on the
// device. The simulator runs the host TilingFunc for every launch, which gives the kernel the same
// tiling, so the registration is accepted and ignored (an unnamed registrar).
#ifndef DEVICE_IMPL_OP_OPTILING
#define DEVICE_IMPL_OP_OPTILING(op) \
    static ::kgsim::OpImplRegistrar g_kgsim_device_optiling_##op = ::kgsim::OpImplRegistrar()
#endif
