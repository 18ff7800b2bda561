"""The current asc-devkit style: one .asc file with the kernel and the host main, static tensors
from LocalMemAllocator (no TPipe/TQue), hand-written SetFlag/WaitFlag synchronisation, a tiling
struct read through a __gm__ pointer, and a <<<>>> launch; run unmodified with run_sample."""

from __future__ import annotations

import numpy as np
import kernel_gym.ascendc as asc

SAMPLE = r'''
#include <cstdint>
#include <vector>
#include "acl/acl.h"
#include "kernel_operator.h"
#include "data_utils.h"

struct ScaleAddTiling {
    uint32_t perCore;
    float alpha;
};

constexpr uint32_t TILE = 2048;

class KernelScaleAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perCore, float alpha)
    {
        xGm.SetGlobalBuffer((__gm__ float *)x + AscendC::GetBlockIdx() * perCore, perCore);
        yGm.SetGlobalBuffer((__gm__ float *)y + AscendC::GetBlockIdx() * perCore, perCore);
        zGm.SetGlobalBuffer((__gm__ float *)z + AscendC::GetBlockIdx() * perCore, perCore);
        loops = perCore / TILE;
        this->alpha = alpha;
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
        AscendC::LocalTensor<float> x[2] = {ub.Alloc<float, TILE>(), ub.Alloc<float, TILE>()};
        AscendC::LocalTensor<float> y[2] = {ub.Alloc<float, TILE>(), ub.Alloc<float, TILE>()};
        AscendC::LocalTensor<float> z[2] = {ub.Alloc<float>(TILE), ub.Alloc<AscendC::TPosition::VECOUT, float>(TILE)};
        AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID1);
        for (uint32_t i = 0; i < loops; i++) {
            uint32_t p = i % 2;
            event_t ev = p == 0 ? EVENT_ID0 : EVENT_ID1;
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(ev);
            AscendC::DataCopy(x[p], xGm[i * TILE], TILE);
            AscendC::DataCopy(y[p], yGm[i * TILE], TILE);
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(ev);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(ev);
            AscendC::Axpy(y[p], x[p], alpha, TILE);
            AscendC::Adds(z[p], y[p], 0.0f, TILE);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(ev);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(ev);
            AscendC::DataCopy(zGm[i * TILE], z[p], TILE);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(ev);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID1);
    }
private:
    AscendC::GlobalTensor<float> xGm, yGm, zGm;
    uint32_t loops;
    float alpha;
};

__global__ __aicore__ void scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::InitSocState();
    KernelScaleAdd op;
    op.Init(x, y, z, ((__gm__ ScaleAddTiling *)tiling)->perCore, ((__gm__ ScaleAddTiling *)tiling)->alpha);
    op.Process();
}

int32_t main(int32_t argc, char *argv[])
{
    uint32_t blockDim = 4;
    uint32_t total = blockDim * TILE * 3;
    size_t bytes = total * sizeof(float);
    ScaleAddTiling tiling{total / blockDim, 0.5f};
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    std::vector<uint8_t> host(bytes);
    uint8_t *x, *y, *z, *t;
    aclrtMalloc((void **)&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&z, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&t, sizeof(tiling), ACL_MEM_MALLOC_HUGE_FIRST);
    ReadFile("./input/input_x.bin", bytes, host.data(), bytes);
    aclrtMemcpy(x, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    ReadFile("./input/input_y.bin", bytes, host.data(), bytes);
    aclrtMemcpy(y, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(t, sizeof(tiling), &tiling, sizeof(tiling), ACL_MEMCPY_HOST_TO_DEVICE);
    scale_add<<<blockDim, nullptr, stream>>>(x, y, z, t);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(host.data(), bytes, z, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    WriteFile("./output/output.bin", host.data(), bytes);
    aclrtFree(x); aclrtFree(y); aclrtFree(z); aclrtFree(t);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
'''
N = 4 * 2048 * 3


def _inputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    return x, y, {"input/input_x.bin": x.tobytes(), "input/input_y.bin": y.tobytes()}


def test_allocator_style_asc_sample_runs_unmodified() -> None:
    x, y, inputs = _inputs()
    run = asc.run_sample({"scale_add.asc": SAMPLE}, inputs)
    assert run.ok, (run.error, run.stderr[-2000:])
    z = np.frombuffer(run.files["output/output.bin"], dtype=np.float32)
    np.testing.assert_allclose(z, y + 0.5 * x, rtol=1e-6, atol=1e-6)
    assert [r.kernel for r in run.launches] == ["scale_add"] and run.launches[0].num_blocks == 4
    assert run.launches[0].per_pipe_busy["MTE2"] > 0 and run.launches[0].latency_s > 0


def test_static_tensors_beyond_the_ub_are_an_overflow() -> None:
    _, _, inputs = _inputs()
    source = SAMPLE.replace("ub.Alloc<float>(TILE)", "ub.Alloc<float>(40000)")
    assert source != SAMPLE
    run = asc.run_sample({"scale_add.asc": source}, inputs)
    assert not run.ok and run.error and "ub_overflow" in run.error, (run.error, run.stderr[-800:])


def test_missing_hand_written_wait_is_a_pipe_race() -> None:
    """Without the V->MTE3 wait the copy-out may read z before the vector pipe wrote it: the
    simulator reports the race (a warning under the default sync_check='warn')."""
    _, _, inputs = _inputs()
    source = SAMPLE.replace("AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(ev);", "")
    assert source != SAMPLE
    run = asc.run_sample({"scale_add.asc": source}, inputs)
    assert run.launches, (run.error, run.stderr[-800:])
    assert any(w.get("cls") == "pipe_race" or "pipe_race" in str(w) for w in run.launches[0].warnings), \
        run.launches[0].warnings


def test_static_tensor_constructor() -> None:
    source = SAMPLE.replace(
        "AscendC::LocalTensor<float> z[2] = {ub.Alloc<float>(TILE), ub.Alloc<AscendC::TPosition::VECOUT, float>(TILE)};",
        "AscendC::LocalTensor<float> z[2] = {AscendC::LocalTensor<float>(AscendC::TPosition::VECCALC, "
        "ub.GetCurAddr(), TILE), AscendC::LocalTensor<float>(AscendC::TPosition::VECCALC, "
        "ub.GetCurAddr() + TILE * 4, TILE)};")
    assert source != SAMPLE
    x, y, inputs = _inputs()
    run = asc.run_sample({"scale_add.asc": source}, inputs)
    assert run.ok, (run.error, run.stderr[-2000:])
    np.testing.assert_allclose(np.frombuffer(run.files["output/output.bin"], dtype=np.float32), y + 0.5 * x,
                               rtol=1e-6, atol=1e-6)
