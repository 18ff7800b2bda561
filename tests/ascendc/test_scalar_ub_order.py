"""The scalar unit's UB accesses in program order: a load issued right after a store to UB waits for
the store (scalar_ub_store_load_cycles). An in-place scan (load x[i], combine, store x[i], load
x[i+1]) pays it once per element; the same scan that loads a group of elements before storing them
pays it once per group. The accessor forms (operator(), GetValue/SetValue) count alike."""

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

// MODE 0: in place through operator(); 1: in place through GetValue/SetValue; 2: a group of 8 loads,
// then their 8 stores (one store-then-load per group)
template <int MODE>
__aicore__ inline void scan(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096 * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    DataCopy(t, xGm, n);
    PipeBarrier<PIPE_ALL>();
    float carry = 1.0f;
    if constexpr (MODE == 0) {
        for (uint32_t i = 0; i < n; ++i) { carry *= t(i); t(i) = carry; }
    } else if constexpr (MODE == 1) {
        for (uint32_t i = 0; i < n; ++i) { carry *= t.GetValue(i); t.SetValue(i, carry); }
    } else {
        for (uint32_t i = 0; i < n; i += 8) {
            float v[8];
            for (int k = 0; k < 8; ++k) v[k] = t(i + k);
            for (int k = 0; k < 8; ++k) { carry *= v[k]; t(i + k) = carry; }
        }
    }
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, t, n);
}
"""
for _mode in range(3):
    SOURCE += (
        f'extern "C" __global__ __aicore__ void scan{_mode}_kernel(GM_ADDR x, GM_ADDR y, uint32_t n) '
        f"{{ scan<{_mode}>(x, y, n); }}\n"
        f'extern "C" void scan{_mode}(uint8_t* x, uint8_t* y, uint32_t n) '
        f"{{ scan{_mode}_kernel<<<1, nullptr, nullptr>>>(x, y, n); }}\n"
    )

N = 2048
WAIT = asc.SOC_PROFILES["Ascend910B2"].scalar_ub_store_load_cycles


@pytest.fixture(scope="module")
def mods():
    # the same kernels with the wait switched off: the difference in scalar time is the wait alone
    return asc.load(SOURCE, name="ub_order.cpp"), asc.load(
        SOURCE, name="ub_order.cpp", soc_overrides={"scalar_ub_store_load_cycles": 0}
    )


def _scalar_cycles(mod, mode: int) -> float:
    x, y = torch.rand(N) * 0.02 + 0.99, torch.zeros(N)
    getattr(mod, f"scan{mode}")(x, y, N)
    assert mod.last_run.ok
    torch.testing.assert_close(y, torch.cumprod(x, 0), rtol=1e-4, atol=1e-6)
    return mod.last_run.per_pipe_busy["S"]


def test_the_constant_is_a_fitted_profile_constant() -> None:
    profile = asc.SOC_PROFILES["Ascend910B2"]
    assert WAIT > 0
    assert "fitted" in profile.source("scalar_ub_store_load_cycles")


@pytest.mark.parametrize("mode", [0, 1], ids=["operator()", "GetValue/SetValue"])
def test_an_in_place_scan_waits_once_per_element(mods, mode: int) -> None:
    waits, free = (_scalar_cycles(m, mode) for m in mods)
    # every load but the first follows the previous element's store
    assert waits - free == pytest.approx((N - 1) * WAIT, abs=0.5)


def test_a_scan_that_loads_a_group_before_storing_waits_once_per_group(mods) -> None:
    waits, free = (_scalar_cycles(m, 2) for m in mods)
    # the first load of every group but the first follows the previous group's last store
    assert waits - free == pytest.approx((N // 8 - 1) * WAIT, abs=0.5)
