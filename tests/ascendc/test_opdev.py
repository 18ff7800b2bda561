"""CANN's op-API framework (opdev) on the simulator: an operator project of our own writing whose
op_host holds its own aclnn layer (``aclnn_scale_two.cpp`` on l0 ops, ``scale_two_l0.cpp`` launching
the project's kernel with ADD_TO_LAUNCHER_LIST_AICORE), called by an unmodified example ``main``
through ``aclnnScaleTwoGetWorkspaceSize`` / ``aclnnScaleTwo``: the built-in l0 ops Contiguous (of a
transposed, non-contiguous view), Cast (fp16 to fp32 and back) and ViewCopy, the check macros
refusing a dtype with the project's own error code, and INFER_SHAPE."""

from __future__ import annotations

import numpy as np

from kernel_gym.ascendc.aclnn import AclnnOp, l0_stub_unit, run_aclnn_example

TILING_H = r"""
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleTwoTiling)
TILING_DATA_FIELD_DEF(uint32_t, perBlock);
TILING_DATA_FIELD_DEF(float, alpha);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ScaleTwo, ScaleTwoTiling)
}
"""

HOST = r"""
#include "scale_two_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
    ScaleTwoTiling t;
    uint32_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    uint32_t blocks = 2;
    t.set_perBlock(total / blocks);
    t.set_alpha(*context->GetAttrs()->GetAttrPointer<float>(0));
    context->SetBlockDim(blocks);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}
namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context) {
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}
namespace ops {
class ScaleTwo : public OpDef {
public:
    explicit ScaleTwo(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("alpha").AttrType(OPTIONAL).Float(1.0);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ScaleTwo);
}
"""

L0_H = r"""
#ifndef SCALE_TWO_L0_H_
#define SCALE_TWO_L0_H_
#include "opdev/op_executor.h"
namespace l0op {
const aclTensor* ScaleTwo(const aclTensor* x, float alpha, aclOpExecutor* executor);
}
#endif
"""

L0 = r"""
#include "scale_two_l0.h"
#include "opdev/make_op_executor.h"
#include "opdev/op_def.h"
#include "opdev/op_dfx.h"
#include "opdev/op_executor.h"
#include "opdev/op_log.h"
#include "opdev/shape_utils.h"

using namespace op;

namespace l0op {
OP_TYPE_REGISTER(ScaleTwo);

const aclTensor* ScaleTwo(const aclTensor* x, float alpha, aclOpExecutor* executor) {
    L0_DFX(ScaleTwo, x, alpha);
    // the output's shape from the op's InferShape, as an l0 op may take it
    auto out = executor->AllocTensor(x->GetDataType(), Format::FORMAT_ND, Format::FORMAT_ND);
    auto ret = INFER_SHAPE(ScaleTwo, OP_INPUT(x), OP_OUTPUT(out), OP_ATTR(alpha));
    OP_CHECK_INFERSHAPE(ret != ACLNN_SUCCESS, return nullptr, "ScaleTwo InferShape failed.");
    ret = ADD_TO_LAUNCHER_LIST_AICORE(ScaleTwo, OP_INPUT(x), OP_OUTPUT(out), OP_ATTR(alpha));
    OP_CHECK_ADD_TO_LAUNCHER_LIST_AICORE(ret != ACLNN_SUCCESS, return nullptr, "ScaleTwo launch failed.");
    return out;
}
}  // namespace l0op
"""

ACLNN_H = r"""
#ifndef ACLNN_SCALE_TWO_H_
#define ACLNN_SCALE_TWO_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
aclnnStatus aclnnScaleTwoGetWorkspaceSize(const aclTensor* self, double alpha, aclTensor* out,
                                          uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnScaleTwo(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
"""

