// EXEC_NPU_CMD for a MultiKernelBench binding compiled into an
// operator-project unit (kernel_gym/ascendc/multikernelbench.py). Included by the generated unit
// after the project's files and the binding, before the entry points Python calls; uses the unit's
// kgsim_gen_op_* functions and KGSIM_GEN_KERNEL_PARAMS (the kernel's GM_ADDR parameter count).
#pragma once
#include "kgsim/aten_shim.h"

namespace kgsim_gen_bind {
namespace {
void exec(const char* api, std::vector<Arg> args) {
#ifdef KGSIM_GEN_IO_DTYPES
    // The unit's DTYPE_<NAME> macros were picked from the binding's own arguments; on the NPU the
    // tensors EXEC_NPU_CMD passes (after the binding's casts) pick the kernel. On a difference,
    // name those dtypes: the caller (multikernelbench.py) reruns with the kernel built for them.
    static const int64_t compiled[] = KGSIM_GEN_IO_DTYPES;
    std::string given;
    size_t k = 0;
    bool same = true;
    for (const auto& a : args) {
        if (a.kind != 0) continue;
        int64_t d = int64_t(a.tensor.scalar_type());
        given += (k ? "," : "") + std::to_string(d);
        same = same && k < std::size(compiled) && compiled[k] == d;
        ++k;
    }
    if (k == std::size(compiled) && !same) throw std::runtime_error("[kgsim:dtype_column " + given + "]");
#endif
    ::kgsim_gen_binding::exec(kgsim_gen_op_def(), kgsim_gen_op_launch_v, KGSIM_GEN_KERNEL_PARAMS, api, std::move(args));
}
}  // namespace
}  // namespace kgsim_gen_bind
