"""Gaps found by running published vector kernels unmodified: each test is a small kernel of our
own that uses the API or host-side form those kernels use, compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import kernel_gym.ascendc as asc

from .six_string_answers import LEAKY_RELU, MSE_LOSS

# ---- the ATen shim: `_out` bindings taking at::Tensor&, device queries, host scalar tensors ------
BINDING_WITH_OUT_VARIANT = r"""
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor& lrelu_out(const at::Tensor& x, double slope, at::Tensor& out)
{
    TORCH_CHECK(x.device().type() == c10::DeviceType::PrivateUse1, "x must be on the NPU");
    TORCH_CHECK(out.device().is_privateuseone() && !out.device().is_cpu(), "out must be on the NPU");
    TORCH_CHECK(x.device().type() == at::kPrivateUse1, "x must be on the NPU");
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, slope, out);
    return out;
}

at::Tensor lrelu(const at::Tensor& x, const at::Tensor& slope)
{
    // the slope arrives as a one-element tensor; read it back on the host as published bindings do
    at::Tensor host = at::empty({1}, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
    host.fill_(slope.to(at::kCPU).item<float>());
    at::Tensor again = host.to(x.device(), /*non_blocking=*/false, /*copy=*/true);
    at::Tensor y = at::empty_like(x);
    lrelu_out(x, double(again.item<float>()), y);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("lrelu", &lrelu, "leaky relu");
    m.def("lrelu_out", &lrelu_out, "leaky relu into out");
}
"""


def test_binding_out_variant_device_queries_and_host_scalars() -> None:
    lib = asc.load_multikernelbench({**LEAKY_RELU, "python_bind_src": BINDING_WITH_OUT_VARIANT})
    x = torch.randn(8, 1024)
    torch.testing.assert_close(lib.ops.lrelu(x, torch.tensor([0.25])), F.leaky_relu(x, 0.25))
    out = torch.empty_like(x)
    torch.testing.assert_close(lib.ops.lrelu_out(x, 0.1, out), F.leaky_relu(x, 0.1))


BINDING_WITH_TENSOR_DEVICE_QUERY_AND_SIZES_EQUALS = r"""
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor lrelu_like(const at::Tensor& x, const at::Tensor& like)
{
    // at::Tensor::is_privateuseone, c10::IntArrayRef::equals, device tags: as EvoKernel's level-2 bindings use them
    TORCH_CHECK(x.is_privateuseone(), "x must be on the NPU");
    TORCH_CHECK(x.sizes().equals(like.sizes()), "like must have x's shape");
    TORCH_CHECK(!x.sizes().equals(at::IntArrayRef{x.size(0)}), "a shorter list is not equal");
    // a host copy is a CPU tensor to the binding's checks, and its options make CPU tensors too
    at::Tensor host = like.to(at::kCPU).contiguous();
    TORCH_CHECK(host.device().is_cpu() && !host.is_privateuseone(), "a .to(kCPU) copy is on the CPU");
    TORCH_CHECK(at::empty({2}, host.options()).device().is_cpu(), "host options make CPU tensors");
    TORCH_CHECK(host.to(x.device()).is_privateuseone() && x.cpu().device().is_cpu(), "and back");
    at::Tensor y = at::empty_like(x);
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, 0.5, y);
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("lrelu_like", &lrelu_like, "leaky relu after a shape check");
}
"""


def test_binding_tensor_device_query_and_sizes_equals() -> None:
    lib = asc.load_multikernelbench(
        {**LEAKY_RELU, "python_bind_src": BINDING_WITH_TENSOR_DEVICE_QUERY_AND_SIZES_EQUALS}
    )
    x = torch.randn(8, 1024)
    torch.testing.assert_close(lib.ops.lrelu_like(x, torch.empty(8, 1024)), F.leaky_relu(x, 0.5))
    with pytest.raises(asc.AscendCFault, match="like must have x's shape"):
        lib.ops.lrelu_like(x, torch.empty(8, 512))


# ---- GM Fill, the asc built-ins block_idx/block_num, GetTPipePtr at global scope -----------------
FILL_KERNEL = r"""
#include "kernel_operator.h"
constexpr uint32_t PER_BLOCK = 256;

extern "C" __global__ __aicore__ void offset_copy(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + block_idx * PER_BLOCK, PER_BLOCK);
    yGm.SetGlobalBuffer((__gm__ float*)y + block_idx * PER_BLOCK, PER_BLOCK);
    // every block first fills its slice of y with its index, then adds x atomically on top
    AscendC::Fill(yGm, PER_BLOCK, static_cast<float>(block_idx));
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    GetTPipePtr()->InitBuffer(buf, PER_BLOCK * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, PER_BLOCK);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(t, t, static_cast<float>(block_num), PER_BLOCK);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::SetAtomicAdd<float>();
    AscendC::DataCopy(yGm, t, PER_BLOCK);
    AscendC::SetAtomicNone();
}

extern "C" void run(GM_ADDR x, GM_ADDR y) { offset_copy<<<4, nullptr, nullptr>>>(x, y); }
"""


def test_gm_fill_block_idx_and_global_tpipe_ptr() -> None:
    mod = asc.load(FILL_KERNEL)
    x = torch.randn(4 * 256)
    y = torch.full_like(x, -7.0)
    mod.run(x, y)
    want = x * 4 + torch.arange(4, dtype=torch.float32).repeat_interleave(256)
    torch.testing.assert_close(y, want)


# ---- the ACL shim's aclFloat16 and its conversions ----------------------------------------------
HALF_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void twice(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    AscendC::GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, n);
    yGm.SetGlobalBuffer((__gm__ half*)y, n);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(half));
    AscendC::LocalTensor<half> t = buf.Get<half>();
    AscendC::DataCopy(t, xGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(t, t, t, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, n);
}
"""

HALF_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_twice.h"

int main()
{
    const uint32_t n = 128;
    aclFloat16 host[n];
    for (uint32_t i = 0; i < n; ++i) host[i] = aclFloatToFloat16(0.5f * float(i) - 16.0f);
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE);
    ACLRT_LAUNCH_KERNEL(twice)(1, nullptr, x, y, n);
    aclrtMemcpy(host, sizeof(host), y, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    float out[n];
    for (uint32_t i = 0; i < n; ++i) out[i] = aclFloat16ToFloat(host[i]);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(out, sizeof(float), n, f);
    fclose(f);
    return 0;
}
"""


def test_acl_float16_host_buffers() -> None:
    run = asc.run_sample({"twice.cpp": HALF_KERNEL, "main.cpp": HALF_MAIN})
    assert run.ok, (run.error, run.stderr[-1500:])
    got = np.frombuffer(run.files["output/y.bin"], dtype=np.float32)
    np.testing.assert_array_equal(got, 2 * (0.5 * np.arange(128, dtype=np.float32) - 16.0))


# ---- operator projects: a kernel file with its own launcher and its own tiling struct -----------
PROJECT_HOST = r"""
#include "scale_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    TilingData tiling;
    tiling.set_total(context->GetInputShape(0)->GetOriginShape().GetShapeSize());
    tiling.set_factor(3.0f);
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetDynamicInputDataType(0, 0));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ScaleCustom : public OpDef {
public:
    explicit ScaleCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(ScaleCustom);
}  // namespace ops
"""

HOST_TILING = r"""
#ifndef SCALE_CUSTOM_TILING_H
#define SCALE_CUSTOM_TILING_H
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(TilingData)
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF(float, factor);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ScaleCustom, TilingData)
}  // namespace optiling
#endif
"""

# the kernel's view of the same bytes: a plain struct, under the same include guard
KERNEL_TILING = r"""
#ifndef SCALE_CUSTOM_TILING_H
#define SCALE_CUSTOM_TILING_H
#include <cstdint>
struct ScaleTiling {
    uint32_t total;
    float factor;
};
#endif
"""

PROJECT_KERNEL = r"""
#include "kernel_operator.h"
#include "scale_custom_tiling.h"

extern "C" __global__ __aicore__ void scale_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    ScaleTiling t;
    auto words = reinterpret_cast<__gm__ uint32_t*>(tiling);
    auto dst = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(ScaleTiling) / sizeof(uint32_t); ++i) dst[i] = words[i];
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, t.total);
    yGm.SetGlobalBuffer((__gm__ float*)y, t.total);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.total * sizeof(float));
    AscendC::LocalTensor<float> v = buf.Get<float>();
    AscendC::DataCopy(v, xGm, t.total);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(v, v, t.factor, t.total);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, v, t.total);
}