ACLNN = r"""
#include "aclnn_scale_two.h"
#include "scale_two_l0.h"
#include "aclnn_kernels/cast.h"
#include "aclnn_kernels/contiguous.h"
#include "aclnn_kernels/common/op_error_check.h"
#include "opdev/common_types.h"
#include "opdev/data_type_utils.h"
#include "opdev/op_dfx.h"
#include "opdev/op_executor.h"
#include "opdev/op_log.h"
#include "opdev/platform.h"
#include "opdev/tensor_view_utils.h"

using namespace op;

// the project's own code for a dtype it refuses (the library's aclnn layers use the documented ones)
static const aclnnStatus SCALE_TWO_BAD_DTYPE = ACLNN_ERR_PARAM_INVALID;
static const std::initializer_list<op::DataType> DTYPES = {op::DataType::DT_FLOAT, op::DataType::DT_FLOAT16};

extern "C" aclnnStatus aclnnScaleTwoGetWorkspaceSize(const aclTensor* self, double alpha, aclTensor* out,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
    OP_CHECK_COMM_INPUT(workspaceSize, executor);
    L2_DFX_PHASE_1(aclnnScaleTwo, DFX_IN(self, alpha), DFX_OUT(out));
    auto uniqueExecutor = CREATE_EXECUTOR();
    CHECK_RET(uniqueExecutor.get() != nullptr, ACLNN_ERR_INNER_CREATE_EXECUTOR);
    OP_CHECK_NULL(self, return ACLNN_ERR_PARAM_NULLPTR);
    OP_CHECK_NULL(out, return ACLNN_ERR_PARAM_NULLPTR);
    OP_CHECK_DTYPE_NOT_SUPPORT(self, DTYPES, return SCALE_TWO_BAD_DTYPE);
    OP_CHECK_SHAPE_NOT_EQUAL(self, out, return ACLNN_ERR_PARAM_INVALID);
    CHECK_RET(GetCurrentPlatformInfo().GetSocVersion() == SocVersion::ASCEND910B, ACLNN_ERR_RUNTIME_ERROR);
    if (self->IsEmpty()) {
        *workspaceSize = 0;
        uniqueExecutor.ReleaseTo(executor);
        return ACLNN_SUCCESS;
    }
    auto selfContiguous = l0op::Contiguous(self, uniqueExecutor.get());
    CHECK_RET(selfContiguous != nullptr, ACLNN_ERR_INNER_NULLPTR);
    auto selfFloat = l0op::Cast(selfContiguous, op::DataType::DT_FLOAT, uniqueExecutor.get());
    CHECK_RET(selfFloat != nullptr, ACLNN_ERR_INNER_NULLPTR);
    auto y = l0op::ScaleTwo(selfFloat, static_cast<float>(alpha), uniqueExecutor.get());
    CHECK_RET(y != nullptr, ACLNN_ERR_INNER_NULLPTR);
    auto yCast = l0op::Cast(y, out->GetDataType(), uniqueExecutor.get());
    CHECK_RET(yCast != nullptr, ACLNN_ERR_INNER_NULLPTR);
    auto copied = l0op::ViewCopy(yCast, out, uniqueExecutor.get());
    CHECK_RET(copied != nullptr, ACLNN_ERR_INNER_NULLPTR);
    *workspaceSize = uniqueExecutor->GetWorkspaceSize();
    uniqueExecutor.ReleaseTo(executor);
    return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclnnScaleTwo(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream) {
    L2_DFX_PHASE_2(aclnnScaleTwo);
    return CommonOpExecutorRun(workspace, workspaceSize, executor, stream);
}
"""

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void scale_two(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(td, tiling);
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf;
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * td.perBlock, td.perBlock);
    yGm.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * td.perBlock, td.perBlock);
    pipe.InitBuffer(buf, td.perBlock * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, xGm, td.perBlock);
    PipeBarrier<PIPE_ALL>();
    Muls(t, t, td.alpha, td.perBlock);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, t, td.perBlock);
}
"""

PROJECT = {
    "op_host/scale_two_tiling.h": TILING_H,
    "op_host/scale_two.cpp": HOST,
    "op_host/scale_two_l0.h": L0_H,
    "op_host/scale_two_l0.cpp": L0,
    "op_host/aclnn_scale_two.h": ACLNN_H,
    "op_host/aclnn_scale_two.cpp": ACLNN,
    "op_kernel/scale_two.cpp": KERNEL,
}

# The example: x is an fp16 8x4 matrix on the device, passed as its transpose (a 4x8 view with
# strides {1, 4}: not contiguous); out is fp16 4x8. With an argument "int32", x is an int32 tensor,
# which the op refuses.
MAIN = r"""
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>
#include "acl/acl.h"
#include "aclnn_scale_two.h"

