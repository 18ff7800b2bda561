"""Scalar code is charged per machine basic block: a select that the compiler turns into a
branch-free max costs what an add does, while a real branch still costs its blocks."""

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

template <bool kMax>
__aicore__ inline void fold(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    float m = xGm.GetValue(0), v;
    for (uint32_t i = 0; i + 4 <= n; i += 4) {
        v = xGm.GetValue(i + 0); m = kMax ? ((v > m) ? v : m) : m + v;
        v = xGm.GetValue(i + 1); m = kMax ? ((v > m) ? v : m) : m + v;
        v = xGm.GetValue(i + 2); m = kMax ? ((v > m) ? v : m) : m + v;
        v = xGm.GetValue(i + 3); m = kMax ? ((v > m) ? v : m) : m + v;
    }
    yGm.SetValue(0, m);
}

extern "C" __global__ __aicore__ void max_kernel(GM_ADDR x, GM_ADDR y, uint32_t n) { fold<true>(x, y, n); }
extern "C" __global__ __aicore__ void sum_kernel(GM_ADDR x, GM_ADDR y, uint32_t n) { fold<false>(x, y, n); }

extern "C" void max_do(uint8_t* x, uint8_t* y, uint32_t n) { max_kernel<<<1, nullptr, nullptr>>>(x, y, n); }
extern "C" void sum_do(uint8_t* x, uint8_t* y, uint32_t n) { sum_kernel<<<1, nullptr, nullptr>>>(x, y, n); }
"""

N = 4096


def test_a_select_costs_no_basic_block_of_its_own() -> None:
    mod = asc.load(SOURCE, name="scalar_blocks.cpp")
    x, y = torch.randn(N), torch.zeros(8)
    mod.max_do(x, y, N)
    assert y[0].item() == x.max().item()
    max_s = mod.last_run.per_pipe_busy["S"]
    mod.sum_do(x, y, N)
    sum_s = mod.last_run.per_pipe_busy["S"]
    # the same loads, the same loop: without merging, each of the 4 selects per iteration would add a
    # block (scalar_block_cycles) per iteration, 1024 x 4 x 4 cycles on top of the sum's
    assert max_s == sum_s


def test_the_compile_service_allows_only_the_simulators_own_assembler_folder() -> None:
    from kernel_gym.ascendc.loader import SCALAR_INSTRUMENTATION, TOOLCHAIN_DIR
    from kernel_gym.backends import get_backend
    from kernel_gym.verify.compile_service import CompileService

    service = CompileService(sandboxed=False, backend=get_backend("ascend_sim"))
    assert f"-B{TOOLCHAIN_DIR}" in SCALAR_INSTRUMENTATION
    assert service._check_flags(list(SCALAR_INSTRUMENTATION), "ascendc") is None
    # another -B folder would let an answer pick the assembler (or compiler) a kernel is built with
    assert service._check_flags([f"-B{TOOLCHAIN_DIR.parent / 'include'}"], "ascendc") is not None
    assert service._check_flags(["-B/usr/bin"], "ascendc") is not None


# One UB scalar access per extra call: the loop is the same, so the difference between one and two
# accesses per iteration is exactly one access's documented cost (scalar_ub_access_cycles). The
# accessors' own bounds and initialisation checks are the simulator's and must not add kernel blocks.
ACCESS_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

template <int K, int MODE>
__aicore__ inline void access(GM_ADDR y, uint32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2048 * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y);
    Duplicate(t, 1.0f, 2048);
    PipeBarrier<PIPE_ALL>();
    float acc = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if constexpr (MODE == 0) { acc += t.GetValue(i); if constexpr (K == 2) acc += t.GetValue(i + 1); }
        if constexpr (MODE == 1) { t.SetValue(i, acc); if constexpr (K == 2) t.SetValue(i + 1, acc); acc += 1.0f; }
        if constexpr (MODE == 2) { acc += t(i); if constexpr (K == 2) acc += t(i + 1); }
    }
    yGm.SetValue(0, acc);
}
"""
ACCESS_KINDS = {"get": 0, "set": 1, "call": 2}
for _name, _mode in ACCESS_KINDS.items():
    for _k in (1, 2):
        ACCESS_SOURCE += (
            f'extern "C" __global__ __aicore__ void {_name}{_k}_kernel(GM_ADDR y, uint32_t n) '
            f"{{ access<{_k}, {_mode}>(y, n); }}\n"
            f'extern "C" void {_name}{_k}(uint8_t* y, uint32_t n) '
            f"{{ {_name}{_k}_kernel<<<1, nullptr, nullptr>>>(y, n); }}\n"
        )


@pytest.mark.parametrize("kind", list(ACCESS_KINDS))
def test_a_ub_scalar_access_costs_its_access_and_no_basic_block(kind: str) -> None:
    mod = asc.load(ACCESS_SOURCE, name="scalar_access.cpp")
    y, n = torch.zeros(8), 1000
    s = []
    for k in (1, 2):
        getattr(mod, f"{kind}{k}")(y, n)
        assert mod.last_run.ok
        s.append(mod.last_run.per_pipe_busy["S"])
    per_access = asc.SOC_PROFILES["Ascend910B2"].scalar_ub_access_cycles
    # (a GetValue's inlined checks used to add 3 blocks of scalar_block_cycles per access, operator() 1)
    assert (s[1] - s[0]) / n == pytest.approx(per_access, abs=0.01)
