"""Gaps found by running published vector kernels unmodified (second vector corpus): each test is a
small kernel of our own that uses the API or build form those kernels use, compared with PyTorch."""

from __future__ import annotations

import numpy as np
import torch

import kernel_gym.ascendc as asc

from .six_string_answers import MSE_LOSS

# ---- DataCopy of slices (SliceInfo lists, GM -> UB -> GM) ------------------------------------------
SLICE_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void slice_copy(GM_ADDR x, GM_ADDR y)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * 48 * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 3 * 87);
    yGm.SetGlobalBuffer((__gm__ float*)y, 2 * 48);
    // rows 0 and 2 of a 3 x 87 tensor; in each, two pieces of 3 blocks (24 floats) 7 elements apart
    AscendC::SliceInfo src[AscendC::K_MAX_DIM] = {{16, 70, 7, 3, 87}, {0, 2, 1, 1, 3}};
    AscendC::SliceInfo dst[AscendC::K_MAX_DIM] = {{0, 47, 0, 3, 48}, {0, 1, 0, 1, 2}};
    AscendC::DataCopy(t, xGm, dst, src, 2);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yGm, t, dst, dst, 2);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { slice_copy<<<1, nullptr, nullptr>>>(x, y); }
"""


def test_data_copy_slices() -> None:
    mod = asc.load(SLICE_KERNEL)
    x = torch.randn(3, 87)
    y = torch.zeros(2, 48)
    mod.run(x, y)
    want = torch.stack([torch.cat([x[r, 16:40], x[r, 47:71]]) for r in (0, 2)])
    torch.testing.assert_close(y, want)


# ---- SetPadValue: the pad value of DataCopyPad (GM -> UB) when isPad is false --------------------------
PAD_VALUE_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void pad_rows(GM_ADDR x, GM_ADDR y)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4 * 16 * sizeof(half));
    AscendC::LocalTensor<half> t = buf.Get<half>();
    AscendC::GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, 4 * 10);
    yGm.SetGlobalBuffer((__gm__ half*)y, 4 * 16);
    AscendC::DataCopyExtParams copy{4, 10 * sizeof(half), 0, 0, 0};
    AscendC::DataCopyPadExtParams<half> pad{false, 0, 6, 0};
    AscendC::SetPadValue(static_cast<half>(2.5f));
    AscendC::DataCopyPad(t, xGm, copy, pad);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yGm, t, 4 * 16);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { pad_rows<<<1, nullptr, nullptr>>>(x, y); }
"""


def test_set_pad_value_fills_the_right_padding() -> None:
    mod = asc.load(PAD_VALUE_KERNEL)
    x = torch.randn(4, 10).half()
    y = torch.zeros(4, 16, dtype=torch.half)
    mod.run(x, y)
    want = torch.cat([x, torch.full((4, 6), 2.5, dtype=torch.half)], dim=1)
    torch.testing.assert_close(y, want)


