"""How operator projects and six-string answers fail or bind at their edges, on projects of our own:

- a crash in a project's host code (TilingFunc, InferShape), which runs in the caller's process: a
  Python exception naming the signal, the host function, the op and the likely fix, and the process
  goes on (the signal actions before the call are back after it); an input not declared ValueDepend
  has no host data (GetData is nullptr, as in CANN), a ValueDepend one has the caller's values;
- inputs of dtypes no OpDef column declares together are refused, as the aclnn op CANN generates
  refuses them at GetWorkspaceSize (DataTypeList, Follow and Format-only declarations as CANN reads them);
- list arguments of a six-string answer's binding (``IntArrayRef``, ``std::vector<int64_t>``,
  ``std::vector<float>``) reach its C++ with their values, and through EXEC_NPU_CMD the OpDef's list
  attributes.
"""

from __future__ import annotations

import ctypes
import signal

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.op_project import OpHostCrashError

# ---- a project whose host code reads an input's values ------------------------------------------------------
# y = x + shift[0]: TilingFunc reads the int32 input `shift` through GetInputTensor(1)->GetData.
SHIFT_HOST = r"""
#include <cassert>
#include "register/op_def_registry.h"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ShiftAddTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF(float, shift);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ShiftAdd, ShiftAddTiling)
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ShiftAddTiling tiling;
    tiling.set_total(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    TILING_BODY
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    INFER_BODY
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}  // namespace ge
namespace ops {
class ShiftAdd : public OpDef {
public:
    explicit ShiftAdd(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("shift").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND})VALUE_DEPEND;
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ShiftAdd);
}  // namespace ops
"""