#ifndef ASCENDC_CPU_DEBUG
void scale_custom_do(uint32_t blockDim, void* l2ctrl, void* stream, uint8_t* x, uint8_t* y, uint8_t* workspace,
                     uint8_t* tiling)
{
    scale_custom<<<blockDim, l2ctrl, stream>>>(x, y, workspace, tiling);
}
#endif
"""


def test_op_project_kernel_with_launcher_and_own_tiling_struct() -> None:
    op = asc.load_op_project(
        {
            "op_host/scale_custom.cpp": PROJECT_HOST,
            "op_host/scale_custom_tiling.h": HOST_TILING,
            "op_kernel/scale_custom.cpp": PROJECT_KERNEL,
            "op_kernel/scale_custom_tiling.h": KERNEL_TILING,
        }
    )
    x = torch.randn(512)
    torch.testing.assert_close(op(x), 3 * x)


def test_op_host_may_include_a_header_of_op_kernel() -> None:
    kernel = PROJECT_KERNEL.replace('#include "scale_custom_tiling.h"', '#include "scale_custom_kernel_tiling.h"')
    op = asc.load_op_project(
        {
            "op_host/scale_custom.cpp": PROJECT_HOST,
            "op_kernel/scale_custom_tiling.h": HOST_TILING,  # the only copy of the tiling header
            "op_kernel/scale_custom_kernel_tiling.h": KERNEL_TILING.replace("SCALE_CUSTOM_TILING_H", "SCALE_KERNEL_H"),
            "op_kernel/scale_custom.cpp": kernel,
        }
    )
    x = torch.randn(256)
    torch.testing.assert_close(op(x), 3 * x)


# ---- BroadCast's host sizing helper ------------------------------------------------------------
SIZES = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
extern "C" void sizes(int64_t rows, int64_t cols, int64_t type_size, int64_t* out)
{
    platform_ascendc::PlatformAscendC platform(nullptr);
    uint32_t maxValue = 0, minValue = 0;
    ge::Shape src({rows, 1}), dst({rows, cols});
    AscendC::GetBroadCastMaxMinTmpSize(platform, src, dst, uint32_t(type_size), false, maxValue, minValue);
    out[0] = maxValue;
    out[1] = minValue;
    AscendC::GetBroadCastMaxMinTmpSize(platform, dst, dst, uint32_t(type_size), false, maxValue, minValue);
    out[2] = maxValue;
}
"""


@pytest.mark.parametrize("type_size", [2, 4, 1])
def test_broadcast_tmp_size_covers_a_block_per_source_element(type_size: int) -> None:
    out = torch.zeros(3, dtype=torch.int64)
    asc.load(SIZES).sizes(64, 16, type_size, out)
    assert out[1] >= 64 * 32 and out[0] >= out[1]  # a 32-byte block for each of the 64 source elements
    assert out[2] == (0 if type_size != 1 else 2 * 2 * 64 * 16)  # no spread: only int8's widening


# ---- CreateVecIndex, ReducePairElem / PairReduceSum argument order, Conditional, DataFormat -----
INDEX_AND_PAIRS = r"""
#include "kernel_operator.h"
template <bool isFloat>
__aicore__ inline void Body(GM_ADDR idx, GM_ADDR x, GM_ADDR pairs, GM_ADDR pairs_old)
{
    using T = typename AscendC::Conditional<isFloat, float, half>::type;
    static_assert(AscendC::DataFormat::ND != AscendC::DataFormat::NZ, "two formats");
    ASCENDC_ASSERT(AscendC::GetBlockNum() != 0, { KERNEL_LOG(KERNEL_ERROR, "no blocks"); });
    AscendC::GlobalTensor<int32_t> idxGm;
    AscendC::GlobalTensor<T> xGm, pGm, qGm;
    idxGm.SetGlobalBuffer((__gm__ int32_t*)idx, 200);
    xGm.SetGlobalBuffer((__gm__ T*)x, 128);
    pGm.SetGlobalBuffer((__gm__ T*)pairs, 64);
    qGm.SetGlobalBuffer((__gm__ T*)pairs_old, 64);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> a, b, c, d;
    pipe.InitBuffer(a, 256 * sizeof(int32_t));
    pipe.InitBuffer(b, 128 * sizeof(T));
    pipe.InitBuffer(c, 64 * sizeof(T));
    pipe.InitBuffer(d, 64 * sizeof(T));
    AscendC::LocalTensor<int32_t> ia = a.Get<int32_t>();
    AscendC::LocalTensor<T> xb = b.Get<T>(), pc = c.Get<T>(), qd = d.Get<T>();
    AscendC::CreateVecIndex(ia, int32_t(-7), 200);
    AscendC::DataCopy(xb, xGm, 128);
    AscendC::PipeBarrier<PIPE_ALL>();
    // 128 floats = two repeats of 64: each repeat gives 32 pair sums, the second at dst offset 32
    AscendC::ReducePairElem<AscendC::ReduceType::SUM, T>(pc, xb, 64, 2, 1, 1, 8);
    AscendC::PairReduceSum<T>(qd, xb, 2, 64, 1, 1, 8);  // the original name: repeat count first
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(idxGm, ia, 200);
    AscendC::DataCopy(pGm, pc, 64);
    AscendC::DataCopy(qGm, qd, 64);
}

extern "C" __global__ __aicore__ void index_and_pairs(GM_ADDR idx, GM_ADDR x, GM_ADDR pairs, GM_ADDR pairs_old)
{
    Body<true>(idx, x, pairs, pairs_old);
}
extern "C" void run(GM_ADDR idx, GM_ADDR x, GM_ADDR pairs, GM_ADDR pairs_old)
{
    index_and_pairs<<<1, nullptr, nullptr>>>(idx, x, pairs, pairs_old);
}
"""


def test_create_vec_index_and_pair_reductions() -> None:
    mod = asc.load(INDEX_AND_PAIRS)
    idx = torch.zeros(200, dtype=torch.int32)
    x = torch.randn(128)
    pairs, pairs_old = torch.zeros(64), torch.zeros(64)
    mod.run(idx, x, pairs, pairs_old)
    torch.testing.assert_close(idx, torch.arange(-7, 193, dtype=torch.int32))
    torch.testing.assert_close(pairs, x.view(64, 2).sum(1))
    torch.testing.assert_close(pairs_old, x.view(64, 2).sum(1))


# ---- run_sample: a host-only .cpp is a translation unit of its own ------------------------------
HOST_TILING_CPP = r"""
#include <cstdint>
constexpr uint32_t BUFFER_NUM = 3;  // the kernel file has a BUFFER_NUM of its own, as samples do
void GenerateTiling(uint32_t* tiling, uint32_t n) { tiling[0] = n * BUFFER_NUM; }
"""

SAMPLE_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_twice.h"
extern void GenerateTiling(uint32_t* tiling, uint32_t n);

