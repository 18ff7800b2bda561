"""Scalar-loop kernels (the hot loop is plain C++ over GlobalTensor::GetValue/SetValue): a
convolution window costs its documented hits and fills, a valid block of many simulated seconds
runs, and an endless loop of plain scalar code (no API call in it) is still stopped."""

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loader import _OPTION_DEFAULTS, _config_for, default_watchdog_cycles

# A 3x3 window over 3 channels of an [C, H, W, D] float tensor, one output element per iteration,
# as KernelBench's scalar 3-D convolutions walk it (D fastest). The channel planes lie 2.5 MiB apart
# and the rows 10 KiB apart: under a 4-way cache indexed by line number mod 64 sets, rows 0 and 2 of
# all three channels share one set, 6 lines in 4 ways.
WINDOW = r"""
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t H = 256, W = 256, D = 10, WO = W - 2;
constexpr uint32_t XW = D, XH = W * D, XC = H * W * D;

extern "C" __global__ __aicore__ void window_kernel(GM_ADDR x, GM_ADDR y, uint32_t first, uint32_t count)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    for (uint32_t e = first; e < first + count; ++e) {
        uint32_t d = e % D, wo = (e / D) % WO, ho = e / D / WO;
        uint32_t b = ho * XH + wo * XW + d;
        float acc = 0.0f;
#define KG_ROW(c, r) \
        acc += xGm.GetValue(b + c * XC + r * XH) + xGm.GetValue(b + c * XC + r * XH + XW) + \
               xGm.GetValue(b + c * XC + r * XH + 2 * XW);
        KG_ROW(0, 0) KG_ROW(0, 1) KG_ROW(0, 2) KG_ROW(1, 0) KG_ROW(1, 1) KG_ROW(1, 2)
        KG_ROW(2, 0) KG_ROW(2, 1) KG_ROW(2, 2)
        yGm.SetValue(e, acc);
    }
}

extern "C" void window_do(uint8_t* x, uint8_t* y, uint32_t first, uint32_t count)
{
    window_kernel<<<1, nullptr, nullptr>>>(x, y, first, count);
}
"""

HIT, FILL = 4.0, 100.0  # scalar_dcache_hit_cycles, scalar_gm_access_cycles of the 910B2 profile
FIRST = 20000  # away from the tensor's start: a steady window


def _window_cycles_per_element(mod, x, y):
    """Scalar cycles of one more output element, by difference of two runs (start-up cancels)."""
    busy = []
    for count in (2000, 4000):
        mod.window_do(x, y, FIRST, count)
        busy.append(mod.last_run.per_pipe_busy["S"])
    return (busy[1] - busy[0]) / 2000


@pytest.fixture(scope="module")
def window():
    x = torch.rand(3 * 256 * 256 * 10)
    y = torch.zeros(FIRST + 4000)
    return x, y


def test_a_convolution_window_refills_only_lines_it_has_not_touched(window):
    x, y = window
    assoc = {"scalar_dcache_ways": 0}  # fully associative: misses on first touch and capacity only
    full = asc.load(WINDOW, name="window.cpp", soc_overrides=assoc)
    no_fill = asc.load(WINDOW, name="window.cpp", soc_overrides={**assoc, "scalar_gm_access_cycles": 0})
    no_hit = asc.load(WINDOW, name="window.cpp", soc_overrides={**assoc, "scalar_dcache_hit_cycles": 0})
    per_elem = _window_cycles_per_element(full, x, y)
    want = x.view(3, 256, 256, 10).unfold(1, 3, 1).unfold(2, 3, 1).sum((0, -1, -2)).flatten()
    assert torch.allclose(y[FIRST : FIRST + 4000], want[FIRST : FIRST + 4000], rtol=1e-5)
    fills = (per_elem - _window_cycles_per_element(no_fill, x, y)) / FILL
    hits = (per_elem - _window_cycles_per_element(no_hit, x, y)) / HIT
    # 28 accesses per element (27 reads, 1 write), each a hit or a fill
    assert hits + fills == pytest.approx(28, abs=0.01)
    # new lines per element: 9 window rows advance 4 bytes per element (a new 64-byte line every 16
    # elements, 9/16), and the output stream another 1/16; no conflict misses on top
    assert fills == pytest.approx(10 / 16, abs=0.1)