int main(int argc, char** argv) {
    bool asInt = argc > 1 && std::strcmp(argv[1], "int32") == 0;
    const int64_t rows = 8, cols = 4, n = rows * cols;
    std::vector<uint16_t> x(n), y(n);
    std::ifstream("../input/x.bin", std::ios::binary).read((char*)x.data(), n * 2);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    void *dx, *dy;
    aclrtMalloc(&dx, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dy, n * 2, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dx, n * 2, x.data(), n * 2, ACL_MEMCPY_HOST_TO_DEVICE);
    std::vector<int64_t> viewShape = {cols, rows}, viewStrides = {1, cols}, storage = {rows, cols};
    std::vector<int64_t> outShape = {cols, rows};
    aclTensor* tx = aclCreateTensor(viewShape.data(), 2, asInt ? ACL_INT32 : ACL_FLOAT16, viewStrides.data(), 0,
                                    ACL_FORMAT_ND, storage.data(), 2, dx);
    aclTensor* ty = aclCreateTensor(outShape.data(), 2, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, outShape.data(), 2, dy);
    uint64_t wsSize = 0;
    aclOpExecutor* ex = nullptr;
    int ret = aclnnScaleTwoGetWorkspaceSize(tx, 2.5, ty, &wsSize, &ex);
    printf("GetWorkspaceSize returned %d\n", ret);
    if (ret != 0) return 0;
    void* ws = nullptr;
    if (wsSize > 0) aclrtMalloc(&ws, wsSize, ACL_MEM_MALLOC_HUGE_FIRST);
    ret = aclnnScaleTwo(ws, wsSize, ex, stream);
    if (ret != 0 || aclrtSynchronizeStream(stream) != 0) { printf("launch failed\n"); return 1; }
    aclrtMemcpy(y.data(), n * 2, dy, n * 2, ACL_MEMCPY_DEVICE_TO_HOST);
    std::ofstream("../output/y.bin", std::ios::binary).write((const char*)y.data(), n * 2);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    aclrtFree(dx);
    aclrtFree(dy);
    if (ws) aclrtFree(ws);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def _inputs() -> tuple[np.ndarray, dict[str, bytes]]:
    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float16)
    return x, {"input/x.bin": x.tobytes()}


def test_project_defines_its_own_aclnn_pair():
    op = AclnnOp(PROJECT)
    assert op.uses_opdev
    assert op.defined_apis == ["aclnnScaleTwo"]
    assert not op.generates_pair


def test_own_aclnn_layer_runs_on_the_opdev_framework():
    """Contiguous gathers the transposed view, Cast widens it to fp32 for the kernel, the l0 op launches
    the project's kernel (tiling from its TilingFunc, output shape from INFER_SHAPE), Cast narrows the
    result and ViewCopy writes it to out."""
    x, inputs = _inputs()
    run = run_aclnn_example(PROJECT, {"main.cpp": MAIN}, inputs, cwd="build")
    assert run.ok, (run.error, run.stdout, run.stderr)
    assert "GetWorkspaceSize returned 0" in run.stdout
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float16).reshape(4, 8)
    want = (x.T.astype(np.float32) * np.float32(2.5)).astype(np.float16)
    np.testing.assert_array_equal(y, want)
    assert [launch.num_blocks for launch in run.launches] == [2]  # one kernel launch: the l0 op's


def test_refused_dtype_returns_the_projects_error_code():
    """OP_CHECK_DTYPE_NOT_SUPPORT refuses an int32 input: GetWorkspaceSize returns the project's code
    (ACLNN_ERR_PARAM_INVALID, 161002) and logs why; nothing is launched, nothing crashes."""
    _, inputs = _inputs()
    run = run_aclnn_example(PROJECT, {"main.cpp": MAIN}, inputs, cwd="build", argv=["int32"])
    assert run.ok, (run.error, run.stderr)
    assert "GetWorkspaceSize returned 161002" in run.stdout
    assert "DT_INT32" in run.stderr and "dtype support list" in run.stderr
    assert not run.launches


def test_cann_own_l0_ops_get_weak_stand_ins():
    """An l0 op the project declares in a header but neither it nor the simulator defines (one of
    CANN's own kernels, on a path the example need not take) gets a weak stand-in that logs and
    returns nothing; the project's own l0 op and the simulated built-ins get none."""
    files = {
        **PROJECT,
        "op_host/mul_l0.h": "namespace l0op {\nconst aclTensor *Mul(const aclTensor *self,\n"
        "    const aclTensor *other, aclOpExecutor *executor = nullptr);\n"
        "const aclTensor *Cast(const aclTensor *x, op::DataType d, aclOpExecutor *executor);\n}\n",
    }
    unit = l0_stub_unit(files)
    assert unit is not None
    assert '#include "proj/op_host/mul_l0.h"' in unit
    assert "__attribute__((weak)) const aclTensor * Mul(const aclTensor *self, const aclTensor *other, " in unit
    assert "aclOpExecutor *executor) {" in unit  # the default argument is not repeated
    assert "ScaleTwo(" not in unit and " Cast(" not in unit
    assert l0_stub_unit(PROJECT) is None