SHIFT_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void shift_add(GM_ADDR x, GM_ADDR shift, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
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
    Adds(v, v, t.shift, t.total);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, v, t.total);
}
"""

READ_SHIFT = "tiling.set_shift(float(context->GetInputTensor(1)->GetData<int32_t>()[0]));"


def _shift_project(tiling_body: str = READ_SHIFT, infer_body: str = "", value_depend: bool = False) -> dict[str, str]:
    host = (
        SHIFT_HOST.replace("TILING_BODY", tiling_body)
        .replace("INFER_BODY", infer_body)
        .replace("VALUE_DEPEND", ".ValueDepend(REQUIRED)" if value_depend else "")
    )
    return {"op_host/shift_add.cpp": host, "op_kernel/shift_add.cpp": SHIFT_KERNEL}


def _signal_action(sig: int) -> int:
    """The address of the C-level handler of ``sig`` now (struct sigaction's first member)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(256)  # larger than struct sigaction
    assert libc.sigaction(sig, None, buf) == 0
    return int.from_bytes(buf.raw[:8], "little")


def test_a_null_data_read_in_the_tiling_function_is_an_exception_naming_the_fix() -> None:
    op = asc.load_op_project(_shift_project())
    x, shift = torch.randn(64), torch.tensor([3], dtype=torch.int32)
    before = {s: _signal_action(s) for s in (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT)}
    with pytest.raises(OpHostCrashError) as info:
        op(x, shift)
    msg = str(info.value)
    assert msg.startswith("ShiftAdd: its TilingFunc crashed with SIGSEGV")
    assert "'shift' (input 1)" in msg and ".ValueDepend(REQUIRED)" in msg
    # the process goes on, with the signal actions it had: again, and another op after it
    assert {s: _signal_action(s) for s in before} == before
    with pytest.raises(OpHostCrashError, match="TilingFunc crashed"):
        op.plan(x, shift)
    ok = asc.load_op_project(_shift_project("tiling.set_shift(2.0f);"))
    torch.testing.assert_close(ok(x, shift), x + 2)


def test_a_value_depend_input_has_the_callers_values() -> None:
    op = asc.load_op_project(_shift_project(value_depend=True))
    x = torch.randn(64)
    torch.testing.assert_close(op(x, torch.tensor([3], dtype=torch.int32)), x + 3)
    torch.testing.assert_close(op(x, torch.tensor([-5], dtype=torch.int32)), x - 5)


def test_get_data_of_an_input_not_value_depend_is_nullptr() -> None:
    body = "tiling.set_shift(context->GetInputTensor(1)->GetData<int32_t>() == nullptr ? 1.0f : 0.0f);"
    op = asc.load_op_project(_shift_project(body))
    x = torch.randn(64)
    torch.testing.assert_close(op(x, torch.tensor([3], dtype=torch.int32)), x + 1)


def test_a_crash_in_infer_shape_and_an_assert_in_tiling() -> None:
    x, shift = torch.randn(64), torch.tensor([3], dtype=torch.int32)
    null_read = "volatile const int64_t* p = nullptr; if (context->GetInputShape(0)->GetDimNum() == 1) (void)*p;"
    op = asc.load_op_project(_shift_project("tiling.set_shift(0.0f);", infer_body=null_read))
    with pytest.raises(OpHostCrashError) as info:
        op(x, shift)
    assert info.value.args[0].startswith("ShiftAdd: its InferShape crashed with SIGSEGV (an access to address ")
    assert "a null pointer was dereferenced" in info.value.args[0]
    op = asc.load_op_project(_shift_project("assert(context->GetInputShape(0)->GetStorageShape().GetDimNum() == 2);"))
    with pytest.raises(OpHostCrashError, match=r"its TilingFunc crashed with SIGABRT .*a failed assert"):
        op(x, shift)
    torch.testing.assert_close(op(x.reshape(8, 8), shift), x.reshape(8, 8))  # the same op, asserting true


# ---- input dtypes against the OpDef's columns -------------------------------------------------------------
DTYPE_HOST = r"""
#include "register/op_def_registry.h"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ColsTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Cols, ColsTiling)
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ColsTiling tiling;
    tiling.set_total(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ops {
class Cols : public OpDef {
public:
    explicit Cols(const char* name) : OpDef(name)
    {
        PARAMS
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Cols);
}  // namespace ops
"""

DTYPE_KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void cols(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    (void)t;
}
"""

TWO_COLUMNS = """
        this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
        this->Output("c").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
"""


def _cols(params: str) -> asc.OpProjectOp:
    return asc.load_op_project(
        {"op_host/cols.cpp": DTYPE_HOST.replace("PARAMS", params), "op_kernel/cols.cpp": DTYPE_KERNEL}
    )


def _t(dtype: torch.dtype) -> torch.Tensor:
    return torch.ones(16, dtype=dtype)


def test_inputs_of_no_opdef_column_are_refused() -> None:
    op = _cols(TWO_COLUMNS)
    h, f = torch.float16, torch.float32
    assert op.plan(_t(h), _t(h))["output_dtypes"] == [1]
    assert op.plan(_t(f), _t(f))["output_dtypes"] == [0]
    with pytest.raises(TypeError) as info:  # each dtype is declared, but not in one column
        op(_t(h), _t(f))
    assert str(info.value) == (
        "Cols: input 'b' is float32, but the OpDef declares float16 in the column the other inputs select; the "
        "OpDef's columns of (a, b) are (float16, float16) (float32, float32), and the aclnn op CANN generates "
        "refuses other dtypes (aclnnColsGetWorkspaceSize fails): cast the inputs to one declared column"
    )
    with pytest.raises(TypeError, match="input 'a' is int32, but the OpDef declares float32 in the column"):
        op.plan(_t(torch.int32), _t(f))


def test_data_type_list_follow_and_format_only_declarations() -> None:
    # a DataTypeList goes with every column; a Follow input takes the dtype of the one it follows
    op = _cols(
        """
        this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED).DataTypeList({ge::DT_INT32, ge::DT_INT64}).FormatList({ge::FORMAT_ND});
        this->Output("c").ParamType(REQUIRED).Follow("a");
"""
    )
    for a in (torch.float16, torch.float32):
        for b in (torch.int32, torch.int64):
            op.plan(_t(a), _t(b))
    with pytest.raises(TypeError, match=r"input 'b' is float32, but the OpDef declares any of int32, int64"):
        op.plan(_t(torch.float16), _t(torch.float32))
    op = _cols(
        """
        this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED).Follow("a");
        this->Output("c").ParamType(REQUIRED).Follow("a");