def test_the_four_way_default_thrashes_on_power_of_two_strides(window):
    # the profile's 4-way, modulo-indexed geometry (fitted on level-2 scalar convolutions): a
    # 3-channel window over 256 x 256 planes puts its rows in the same sets
    x, y = window
    four_way = asc.load(WINDOW, name="window.cpp")
    no_fill = asc.load(WINDOW, name="window.cpp", soc_overrides={"scalar_gm_access_cycles": 0})
    fills = (_window_cycles_per_element(four_way, x, y) - _window_cycles_per_element(no_fill, x, y)) / FILL
    assert fills > 8  # rows 0 and 2 of each channel (12 of 27 reads) evict each other


SPIN = r"""
#include "kernel_operator.h"
using namespace AscendC;

// n iterations of plain scalar code with no API call in the loop (n = 0: until the GM flag is set,
// which nothing does: an endless loop)
extern "C" __global__ __aicore__ void spin_kernel(GM_ADDR flag, GM_ADDR y, uint32_t n)
{
    volatile __gm__ int32_t* f = (volatile __gm__ int32_t*)flag;
    uint32_t i = 0;
    while (n ? i < n : *f == 0) ++i;
    GlobalTensor<int32_t> yGm;
    yGm.SetGlobalBuffer((__gm__ int32_t*)y);
    yGm.SetValue(0, (int32_t)i);
}

extern "C" void spin_do(uint8_t* flag, uint8_t* y, uint32_t n) { spin_kernel<<<1, nullptr, nullptr>>>(flag, y, n); }
"""


def test_the_default_watchdog_is_the_npus_operator_timeout() -> None:
    profile = asc.SOC_PROFILES["Ascend910B2"]
    assert default_watchdog_cycles(profile) == pytest.approx(1091 * 1.85e9)
    # the API-call backstop allows as many calls as the cycle budget has cycles (GetValue is an API
    # call: 1e9 stopped a scalar convolution the 910B runs in 5 s)
    config = _config_for(profile, "npu", _OPTION_DEFAULTS)
    assert config["watchdog_cycles"] == config["watchdog_calls"] == default_watchdog_cycles(profile)
    assert _config_for(profile, "npu", {**_OPTION_DEFAULTS, "watchdog_cycles": 1e8})["watchdog_calls"] == 1e8
    # a block of over 16 simulated seconds (the 910B runs scalar convolutions of 3 to 14 s): each of
    # the loop's basic blocks made to cost 1e4 cycles, 3 million iterations
    slow = {"scalar_block_cycles": 1e4}
    flag, y = torch.zeros(16, dtype=torch.int32), torch.zeros(16, dtype=torch.int32)
    mod = asc.load(SPIN, name="spin.cpp", soc_overrides=slow)
    mod.spin_do(flag, y, 3_000_000)
    assert y[0].item() == 3_000_000
    assert mod.last_run.latency_s > 16
    # the bound before (2e10 cycles, 10.8 s) called it an endless loop
    old = asc.load(SPIN, name="spin.cpp", soc_overrides=slow, watchdog_cycles=2e10)
    with pytest.raises(asc.Watchdog, match="simulated cycles"):
        old.spin_do(flag, y, 3_000_000)


@pytest.mark.parametrize(
    "opts,fragment",
    [({"watchdog_cycles": 1e8}, "simulated cycles"), ({"watchdog_s": 0.5}, "host time.*sampled=True")],
    ids=["cycles", "host_time"],
)
def test_an_endless_loop_of_plain_scalar_code_is_stopped(opts, fragment) -> None:
    # no API call inside the loop: the basic-block counter checks the watchdog's bounds
    mod = asc.load(SPIN, name="spin.cpp", **opts)
    flag, y = torch.zeros(16, dtype=torch.int32), torch.zeros(16, dtype=torch.int32)
    with pytest.raises(asc.Watchdog, match=fragment):
        mod.spin_do(flag, y, 0)
    # the launch after a trapped block runs normally
    mod.spin_do(flag, y, 100)
    assert y[0].item() == 100