int main()
{
    uint32_t tiling[1];
    GenerateTiling(tiling, 128);
    const uint32_t n = tiling[0] / 3;
    if (aclInit(nullptr) != ACL_ERROR_NONE) return 1;
    float host[128];
    for (uint32_t i = 0; i < n; ++i) host[i] = float(i);
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE);
    ACLRT_LAUNCH_KERNEL(twice)(1, nullptr, x, y, n);
    aclrtMemcpy(host, sizeof(host), y, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(host, sizeof(float), n, f);
    fclose(f);
    return 0;
}
"""


def test_sample_host_cpp_is_its_own_unit() -> None:
    kernel = "constexpr int BUFFER_NUM = 2;\n" + HALF_KERNEL.replace("half", "float")
    run = asc.run_sample({"twice.cpp": kernel, "twice_tiling.cpp": HOST_TILING_CPP, "main.cpp": SAMPLE_MAIN})
    assert run.ok, (run.error, run.stderr[-1500:])
    np.testing.assert_array_equal(
        np.frombuffer(run.files["output/y.bin"], dtype=np.float32), 2 * np.arange(128, dtype=np.float32)
    )


# ---- op projects: Int attributes read through a narrower integer type ---------------------------
def test_int_attribute_read_as_uint32() -> None:
    host = PROJECT_HOST.replace(
        "tiling.set_factor(3.0f);",
        "tiling.set_factor(float(*context->GetAttrs()->GetAttrPointer<uint32_t>(0)));",
    ).replace(
        'this->Output("y")',
        'this->Attr("factor").AttrType(REQUIRED).Int(1);\n        this->Output("y")',
    )
    op = asc.load_op_project(
        {
            "op_host/scale_custom.cpp": host,
            "op_host/scale_custom_tiling.h": HOST_TILING,
            "op_kernel/scale_custom.cpp": PROJECT_KERNEL,
            "op_kernel/scale_custom_tiling.h": KERNEL_TILING,
        }
    )
    x = torch.randn(256)
    torch.testing.assert_close(op(x, factor=5), 5 * x)


# ---- the binding's own allocations are 512-byte blocks; SetL2CacheHint; zeroed pinned host memory --
SUM_INTO_FIRST_KERNEL = r"""
#include "kernel_operator.h"
#include "kgsim_sum_tiling.h"
// writes a whole 32-byte block of results although the output holds one float, as published kernels do
extern "C" __global__ __aicore__ void sum_first(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, t.total);
    yGm.SetGlobalBuffer((__gm__ float*)y, 8);
    xGm.SetL2CacheHint(AscendC::CacheMode::CACHE_MODE_DISABLE);
    yGm.SetL2CacheHint<AscendC::CacheRwMode::WRITE>(AscendC::CacheMode::CACHE_MODE_NORMAL);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> a, b, w;
    pipe.InitBuffer(a, t.total * sizeof(float));
    pipe.InitBuffer(b, 8 * sizeof(float));
    pipe.InitBuffer(w, t.total * sizeof(float));
    AscendC::LocalTensor<float> xa = a.Get<float>(), yb = b.Get<float>(), wk = w.Get<float>();
    AscendC::DataCopy(xa, xGm, t.total);
    AscendC::Duplicate(yb, 0.0f, 8);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::ReduceSum(yb, xa, wk, t.total);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, yb, 8);
}
"""

SUM_HOST = r"""
#include "kgsim_sum_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    SumTiling tiling;
    tiling.set_total(context->GetInputShape(0)->GetOriginShape().GetShapeSize());
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ops {
class SumFirst : public OpDef {
public:
    explicit SumFirst(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(SumFirst);
}  // namespace ops
"""

SUM_TILING = r"""
#pragma once
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(SumTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(SumFirst, SumTiling)
}  // namespace optiling
"""

SUM_BINDING = r"""
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor sum_first_impl(const at::Tensor& x)
{
    at::Tensor y = at::empty({}, x.options());  // one float; the kernel stores a 32-byte block
    EXEC_NPU_CMD(aclnnSumFirst, x, y);
    return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("sum_first", &sum_first_impl, "sum"); }
"""


def test_binding_output_block_tail_and_l2_cache_hint() -> None:
    lib = asc.load_multikernelbench(
        {
            "project_json_src": '[{"op": "SumFirst", "input_desc": [{"name": "x", "param_type": "required", '
            '"format": ["ND"], "type": ["float"]}], "output_desc": [{"name": "y", "param_type": "required", '
            '"format": ["ND"], "type": ["float"]}]}]',
            "host_tiling_src": SUM_TILING,
            "host_operator_src": SUM_HOST,
            "kernel_src": SUM_INTO_FIRST_KERNEL,
            "python_bind_src": SUM_BINDING,
            "model_src": "class ModelNew:\n    pass\n",
        }
    )
    x = torch.rand(1024)
    torch.testing.assert_close(lib.ops.sum_first(x), x.sum(), rtol=1e-5, atol=1e-4)


SHORT_INPUT_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_twice.h"
int main()
{
    const uint32_t n = 256;  // twice the elements the input file holds
    float* host = nullptr;
    aclrtMallocHost((void**)&host, n * sizeof(float));
    FILE* in = fopen("input/x.bin", "rb");
    size_t got = fread(host, sizeof(float), n, in);
    fclose(in);
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, n * sizeof(float), host, n * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    ACLRT_LAUNCH_KERNEL(twice)(1, nullptr, x, y, n);
    aclrtMemcpy(host, n * sizeof(float), y, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(host, sizeof(float), n, f);
    fclose(f);
    printf("read %zu\n", got);
    return 0;
}
"""


def test_pinned_host_memory_starts_zeroed() -> None:
    x = np.arange(1, 129, dtype=np.float32)
    kernel = HALF_KERNEL.replace("half", "float")
    # a fresh process heap would hand out zeroed pages anyway: dirty it first, as a long main would
    main = SHORT_INPUT_MAIN.replace(
        "int main()\n{",
        "#include <cstdlib>\n#include <cstring>\nint main()\n{\n"
        "    for (int k = 0; k < 64; ++k) { void* p = malloc(1024); memset(p, 0x7f, 1024); free(p); }",
    )
    run = asc.run_sample({"twice.cpp": kernel, "main.cpp": main}, {"input/x.bin": x.tobytes()})
    assert run.ok, (run.error, run.stderr[-1500:])
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float32)
    np.testing.assert_array_equal(y, np.concatenate([2 * x, np.zeros(128, dtype=np.float32)]))


# ---- an atomic add of zero padding into the next block's range is not a race --------------------
PADDED_ATOMIC = r"""
#include "kernel_operator.h"
constexpr uint32_t PER_BLOCK = 100;  // not a 32-byte multiple of floats: each block copies out 104
constexpr uint32_t PADDED = 104;

extern "C" __global__ __aicore__ void padded_abs(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + PER_BLOCK * AscendC::GetBlockIdx(), PADDED);
    yGm.SetGlobalBuffer((__gm__ float*)y + PER_BLOCK * AscendC::GetBlockIdx(), PADDED);
    AscendC::Fill(yGm, PER_BLOCK, 0.0f);  // each block clears only its own range
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, PADDED * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, PADDED);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Abs(t, t, PADDED);
    for (uint32_t i = PER_BLOCK; i < PADDED; ++i) t.SetValue(i, 0.0f);  // zero the tail in the next block's range
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::SetAtomicAdd<float>();
    AscendC::DataCopy(yGm, t, PADDED);
    AscendC::SetAtomicNone();
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { padded_abs<<<2, nullptr, nullptr>>>(x, y); }
"""


def test_atomic_add_of_zero_padding_is_not_a_race() -> None:
    mod = asc.load(PADDED_ATOMIC)
    x = torch.randn(2 * 100 + 4)
    y = torch.zeros_like(x)
    mod.run(x, y)
    torch.testing.assert_close(y[:200], x[:200].abs())
    # a non-zero tail added into the next block's range is still a race
    racy = PADDED_ATOMIC.replace("t.SetValue(i, 0.0f);", "t.SetValue(i, 1.0f);")
    x = torch.rand(2 * 100 + 4) + 1.0
    with pytest.raises(asc.AscendCFault, match="gm_race"):
        asc.load(racy).run(x, torch.zeros_like(x))


# ---- ACLRT_LAUNCH_KERNEL with a tiling struct passed by pointer; AscendC::Std; Broadcast ----------
STRUCT_KERNEL = r"""
#include "kernel_operator.h"
struct RowTiling {
    uint32_t rows;
    uint32_t cols;
};
extern "C" __global__ __aicore__ void spread(GM_ADDR x, GM_ADDR y, RowTiling t)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, t.rows);
    yGm.SetGlobalBuffer((__gm__ float*)y, t.rows * t.cols);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> a, b;
    pipe.InitBuffer(a, AscendC::Std::max(t.rows, 8u) * sizeof(float));
    pipe.InitBuffer(b, t.rows * t.cols * sizeof(float));
    AscendC::LocalTensor<float> xa = a.Get<float>(), yb = b.Get<float>();
    AscendC::DataCopy(xa, xGm, t.rows);
    AscendC::PipeBarrier<PIPE_ALL>();
    const uint32_t dst[2] = {t.rows, t.cols}, src[2] = {t.rows, 1};
    AscendC::Broadcast<float, 2, 1>(yb, xa, dst, src);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, yb, t.rows * t.cols);
}
"""

STRUCT_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_spread.h"
int main()
{
    RowTiling* tiling = nullptr;
    aclrtMallocHost((void**)&tiling, sizeof(RowTiling));
    tiling->rows = 16;
    tiling->cols = 8;
    float host[128];
    for (int i = 0; i < 16; ++i) host[i] = float(i) - 4.0f;
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, 16 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, 16 * sizeof(float), host, 16 * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    ACLRT_LAUNCH_KERNEL(spread)(1, nullptr, x, y, tiling);  // the generated launcher copies *tiling
    aclrtMemcpy(host, sizeof(host), y, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(host, sizeof(float), 128, f);
    fclose(f);
    return 0;
}
"""


def test_launch_with_tiling_struct_pointer_std_max_and_broadcast() -> None:
    run = asc.run_sample({"spread.cpp": STRUCT_KERNEL, "main.cpp": STRUCT_MAIN})
    assert run.ok, (run.error, run.stderr[-1500:])
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float32).reshape(16, 8)
    np.testing.assert_array_equal(y, np.repeat((np.arange(16, dtype=np.float32) - 4.0)[:, None], 8, axis=1))


# ---- blocks storing identical bytes to one place do not race; different bytes still do ----------
SAME_RESULT = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void same_result(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 64);
    yGm.SetGlobalBuffer((__gm__ float*)y, 64);  // every block writes the whole output
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64 * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, 64);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(t, t, SCALE, 64);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, 64);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { same_result<<<4, nullptr, nullptr>>>(x, y); }
"""


def test_identical_stores_of_several_blocks_are_not_a_race() -> None:
    x = torch.randn(64)
    y = torch.zeros(64)
    asc.load("#define SCALE 3.0f\n" + SAME_RESULT).run(x, y)
    torch.testing.assert_close(y, 3 * x)
    # block 0 stores zeros over zeros, the others their index: the order decides, so it is a race
    varying = "#define SCALE float(AscendC::GetBlockIdx())\n" + SAME_RESULT
    with pytest.raises(asc.AscendCFault, match="gm_race"):
        asc.load(varying).run(x, torch.zeros(64))


# Every block writes the whole output row by row, each 16-float store spilling zeros into the next
# row, which that block's next store overwrites: the blocks pass through different bytes, but each
# leaves the same bytes, so whichever block stores last the output is the same. Blocks run in
# parallel on the NPU and it raises no fault for overlapping stores; only the final bytes matter.
SPILL_ROWS = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void spill_rows(GM_ADDR x, GM_ADDR y)
{
    constexpr uint32_t ROWS = 6, W = 8;
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, ROWS * W);
    yGm.SetGlobalBuffer((__gm__ float*)y, (ROWS + 1) * W);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * W * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    READ_FIRST
    for (uint32_t r = 0; r < ROWS; ++r) {
        AscendC::Duplicate(t, 0.0f, 2 * W);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(t, xGm[r * W], W);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::Muls(t, t, SCALE, W);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(yGm[r * W], t, 2 * W);  // row r, and zeros over row r + 1 until its own store
        AscendC::PipeBarrier<PIPE_ALL>();
    }
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { spill_rows<<<4, nullptr, nullptr>>>(x, y); }
"""


def _spill_rows(scale: str, read_first: str = "") -> str:
    return f"#define SCALE {scale}\n#define READ_FIRST {read_first}\n" + SPILL_ROWS


def test_blocks_that_leave_identical_bytes_do_not_race_whatever_they_stored_before() -> None:
    x = torch.randn(6 * 8)
    y = torch.full((7 * 8,), 7.0)
    asc.load(_spill_rows("2.0f")).run(x, y)
    torch.testing.assert_close(y[:48], 2 * x)
    torch.testing.assert_close(y[48:], torch.zeros(8))
    # blocks that leave different bytes (scaled by their index): the order decides, still a race
    with pytest.raises(asc.AscendCFault, match="gm_race"):
        asc.load(_spill_rows("float(AscendC::GetBlockIdx() + 1)")).run(x, torch.zeros(7 * 8))
    # a block reading what the others write is a read/write race even when all leave the same bytes
    read = "AscendC::DataCopy(t, yGm[W], W); AscendC::PipeBarrier<PIPE_ALL>();"
    with pytest.raises(asc.AscendCFault, match="gm_race") as fault:
        asc.load(_spill_rows("2.0f", read)).run(x, torch.zeros(7 * 8))
    assert " reads " in str(fault.value), str(fault.value)


# ---- AdjustSoftMaxRes, GetSwishTmpSize, Power's whole-tensor forms with a temporary buffer --------
ADJUST = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
extern "C" __global__ __aicore__ void adjust(GM_ADDR x, GM_ADDR y, GM_ADDR p, GM_ADDR flag)
{
    constexpr uint32_t M = 4, K = 16;
    AscendC::GlobalTensor<float> xGm, yGm, pGm;
    AscendC::GlobalTensor<int32_t> fGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, M * K);
    yGm.SetGlobalBuffer((__gm__ float*)y, M * K);
    pGm.SetGlobalBuffer((__gm__ float*)p, M * K);
    fGm.SetGlobalBuffer((__gm__ int32_t*)flag, 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> a, s, m, w, q;
    pipe.InitBuffer(a, M * K * 4);
    pipe.InitBuffer(s, M * 8 * 4);
    pipe.InitBuffer(m, M * 8 * 4);
    pipe.InitBuffer(w, 8192);
    pipe.InitBuffer(q, M * K * 4);
    AscendC::LocalTensor<float> xa = a.Get<float>(), sum = s.Get<float>(), mx = m.Get<float>(), pw = q.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = w.Get<uint8_t>();
    AscendC::DataCopy(xa, xGm, M * K);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Power<float, false>(pw, xa, 2.0f, tmp);  // whole tensor, with a temporary buffer
    SoftMaxTiling tiling;
    AscendC::SoftMaxShapeInfo shape = {M, K, M, K};
    AscendC::SoftMax<float>(xa, sum, mx, xa, tmp, tiling, shape);
    AscendC::PipeBarrier<PIPE_ALL>();
    // rows whose maximum is exactly 1.0f (0x3f800000) become -1
    bool hit = AscendC::AdjustSoftMaxRes<float, float>(xa, mx, 0x3f800000u, -1.0f, shape);
    AscendC::PipeBarrier<PIPE_ALL>();
    fGm.SetValue(0, hit ? 1 : 0);
    AscendC::DataCopy(yGm, xa, M * K);
    AscendC::DataCopy(pGm, pw, M * K);
}
extern "C" void run(GM_ADDR x, GM_ADDR y, GM_ADDR p, GM_ADDR flag) { adjust<<<1, nullptr, nullptr>>>(x, y, p, flag); }
extern "C" int64_t swish_tmp(int64_t n)
{
    uint32_t maxValue = 7, minValue = 7;
    AscendC::GetSwishTmpSize(ge::Shape({n}), 4, false, maxValue, minValue);
    return int64_t(maxValue) + int64_t(minValue);
}
"""


def test_adjust_softmax_res_power_with_tmp_and_swish_tmp_size() -> None:
    mod = asc.load(ADJUST)
    x = torch.rand(4, 16) * 0.5
    x[1, 3] = 1.0  # row 1's maximum is exactly 1.0
    y, p, flag = torch.zeros(4, 16), torch.zeros(4, 16), torch.zeros(8, dtype=torch.int32)
    mod.run(x, y, p, flag)
    want = torch.softmax(x, dim=1)
    want[1] = -1.0
    torch.testing.assert_close(y, want)
    torch.testing.assert_close(p, x**2)
    assert int(flag[0]) == 1
    assert mod.swish_tmp(1024) == 0  # Swish takes no temporary buffer here


# ---- aclrtMalloc gives ALIGN_UP(size, 32) + 32 bytes: a copy into that tail does not fault ---------
TAIL_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_twice.h"
int main()
{
    const uint32_t n = COUNT;  // floats the kernel copies; the buffers hold 37 floats (148 bytes)
    float host[64] = {0};
    for (int i = 0; i < 37; ++i) host[i] = float(i);
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, 37 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, 37 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, 37 * sizeof(float), host, 37 * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    ACLRT_LAUNCH_KERNEL(twice)(1, nullptr, x, y, n);
    aclrtMemcpy(host, 37 * sizeof(float), y, 37 * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(host, sizeof(float), 37, f);
    fclose(f);
    return 0;
}
"""


def test_acl_malloc_tail_is_part_of_the_allocation() -> None:
    kernel = HALF_KERNEL.replace("half", "float")
    # 40 floats = 160 B <= ALIGN_UP(148, 32) + 32 = 192 B: inside the allocation
    run = asc.run_sample({"twice.cpp": kernel, "main.cpp": TAIL_MAIN.replace("COUNT", "40")})
    assert run.ok, (run.error, run.stderr[-1500:])
    np.testing.assert_array_equal(
        np.frombuffer(run.files["output/y.bin"], dtype=np.float32)[:37], 2 * np.arange(37, dtype=np.float32)
    )
    # 56 floats = 224 B run past it, still inside the 2 MiB page the NPU maps: no fault there
    # either; the simulator reads poison past the allocation, drops the writes, and warns
    run = asc.run_sample({"twice.cpp": kernel, "main.cpp": TAIL_MAIN.replace("COUNT", "56")})
    assert run.ok, (run.error, run.stderr[-1500:])
    warned = [w["error_class"] for r in run.launches for w in r.warnings]
    assert "gm_out_of_bounds" in warned, warned
    np.testing.assert_array_equal(
        np.frombuffer(run.files["output/y.bin"], dtype=np.float32)[:37], 2 * np.arange(37, dtype=np.float32)
    )


# ---- GetReduceRepeatSumSpr / GetReduceRepeatMaxMinSpr read back the last ReduceSum / ReduceMax -------
REDUCE_SPR = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void spr(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> a, b, w;
    pipe.InitBuffer(a, n * 4);
    pipe.InitBuffer(b, 64);
    pipe.InitBuffer(w, n * 4);
    AscendC::LocalTensor<float> src = a.Get<float>(), dst = b.Get<float>(), work = w.Get<float>();
    AscendC::DataCopy(src, xGm, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::ReduceSum<float>(dst, src, work, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    float sum = AscendC::GetReduceRepeatSumSpr<float>();
    AscendC::ReduceMax<float>(dst, src, work, n, true);
    AscendC::PipeBarrier<PIPE_ALL>();
    float mx = 0, idx = 0;
    AscendC::GetReduceRepeatMaxMinSpr<float>(mx, idx);
    uint32_t index = 0;
    memcpy(&index, &idx, 4);  // the index register holds an integer
    dst.SetValue(0, sum);
    dst.SetValue(1, mx);
    dst.SetValue(2, float(index));
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, dst, 8);
}
extern "C" void run(GM_ADDR x, GM_ADDR y, uint32_t n) { spr<<<1, nullptr, nullptr>>>(x, y, n); }
"""


def test_reduce_result_special_registers() -> None:
    mod = asc.load(REDUCE_SPR)
    x = torch.rand(512)
    x[300] = 5.0
    y = torch.zeros(8)
    mod.run(x, y, 512)
    torch.testing.assert_close(y[0], x.sum(), rtol=1e-5, atol=1e-4)
    assert float(y[1]) == 5.0 and int(y[2]) == 300


# ---- aclrtMalloc memory starts zeroed: a sample that copies a shorter file in reads zeros past it ---
ZERO_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_twice.h"
int main()
{
    aclFloat16 host[128];
    for (int i = 0; i < 128; ++i) host[i] = aclFloatToFloat16(1.0f);
    void *x = nullptr, *y = nullptr;
    aclrtMalloc(&x, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof(host), host, 64 * sizeof(aclFloat16), ACL_MEMCPY_HOST_TO_DEVICE);  // half of it
    ACLRT_LAUNCH_KERNEL(twice)(1, nullptr, x, y, 128);
    aclrtMemcpy(host, sizeof(host), y, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(host, sizeof(aclFloat16), 128, f);
    fclose(f);
    return 0;
}
"""


def test_acl_malloc_starts_zeroed() -> None:
    run = asc.run_sample({"twice.cpp": HALF_KERNEL, "main.cpp": ZERO_MAIN})
    assert run.ok, (run.error, run.stderr[-1500:])
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float16)
    np.testing.assert_array_equal(y, np.r_[np.full(64, 2.0), np.zeros(64)].astype(np.float16))


# ---- PopStackBuffer, LocalTensor ShapeInfo, InitBuffer padding to 32 B, BroadCast of 2-byte integers -
STACK_SHAPE = r"""
#include "kernel_operator.h"
constexpr uint32_t ROWS = 4, H = 64, BYTES = 511;
extern "C" __global__ __aicore__ void stack(GM_ADDR x, GM_ADDR g, GM_ADDR y, GM_ADDR b, GM_ADDR by, GM_ADDR bo,
                                            GM_ADDR info)
{
    AscendC::GlobalTensor<float> xGm, gGm, yGm;
    AscendC::GlobalTensor<int8_t> bGm, boGm;
    AscendC::GlobalTensor<int16_t> byGm;
    AscendC::GlobalTensor<uint32_t> infoGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, ROWS * H);
    gGm.SetGlobalBuffer((__gm__ float*)g, H);
    yGm.SetGlobalBuffer((__gm__ float*)y, ROWS * H);
    bGm.SetGlobalBuffer((__gm__ int8_t*)b, BYTES);
    boGm.SetGlobalBuffer((__gm__ int8_t*)bo, BYTES);
    byGm.SetGlobalBuffer((__gm__ int16_t*)by, 4 * 16);
    infoGm.SetGlobalBuffer((__gm__ uint32_t*)info, 8);
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, gb, ib, ob;
    pipe.InitBuffer(q, 1, BYTES);  // padded to 512 B
    pipe.InitBuffer(xb, ROWS * H * 4);
    pipe.InitBuffer(gb, H * 4);
    pipe.InitBuffer(ib, 64);
    pipe.InitBuffer(ob, 4 * 16 * 2);
    // a 511-byte DataCopyPad into the 511-byte buffer fills whole 32-byte blocks of UB
    AscendC::LocalTensor<int8_t> bytes = q.AllocTensor<int8_t>();
    AscendC::DataCopyPad(bytes, bGm, {1, BYTES, 0, 0, 0}, {false, 0, 0, 0});
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopyPad(boGm, bytes, {1, BYTES, 0, 0, 0});
    AscendC::LocalTensor<float> xl = xb.Get<float>(), gl = gb.Get<float>();
    uint32_t shape[3] = {1, ROWS, H};
    xl.SetShapeInfo(AscendC::ShapeInfo(3, shape, AscendC::DataFormat::ND));
    AscendC::LocalTensor<uint8_t> stackBuf;
    bool popped = AscendC::PopStackBuffer<uint8_t, AscendC::TPosition::LCM>(stackBuf);
    AscendC::DataCopy(xl, xGm, ROWS * H);
    AscendC::DataCopy(gl, gGm, H);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::ShapeInfo si = xl.GetShapeInfo();
    RmsNormTiling tiling;
    tiling.bLength = si.shape[0];
    tiling.sLength = si.shape[1];
    tiling.hLength = si.shape[2];
    tiling.originalHLength = si.originalShape[2];
    AscendC::RmsNorm<float>(xl, xl, gl, stackBuf, 1e-5f, tiling);
    // BroadCast of int16_t: one row of 16 to 4 rows
    AscendC::LocalTensor<int16_t> row = ib.Get<int16_t>(), rows = ob.Get<int16_t>();
    AscendC::Duplicate(row, int16_t(0), 32);
    for (int i = 0; i < 16; ++i) row.SetValue(i, int16_t(i * 100 - 700));
    uint32_t dstShape[2] = {4, 16}, srcShape[2] = {1, 16};
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::BroadCast<int16_t, 2, 0>(rows, row, dstShape, srcShape);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, xl, ROWS * H);
    AscendC::DataCopy(byGm, rows, 4 * 16);
    infoGm.SetValue(0, popped ? 1u : 0u);
    infoGm.SetValue(1, bytes.GetSize());
    infoGm.SetValue(2, si.shapeDim);
    infoGm.SetValue(3, stackBuf.GetSize());
    q.FreeTensor(bytes);
}
extern "C" void run(GM_ADDR x, GM_ADDR g, GM_ADDR y, GM_ADDR b, GM_ADDR by, GM_ADDR bo, GM_ADDR info)
{
    stack<<<1, nullptr, nullptr>>>(x, g, y, b, by, bo, info);
}
"""


def test_pop_stack_buffer_shape_info_padded_init_buffer_int16_broadcast() -> None:
    mod = asc.load(STACK_SHAPE)
    x, g = torch.randn(4, 64), torch.rand(64) + 0.5
    b = torch.randint(-100, 100, (511,), dtype=torch.int8)
    y, by, bo = torch.zeros(4, 64), torch.zeros(4, 16, dtype=torch.int16), torch.zeros(511, dtype=torch.int8)
    info = torch.zeros(8, dtype=torch.int32)
    mod.run(x, g, y, b, by, bo, info)
    want = x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + 1e-5) * g
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(bo, b)
    torch.testing.assert_close(by, (torch.arange(16, dtype=torch.int16) * 100 - 700).expand(4, 16))
    popped, padded_size, shape_dim, stack_bytes = (int(v) for v in info[:4])
    assert (popped, padded_size, shape_dim) == (1, 512, 3)
    # the stack buffer is the rest of the usable UB above what TPipe allocated
    assert 100_000 < stack_bytes < 192 * 1024


# ---- a sample with several kernel files whose file-scope names repeat: each is a unit of its own -----
SCALE_KERNEL = r"""
#include "kernel_operator.h"
namespace {
constexpr uint32_t N = 256;  // the same name in each kernel file
constexpr float FACTOR = FACTOR_VALUE;
}
extern "C" __global__ __aicore__ void KERNEL_NAME(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, N);
    yGm.SetGlobalBuffer((__gm__ float*)y, N);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, N * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(t, t, FACTOR, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, N);
}
void KERNEL_NAME_do(uint32_t blocks, void* stream, uint8_t* x, uint8_t* y)
{
    KERNEL_NAME<<<blocks, nullptr, stream>>>(x, y);
}
"""

TWO_KERNELS_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
extern void scale2_do(uint32_t blocks, void* stream, uint8_t* x, uint8_t* y);
extern void scale3_do(uint32_t blocks, void* stream, uint8_t* x, uint8_t* y);
int main()
{
    float host[256];
    for (int i = 0; i < 256; ++i) host[i] = float(i);
    uint8_t *x = nullptr, *y2 = nullptr, *y3 = nullptr;
    aclrtMalloc((void**)&x, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&y2, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&y3, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE);
    scale2_do(1, nullptr, x, y2);
    scale3_do(1, nullptr, x, y3);
    FILE* f = fopen("output/y.bin", "wb");
    aclrtMemcpy(host, sizeof(host), y2, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    fwrite(host, sizeof(float), 256, f);
    aclrtMemcpy(host, sizeof(host), y3, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);
    fwrite(host, sizeof(float), 256, f);
    fclose(f);
    return 0;
}
"""


def test_sample_kernel_files_with_repeated_file_scope_names() -> None:
    def kernel(name: str, factor: str) -> str:
        return SCALE_KERNEL.replace("KERNEL_NAME", name).replace("FACTOR_VALUE", factor)

    files = {
        "scale2.cpp": kernel("scale2", "2.0f"),
        "scale3.cpp": kernel("scale3", "3.0f"),
        "main.cpp": TWO_KERNELS_MAIN,
    }
    run = asc.run_sample(files)
    assert run.ok, (run.error, run.stderr[-1500:])
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float32)
    x = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(y, np.r_[2 * x, 3 * x])


