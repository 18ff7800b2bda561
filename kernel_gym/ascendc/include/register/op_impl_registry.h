// kgsim operator-project shim: IMPL_OP_OPTILING.
#pragma once
#include <utility>

// IMPL_OP_OPTILING(op).Tiling(fn)...: registers tiling functions in CANN's op-tiling registry; the
// simulator's operator projects register tiling through OpDef, so the chain is accepted and ignored.
namespace kgsim {
struct OpTilingImplRegistrar {
    template <class F> OpTilingImplRegistrar& Tiling(F&&) { return *this; }
    template <class F> OpTilingImplRegistrar& TilingParse(F&&) { return *this; }
    template <class F> OpTilingImplRegistrar& TilingInputsDataDependency(F&&) { return *this; }
    template <class... A> OpTilingImplRegistrar& InputsDataDependency(A&&...) { return *this; }
};
}  // namespace kgsim
#ifndef IMPL_OP_OPTILING
#define IMPL_OP_OPTILING(op) static ::kgsim::OpTilingImplRegistrar g_kgsim_optiling_##op = ::kgsim::OpTilingImplRegistrar()
#endif