def test_cann_op_helpers_returning_a_status_get_a_failing_stand_in():
    """A helper of CANN's aclnn layer that a project declares (its tensor_util.h) but whose body is in
    CANN's library (ProcessEmptyTensorWithValue, on the empty-tensor path) links against a weak
    stand-in that logs and returns ACLNN_ERR_INNER, never success; helpers returning neither a tensor
    nor a status get none."""
    files = {
        **PROJECT,
        "op_host/tensor_util.h": "namespace op {\naclnnStatus ProcessEmptyTensorWithValue(aclTensor *src, "
        "float initValue, aclOpExecutor *executor);\nop::DataType CombineCategories(op::DataType a, "
        "op::DataType b);\n}\n",
    }
    unit = l0_stub_unit(files)
    assert unit is not None
    assert "__attribute__((weak)) aclnnStatus ProcessEmptyTensorWithValue(" in unit
    assert "return ACLNN_ERR_INNER;" in unit
    assert "CombineCategories" not in unit


def test_l0_pad_surrounds_the_tensor_with_zeros():
    """l0op::Pad (aclnn_kernels/pad.h) between Cast and the project's kernel: (before, after) rows
    (1, 3) around the 4x8 view, from ConvertToTensor of an aclIntArray, as aclnn layers build it."""
    aclnn = ACLNN.replace(
        '#include "aclnn_kernels/contiguous.h"', '#include "aclnn_kernels/contiguous.h"\n#include "aclnn_kernels/pad.h"'
    )
    aclnn = aclnn.replace("OP_CHECK_SHAPE_NOT_EQUAL(self, out, return ACLNN_ERR_PARAM_INVALID);\n", "")
    aclnn = aclnn.replace(
        "    auto y = l0op::ScaleTwo(selfFloat,",
        "    const int64_t pads[4] = {1, 3, 0, 0};\n"
        "    aclIntArray* padArray = uniqueExecutor->AllocIntArray(pads, 4);\n"
        "    auto padTensor = uniqueExecutor->ConvertToTensor(padArray, op::DataType::DT_INT64);\n"
        "    selfFloat = l0op::Pad(selfFloat, padTensor, uniqueExecutor.get());\n"
        "    CHECK_RET(selfFloat != nullptr, ACLNN_ERR_INNER_NULLPTR);\n"
        "    auto y = l0op::ScaleTwo(selfFloat,",
    )
    project = {**PROJECT, "op_host/aclnn_scale_two.cpp": aclnn}
    main = MAIN.replace(
        "std::vector<int64_t> outShape = {cols, rows};", "std::vector<int64_t> outShape = {cols + 4, rows};"
    )
    main = main.replace("std::vector<uint16_t> x(n), y(n);", "std::vector<uint16_t> x(n), y(2 * n);")
    main = main.replace("aclrtMalloc(&dy, n * 2,", "aclrtMalloc(&dy, n * 4,")
    main = main.replace("aclrtMemcpy(y.data(), n * 2, dy, n * 2,", "aclrtMemcpy(y.data(), n * 4, dy, n * 4,")
    main = main.replace("write((const char*)y.data(), n * 2)", "write((const char*)y.data(), n * 4)")
    x, inputs = _inputs()
    run = run_aclnn_example(project, {"main.cpp": main}, inputs, cwd="build")
    assert run.ok, (run.error, run.stdout, run.stderr)
    assert "GetWorkspaceSize returned 0" in run.stdout
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float16).reshape(8, 8)
    want = np.zeros((8, 8), dtype=np.float16)
    want[1:5] = (x.T.astype(np.float32) * np.float32(2.5)).astype(np.float16)
    np.testing.assert_array_equal(y, want)