SOC_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
int main()
{
    const char* soc = SOC_VERSION;  // defined by the sample's CMake build
    FILE* f = fopen("output/soc.txt", "w");
    fputs(soc, f);
    fclose(f);
    return 0;
}
"""


def test_sample_soc_version_macro() -> None:
    run = asc.run_sample({"twice.cpp": HALF_KERNEL, "main.cpp": SOC_MAIN})
    assert run.ok, (run.error, run.stderr[-1500:])
    assert run.files["output/soc.txt"] == b"Ascend910B2"


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


# ---- Cast half <-> int4b_t: two elements a byte, even element in the low nibble, saturating -----------
INT4_CAST_KERNEL = r"""
#include "kernel_operator.h"
constexpr uint32_t N = 512;
extern "C" __global__ __aicore__ void int4_round_trip(GM_ADDR x, GM_ADDR packed, GM_ADDR back)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, qb, hb;
    pipe.InitBuffer(xb, N * sizeof(half));
    pipe.InitBuffer(qb, N / 2);
    pipe.InitBuffer(hb, N * sizeof(half));
    AscendC::LocalTensor<half> xt = xb.Get<half>();
    AscendC::LocalTensor<int8_t> q8 = qb.Get<int8_t>();
    AscendC::LocalTensor<half> ht = hb.Get<half>();
    AscendC::GlobalTensor<half> xGm, backGm;
    AscendC::GlobalTensor<int8_t> packedGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, N);
    packedGm.SetGlobalBuffer((__gm__ int8_t*)packed, N / 2);
    backGm.SetGlobalBuffer((__gm__ half*)back, N);
    AscendC::DataCopy(xt, xGm, N);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::LocalTensor<AscendC::int4b_t> q4 = q8.ReinterpretCast<AscendC::int4b_t>();  // N elements
    // the first half by count; the second by mask and repeats (a repeat's int4b_t side is 2 blocks)
    AscendC::Cast(q4, xt, AscendC::RoundMode::CAST_FLOOR, N / 2);
    AscendC::Cast<AscendC::int4b_t, half>(q4[N / 2], xt[N / 2], AscendC::RoundMode::CAST_FLOOR, 128, 2, {1, 1, 2, 8});
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(ht, q4, AscendC::RoundMode::CAST_NONE, q4.GetSize());
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(packedGm, q8, N / 2);
    AscendC::DataCopy(backGm, ht, N);
}
extern "C" void run(GM_ADDR x, GM_ADDR p, GM_ADDR b) { int4_round_trip<<<1, nullptr, nullptr>>>(x, p, b); }
"""


def test_cast_half_to_int4_and_back() -> None:
    mod = asc.load(INT4_CAST_KERNEL, check_uninit=True, sync_check="error")
    x = (torch.rand(512) * 24 - 12).half()
    packed = torch.zeros(256, dtype=torch.int8)
    back = torch.zeros(512, dtype=torch.half)
    mod.run(x, packed, back)
    q = torch.floor(x.float()).clamp(-8, 7).to(torch.int8)
    torch.testing.assert_close(packed, (q[0::2] & 0xF) | (q[1::2] << 4))
    torch.testing.assert_close(back, q.half())


# ---- the API-call watchdog counts per block: many busy blocks are not an endless loop ----------------
BUSY_BLOCKS_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void busy_blocks(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 1024);
    yGm.SetGlobalBuffer((__gm__ float*)y, AscendC::GetBlockNum());
    float acc = 0.0f;
    for (uint32_t i = 0; i < 30000; ++i) acc += xGm.GetValue((i + AscendC::GetBlockIdx()) % 1024);
    yGm.SetValue(AscendC::GetBlockIdx(), acc);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { busy_blocks<<<8, nullptr, nullptr>>>(x, y); }
"""


