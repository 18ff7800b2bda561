"""Forms from a second pass over public Ascend C operator projects the simulator was not tuned on
(personal and competition repositories), each in a small kernel or project of our own:

- an empty mask in normal mode (a bit mask of two zero words, or a continuous mask of 0), as a kernel
  whose tiling computes the mask of a tail that is empty: on Atlas A2 the instruction is a NOP
  (asc-devkit's ``CheckMaskArray`` / ``CheckMaskValue`` only warn; the assertion is for the 310P's
  ``__NPU_ARCH__`` 2002);
- an operator project whose OpDef declares list attributes (``ListInt``, ``ListFloat``, ``ListListInt``:
  reduction dims, paddings) that its TilingFunc reads with ``GetListInt`` and friends: ``load_op_project``
  took no list value and gave the host empty lists, the OpDef's defaults included;
- in-place operator projects (scatters): an output that shares an input's name (``Input("var")`` and
  ``Output("var")``) is that input, as the aclnn op CANN generates takes it once as ``varRef``; and a
  kernel's writes to an input (an op with no output at all) reach the caller's tensor, whose GM it is.
"""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

# ---- an empty mask is a NOP -------------------------------------------------------------------------------
EMPTY_MASK = r"""
#include "kernel_operator.h"
using namespace AscendC;

__global__ __aicore__ void empty_mask_kernel(GM_ADDR x, GM_ADDR y, uint64_t lo, uint64_t cont)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * 64 * sizeof(float));
    LocalTensor<float> a = buf.Get<float>(), b = a[64];
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer((__gm__ float*)x, 64);
    gy.SetGlobalBuffer((__gm__ float*)y, 64);
    DataCopy(a, gx, 64);
    DataCopy(b, gx, 64);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    uint64_t mask[2] = {lo, 0};
    Adds(a, a, 1.0f, mask, 1, {1, 1, 8, 8});                 // bit mask: lanes of lo get +1
    Add(b, b, b, cont, 1, {1, 1, 1, 8, 8, 8});               // continuous mask: the first cont lanes double
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(gy, a, 64);
    DataCopy(gy[64], b, 64);
}

extern "C" void run(uint8_t* x, uint8_t* y, uint64_t lo, uint64_t cont, void* stream)
{
    empty_mask_kernel<<<1, nullptr, stream>>>(x, y, lo, cont);
}
"""


def test_empty_mask_is_a_nop() -> None:
    mod = asc.load(EMPTY_MASK)
    x = torch.randn(64)
    y = torch.full((128,), float("nan"))
    mod.run(x, y, 0, 0, None)
    assert mod.last_run is not None
    assert mod.last_run.faults == []
    assert any("empty_mask" in str(w) for w in mod.last_run.warnings)
    torch.testing.assert_close(y, torch.cat([x, x]))
    # the same kernel with masks that select lanes still computes them
    y2 = torch.empty(128)
    mod.run(x, y2, 0b101, 3, None)
    want_a, want_b = x.clone(), x.clone()
    want_a[[0, 2]] += 1
    want_b[:3] *= 2
    torch.testing.assert_close(y2, torch.cat([want_a, want_b]))


# ---- list attributes of an operator project ---------------------------------------------------------------
LIST_TILING_H = r"""
#pragma once
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ListScaleTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF(float, factor);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ListScale, ListScaleTiling)
}  // namespace optiling
"""

LIST_HOST = r"""
#include "list_scale_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ListScaleTiling tiling;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const gert::TypedContinuousVector<int64_t>* dims = attrs->GetListInt(0);
    const gert::TypedContinuousVector<float>* weights = attrs->GetListFloat(1);
    const gert::ContinuousVectorVector* groups = attrs->GetListListInt(2);
    // factor = (product of dims) * (sum of weights) + (number of groups) * 100 + (last group's first value)
    float factor = 1.0f;
    for (size_t k = 0; k < dims->GetSize(); ++k) factor *= float(dims->GetData()[k]);
    float sum = 0.0f;
    for (size_t k = 0; k < weights->GetSize(); ++k) sum += weights->GetData()[k];
    factor *= sum;
    size_t n = groups->GetSize();
    factor += float(n) * 100.0f;
    if (n > 0) {
        const gert::ContinuousVector* last = groups->Get(n - 1);
        factor += float(static_cast<const int64_t*>(last->GetData())[0]);
    }
    tiling.set_total(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    tiling.set_factor(factor);
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class ListScale : public OpDef {
public:
    explicit ListScale(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("dims").AttrType(OPTIONAL).ListInt({2, 3});
        this->Attr("weights").AttrType(OPTIONAL).ListFloat({0.5f, 0.25f});
        this->Attr("groups").AttrType(OPTIONAL).ListListInt({{7, 8}});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ListScale);
}  // namespace ops
"""

