"""Scalar data-cache misses in flight together (scalar_gm_outstanding_misses): line fills issued in
one basic block, before a branch that uses them, overlap up to that many at a time; a fill in
another block starts a new group. A sum over a dimension that loads eight strided elements per step
pays a fill per group of them; an argmax that compares after every load pays every fill."""

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

// rows x cols floats, row-major; each column reduced over its rows by strided scalar loads, so
// every load touches a new 64-byte line.
// MODE 0: eight independent loads per step, then their sum (one basic block per step);
// MODE 1: a compare and branch after every load (an argmax: one block per load).
template <int MODE>
__aicore__ inline void reduce(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    for (uint32_t c = 0; c < cols; ++c) {
        if constexpr (MODE == 0) {
            float acc = 0.0f;
            for (uint32_t r = 0; r < rows; r += 8) {
                const uint32_t i = r * cols + c;
                float v0 = xGm.GetValue(i), v1 = xGm.GetValue(i + cols), v2 = xGm.GetValue(i + 2 * cols),
                      v3 = xGm.GetValue(i + 3 * cols), v4 = xGm.GetValue(i + 4 * cols), v5 = xGm.GetValue(i + 5 * cols),
                      v6 = xGm.GetValue(i + 6 * cols), v7 = xGm.GetValue(i + 7 * cols);
                acc += ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7));
            }
            yGm.SetValue(c, acc);
        } else {
            float best = xGm.GetValue(c);
            uint32_t arg = 0;
            for (uint32_t r = 1; r < rows; ++r) {
                float v = xGm.GetValue(r * cols + c);
                if (v > best) { best = v; arg = r; asm volatile("" ::: "memory"); }
            }
            yGm.SetValue(c, float(arg));
        }
    }
}
"""
for _mode in range(2):
    SOURCE += (
        f'extern "C" __global__ __aicore__ void reduce{_mode}_kernel(GM_ADDR x, GM_ADDR y, uint32_t rows, '
        f"uint32_t cols) {{ reduce<{_mode}>(x, y, rows, cols); }}\n"
        f'extern "C" void reduce{_mode}(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols) '
        f"{{ reduce{_mode}_kernel<<<1, nullptr, nullptr>>>(x, y, rows, cols); }}\n"
    )

ROWS, COLS = 512, 64  # a row is 256 B: each strided load is a line of its own, 2048 lines > 16 KB cache
FILL = asc.SOC_PROFILES["Ascend910B2"].scalar_gm_access_cycles
HIT = asc.SOC_PROFILES["Ascend910B2"].scalar_dcache_hit_cycles


@pytest.fixture(scope="module")
def mods():
    return {
        k: asc.load(SOURCE, name="miss_overlap.cpp", soc_overrides={"scalar_gm_outstanding_misses": k})
        for k in (1, 2, 4)
    }


# one input and one output for every run: their lines' cache sets (the cache is set-associative),
# and the argmax's branches, the same each time
X = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(0))
Y = torch.zeros(COLS)


def _scalar_cycles(mod, mode: int) -> float:
    x, y = X, Y.zero_()
    getattr(mod, f"reduce{mode}")(x, y, ROWS, COLS)
    assert mod.last_run.ok
    want = x.sum(0) if mode == 0 else x.argmax(0).float()
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)
    return mod.last_run.per_pipe_busy["S"]


def test_the_constant_is_an_assumed_profile_constant() -> None:
    profile = asc.SOC_PROFILES["Ascend910B2"]
    assert profile.scalar_gm_outstanding_misses >= 1
    assert "assumed" in profile.source("scalar_gm_outstanding_misses") or "fitted" in profile.source(
        "scalar_gm_outstanding_misses"
    )


@pytest.mark.parametrize("k", [2, 4])
def test_independent_loads_of_one_block_share_their_fills(mods, k: int) -> None:
    one, more = _scalar_cycles(mods[1], 0), _scalar_cycles(mods[k], 0)
    fills = ROWS * COLS  # every load misses
    # of each group of k fills, all but the first cost their issue (a hit) instead of a fill
    assert one - more == pytest.approx(fills * (k - 1) / k * (FILL - HIT), rel=0.02)


def test_a_load_used_by_a_branch_waits_for_its_fill(mods) -> None:
    one, more = _scalar_cycles(mods[1], 1), _scalar_cycles(mods[4], 1)
    # a compare and branch after every load: inside a column no two fills share a block; at most a
    # column's first load shares one with the previous column's store
    assert 0 <= one - more <= COLS * (FILL - HIT)
    assert one >= ROWS * COLS * FILL