def test_watchdog_call_budget_is_per_block() -> None:
    mod = asc.load(BUSY_BLOCKS_KERNEL, watchdog_calls=5e4)  # 8 blocks x 30000 calls: over 5e4 only in sum
    x = torch.randint(0, 4, (1024,)).float()
    y = torch.zeros(8)
    mod.run(x, y)
    reps = torch.arange(30000)
    want = torch.stack([x[(reps + b) % 1024].sum() for b in range(8)])
    torch.testing.assert_close(y, want)


# ---- ReduceMax/Min/Sum/Prod/Mean with Pattern::Reduce::AR / RA (rows 32-byte padded) ----------------
PATTERN_REDUCE_KERNEL = r"""
#include "kernel_operator.h"
constexpr uint32_t R = 6, C = 13, CP = 16;  // a 6 x 13 tensor, rows padded to 16 floats
extern "C" __global__ __aicore__ void pattern_reduce(GM_ADDR x, GM_ADDR y)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, yb, tb;
    pipe.InitBuffer(xb, R * CP * sizeof(float));
    pipe.InitBuffer(yb, 7 * 32 * sizeof(float));
    pipe.InitBuffer(tb, 1024);
    AscendC::LocalTensor<float> xt = xb.Get<float>();
    AscendC::LocalTensor<float> yt = yb.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = tb.Get<uint8_t>();
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, R * CP);
    yGm.SetGlobalBuffer((__gm__ float*)y, 7 * 32);
    AscendC::Duplicate(yt, 0.0f, 7 * 32);
    AscendC::DataCopy(xt, xGm, R * CP);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    uint32_t shape[2] = {R, C};
    AscendC::ReduceMax<float, AscendC::Pattern::Reduce::AR>(yt, xt, tmp, shape, true);
    AscendC::ReduceMin<float, AscendC::Pattern::Reduce::RA, true>(yt[32], xt, shape, true);
    AscendC::ReduceSum<float, AscendC::Pattern::Reduce::AR>(yt[64], xt, tmp, shape, true);
    AscendC::ReduceSum<float, AscendC::Pattern::Reduce::RA>(yt[96], xt, tmp, shape, true);
    AscendC::ReduceProd<float, AscendC::Pattern::Reduce::RA>(yt[128], xt, tmp, shape, true);
    AscendC::ReduceMean<float, AscendC::Pattern::Reduce::AR>(yt[160], xt, shape, true);
    AscendC::ReduceMax<float, AscendC::Pattern::Reduce::RA>(yt[192], xt, tmp, shape, true);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yGm, yt, 7 * 32);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { pattern_reduce<<<1, nullptr, nullptr>>>(x, y); }
"""


