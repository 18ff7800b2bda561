"""SyncAll across the blocks of a launch: a real barrier (blocks suspend until all arrive), its
simulated cost, and the faults the NPU would show as a hang."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

# Phase 1: every block sums its slice into partial[block]. SyncAll. Phase 2: every block reads all
# partial sums (written by the other blocks) and divides its slice by the total.
NORMALISE = r'''
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 1024;

__global__ __aicore__ void normalise(GM_ADDR x, GM_ADDR y, GM_ADDR partial, uint32_t perBlock, int32_t skipOn)
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf, work, one;
    pipe.InitBuffer(buf, TILE * sizeof(float));
    pipe.InitBuffer(work, TILE * sizeof(float));
    pipe.InitBuffer(one, 32);
    GlobalTensor<float> xGm, yGm, pGm;
    uint32_t b = GetBlockIdx();
    xGm.SetGlobalBuffer((__gm__ float*)x + b * perBlock, perBlock);
    yGm.SetGlobalBuffer((__gm__ float*)y + b * perBlock, perBlock);
    pGm.SetGlobalBuffer((__gm__ float*)partial, GetBlockNum());
    LocalTensor<float> t = buf.Get<float>();
    LocalTensor<float> w = work.Get<float>();
    LocalTensor<float> s = one.Get<float>();
    float acc = 0.0f;
    for (uint32_t off = 0; off < perBlock; off += TILE) {
        DataCopy(t, xGm[off], TILE);
        PipeBarrier<PIPE_ALL>();
        ReduceSum(s, t, w, TILE);
        PipeBarrier<PIPE_ALL>();
        acc += s.GetValue(0);
    }
    pGm.SetValue(b, acc);
    if ((int32_t)b == skipOn) return;   // a block that leaves early: the others wait forever
    SyncAll();
    float total = 0.0f;
    for (uint32_t k = 0; k < GetBlockNum(); ++k) total += pGm.GetValue(k);
    for (uint32_t off = 0; off < perBlock; off += TILE) {
        DataCopy(t, xGm[off], TILE);
        PipeBarrier<PIPE_ALL>();
        Muls(t, t, 1.0f / total, TILE);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm[off], t, TILE);
        PipeBarrier<PIPE_ALL>();
    }
}

extern "C" void run(uint32_t blocks, uint8_t* x, uint8_t* y, uint8_t* partial, uint32_t perBlock, int32_t skipOn)
{
    normalise<<<blocks, nullptr, nullptr>>>(x, y, partial, perBlock, skipOn);
}
'''


@pytest.fixture(scope="module")
def mod():
    return asc.load(NORMALISE, name="normalise.cpp")


@pytest.mark.parametrize("blocks", [1, 4, 8])
def test_syncall_is_a_barrier_across_blocks(mod, blocks) -> None:
    per = 2048
    x = torch.rand(blocks * per) + 0.5
    y = torch.empty_like(x)
    partial = torch.zeros(blocks)
    mod.run(blocks, x, y, partial, per, -1)
    torch.testing.assert_close(y, x / x.sum(), rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(partial, x.view(blocks, per).sum(1), rtol=1e-5, atol=1e-5)
    run = mod.last_run
    assert run.blocks_run == blocks and not run.faults


def test_barrier_costs_the_slowest_block(mod) -> None:
    """After the barrier every block starts when the last one arrived: block times are equal."""
    per = 2048
    x = torch.rand(4 * per) + 0.5
    mod.run(4, x, torch.empty_like(x), torch.zeros(4), per, -1)
    cycles = mod.last_run.block_cycles
    assert len(cycles) == 4 and max(cycles) - min(cycles) < 1e-6 * max(cycles)


def test_block_leaving_before_the_barrier_is_a_deadlock(mod) -> None:
    x = torch.rand(4 * 2048)
    with pytest.raises(asc.AscendCFault) as info:
        mod.run(4, x, torch.empty_like(x), torch.zeros(4), 2048, 2)
    assert isinstance(info.value, asc.SyncAllDeadlock) and "would hang" in str(info.value)


def test_more_blocks_than_cores_is_a_deadlock(mod) -> None:
    cores = int(asc.get_profile("Ascend910B2").constants["aiv_cores"].value)
    blocks = cores + 1
    x = torch.rand(blocks * 1024)
    with pytest.raises(asc.AscendCFault) as info:
        mod.run(blocks, x, torch.empty_like(x), torch.zeros(blocks), 1024, -1)
    assert isinstance(info.value, asc.SyncAllDeadlock) and "resident" in str(info.value)
