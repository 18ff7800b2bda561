// EXEC_NPU_CMD for a MultiKernelBench binding compiled into an
// operator-project unit (kernel_gym/ascendc/multikernelbench.py). Included by the generated unit
// after the project's files and the binding, before the entry points Python calls; uses the unit's
// kgsim_gen_op_* functions and KGSIM_GEN_KERNEL_PARAMS (the kernel's GM_ADDR parameter count).
#pragma once
#include "kgsim/aten_shim.h"

namespace kgsim_gen_bind {
namespace {
void exec(const char* api, std::vector<Arg> args) {
    ::kgsim_gen_binding::exec(kgsim_gen_op_def(), kgsim_gen_op_launch_v, KGSIM_GEN_KERNEL_PARAMS, api, std::move(args));
}
}  // namespace
}  // namespace kgsim_gen_bind