def test_pattern_reductions_ar_and_ra() -> None:
    mod = asc.load(PATTERN_REDUCE_KERNEL, sync_check="error")
    x = torch.rand(6, 16) + 0.5
    y = torch.zeros(7, 32)
    mod.run(x, y)
    v = x[:, :13]
    want = [v.amax(1), v.amin(0), v.sum(1), v.sum(0), v.prod(0), v.mean(1), v.amax(0)]
    for row, w in zip(y, want, strict=True):
        torch.testing.assert_close(row[: w.numel()], w)


def test_pattern_reduction_data_types_follow_the_a2_table() -> None:
    # ReduceSum with a pattern takes float only on Atlas A2; ReduceMax takes half too
    half_sum = PATTERN_REDUCE_KERNEL.replace(
        "AscendC::ReduceSum<float, AscendC::Pattern::Reduce::AR>(yt[64], xt, tmp, shape, true);",
        "AscendC::LocalTensor<half> xh = xt.ReinterpretCast<half>();\n"
        "    AscendC::ReduceMax<half, AscendC::Pattern::Reduce::AR>(xh[256], xh, tmp, shape, true);\n"
        "    AscendC::ReduceSum<half, AscendC::Pattern::Reduce::AR>(xh[256], xh, tmp, shape, true);",
    )
    with pytest.raises(asc.AscendCCompileError, match="ReduceSum"):
        asc.load(half_sum)