def test_attr_names_as_cann_defines_them_are_accepted():
    """CANN's OP_ATTR_NAMES makes an FVector of the names (a project may define the macro itself, as
    cann-ops' grid_sample does); the launch takes the attributes in the OpDef's order either way."""
    l0 = L0.replace(
        '#include "scale_two_l0.h"', '#include "scale_two_l0.h"\n#define OP_ATTR_NAMES ::op::FVector<std::string>'
    )
    l0 = l0.replace(
        "ADD_TO_LAUNCHER_LIST_AICORE(ScaleTwo, OP_INPUT(x),",
        'ADD_TO_LAUNCHER_LIST_AICORE(ScaleTwo, OP_ATTR_NAMES({"alpha"}), OP_INPUT(x),',
    )
    assert "OP_ATTR_NAMES({" in l0
    x, inputs = _inputs()
    run = run_aclnn_example({**PROJECT, "op_host/scale_two_l0.cpp": l0}, {"main.cpp": MAIN}, inputs, cwd="build")
    assert run.ok, (run.error, run.stdout, run.stderr)
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float16).reshape(4, 8)
    np.testing.assert_array_equal(y, (x.T.astype(np.float32) * np.float32(2.5)).astype(np.float16))


def test_cann_pad_v3_shape_rules_for_infer_shape():
    """INFER_SHAPE(PadV3 / PadV3Grad, ...) of an op the project does not define (CANN's own, whose
    kernel the project replaces): (before, after) per axis added or taken off, paired or not as the
    paddings_contiguous attribute says; paddings that are not 2 x rank values are refused."""
    probe = r"""
    {
        const int64_t pads[4] = {1, 2, 0, 3};  // not contiguous: befores (1, 2), afters (0, 3)
        auto padTensor = executor->ConvertToTensor(executor->AllocIntArray(pads, 4), op::DataType::DT_INT64);
        auto padded = executor->AllocTensor(x->GetDataType(), Format::FORMAT_ND, Format::FORMAT_ND);
        auto r1 = INFER_SHAPE(PadV3, OP_INPUT(x, padTensor), OP_OUTPUT(padded), OP_ATTR(std::string("constant"), false));
        auto back = executor->AllocTensor(x->GetDataType(), Format::FORMAT_ND, Format::FORMAT_ND);
        auto r2 = INFER_SHAPE(PadV3Grad, OP_INPUT(padded, padTensor), OP_OUTPUT(back), OP_ATTR(std::string("reflect"), false));
        auto paired = executor->AllocTensor(x->GetDataType(), Format::FORMAT_ND, Format::FORMAT_ND);
        auto r3 = INFER_SHAPE(PadV3, OP_INPUT(x, padTensor), OP_OUTPUT(paired), OP_ATTR(std::string("edge"), true));
        auto shortPads = executor->ConvertToTensor(executor->AllocIntArray(pads, 2), op::DataType::DT_INT64);
        auto bad = executor->AllocTensor(x->GetDataType(), Format::FORMAT_ND, Format::FORMAT_ND);
        auto r4 = INFER_SHAPE(PadV3, OP_INPUT(x, shortPads), OP_OUTPUT(bad), OP_ATTR(std::string("constant"), true));
        printf("pad %d [%lld, %lld] grad %d [%lld, %lld] paired %d [%lld, %lld] short %d\n", int(r1),
               (long long)padded->GetViewShape().GetDim(0), (long long)padded->GetViewShape().GetDim(1), int(r2),
               (long long)back->GetViewShape().GetDim(0), (long long)back->GetViewShape().GetDim(1), int(r3),
               (long long)paired->GetViewShape().GetDim(0), (long long)paired->GetViewShape().GetDim(1), int(r4 != 0));
    }
    auto ret = INFER_SHAPE(ScaleTwo,"""
    l0 = L0.replace("    auto ret = INFER_SHAPE(ScaleTwo,", probe, 1)
    assert l0 != L0
    x, inputs = _inputs()
    run = run_aclnn_example({**PROJECT, "op_host/scale_two_l0.cpp": l0}, {"main.cpp": MAIN}, inputs, cwd="build")
    assert run.ok, (run.error, run.stdout, run.stderr)
    # x reaches the l0 op as the 4 x 8 fp32 tensor; paired: (1, 2) on axis 0, (0, 3) on axis 1
    assert "pad 0 [5, 13] grad 0 [4, 8] paired 0 [7, 11] short 1" in run.stdout, run.stdout
    assert "paddings must hold 2 x rank = 4" in run.stderr
