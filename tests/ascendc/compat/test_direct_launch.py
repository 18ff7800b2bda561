"""Direct-launch samples as published (a kernel file, a host main on the ACL runtime, binary
input and output files) run unmodified through kernel_gym.ascendc.run_sample."""

from __future__ import annotations

import numpy as np
import pytest

import kernel_gym.ascendc as asc

KERNEL = r'''
#include "kernel_operator.h"
constexpr int32_t BUFFER_NUM = 2;

class KernelScaleAdd {
public:
    __aicore__ inline KernelScaleAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile)
    {
        blockLen = total / AscendC::GetBlockNum();
        this->tile = tile;
        xGm.SetGlobalBuffer((__gm__ float *)x + blockLen * AscendC::GetBlockIdx(), blockLen);
        yGm.SetGlobalBuffer((__gm__ float *)y + blockLen * AscendC::GetBlockIdx(), blockLen);
        zGm.SetGlobalBuffer((__gm__ float *)z + blockLen * AscendC::GetBlockIdx(), blockLen);
        pipe.InitBuffer(inX, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(inY, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(outZ, BUFFER_NUM, tile * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < blockLen / tile; i++) {
            AscendC::LocalTensor<float> xl = inX.AllocTensor<float>();
            AscendC::LocalTensor<float> yl = inY.AllocTensor<float>();
            AscendC::DataCopy(xl, xGm[i * tile], tile);
            AscendC::DataCopy(yl, yGm[i * tile], tile);
            inX.EnQue(xl);
            inY.EnQue(yl);
            xl = inX.DeQue<float>();
            yl = inY.DeQue<float>();
            AscendC::LocalTensor<float> zl = outZ.AllocTensor<float>();
            AscendC::Muls(xl, xl, 2.0f, tile);
            AscendC::Add(zl, xl, yl, tile);
            outZ.EnQue<float>(zl);
            inX.FreeTensor(xl);
            inY.FreeTensor(yl);
            zl = outZ.DeQue<float>();
            AscendC::DataCopy(zGm[i * tile], zl, tile);
            outZ.FreeTensor(zl);
        }
    }
private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inX, inY;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outZ;
    AscendC::GlobalTensor<float> xGm, yGm, zGm;
    uint32_t blockLen, tile;
};

extern "C" __global__ __aicore__ void scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile)
{
    KernelScaleAdd op;
    op.Init(x, y, z, total, tile);
    op.Process();
}
'''

MAIN = r'''
#include "data_utils.h"
#include "acl/acl.h"
#include "aclrtlaunch_scale_add.h"

int32_t main(int32_t argc, char *argv[])
{
    uint32_t blockDim = 8;
    uint32_t total = 8 * 2048;
    uint32_t tile = argc > 1 ? (uint32_t)atoi(argv[1]) : 512;
    size_t bytes = total * sizeof(float);

    CHECK_ACL(aclInit(nullptr));
    int32_t deviceId = 0;
    CHECK_ACL(aclrtSetDevice(deviceId));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));

    uint8_t *xHost, *yHost, *zHost;
    uint8_t *xDevice, *yDevice, *zDevice;
    CHECK_ACL(aclrtMallocHost((void **)(&xHost), bytes));
    CHECK_ACL(aclrtMallocHost((void **)(&yHost), bytes));
    CHECK_ACL(aclrtMallocHost((void **)(&zHost), bytes));
    CHECK_ACL(aclrtMalloc((void **)&xDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&yDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&zDevice, bytes, ACL_MEM_MALLOC_HUGE_FIRST));

    ReadFile("./input/input_x.bin", bytes, xHost, bytes);
    ReadFile("./input/input_y.bin", bytes, yHost, bytes);
    CHECK_ACL(aclrtMemcpy(xDevice, bytes, xHost, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(yDevice, bytes, yHost, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    ACLRT_LAUNCH_KERNEL(scale_add)(blockDim, stream, xDevice, yDevice, zDevice, total, tile);
    CHECK_ACL(aclrtSynchronizeStream(stream));

    CHECK_ACL(aclrtMemcpy(zHost, bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile("./output/output_z.bin", zHost, bytes);
    INFO_LOG("wrote %zu bytes", bytes);

    CHECK_ACL(aclrtFree(xDevice));
    CHECK_ACL(aclrtFree(yDevice));
    CHECK_ACL(aclrtFree(zDevice));
    CHECK_ACL(aclrtFreeHost(xHost));
    CHECK_ACL(aclrtFreeHost(yHost));
    CHECK_ACL(aclrtFreeHost(zHost));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(deviceId));
    CHECK_ACL(aclFinalize());
    return 0;
}
'''

N = 8 * 2048


def _inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, bytes]]:
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    return x, y, {"input/input_x.bin": x.tobytes(), "input/input_y.bin": y.tobytes()}


def test_acl_main_sample_runs_unmodified() -> None:
    x, y, inputs = _inputs(np.random.default_rng(0))
    run = asc.run_sample({"scale_add.cpp": KERNEL, "main.cpp": MAIN}, inputs, argv=["256"])
    assert run.ok, (run.error, run.stderr[-2000:])
    z = np.frombuffer(run.files["output/output_z.bin"], dtype=np.float32)
    np.testing.assert_allclose(z, 2 * x + y, rtol=1e-6, atol=1e-6)
    assert "wrote 65536 bytes" in run.stdout
    assert [r.kernel for r in run.launches] == ["scale_add"] and run.launches[0].num_blocks == 8
    assert run.total_latency_s > 0
    assert set(run.files) == {"output/output_z.bin"}  # inputs untouched are not returned


