"""Runtime behaviour CANN's operator library (cann-ops) relies on, each written here from the
documentation: attributes read through narrower types, the watchdog across SyncAll, tensor lists'
ownership, ORIG_DTYPE_<NAME>, FreeTensor of an enqueued tensor and Select's temporary space."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import torch

import kernel_gym.ascendc as asc

# ---- RuntimeAttrs::GetAttrPointer<T>: "a pointer to the attribute" of that index ----------------
ATTR_HOST = r"""
#include "register/op_def_registry.h"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(AttrTiling)
TILING_DATA_FIELD_DEF(uint32_t, m);
TILING_DATA_FIELD_DEF(uint32_t, n);
TILING_DATA_FIELD_DEF(int32_t, k);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(AttrOp, AttrTiling)
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
    // both pointers taken before either is read, as the library's BLAS tilings do
    const uint32_t* m = context->GetAttrs()->GetAttrPointer<uint32_t>(0);
    const uint32_t* n = context->GetAttrs()->GetAttrPointer<uint32_t>(1);
    const int32_t* k = context->GetAttrs()->GetAttrPointer<int32_t>(2);
    AttrTiling t;
    t.set_m(*m);
    t.set_n(*n);
    t.set_k(*k);
    context->SetBlockDim(1);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}
namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context) {
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}
namespace ops {
class AttrOp : public OpDef {
public:
    explicit AttrOp(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("m").AttrType(OPTIONAL).Int(0);
        this->Attr("n").AttrType(OPTIONAL).Int(0);
        this->Attr("k").AttrType(OPTIONAL).Int(0);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(AttrOp);
}
"""

ATTR_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void attr_op(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y, 4);
    yGm.SetValue(0, float(t.m));
}
"""


def test_get_attr_pointer_of_a_narrower_type_points_at_each_attribute():
    """Two Int attributes read as uint32_t and one as int32_t: three pointers, three values
    (they shared one scratch slot, so the first pointer read the last value)."""
    op = asc.load_op_project({"op_host/attr_op.cpp": ATTR_HOST, "op_kernel/attr_op.cpp": ATTR_KERNEL})
    plan = op.plan(torch.zeros(8), m=1000, n=7, k=-3)
    assert struct.unpack("<IIi", plan["tiling"][:12]) == (1000, 7, -3)


# ---- a tiling class bound to the raw tiling data with SetDataPtr, with a nested struct field ------
# CANN's TilingDef::SetDataPtr(p) makes the object's fields live in p: the library's host classes
# bind once (in their constructor) and only call setters; no SaveToBuffer. The kernel must see the
# values, those of the nested struct (TILING_DATA_FIELD_DEF_STRUCT) included.
BOUND_HOST = r"""
#include "register/tilingdata_base.h"
#include "register/op_def_registry.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(RowParams)
TILING_DATA_FIELD_DEF(int32_t, rows);
TILING_DATA_FIELD_DEF(int64_t, outer);
TILING_DATA_FIELD_DEF(int32_t, cols);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(RowParamsOp, RowParams)
BEGIN_TILING_DATA_DEF(BoundTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF_STRUCT(RowParams, rowParams);
TILING_DATA_FIELD_DEF(float, scale);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(BoundOp, BoundTiling)

class BoundTiler {
public:
    explicit BoundTiler(gert::TilingContext* c) : context(c) { td.SetDataPtr(c->GetRawTilingData()->GetData()); }
    ge::graphStatus Run() {
        td.set_total(uint32_t(context->GetInputShape(0)->GetStorageShape().GetShapeSize()));
        td.rowParams.set_rows(3);
        td.rowParams.set_outer(1LL << 40);
        td.rowParams.cols = 11;  // written directly: in the buffer once GetDataSize is asked
        td.set_scale(*context->GetAttrs()->GetAttrPointer<float>(0));
        context->SetBlockDim(1);
        context->GetRawTilingData()->SetDataSize(td.GetDataSize());
        return ge::GRAPH_SUCCESS;
    }
private:
    gert::TilingContext* context;
    BoundTiling td;
};
static ge::graphStatus TilingFunc(gert::TilingContext* context) { return BoundTiler(context).Run(); }
}
namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context) {
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}
namespace ops {
class BoundOp : public OpDef {
public:
    explicit BoundOp(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("scale").AttrType(OPTIONAL).Float(1.0);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(BoundOp);
}
"""

BOUND_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void bound_op(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y, 8);
    yGm.SetValue(0, float(t.total));
    yGm.SetValue(1, float(t.rowParams.rows));
    yGm.SetValue(2, float(t.rowParams.outer >> 40));
    yGm.SetValue(3, float(t.rowParams.cols));
    yGm.SetValue(4, t.scale);
}
"""


def test_tiling_bound_with_set_data_ptr_reaches_the_kernel_nested_struct_included():
    op = asc.load_op_project({"op_host/bound_op.cpp": BOUND_HOST, "op_kernel/bound_op.cpp": BOUND_KERNEL})
    y = op(torch.zeros(8), scale=2.5)
    assert y[:5].tolist() == [8.0, 3.0, 1.0, 11.0, 2.5]


# ---- the per-block watchdog budget survives SyncAll -----------------------------------------------
SYNC_BUSY_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void sync_busy(GM_ADDR x, GM_ADDR y)
{
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 1024);
    yGm.SetGlobalBuffer((__gm__ float*)y, AscendC::GetBlockNum());
    float acc = 0.0f;
    for (uint32_t i = 0; i < 12000; ++i) acc += xGm.GetValue(i % 1024);
    AscendC::SyncAll();  // every block waits here; the others run in between
    for (uint32_t i = 0; i < 12000; ++i) acc += xGm.GetValue((i + 1) % 1024);
    yGm.SetValue(AscendC::GetBlockIdx(), acc);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { sync_busy<<<4, nullptr, nullptr>>>(x, y); }
"""


def test_watchdog_budget_is_per_block_across_syncall():
    """4 blocks x 24000 scalar reads around a SyncAll, budget 5e4 per block: a block resumed after
    the barrier counts from its own start, not from the last block's (which wrapped below zero)."""
    mod = asc.load(SYNC_BUSY_KERNEL, watchdog_calls=5e4)
    x = torch.randint(0, 4, (1024,)).float()
    y = torch.zeros(4)
    mod.run(x, y)
    reps = torch.arange(12000)
    want = x[reps % 1024].sum() + x[(reps + 1) % 1024].sum()
    torch.testing.assert_close(y, want.expand(4))
    with pytest.raises(asc.Watchdog, match="API calls"):  # a real overrun still faults
        asc.load(SYNC_BUSY_KERNEL, watchdog_calls=2e4).run(x, y)


# ---- FreeTensor of a tensor still in its queue ------------------------------------------------------
FREE_ENQUEUED_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void free_enqueued(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> q;
    TBuf<QuePosition::VECCALC> out;
    pipe.InitBuffer(q, 2, 256);
    pipe.InitBuffer(out, 256);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 128);
    yGm.SetGlobalBuffer((__gm__ float*)y, 64);
    LocalTensor<float> o = out.Get<float>();
    LocalTensor<float> a = q.AllocTensor<float>();
    DataCopy(a, xGm, 64);
    q.EnQue(a);
    PipeBarrier<PIPE_ALL>();
    Muls(o, a, 2.0f, 64);  // used without DeQue, then freed while enqueued
    PipeBarrier<PIPE_V>();
    q.FreeTensor(a);
    LocalTensor<float> b = q.AllocTensor<float>();
    DataCopy(b, xGm[64], 64);
    q.EnQue(b);
    LocalTensor<float> c = q.DeQue<float>();  // the tensor enqueued last, not the freed one
    Add(o, o, c, 64);
    q.FreeTensor(c);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, o, 64);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { free_enqueued<<<1, nullptr, nullptr>>>(x, y); }
