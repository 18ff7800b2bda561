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


# A mixed kernel (one AIC and two AIVs per AI Core): the AIC of group g publishes a scale, the
# AIVs wait for it (cross-core flag, mode 2), scale their slices, and tell the AIC, which waits
# for both and adds up what they wrote. Every core also records what GetBlockIdx & co. return.
MIXED = r'''
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 256;

__global__ __aicore__ void mixed(GM_ADDR x, GM_ADDR y, GM_ADDR scale, GM_ADDR total, GM_ADDR ids, int32_t aivFlag)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GlobalTensor<float> xGm, yGm, sGm, tGm;
    GlobalTensor<int32_t> idGm;
    sGm.SetGlobalBuffer((__gm__ float*)scale, GetBlockNum());
    tGm.SetGlobalBuffer((__gm__ float*)total, GetBlockNum());
    idGm.SetGlobalBuffer((__gm__ int32_t*)ids, 3 * GetBlockNum());
    if ASCEND_IS_AIC {
        int64_t g = GetBlockIdx();
        idGm.SetValue(2 * GetBlockNum() + g, 1000 + g * 100 + GetSubBlockNum() * 10 + GetTaskRation());
        sGm.SetValue(g, float(g + 2));
        CrossCoreSetFlag<2, PIPE_FIX>(3);
        CrossCoreWaitFlag(4);
        yGm.SetGlobalBuffer((__gm__ float*)y + g * 2 * TILE, 2 * TILE);
        float acc = 0.0f;
        for (uint32_t i = 0; i < 2 * TILE; ++i) acc += yGm.GetValue(i);
        tGm.SetValue(g, acc);
        return;
    }
    int64_t b = GetBlockIdx();
    idGm.SetValue(b, b * 100 + GetSubBlockIdx() * 10 + GetTaskRatio());
    xGm.SetGlobalBuffer((__gm__ float*)x + b * TILE, TILE);
    yGm.SetGlobalBuffer((__gm__ float*)y + b * TILE, TILE);
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf;
    pipe.InitBuffer(buf, TILE * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, xGm, TILE);
    CrossCoreWaitFlag(aivFlag);              // the AIC's scale is in GM from here on
    float s = sGm.GetValue(b / GetTaskRatio());
    PipeBarrier<PIPE_ALL>();
    Muls(t, t, s, TILE);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, t, TILE);
    CrossCoreSetFlag<2, PIPE_MTE3>(4);
}

extern "C" void run(uint32_t groups, uint8_t* x, uint8_t* y, uint8_t* scale, uint8_t* total, uint8_t* ids,
                    int32_t aivFlag)
{
    mixed<<<groups, nullptr, nullptr>>>(x, y, scale, total, ids, aivFlag);
}
'''


@pytest.fixture(scope="module")
def mixed_mod():
    return asc.load(MIXED, name="mixed.cpp")


@pytest.mark.parametrize("groups", [1, 3])
def test_mixed_kernel_cross_core_flags(mixed_mod, groups) -> None:
    tile = 256
    x = torch.rand(groups * 2 * tile)
    y = torch.zeros_like(x)
    scale, total = torch.zeros(groups), torch.zeros(groups)
    ids = torch.full((3 * groups,), -1, dtype=torch.int32)
    mixed_mod.run(groups, x, y, scale, total, ids, 3)
    want_scale = torch.arange(groups, dtype=torch.float32) + 2
    torch.testing.assert_close(scale, want_scale)
    torch.testing.assert_close(y, x * want_scale.repeat_interleave(2 * tile))
    torch.testing.assert_close(total, y.view(groups, 2 * tile).sum(1), rtol=1e-5, atol=1e-4)
    # AIV b: GetBlockIdx in [0, 2 * groups), sub-block b % 2, ratio 2; AIC g: block g, one sub-block, ratio 1
    aiv = [b * 100 + (b % 2) * 10 + 2 for b in range(2 * groups)]
    aic = [1000 + g * 100 + 10 + 1 for g in range(groups)]
    assert ids.tolist() == aiv + aic
    run = mixed_mod.last_run
    assert run.blocks_run == 3 * groups and len(run.block_cycles) == 3 * groups and not run.faults


def test_cross_core_wait_that_nobody_sets_is_a_deadlock(mixed_mod) -> None:
    x = torch.rand(2 * 256)
    with pytest.raises(asc.AscendCFault) as info:
        mixed_mod.run(1, x, torch.zeros_like(x), torch.zeros(1), torch.zeros(1), torch.zeros(3, dtype=torch.int32), 5)
    assert isinstance(info.value, asc.CrossCoreDeadlock) and "CrossCoreWaitFlag(5)" in str(info.value)


# IBSet/IBWait: block b waits for block b+1 before adding its slice to the running suffix sum in
# GM (the blocks start in index order, so every block but the last must be suspended).
CHAIN = r'''
#include "kernel_operator.h"
using namespace AscendC;

__global__ __aicore__ void chain(GM_ADDR x, GM_ADDR out, GM_ADDR sync, uint32_t per)
{
    GlobalTensor<float> xGm, oGm;
    GlobalTensor<int32_t> syncGm;
    int64_t b = GetBlockIdx();
    xGm.SetGlobalBuffer((__gm__ float*)x + b * per, per);
    oGm.SetGlobalBuffer((__gm__ float*)out, GetBlockNum());
    syncGm.SetGlobalBuffer((__gm__ int32_t*)sync, 8 * GetBlockNum());
    TPipe pipe;
    TBuf<QuePosition::VECCALC> ws;
    pipe.InitBuffer(ws, 32);
    LocalTensor<int32_t> ub = ws.Get<int32_t>();
    float acc = 0.0f;
    for (uint32_t i = 0; i < per; ++i) acc += xGm.GetValue(i);
    if (b + 1 < GetBlockNum()) {
        IBWait(syncGm, ub, b + 1, 0);
        acc += oGm.GetValue(b + 1);
    }
    oGm.SetValue(b, acc);
    IBSet(syncGm, ub, b, 0);
}

extern "C" void run(uint32_t blocks, uint8_t* x, uint8_t* out, uint8_t* sync, uint32_t per)
{
    chain<<<blocks, nullptr, nullptr>>>(x, out, sync, per);
}
'''


def test_ibset_ibwait_orders_blocks() -> None:
    mod = asc.load(CHAIN, name="chain.cpp")
    blocks, per = 6, 64
    x = torch.rand(blocks * per)
    out = torch.zeros(blocks)
    mod.run(blocks, x, out, torch.zeros(8 * blocks, dtype=torch.int32), per)
    suffix = x.view(blocks, per).sum(1).flip(0).cumsum(0).flip(0)
    torch.testing.assert_close(out, suffix, rtol=1e-5, atol=1e-4)
    assert not mod.last_run.faults