# ---- a DataCopy that reads a few bytes past a tensor's end, inside torch_npu's allocation block ----
# torch_npu's caching allocator gives a tensor of n bytes a block of (n + 32) rounded up to 512 B, so a
# kernel that copies whole 32-byte blocks past the end of a 16384-byte input (4096 floats, a 512-B
# multiple) reads memory of its own block: no fault on the NPU. This kernel shifts x left by 4 and
# reads 16 bytes past x's end; y's last 4 elements are whatever the block's tail held.
SHIFT_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096 * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 4100);
    yGm.SetGlobalBuffer((__gm__ float*)y, 4096);
    AscendC::DataCopy(t, xGm[4], 4096);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, 4096);
}
"""


def test_read_past_a_tensor_end_within_its_npu_block():
    lib = asc.load_multikernelbench({**LEAKY_RELU, "kernel_src": SHIFT_KERNEL})
    x = torch.randn(4096)
    y = lib.ops.leaky_relu_custom(x, 0.0)
    torch.testing.assert_close(y[:4092], x[4:])


# ---- the ATen shim: at::broadcast_tensors; an aclnn name that is not the project's operator -------------
BROADCAST_TENSORS_BINDING = r"""
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor mse_bcast(const at::Tensor& a, const at::Tensor& b)
{
    std::vector<at::Tensor> both = at::broadcast_tensors({a, b});
    at::Tensor result = at::empty({}, a.options());
    EXEC_NPU_CMD(aclnnMseLossCustom, both[0].contiguous(), both[1].contiguous(), result);
    return result;
}