def test_sample_with_its_own_data_utils() -> None:
    own = ('#pragma once\n#include <fstream>\n#include <string>\n#define CHECK_ACL(x) (void)(x)\n'
           '#define INFO_LOG(...) (void)0\n'
           'inline bool ReadFile(const std::string& p, size_t& n, void* b, size_t cap) {\n'
           '    std::ifstream f(p, std::ios::binary); f.read((char*)b, cap); n = f.gcount(); return n == cap; }\n'
           'inline bool WriteFile(const std::string& p, const void* b, size_t n) {\n'
           '    std::ofstream f(p, std::ios::binary); f.write((const char*)b, n); return bool(f); }\n')
    x, y, inputs = _inputs(np.random.default_rng(1))
    run = asc.run_sample({"scale_add.cpp": KERNEL, "main.cpp": MAIN, "data_utils.h": own}, inputs)
    assert run.ok, (run.error, run.stderr[-2000:])
    np.testing.assert_allclose(np.frombuffer(run.files["output/output_z.bin"], dtype=np.float32), 2 * x + y,
                               rtol=1e-6, atol=1e-6)


def test_kernel_fault_crash_and_hang_are_structured() -> None:
    _, _, inputs = _inputs(np.random.default_rng(2))
    # the kernel is told of far more elements than aclrtMalloc gave it: its copies run more than
    # the NPU's 2 MiB page past the buffers (a shorter overrun reads poison, with a warning)
    oob = MAIN.replace("zDevice, total, tile);", "zDevice, total + 8 * 262144, tile);")
    run = asc.run_sample({"scale_add.cpp": KERNEL, "main.cpp": oob}, inputs)
    assert not run.ok and run.error and "gm_out_of_bounds" in run.error, (run.error, run.stderr[-500:])
    crash = MAIN.replace("CHECK_ACL(aclInit(nullptr));", "CHECK_ACL(aclInit(nullptr)); *(volatile int*)nullptr = 1;")
    run = asc.run_sample({"scale_add.cpp": KERNEL, "main.cpp": crash}, inputs)
    assert not run.ok and run.error.startswith("crash") and run.returncode is not None and run.returncode < 0
    hang = MAIN.replace("CHECK_ACL(aclInit(nullptr));", "CHECK_ACL(aclInit(nullptr)); for (volatile int i = 0;; ) {}")
    run = asc.run_sample({"scale_add.cpp": KERNEL, "main.cpp": hang}, inputs, timeout_s=5)
    assert not run.ok and run.returncode is None and run.error.startswith("timeout")


def test_compile_error_and_bad_samples_are_clear() -> None:
    with pytest.raises(asc.AscendCCompileError):
        asc.run_sample({"scale_add.cpp": KERNEL.replace("op.Process();", "op.Process()"), "main.cpp": MAIN})
    with pytest.raises(ValueError, match="main"):
        asc.run_sample({"scale_add.cpp": KERNEL})
    with pytest.raises(ValueError, match="relative"):
        asc.run_sample({"scale_add.cpp": KERNEL, "main.cpp": MAIN}, {"../x.bin": b""})


ASSERT_KERNEL = r'''
#include <cassert>
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void checked(GM_ADDR x, uint32_t n)
{
    assert(n < 100 && "n exceeds the limit");
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float *)x, n);
    g.SetValue(AscendC::GetBlockIdx() * 8, 1.0f);
}
'''

ASSERT_MAIN = r'''
#include <cstdio>
#include "acl/acl.h"
int32_t main(int32_t argc, char *argv[])
{
    uint32_t n = (uint32_t)atoi(argv[1]);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    uint8_t *x = nullptr;
    aclrtMalloc((void **)&x, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
    checked<<<2, nullptr, stream>>>(x, n);
    aclError ret = aclrtSynchronizeStream(stream);
    printf("sync=%d msg=[%s]\n", ret, aclGetRecentErrMsg());
    printf("after sync=%d\n", aclrtSynchronizeStream(stream));
    aclrtFree(x);
    return 0;
}
'''


def test_a_kernel_assert_is_an_ai_core_exception_the_host_sees() -> None:
    """A failed C assert in the kernel traps the core: the stream reports an AI Core exception
    (ACL_ERROR_RT_AICORE_EXCEPTION) with the message at the next synchronisation, the host
    program goes on to its end, and the run reports the fault; the process is not aborted."""
    files = {"checked.cpp": ASSERT_KERNEL, "main.cpp": ASSERT_MAIN}
    run = asc.run_sample(files, argv=["500"])
    assert run.returncode == 0, (run.error, run.stderr[-800:])
    assert "sync=507015 msg=[kernel_assert: assertion failed in the kernel: n < 100" in run.stdout, run.stdout
    assert "after sync=0" in run.stdout  # reported once
    assert run.error and "kernel_assert" in run.error
    ok = asc.run_sample(files, argv=["50"])
    assert ok.ok and "sync=0 msg=[]" in ok.stdout, (ok.error, ok.stdout)