LIST_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void list_scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.total * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, t.total);
    yg.SetGlobalBuffer((__gm__ float*)y, t.total);
    LocalTensor<float> v = buf.Get<float>();
    DataCopy(v, xg, t.total);
    PipeBarrier<PIPE_ALL>();
    Muls(v, v, t.factor, t.total);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, v, t.total);
}
"""


def test_list_attributes_reach_the_tiling_function() -> None:
    op = asc.load_op_project(
        {
            "op_host/list_scale_tiling.h": LIST_TILING_H,
            "op_host/list_scale.cpp": LIST_HOST,
            "op_kernel/list_scale.cpp": LIST_KERNEL,
        }
    )
    x = torch.randn(64)
    # the OpDef's defaults: 2*3 * (0.5+0.25) + 1*100 + 7
    torch.testing.assert_close(op(x), x * 111.5)
    # given values, as lists, tuples or tensors
    y = op(x, dims=[1, 2, 4], weights=(0.5,), groups=[[1], [9, 9]])
    torch.testing.assert_close(y, x * (8 * 0.5 + 200 + 9))
    torch.testing.assert_close(op(x, dims=torch.tensor([5]), groups=[]), x * (5 * 0.75))
    with pytest.raises(TypeError, match="list attribute"):
        op(x, dims=3)


# ---- in-place operator projects -------------------------------------------------------------------------
def _inplace_project(with_output: bool) -> dict[str, str]:
    out_def = (
        'this->Output("var").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'
        if with_output
        else ""
    )
    host = r"""
#include "register/op_def_registry.h"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(HalfAddTiling)
TILING_DATA_FIELD_DEF(uint32_t, half);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(HalfAdd, HalfAddTiling)
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    HalfAddTiling tiling;
    tiling.set_half(context->GetInputShape(0)->GetStorageShape().GetShapeSize() / 2);
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ops {
class HalfAdd : public OpDef {
public:
    explicit HalfAdd(const char* name) : OpDef(name)
    {
        this->Input("var").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        OUT_DEF
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(HalfAdd);
}  // namespace ops
""".replace("OUT_DEF", out_def)
    # adds x into the first half of var only: the second half must keep var's values
    kernel = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void half_add(GM_ADDR var, GM_ADDR x, OUT_PARAM GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * t.half * sizeof(float));
    LocalTensor<float> a = buf.Get<float>(), b = a[t.half];
    GlobalTensor<float> gv, gx, go;
    gv.SetGlobalBuffer((__gm__ float*)var, t.half);
    gx.SetGlobalBuffer((__gm__ float*)x, t.half);
    go.SetGlobalBuffer((__gm__ float*)OUT_NAME, t.half);
    DataCopy(a, gv, t.half);
    DataCopy(b, gx, t.half);
    PipeBarrier<PIPE_ALL>();
    Add(a, a, b, t.half);
    PipeBarrier<PIPE_ALL>();
    DataCopy(go, a, t.half);
}
""".replace("OUT_PARAM", "GM_ADDR var_ref," if with_output else "").replace(
        "OUT_NAME", "var_ref" if with_output else "var"
    )
    return {"op_host/half_add.cpp": host, "op_kernel/half_add.cpp": kernel}


@pytest.mark.parametrize("with_output", [True, False], ids=["same-named output", "no output"])
def test_in_place_projects_write_the_callers_tensor(with_output: bool) -> None:
    op = asc.load_op_project(_inplace_project(with_output))
    var, x = torch.randn(64), torch.randn(64)
    want = var.clone()
    want[:32] += x[:32]
    y = op(var, x)
    torch.testing.assert_close(var, want)
    if with_output:
        assert y is var