at::Tensor mse_builtin(const at::Tensor& a, const at::Tensor& b)
{
    at::Tensor result = at::empty({}, a.options());
    EXEC_NPU_CMD(aclnnMseLoss, a, b, result);  // CANN's own operator, not this project's
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("mse_bcast", &mse_bcast, "mse of two broadcast operands");
    m.def("mse_builtin", &mse_builtin, "mse through a built-in aclnn operator");
}
"""


def test_binding_broadcast_tensors_and_builtin_aclnn_name() -> None:
    lib = asc.load_multikernelbench({**MSE_LOSS, "python_bind_src": BROADCAST_TENSORS_BINDING})
    a, b = torch.randn(4, 1, 256), torch.randn(4, 256)  # -> (4, 4, 256)
    want = F.mse_loss(*torch.broadcast_tensors(a, b))
    torch.testing.assert_close(lib.ops.mse_bcast(a, b), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="aclnnMseLoss is not this project's operator"):
        lib.ops.mse_builtin(a.expand(4, 4, 256).contiguous(), b.expand(4, 4, 256).contiguous())


# ---- the scalar API: ToFloat / ToBfloat16, ScalarCast (and its newer name Cast), bit counting --------
SCALAR_API_KERNEL = r"""
#include "kernel_operator.h"
constexpr uint32_t N = 64;
extern "C" __global__ __aicore__ void scalar_api(GM_ADDR x, GM_ADDR ints, GM_ADDR h, GM_ADDR bf, GM_ADDR v,
                                                 GM_ADDR bits)
{
    AscendC::GlobalTensor<float> xGm, bfGm;
    AscendC::GlobalTensor<int32_t> iGm;
    AscendC::GlobalTensor<half> hGm;
    AscendC::GlobalTensor<int64_t> vGm, bGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, N);
    iGm.SetGlobalBuffer((__gm__ int32_t*)ints, 4 * N);
    hGm.SetGlobalBuffer((__gm__ half*)h, N);
    bfGm.SetGlobalBuffer((__gm__ float*)bf, N);
    vGm.SetGlobalBuffer((__gm__ int64_t*)v, N);
    bGm.SetGlobalBuffer((__gm__ int64_t*)bits, 7 * N);
    for (uint32_t i = 0; i < N; ++i) {
        float f = xGm.GetValue(i);
        iGm.SetValue(i, AscendC::ScalarCast<float, int32_t, AscendC::RoundMode::CAST_ROUND>(f));
        iGm.SetValue(N + i, AscendC::ScalarCast<float, int32_t, AscendC::RoundMode::CAST_RINT>(f));
        iGm.SetValue(2 * N + i, AscendC::Cast<float, int32_t, AscendC::RoundMode::CAST_FLOOR>(f));
        iGm.SetValue(3 * N + i, AscendC::ScalarCast<float, int32_t, AscendC::RoundMode::CAST_CEIL>(f));
        hGm.SetValue(i, AscendC::ScalarCast<float, half, AscendC::RoundMode::CAST_ODD>(f));
        bfloat16_t b = AscendC::ToBfloat16(f);
        bfGm.SetValue(i, AscendC::ToFloat(b));
        int64_t s = vGm.GetValue(i);
        uint64_t u = static_cast<uint64_t>(s);
        bGm.SetValue(i, AscendC::ScalarGetCountOfValue<1>(u));
        bGm.SetValue(N + i, AscendC::ScalarGetCountOfValue<0>(u));
        bGm.SetValue(2 * N + i, AscendC::ScalarCountLeadingZero(u));
        bGm.SetValue(3 * N + i, AscendC::CountBitsCntSameAsSignBit(s));
        bGm.SetValue(4 * N + i, AscendC::ScalarGetSFFValue<1>(u));
        bGm.SetValue(5 * N + i, AscendC::GetSFFValue<0>(u));
        bGm.SetValue(6 * N + i, AscendC::GetBitCount<1>(u) + AscendC::CountLeadingZero(u));
    }
}
extern "C" void run(GM_ADDR x, GM_ADDR i, GM_ADDR h, GM_ADDR b, GM_ADDR v, GM_ADDR bits)
{
    scalar_api<<<1, nullptr, nullptr>>>(x, i, h, b, v, bits);
}
"""


def _half_round_to_odd(x: np.ndarray) -> np.ndarray:
    """float32 -> float16 truncated toward zero, the last bit set when inexact."""
    near = x.astype(np.float16)
    bits = near.view(np.uint16).copy()
    over = np.abs(near.astype(np.float64)) > np.abs(x.astype(np.float64))
    bits[over] -= 1
    inexact = near.astype(np.float32) != x
    bits[inexact] |= 1
    return bits.view(np.float16)


def test_scalar_api_conversions_and_bit_counts() -> None:
    mod = asc.load(SCALAR_API_KERNEL)
    n = 64
    x = torch.tensor([2.5, -2.5, 0.5, -0.5, 1.5, 3.7, -3.7, 1.0 + 2.0**-12, 1.0 + 3 * 2.0**-12] + [0.0] * 55)
    x[9:] = torch.randn(55) * 100
    v = torch.randint(-(2**62), 2**62, (n,), dtype=torch.int64)
    v[:6] = torch.tensor([0, -1, 28, 0x0F00000000000000, -(2**63), 1])
    ints = torch.zeros(4 * n, dtype=torch.int32)
    h = torch.zeros(n, dtype=torch.half)
    bf = torch.zeros(n)
    bits = torch.zeros(7 * n, dtype=torch.int64)
    mod.run(x, ints, h, bf, v, bits)

    xd = x.double()
    half_away = torch.sign(xd) * torch.floor(xd.abs() + 0.5)
    want_ints = torch.cat([half_away, torch.round(xd), torch.floor(xd), torch.ceil(xd)]).to(torch.int32)
    torch.testing.assert_close(ints, want_ints)
    assert ints[0] == 3 and ints[n] == 2  # the docs' example: 2.5 rounds to 3 (CAST_ROUND), RINT to 2
    np.testing.assert_array_equal(h.numpy().view(np.uint16), _half_round_to_odd(x.numpy()).view(np.uint16))
    torch.testing.assert_close(bf, x.bfloat16().float(), rtol=0, atol=0)

    def sign_run(s: int) -> int:
        if s in (0, -1):
            return -1
        u = (~s if s < 0 else s) & (2**64 - 1)
        return 64 - u.bit_length() - 1

    us = [int(s) & (2**64 - 1) for s in v.tolist()]
    ones = [bin(u).count("1") for u in us]
    clz = [64 - u.bit_length() for u in us]
    want_bits = (
        ones
        + [64 - c for c in ones]
        + clz
        + [sign_run(int(s)) for s in v.tolist()]
        + [(u & -u).bit_length() - 1 if u else -1 for u in us]
        + [((~u) & -(~u) & (2**64 - 1)).bit_length() - 1 if u != 2**64 - 1 else -1 for u in us]
        + [o + c for o, c in zip(ones, clz, strict=True)]
    )
    assert bits.tolist() == want_bits
    assert bits[4 * n + 2] == 2 and bits[3 * n + 3] == 3  # the docs' examples (28 -> 2, 0x0f00... -> 3)


# ---- a DTYPE_<NAME> kernel follows the tensors EXEC_NPU_CMD passes, not the binding's arguments -----
MASK_FILL_HOST = r"""
#include "mask_fill_custom_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    MaskFillTiling tiling;
    tiling.set_total(context->GetInputShape(0)->GetOriginShape().GetShapeSize());
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ops {
class MaskFillCustom : public OpDef {
public:
    explicit MaskFillCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("mask").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(MaskFillCustom);
}  // namespace ops
"""

MASK_FILL_TILING = r"""
#pragma once
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(MaskFillTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(MaskFillCustom, MaskFillTiling)
}  // namespace optiling
"""

MASK_FILL_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void mask_fill_custom(GM_ADDR x, GM_ADDR mask, GM_ADDR y, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<DTYPE_X> xGm;
    AscendC::GlobalTensor<DTYPE_MASK> mGm;
    AscendC::GlobalTensor<DTYPE_Y> yGm;
    xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x, t.total);
    mGm.SetGlobalBuffer((__gm__ DTYPE_MASK*)mask, t.total);
    yGm.SetGlobalBuffer((__gm__ DTYPE_Y*)y, t.total);
    for (uint32_t i = 0; i < t.total; ++i)
        yGm.SetValue(i, mGm.GetValue(i) != DTYPE_MASK(0) ? DTYPE_Y(-1.0f) : xGm.GetValue(i));
}
"""

MASK_FILL_BINDING = r"""
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor mask_fill_impl(const at::Tensor& x, const at::Tensor& mask)
{
    at::Tensor maskFloat = mask.to(at::kFloat);  // the op takes a float mask; callers pass bool
    at::Tensor y = at::empty_like(x);
    EXEC_NPU_CMD(aclnnMaskFillCustom, x, maskFloat, y);
    return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("mask_fill", &mask_fill_impl, "x where !mask, else -1"); }
"""


def test_binding_cast_before_exec_picks_the_dtype_column() -> None:
    lib = asc.load_multikernelbench(
        {
            "project_json_src": '[{"op": "MaskFillCustom"}]',
            "host_tiling_src": MASK_FILL_TILING,
            "host_operator_src": MASK_FILL_HOST,
            "kernel_src": MASK_FILL_KERNEL,
            "python_bind_src": MASK_FILL_BINDING,
            "model_src": "class ModelNew:\n    pass\n",
        }
    )
    x = torch.rand(512)
    mask = torch.rand(512) > 0.5
    want = x.masked_fill(mask, -1.0)
    torch.testing.assert_close(lib.ops.mask_fill(x, mask), want)  # bool mask, cast by the binding
    torch.testing.assert_close(lib.ops.mask_fill(x, mask.float()), want)
    assert lib.project.compiles == 1  # one kernel, for the float column


# ---- the ATen shim: permute / transpose; sizes().begin() and .end() name one range -------------------
PERMUTE_BINDING = r"""
#include <vector>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor lrelu_nhwc(const at::Tensor& x, double slope)
{
    at::Tensor xt = x.permute({0, 2, 3, 1}).contiguous();  // NCHW -> NHWC
    std::vector<int64_t> shape(xt.sizes().begin(), xt.sizes().end());
    at::Tensor y = at::empty(shape, xt.options());
    EXEC_NPU_CMD(aclnnLeakyReluCustom, xt, slope, y);
    return y.permute({0, 3, 1, 2}).contiguous().transpose(-1, 2);  // back to NCHW, then W <-> H
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("lrelu_nhwc", &lrelu_nhwc, "leaky relu through NHWC"); }
"""


def test_binding_permute_transpose_and_sizes_range() -> None:
    lib = asc.load_multikernelbench({**LEAKY_RELU, "python_bind_src": PERMUTE_BINDING})
    x = torch.randn(2, 8, 16, 32)
    torch.testing.assert_close(lib.ops.lrelu_nhwc(x, 0.2), F.leaky_relu(x, 0.2).transpose(-1, 2))


# ---- the ATen shim: squeeze / unsqueeze / select / narrow / copy_ / new_zeros / full_like / ones_like ---
SQUEEZE_BINDING = r"""
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor lrelu_row(const at::Tensor& x, double slope, int64_t dim, int64_t index)
{
    at::Tensor y = at::empty_like(x.unsqueeze(0).squeeze(0));
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, slope, y);
    return y.select(dim, index).unsqueeze(-1).squeeze();  // [.., 1] then back: the selected slice
}
at::Tensor lrelu_first_row_inplace(const at::Tensor& x, double slope)
{
    at::Tensor y = at::empty_like(x);
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, slope, y);
    y.select(0, 0).zero_();  // a row of dimension 0 is a view: the zeros land in y
    return y;
}
at::Tensor lrelu_window(const at::Tensor& x, double slope, int64_t dim, int64_t start, int64_t length)
{
    at::Tensor y = x.new_zeros({x.size(0), x.size(1), x.size(2)});
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, slope, y);
    at::Tensor out = at::full_like(y.narrow(dim, start, length), 7.0);
    out.copy_(y.narrow(dim, start, length));  // every 7 overwritten
    return out;
}
at::Tensor lrelu_plus_one_rows(const at::Tensor& x, double slope, int64_t rows)
{
    at::Tensor y = at::ones_like(x);
    y.narrow(0, 0, rows).copy_(x.narrow(0, 0, rows));  // a view of dimension 0: x's rows land in y
    at::Tensor z = y.new_empty(y.sizes());
    EXEC_NPU_CMD(aclnnLeakyReluCustom, y, slope, z);
    return z;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("lrelu_row", &lrelu_row, "a slice of leaky relu");
    m.def("lrelu_first_row_inplace", &lrelu_first_row_inplace, "leaky relu, first row zeroed");
    m.def("lrelu_window", &lrelu_window, "a window of leaky relu");
    m.def("lrelu_plus_one_rows", &lrelu_plus_one_rows, "leaky relu of x's first rows over ones");
}
"""


def test_binding_squeeze_select_narrow_copy_and_fills() -> None:
    lib = asc.load_multikernelbench({**LEAKY_RELU, "python_bind_src": SQUEEZE_BINDING})
    x = torch.randn(4, 8, 1024)
    want = F.leaky_relu(x, 0.2)
    for dim, index in ((0, 3), (1, -2), (-1, 5)):
        torch.testing.assert_close(lib.ops.lrelu_row(x, 0.2, dim, index), want.select(dim, index))
    zeroed = want.clone()
    zeroed[0] = 0
    torch.testing.assert_close(lib.ops.lrelu_first_row_inplace(x, 0.2), zeroed)
    for dim, start, length in ((0, 1, 2), (1, 3, 4), (2, 100, 512)):
        torch.testing.assert_close(lib.ops.lrelu_window(x, 0.2, dim, start, length), want.narrow(dim, start, length))
    ones = torch.ones_like(x)
    ones[:3] = x[:3]
    torch.testing.assert_close(lib.ops.lrelu_plus_one_rows(x, 0.2, 3), F.leaky_relu(ones, 0.2))


# ---- pybind11: `py::arg("slope") = 0.25` defaults fill the arguments a caller leaves out -------------
DEFAULT_ARG_BINDING = r"""
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor lrelu(const at::Tensor& x, double slope)
{
    at::Tensor y = at::empty_like(x);
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, slope, y);
    return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("lrelu", &lrelu, "leaky relu", py::arg("x"), py::arg("slope") = 0.25);
    m.def("lrelu_no_default", &lrelu, pybind11::arg("x"), pybind11::arg("slope"));
}
"""


def test_binding_py_arg_defaults() -> None:
    lib = asc.load_multikernelbench({**LEAKY_RELU, "python_bind_src": DEFAULT_ARG_BINDING})
    x = torch.randn(8, 1024)
    torch.testing.assert_close(lib.ops.lrelu(x), F.leaky_relu(x, 0.25))
    torch.testing.assert_close(lib.ops.lrelu(x, 0.1), F.leaky_relu(x, 0.1))
    with pytest.raises(Exception, match="binding called with 1 arguments; it takes 2"):
        lib.ops.lrelu_no_default(x)


# ---- EXEC_NPU_CMD binds by position, class by class (a float or double in an FP register) ------------
ORDER_BINDING = r"""
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor float_after_output(const at::Tensor& x, double slope)
{
    at::Tensor y = at::empty_like(x);
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, y, slope);  // the double goes in an FP register: binds as declared
    return y;
}
at::Tensor integer_for_the_float(const at::Tensor& x, int64_t slope)
{
    at::Tensor y = at::empty_like(x);
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, slope, y);  // an integer takes y's general register on the NPU
    return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("float_after_output", &float_after_output, "leaky relu");
    m.def("integer_for_the_float", &integer_for_the_float, "leaky relu, mis-bound");
}
"""


def test_exec_npu_cmd_arguments_bind_by_position_and_register_class() -> None:
    """CANN's aclnn entry takes inputs, attributes, outputs; EXEC_NPU_CMD calls it with its arguments in the
    order given. A double after the output still reaches the float attribute (its own register class);
    an integer where the float attribute is declared takes the output's slot, which the NPU would mis-bind."""
    lib = asc.load_multikernelbench({**LEAKY_RELU, "python_bind_src": ORDER_BINDING})
    x = torch.randn(8, 1024)
    torch.testing.assert_close(lib.ops.float_after_output(x, 0.3), F.leaky_relu(x, 0.3))
    with pytest.raises(asc.AscendCFault, match=r"bind out of order.*TAT .*where the operator takes TT"):
        lib.ops.integer_for_the_float(x, 2)