"""


def test_free_tensor_of_an_enqueued_tensor_is_a_warning():
    """FreeTensor states no constraint on the queue state (cann-ops' inplace_attn_softmax frees a
    tensor it enqueued and used directly): the buffer is released and leaves the queue."""
    mod = asc.load(FREE_ENQUEUED_KERNEL, name="free_enqueued.cpp")
    x = torch.randn(128)
    y = torch.zeros(64)
    mod.run(x, y)
    torch.testing.assert_close(y, 2 * x[:64] + x[64:])
    assert mod.last_run.faults == []
    [warning] = [w for w in mod.last_run.warnings if w["error_class"] == "queue_misuse"]
    assert "still in the queue" in warning["message"]


# ---- Select with less than the documented temporary space -------------------------------------------
SELECT_SMALL_TMP_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void select_small_tmp(GM_ADDR x, GM_ADDR m, GM_ADDR y, uint32_t tmpBytes)
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> xb, mb, yb, tb;
    pipe.InitBuffer(xb, 64 * sizeof(float));
    pipe.InitBuffer(mb, 64);
    pipe.InitBuffer(yb, 64 * sizeof(float));
    pipe.InitBuffer(tb, tmpBytes);
    GlobalTensor<float> xGm, yGm;
    GlobalTensor<uint8_t> mGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 64);
    mGm.SetGlobalBuffer((__gm__ uint8_t*)m, 64);
    yGm.SetGlobalBuffer((__gm__ float*)y, 64);
    LocalTensor<float> xl = xb.Get<float>(), yl = yb.Get<float>();
    LocalTensor<uint8_t> ml = mb.Get<uint8_t>(), tmp = tb.Get<uint8_t>();
    DataCopy(xl, xGm, 64);
    DataCopy(ml, mGm, 64);
    PipeBarrier<PIPE_ALL>();
    SelectWithBytesMaskShapeInfo info;
    info.firstAxis = 1;
    info.srcLastAxis = 64;
    info.maskLastAxis = 64;
    Select(yl, xl, 0.0f, ml, tmp, info);  // mask 0 keeps x, otherwise 0
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, yl, 64);
}
extern "C" void run(GM_ADDR x, GM_ADDR m, GM_ADDR y, uint32_t tmpBytes)
{
    select_small_tmp<<<1, nullptr, nullptr>>>(x, m, y, tmpBytes);
}
"""


