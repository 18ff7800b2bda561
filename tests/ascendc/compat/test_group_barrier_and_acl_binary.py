"""GroupBarrier (an Arrive group lets a Wait group go on) and the ACL kernel-binary launch API
(aclrtBinaryLoadFromFile .. aclrtLaunchKernelWithConfig) of direct-launch samples."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.sampling import sampled_simulation

# Blocks 4..7 (the Arrive group) each double a slice of x into mid and arrive; blocks 0..3 (the
# Wait group) wait, then read the slice another block wrote and add 1. The waiters have the lower
# block indices, so they start first and must be suspended until the producers have arrived.
HANDOFF = r'''
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 256;
constexpr uint32_t GROUP = 4;

extern "C" __global__ __aicore__ void handoff(GM_ADDR x, GM_ADDR mid, GM_ADDR y, GM_ADDR ws, int32_t arrivers)
{
    GroupBarrier<PipeMode::MTE3_MODE> bar(ws, GROUP, GROUP);
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf;
    pipe.InitBuffer(buf, TILE * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    uint32_t b = GetBlockIdx();
    GlobalTensor<float> xGm, midGm, yGm;
    if (b >= GROUP) {
        uint32_t p = b - GROUP;
        xGm.SetGlobalBuffer((__gm__ float*)x + p * TILE, TILE);
        midGm.SetGlobalBuffer((__gm__ float*)mid + p * TILE, TILE);
        DataCopy(t, xGm, TILE);
        PipeBarrier<PIPE_ALL>();
        Muls(t, t, 2.0f, TILE);
        PipeBarrier<PIPE_ALL>();
        DataCopy(midGm, t, TILE);
        if ((int32_t)p < arrivers) bar.Arrive(p);   // arrivers < GROUP: someone never arrives
    } else {
        bar.Wait(b);
        midGm.SetGlobalBuffer((__gm__ float*)mid + (GROUP - 1 - b) * TILE, TILE);
        yGm.SetGlobalBuffer((__gm__ float*)y + b * TILE, TILE);
        DataCopy(t, midGm, TILE);
        PipeBarrier<PIPE_ALL>();
        Adds(t, t, 1.0f, TILE);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm, t, TILE);
    }
}

extern "C" void run(uint32_t blocks, uint8_t* x, uint8_t* mid, uint8_t* y, uint8_t* ws, int32_t arrivers)
{
    handoff<<<blocks, nullptr, nullptr>>>(x, mid, y, ws, arrivers);
}
'''

TILE, GROUP = 256, 4


@pytest.fixture(scope="module")
def handoff():
    return asc.load(HANDOFF, name="handoff.cpp")


def _buffers():
    x = torch.rand(GROUP * TILE)
    return x, torch.zeros_like(x), torch.zeros_like(x), torch.zeros(GROUP * 512, dtype=torch.uint8)


def test_wait_group_reads_what_the_arrive_group_wrote(handoff) -> None:
    x, mid, y, ws = _buffers()
    handoff.run(2 * GROUP, x, mid, y, ws, GROUP)
    expected = np.flip((2 * x.numpy()).reshape(GROUP, TILE), 0).reshape(-1) + 1
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    run = handoff.last_run
    assert run.blocks_run == 2 * GROUP and not run.faults  # no gm_race: the barrier orders the accesses


def test_waiters_resume_after_the_last_arrival_plus_the_barrier_cost(handoff) -> None:
    x, mid, y, ws = _buffers()
    handoff.run(2 * GROUP, x, mid, y, ws, GROUP)
    cycles = handoff.last_run.block_cycles
    waiters, arrivers = cycles[:GROUP], cycles[GROUP:]
    sync = asc.get_profile("Ascend910B2").constants["sync_all_cycles"].value
    assert min(waiters) > max(arrivers) + sync


def test_a_wait_nobody_completes_is_a_deadlock(handoff) -> None:
    x, mid, y, ws = _buffers()
    with pytest.raises(asc.AscendCFault) as info:
        handoff.run(2 * GROUP, x, mid, y, ws, GROUP - 1)
    assert isinstance(info.value, asc.CrossCoreDeadlock)
    assert "GroupBarrier::Wait" in str(info.value) and "arriveIndex 3" in str(info.value)


def test_workspace_smaller_than_the_barrier_needs_is_out_of_bounds(handoff) -> None:
    x, mid, y, _ = _buffers()
    with pytest.raises(asc.AscendCFault) as info:
        handoff.run(2 * GROUP, x, mid, y, torch.zeros(GROUP * 512 - 32, dtype=torch.uint8), GROUP)
    assert info.value.error_class == "gm_out_of_bounds"


def test_group_barrier_cannot_be_sampled(handoff) -> None:
    x, mid, y, ws = _buffers()
    with sampled_simulation(blocks=2), pytest.raises(asc.AscendCFault, match="cannot be sampled") as info:
        handoff.run(2 * GROUP, x, mid, y, ws, GROUP)
    assert info.value.error_class == "unsupported_api"


# The AddKernelInvocationAcl flow: the host loads the kernels' binary, finds the kernel by name,
# appends its parameters (GM addresses and a scalar, by value) and launches it with a block count.
KERNEL = r'''
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 512;

extern "C" __global__ __aicore__ void axpb_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock)
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> bx, by;
    pipe.InitBuffer(bx, TILE * sizeof(float));
    pipe.InitBuffer(by, TILE * sizeof(float));
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t off = GetBlockIdx() * perBlock;
    xGm.SetGlobalBuffer((__gm__ float*)x + off, perBlock);
    yGm.SetGlobalBuffer((__gm__ float*)y + off, perBlock);
    zGm.SetGlobalBuffer((__gm__ float*)z + off, perBlock);
    LocalTensor<float> tx = bx.Get<float>();
    LocalTensor<float> ty = by.Get<float>();
    for (uint32_t i = 0; i < perBlock; i += TILE) {
        DataCopy(tx, xGm[i], TILE);
        DataCopy(ty, yGm[i], TILE);
        PipeBarrier<PIPE_ALL>();
        Muls(tx, tx, 3.0f, TILE);
        Add(tx, tx, ty, TILE);
        PipeBarrier<PIPE_ALL>();
        DataCopy(zGm[i], tx, TILE);
        PipeBarrier<PIPE_ALL>();
    }
}
'''

MAIN = r'''
#include "data_utils.h"
#include "acl/acl.h"

int32_t main(int32_t argc, char* argv[])
{
    const char* kernelName = argc > 1 ? argv[1] : "axpb_custom";
    uint32_t numBlocks = 8;
    uint32_t perBlock = 1024;
    size_t bytes = numBlocks * perBlock * sizeof(float);
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    void *xHost, *yHost, *zHost, *xDevice, *yDevice, *zDevice;
    CHECK_ACL(aclrtMallocHost(&xHost, bytes));
    CHECK_ACL(aclrtMallocHost(&yHost, bytes));
    CHECK_ACL(aclrtMallocHost(&zHost, bytes));
    CHECK_ACL(aclrtMalloc(&xDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&yDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&zDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ReadFile("./input/input_x.bin", bytes, xHost, bytes);
    ReadFile("./input/input_y.bin", bytes, yHost, bytes);
    CHECK_ACL(aclrtMemcpy(xDevice, bytes, xHost, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(yDevice, bytes, yHost, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    aclrtBinHandle binHandle = nullptr;
    aclrtFuncHandle funcHandle = nullptr;
    aclrtArgsHandle argsHandle = nullptr;
    aclrtParamHandle paramHandle = nullptr;
    CHECK_ACL(aclrtBinaryLoadFromFile("./out/fatbin/ascendc_kernels/ascendc_kernels.o", nullptr, &binHandle));
    aclError ret = aclrtBinaryGetFunction(binHandle, kernelName, &funcHandle);
    if (ret != ACL_SUCCESS) {
        printf("get function failed: %d (%s)\n", ret, aclGetRecentErrMsg());
        return 3;
    }
    CHECK_ACL(aclrtKernelArgsInit(funcHandle, &argsHandle));
    CHECK_ACL(aclrtKernelArgsAppend(argsHandle, (void **)&xDevice, sizeof(uintptr_t), &paramHandle));
    CHECK_ACL(aclrtKernelArgsAppend(argsHandle, (void **)&yDevice, sizeof(uintptr_t), &paramHandle));
    CHECK_ACL(aclrtKernelArgsAppend(argsHandle, (void **)&zDevice, sizeof(uintptr_t), &paramHandle));
    CHECK_ACL(aclrtKernelArgsAppend(argsHandle, &perBlock, sizeof(perBlock), &paramHandle));
    CHECK_ACL(aclrtKernelArgsFinalize(argsHandle));
    CHECK_ACL(aclrtLaunchKernelWithConfig(funcHandle, numBlocks, stream, nullptr, argsHandle, nullptr));
    CHECK_ACL(aclrtSynchronizeStream(stream));

    CHECK_ACL(aclrtMemcpy(zHost, bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile("./output/output_z.bin", zHost, bytes);
    CHECK_ACL(aclrtBinaryUnLoad(binHandle));
    CHECK_ACL(aclrtFree(xDevice));
    CHECK_ACL(aclrtFree(yDevice));
    CHECK_ACL(aclrtFree(zDevice));
    CHECK_ACL(aclrtFreeHost(xHost));
    CHECK_ACL(aclrtFreeHost(yHost));
    CHECK_ACL(aclrtFreeHost(zHost));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    return 0;
}
'''


def _inputs() -> tuple[np.ndarray, np.ndarray, dict[str, bytes]]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal(8 * 1024).astype(np.float32)
    y = rng.standard_normal(8 * 1024).astype(np.float32)
    return x, y, {"input/input_x.bin": x.tobytes(), "input/input_y.bin": y.tobytes()}


def test_kernel_launched_through_the_binary_api() -> None:
    x, y, inputs = _inputs()
    run = asc.run_sample({"axpb_custom.cpp": KERNEL, "main.cpp": MAIN}, inputs=inputs)
    assert run.ok, (run.error, run.stdout, run.stderr)
    z = np.frombuffer(run.files["output/output_z.bin"], dtype=np.float32)
    np.testing.assert_allclose(z, 3 * x + y, rtol=1e-6, atol=1e-6)
    assert len(run.launches) == 1 and run.launches[0].num_blocks == 8 and run.launches[0].kernel == "axpb_custom"


def test_unknown_kernel_name_is_an_acl_error() -> None:
    _, _, inputs = _inputs()
    run = asc.run_sample({"axpb_custom.cpp": KERNEL, "main.cpp": MAIN}, inputs=inputs, argv=["no_such_kernel"])
    assert run.returncode == 3 and run.error is None and not run.launches
    assert "107000" in run.stdout and "no_such_kernel" in run.stdout and "axpb_custom" in run.stdout