# ---- Read/WriteGmByPassDCache and DataSyncBarrier: a flag handed from one block to the next ----------
GM_FLAG_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void gm_flag(GM_ADDR x, GM_ADDR y)
{
    __gm__ float* data = reinterpret_cast<__gm__ float*>(x);
    if (AscendC::GetBlockIdx() == 0) {
        AscendC::WriteGmByPassDCache<float>(data + 1, data[2] * 3.0f);
        AscendC::DataSyncBarrier<AscendC::MemDsbT::DDR>();
        AscendC::WriteGmByPassDCache<float>(data, 1.0f);
    } else {
        while (AscendC::ReadGmByPassDCache<float>(data) != 1.0f) {
        }
        AscendC::DataSyncBarrier<AscendC::MemDsbT::ALL>();
        float v = AscendC::ReadGmByPassDCache<float>(data + 1);
        AscendC::WriteGmByPassDCache<float>(reinterpret_cast<__gm__ float*>(y), v + 1.0f);
    }
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { gm_flag<<<2, nullptr, nullptr>>>(x, y); }
"""


def test_gm_access_bypassing_the_data_cache() -> None:
    mod = asc.load(GM_FLAG_KERNEL, sync_check="error")
    x = torch.tensor([0.0, 0.0, 1.5, 0.0])
    y = torch.zeros(8)
    mod.run(x, y)
    assert x[1].item() == 4.5
    assert y[0].item() == 5.5


# ---- run_sample: -D definitions of the sample's build; the utils/debug headers; ACL error queries -----
SCENARIO_SAMPLE = r"""
#include "acl/acl.h"
#include "kernel_operator.h"
#include "utils/debug/asc_printf.h"
#include "utils/debug/asc_dump.h"
#include "utils/debug/asc_assert.h"
constexpr uint32_t scenarioNum = SCENARIO_NUM;
constexpr uint32_t N = 256;

extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, N);
    yGm.SetGlobalBuffer((__gm__ float*)y, N);
    assert(N % 64 == 0);
    asc_dump_gm<float>((__gm__ float*)x, 1, 32);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, N * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    if constexpr (scenarioNum == 2) {
        AscendC::Muls(t, t, 2.0f, N);
    } else {
        AscendC::Muls(t, t, 3.0f, N);
    }
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, N);
}

int32_t main(int32_t argc, char* argv[])
{
    aclInit(nullptr);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    float xHost[N], yHost[N];
    for (uint32_t i = 0; i < N; ++i) xHost[i] = float(i);
    void *x, *y;
    aclrtMalloc(&x, sizeof(xHost), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof(yHost), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof(xHost), xHost, sizeof(xHost), ACL_MEMCPY_HOST_TO_DEVICE);
    scale<<<1, nullptr, stream>>>((GM_ADDR)x, (GM_ADDR)y);
    if (aclrtGetLastError(ACL_RT_THREAD_LEVEL) != ACL_SUCCESS) return 1;
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(yHost, sizeof(yHost), y, sizeof(yHost), ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(yHost, sizeof(float), N, f);
    fclose(f);
    return 0;
}
"""


def test_sample_build_definitions_and_debug_headers() -> None:
    x = np.arange(256, dtype=np.float32)
    for scenario, factor in ((1, 3.0), (2, 2.0)):
        run = asc.run_sample({"scale.asc": SCENARIO_SAMPLE}, defines={"SCENARIO_NUM": scenario})
        assert run.ok, (run.error, run.stderr[-1500:])
        np.testing.assert_array_equal(np.frombuffer(run.files["output/y.bin"], dtype=np.float32), factor * x)


# ---- the ATen shim: Tensor::expand / expand_as / broadcast_to and IntArrayRef::vec() in a binding ------
BROADCAST_BINDING = r"""
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor mse_row(const at::Tensor& predictions, const at::Tensor& row)
{
    std::vector<int64_t> shape = predictions.sizes().vec();
    TORCH_CHECK(shape.size() == 3, "three dimensions expected");
    at::Tensor targets = row.expand({shape[0], -1, -1}).contiguous();  // (1, 1, n) -> (b, m, n)
    at::Tensor again = row.broadcast_to(predictions.sizes());
    at::Tensor same = row.expand_as(predictions);
    TORCH_CHECK(again.sizes() == targets.sizes() && same.sizes() == targets.sizes(), "broadcast shapes differ");
    at::Tensor result = at::empty({}, predictions.options());
    EXEC_NPU_CMD(aclnnMseLossCustom, predictions, targets, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("mse_row", &mse_row, "mse against a broadcast row");
}
"""


def test_binding_expand_and_sizes_vec() -> None:
    lib = asc.load_multikernelbench({**MSE_LOSS, "python_bind_src": BROADCAST_BINDING})
    pred = torch.randn(2, 4, 1024)
    row = torch.randn(4, 1024)[:1].reshape(1, 1, 1024).expand(1, 4, 1024).contiguous()
    got = lib.ops.mse_row(pred, row)
    torch.testing.assert_close(got, torch.nn.functional.mse_loss(pred, row.expand_as(pred)), rtol=1e-4, atol=1e-5)