def test_select_below_the_documented_tmp_minimum_warns_and_strict_faults():
    """GetSelectMaxMinTmpSize's minimum is a debug-build assertion of CANN's Select, unchecked on
    the NPU (cann-ops' select_reduce_max_d_sub_exp_reduce_sum_d_real_div passes 128 B): a warning;
    bounds_mode="strict" (the CPU debug build's checks) keeps the fault."""
    x = torch.randn(64)
    mask = (torch.arange(64) % 3 == 0).to(torch.uint8)
    y = torch.zeros(64)
    mod = asc.load(SELECT_SMALL_TMP_KERNEL, name="select_small_tmp.cpp")
    mod.run(x, mask, y, 128)
    torch.testing.assert_close(y, torch.where(mask == 0, x, torch.zeros(64)))
    [warning] = [w for w in mod.last_run.warnings if w["error_class"] == "invalid_argument"]
    assert "sharedTmpBuffer holds 128 B" in warning["message"]
    strict = asc.load(SELECT_SMALL_TMP_KERNEL, name="select_small_tmp.cpp", bounds_mode="strict")
    with pytest.raises(asc.InvalidArgument, match="sharedTmpBuffer holds 128 B"):
        strict.run(x, mask, y, 128)


# ---- aclDestroyTensorList after aclDestroyTensor of a member -----------------------------------------
DESTROY_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclnn/acl_meta.h"
int main() {
    int64_t shape[1] = {4};
    float host[4] = {1, 2, 3, 4};
    const aclTensor* a = aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, host);
    const aclTensor* b = aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, host);
    const aclTensor* both[2] = {a, b};
    aclTensorList* list = aclCreateTensorList(both, 2);
    aclTensorList* again = aclCreateTensorList(both, 1);  // a second list holding a
    int r = aclDestroyTensor(a);  // the member first, as the library's examples do
    r |= aclDestroyTensorList(list);
    r |= aclDestroyTensorList(again);
    printf("destroyed %d\n", r);
    return 0;
}
"""


def test_destroying_a_member_then_its_list_frees_the_member_once():
    """The list owns its tensors ("the aclTensor in the aclTensorList does not need to be destroyed
    again"); a member the caller destroyed first is left to the last list holding it, not freed twice
    (cann-ops' non_finite_check example does this)."""
    run = asc.run_sample({"main.cpp": DESTROY_MAIN}, pch="host")
    assert run.ok and run.returncode == 0, (run.error, run.stderr[-800:])
    assert "destroyed 0" in run.stdout


# ---- ORIG_DTYPE_<NAME>: the DT_* name, compared in #if ----------------------------------------------
DTYPE_HOST = r"""
#include "register/op_def_registry.h"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(WhichTiling)
TILING_DATA_FIELD_DEF(uint32_t, n);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Which, WhichTiling)
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
    WhichTiling t;
    t.set_n(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    context->SetBlockDim(1);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}
namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context) {
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}
namespace ops {
class Which : public OpDef {
public:
    explicit Which(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("code").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Which);
}
"""

DTYPE_KERNEL = r"""
#include "kernel_operator.h"
template <typename T> struct map { using type = T; };  // a kernel's own `map` (cann-ops' cross has one)
#if ORIG_DTYPE_X == DT_FLOAT16
constexpr int32_t BRANCH = 16;
#elif ORIG_DTYPE_X == DT_FLOAT
constexpr int32_t BRANCH = 32;
#else
constexpr int32_t BRANCH = -1;
#endif
extern "C" __global__ __aicore__ void which(GM_ADDR x, GM_ADDR code, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<int32_t> out;
    out.SetGlobalBuffer((__gm__ int32_t*)code, t.n);
    out.SetValue(0, BRANCH);
    out.SetValue(1, int32_t(sizeof(DTYPE_X)));  // DTYPE_<NAME> stays the C type
    out.SetValue(2, DT_BF16);  // the codes are plain numbers in kernel code, as kernel_type.h defines them
}
"""


@pytest.mark.parametrize("dtype,branch,size", [(torch.float32, 32, 4), (torch.float16, 16, 2)])
def test_orig_dtype_is_the_dt_name_kernel_code_compares(dtype, branch, size):
    op = asc.load_op_project({"op_host/which.cpp": DTYPE_HOST, "op_kernel/which.cpp": DTYPE_KERNEL})
    code = op(torch.zeros(8, dtype=dtype))
    assert code[:3].tolist() == [branch, size, 27]


# ---- Sigmoid of half: each step in half ---------------------------------------------------------------
SIGMOID_HALF_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void sigmoid_half(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> xb, yb;
    pipe.InitBuffer(xb, 1024 * sizeof(half));
    pipe.InitBuffer(yb, 1024 * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, 1024);
    yGm.SetGlobalBuffer((__gm__ half*)y, 1024);
    LocalTensor<half> xl = xb.Get<half>(), yl = yb.Get<half>();
    DataCopy(xl, xGm, 1024);
    PipeBarrier<PIPE_ALL>();
    Sigmoid<half, false>(yl, xl, 1024);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, yl, 1024);
}
extern "C" void run(GM_ADDR x, GM_ADDR y) { sigmoid_half<<<1, nullptr, nullptr>>>(x, y); }
"""


def test_sigmoid_of_half_rounds_each_step_to_half():
    """CANN's Sigmoid for this architecture is Muls(-1), Exp, Adds(1) and Div(1, .) in the data
    type (asc-devkit's sigmoid implementation): for half each step rounds, which cann-ops'
    mul_sigmoid golden (numpy float16, step by step) relies on."""
    x = (torch.rand(1024, generator=torch.Generator().manual_seed(3)) * 12 - 6).half()
    y = torch.zeros(1024, dtype=torch.half)
    asc.load(SIGMOID_HALF_KERNEL, name="sigmoid_half.cpp").run(x, y)
    xs = x.numpy()
    e = np.exp((-xs).astype(np.float32)).astype(np.float16)
    d = (e.astype(np.float32) + 1).astype(np.float16)
    want = (1 / d.astype(np.float32)).astype(np.float16)
    once = (1 / (1 + np.exp(-xs.astype(np.float32)))).astype(np.float16)  # rounded once
    got = y.numpy()
    # (a libm's expf and numpy's may differ in the last float bit, rarely moving a half rounding)
    assert np.sum(got != want) <= 2 and np.sum(got != once) > 20, (np.sum(got != want), np.sum(got != once))


# ---- a write past a device buffer stays in its device page ---------------------------------------------
FILL_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void fill_n(GM_ADDR y, uint32_t n)
{
    AscendC::GlobalTensor<int32_t> yGm;
    yGm.SetGlobalBuffer((__gm__ int32_t*)y, n);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(int32_t));
    AscendC::LocalTensor<int32_t> t = buf.Get<int32_t>();
    AscendC::Duplicate(t, int32_t(3), n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, t, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    yGm.SetValue(n, int32_t(9));  // one more, by value
}
"""

FILL_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "aclrtlaunch_fill_n.h"
int main()
{
    int32_t host[392] = {0};
    void* y = nullptr;
    aclrtMalloc(&y, 180 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST);  // half of what the kernel writes
    ACLRT_LAUNCH_KERNEL(fill_n)(1, nullptr, y, 360);
    aclrtSynchronizeStream(nullptr);
    aclrtMemcpy(host, sizeof(host), y, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST);  // 392 back, as it asks
    FILE* f = fopen("output/y.bin", "wb");
    fwrite(host, sizeof(int32_t), 392, f);
    fclose(f);
    return 0;
}
"""


def test_a_write_past_a_device_buffer_stays_in_its_page():
    """360 int32 written into a 180-element aclrtMalloc buffer, then 392 copied back: on the NPU the
    rest of the buffer's device page holds what the kernel wrote there (cann-ops' fill example
    allocates half its output and reads it all back), so here too, with a warning; bytes of the page
    never written read as 0xFF."""
    run = asc.run_sample({"fill_n.cpp": FILL_KERNEL, "main.cpp": FILL_MAIN})
    assert run.ok, (run.error, run.stderr[-1500:])
    got = np.frombuffer(run.files["output/y.bin"], dtype=np.int32)
    np.testing.assert_array_equal(got[:360], np.full(360, 3))
    assert got[360] == 9 and (got[361:] == -1).all()
    warned = [w["message"] for r in run.launches for w in r.warnings if w["error_class"] == "gm_out_of_bounds"]
    assert any("within the buffer's own pages" in m for m in warned), warned


# ---- DataCopyPad's dummy elements up to 32 B ------------------------------------------------------------
PAD_DUMMY_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void pad_dummy(GM_ADDR x, GM_ADDR y, uint32_t right)
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> b;
    pipe.InitBuffer(b, 32);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8);
    yGm.SetGlobalBuffer((__gm__ float*)y, 8);
    LocalTensor<float> t = b.Get<float>();
    Duplicate(t, 100.0f, 8);
    PipeBarrier<PIPE_ALL>();
    DataCopyExtParams cp{1, 5 * sizeof(float), 0, 0, 0};
    DataCopyPadExtParams<float> pad{true, 0, uint8_t(right), -5.0f};
    DataCopyPad(t, xGm, cp, pad);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, t, 8);
}
extern "C" void run(GM_ADDR x, GM_ADDR y, uint32_t right) { pad_dummy<<<1, nullptr, nullptr>>>(x, y, right); }
"""


def test_datacopypad_dummy_repeats_the_first_element_without_padding():
    """DataCopyPad's padding rules: with leftPadding and rightPadding both 0 the dummy elements up to
    32 B repeat the block's first element, isPad or not; with padding, isPad fills them with
    paddingValue (cann-ops' isamin copies tails with isPad and paddingValue 0 into FLT_MAX)."""
    mod = asc.load(PAD_DUMMY_KERNEL, name="pad_dummy.cpp")
    x = torch.arange(1, 9, dtype=torch.float32)
    y = torch.zeros(8)
    mod.run(x, y, 0)
    assert y.tolist() == [1, 2, 3, 4, 5, 1, 1, 1]
    mod.run(x, y, 1)
    assert y.tolist() == [1, 2, 3, 4, 5, -5, -5, -5]


# ---- a queue given buffers of length 0 ---------------------------------------------------------------
# InitBuffer's length is not checked on the NPU: the queue's buffers are empty and all start where the
# next allocation does (here the start of UB). A tensor from them is a live tensor; an access past its
# end reaches the UB beyond it, as any over-long count does (a warning; bounds_mode="strict" faults).
ZERO_LEN_QUEUE_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void zero_len_queue(GM_ADDR x, GM_ADDR y, int32_t n)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> q;
    pipe.InitBuffer(q, 2, 0);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 64);
    yGm.SetGlobalBuffer((__gm__ float*)y, 64);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, xGm, 0);  // a count of 0 through the empty tensor
    DataCopy(t, xGm, n);  // n elements into the UB the tensor starts at
    PipeBarrier<PIPE_ALL>();
    Muls(t, t, 2.0f, n);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, t, n);
    q.FreeTensor(t);
}
extern "C" void run(GM_ADDR x, GM_ADDR y, int32_t n) { zero_len_queue<<<1, nullptr, nullptr>>>(x, y, n); }
"""


def test_a_tensor_from_zero_length_queue_buffers_is_live():
    mod = asc.load(ZERO_LEN_QUEUE_KERNEL, name="zero_len_queue.cpp")
    x = torch.randn(64)
    y = torch.zeros(64)
    mod.run(x, y, 64)
    torch.testing.assert_close(y, 2 * x)
    assert mod.last_run.faults == []
    assert any(w["error_class"] == "local_out_of_bounds" for w in mod.last_run.warnings)
    strict = asc.load(ZERO_LEN_QUEUE_KERNEL, name="zero_len_queue.cpp", bounds_mode="strict")
    with pytest.raises(asc.LocalOutOfBounds, match="buffer ends at byte 0"):
        strict.run(x, torch.zeros(64), 64)


DEFAULT_TENSOR_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void default_tensor(GM_ADDR x)
{
    TPipe pipe;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 64);
    LocalTensor<float> t;  // never taken from a queue or TBuf
    DataCopy(t, xGm, 8);
}
extern "C" void run(GM_ADDR x) { default_tensor<<<1, nullptr, nullptr>>>(x); }
"""


def test_a_default_constructed_tensor_is_still_not_live():
    mod = asc.load(DEFAULT_TENSOR_KERNEL, name="default_tensor.cpp")
    with pytest.raises(asc.InvalidTensor, match="operand dst is not a live LocalTensor"):
        mod.run(torch.zeros(64))