"""
    )
    op.plan(_t(torch.float32), _t(torch.float32))
    with pytest.raises(
        TypeError, match=r"input 'b' is float16, but the OpDef declares the dtype of 'a', which it Follows"
    ):
        op.plan(_t(torch.float32), _t(torch.float16))
    # declaring formats only, or nothing at all, constrains no dtype
    op = _cols(
        """
        this->Input("a").ParamType(REQUIRED).Format({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED);
        this->Output("c").ParamType(REQUIRED);
"""
    )
    op.plan(_t(torch.float16), _t(torch.int32))
    assert op.plan(_t(torch.float32), _t(torch.int8))["output_dtypes"] == [0]


# ---- list arguments of a six-string answer's binding --------------------------------------------------------
# y = x * (product of `factors`) * (sum of `weights`), shaped as the binding's `shape` says: the binding
# takes an IntArrayRef (the output's shape), a std::vector<int64_t> and a std::vector<double>, and passes
# the two vectors to the op's ListInt / ListFloat attributes through EXEC_NPU_CMD.
SCALE_LIST = {
    "project_json_src": """[{"op": "ScaleList", "language": "cpp",
  "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}],
  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}],
  "attr": [{"name": "factors", "param_type": "required", "type": "list_int"},
           {"name": "weights", "param_type": "required", "type": "list_float"}]}]""",
    "host_tiling_src": r"""
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleListTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, total);
  TILING_DATA_FIELD_DEF(float, factor);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ScaleList, ScaleListTilingData)
}
""",
    "host_operator_src": r"""
#include "scale_list_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ScaleListTilingData tiling;
    const gert::TypedContinuousVector<int64_t>* factors = context->GetAttrs()->GetListInt(0);
    const gert::TypedContinuousVector<float>* weights = context->GetAttrs()->GetListFloat(1);
    float factor = 1.0f, sum = 0.0f;
    for (size_t k = 0; k < factors->GetSize(); ++k) factor *= float(factors->GetData()[k]);
    for (size_t k = 0; k < weights->GetSize(); ++k) sum += weights->GetData()[k];
    tiling.set_total(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    tiling.set_factor(factor * sum);
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class ScaleList : public OpDef {
public:
    explicit ScaleList(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("factors").ListInt();
        this->Attr("weights").ListFloat();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ScaleList);
}
""",
    "kernel_src": r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void scale_list(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
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
""",
    "python_bind_src": r"""
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor scale_list_impl_npu(const at::Tensor& x, at::IntArrayRef shape, std::vector<int64_t> factors,
                               const std::vector<double>& weights)
{
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    TORCH_CHECK(n == x.numel(), "shape does not hold x's elements");
    at::Tensor result = at::empty(shape, x.options());
    EXEC_NPU_CMD(aclnnScaleList, x, factors, weights, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("scale_list", &scale_list_impl_npu, "x * prod(factors) * sum(weights), reshaped");
}
""",
    "model_src": """
import torch
import torch_npu
import custom_ops_lib


class ModelNew(torch.nn.Module):
    def __init__(self, shape, factors, weights) -> None:
        super().__init__()
        self.shape, self.factors, self.weights = shape, factors, weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return custom_ops_lib.scale_list(x, self.shape, self.factors, self.weights)
""",
}


def test_six_string_binding_takes_list_arguments() -> None:
    answer = asc.load_multikernelbench(SCALE_LIST)
    x = torch.randn(64)
    y = answer.ModelNew([8, 8], [2, 3], [0.5, 0.25])(x)
    assert y.shape == (8, 8)
    torch.testing.assert_close(y, (x * 6 * 0.75).reshape(8, 8))
    y = answer.ops.scale_list(x, (4, 16), torch.Size([5]), [1, 2])  # tuples, a torch.Size, integer weights
    torch.testing.assert_close(y, (x * 5 * 3).reshape(4, 16))
    torch.testing.assert_close(answer.ops.scale_list(x, [64], [], [2.0]), x * 2)  # an empty list: product 1
    with pytest.raises(asc.AscendCFault, match="shape does not hold"):
        answer.ops.scale_list(x, [8, 9], [1], [1.0])
    with pytest.raises(asc.AscendCFault, match="expected a list of numbers, got a number"):
        answer.ops.scale_list(x, 64, [1], [1.0])
