"""The forms CANN's operator library (cann-ops) writes, on projects written here from the
documentation: the aclnn two-phase API generated from an OpDef and called by an unmodified host
``main``; op-impl registration by op type (IMPL_OP_OPTILING / IMPL_OP_INFERSHAPE); a kernel named
like a C library function; host and kernel defining the same file-scope constant; float16_t /
float32_t; CompareScalar; ASSERT written without a semicolon after a member initialisation;
GetUserWorkspace; list attributes read as TypedContinuousVector; ValueDepend inputs passed as
aclIntArray; an in-place (Ref) parameter; and ``missing_api`` for a name the headers lack."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.aclnn import generate_aclnn, op_signature, run_aclnn_example
from kernel_gym.ascendc.errors import MissingApiError

# ---- an operator project: y = x * scale + bias[optional], out-of-place, and the row count comes
# from a ValueDepend input; registered through the op-impl registry, its kernel named `sin` (a libm
# function) and a constant both sides define, as separate compilations allow on CANN.
TILING_H = r"""
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF(uint32_t, perBlock);
TILING_DATA_FIELD_DEF(float, scale);
TILING_DATA_FIELD_DEF(uint32_t, hasBias);
TILING_DATA_FIELD_DEF(uint32_t, rows);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Sin, ScaleTiling)
}
"""

HOST = r"""
#include "scale_tiling.h"
#include "register/op_def_registry.h"
#include "platform/platform_info.h"
constexpr int SHARED_KEY = 7;  // the kernel defines its own
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
    ScaleTiling t;
    uint32_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const float* scale = context->GetAttrs()->GetAttrPointer<float>(0);
    auto pads = context->GetAttrs()->GetListInt(1);  // TypedContinuousVector<int64_t>
    const int64_t* dims = context->GetInputTensor(2)->GetData<int64_t>();  // ValueDepend values
    uint32_t blocks = 2;
    t.set_total(total);
    t.set_perBlock(total / blocks);
    t.set_scale(*scale + (pads->GetSize() > 1 ? float(pads->GetData()[1]) : 0.0f));
    t.set_hasBias(context->GetOptionalInputShape(1) != nullptr ? 1 : 0);
    t.set_rows(dims != nullptr ? uint32_t(dims[0]) : 0);
    context->SetBlockDim(blocks);
    context->SetTilingKey(SHARED_KEY);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 16 * 1024 * 1024 + 64;  // the library's system part, then the user part
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
class Sin : public OpDef {
public:
    explicit Sin(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("dims").ParamType(REQUIRED).DataType({ge::DT_INT64}).Format({ge::FORMAT_ND})
            .ValueDepend(REQUIRED);
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("rows").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->Attr("scale").AttrType(OPTIONAL).Float(1.0);
        this->Attr("pads").AttrType(OPTIONAL).ListInt({0, 0});
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Sin);
IMPL_OP_OPTILING(Sin).Tiling(optiling::TilingFunc);
IMPL_OP_INFERSHAPE(Sin).InferShape(ge::InferShape);
}
"""

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr int SHARED_KEY = 7;

class ScaleKernel {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR bias, GM_ADDR y, GM_ADDR rows, GM_ADDR ws, uint32_t perBlock,
                                float scale, uint32_t hasBias, uint32_t nrows) {
        this->perBlock = perBlock ASSERT(perBlock != 0);
        this->scale = scale;
        this->hasBias = hasBias;
        this->nrows = nrows;
        xGm.SetGlobalBuffer((__gm__ float32_t*)x + GetBlockIdx() * perBlock, perBlock);
        bGm.SetGlobalBuffer((__gm__ float32_t*)bias + GetBlockIdx() * perBlock, perBlock);
        yGm.SetGlobalBuffer((__gm__ float32_t*)y + GetBlockIdx() * perBlock, perBlock);
        rowsGm.SetGlobalBuffer((__gm__ int32_t*)rows, 8);
        userGm.SetGlobalBuffer((__gm__ float32_t*)GetUserWorkspace(ws), 16);
        pipe.InitBuffer(buf, perBlock * sizeof(float32_t));
        pipe.InitBuffer(bbuf, perBlock * sizeof(float32_t));
        pipe.InitBuffer(mbuf, 256);
    }
    __aicore__ inline void Process() {
        LocalTensor<float32_t> t = buf.Get<float32_t>();
        LocalTensor<float32_t> b = bbuf.Get<float32_t>();
        LocalTensor<uint8_t> m = mbuf.Get<uint8_t>();
        DataCopy(t, xGm, perBlock);
        PipeBarrier<PIPE_ALL>();
        Muls(t, t, scale, perBlock);
        if (hasBias) {
            DataCopy(b, bGm, perBlock);
            PipeBarrier<PIPE_ALL>();
            Add(t, t, b, perBlock);
        }
        CompareScalar(m, t, (float32_t)0.0f, CMPMODE::GE, perBlock);  // the bits are not used further
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm, t, perBlock);
        if (GetBlockIdx() == 0) {
            rowsGm.SetValue(0, int32_t(nrows));
            userGm.SetValue(0, 1.0f);  // the user workspace lies inside the workspace the host asked for
        }
    }
private:
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf, bbuf, mbuf;
    GlobalTensor<float32_t> xGm, bGm, yGm, userGm;
    GlobalTensor<int32_t> rowsGm;
    uint32_t perBlock;
    float scale;
    uint32_t hasBias, nrows;
};

extern "C" __global__ __aicore__ void sin(GM_ADDR x, GM_ADDR bias, GM_ADDR dims, GM_ADDR y, GM_ADDR rows,
                                          GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(td, tiling);
    if (TILING_KEY_IS(SHARED_KEY)) {
        ScaleKernel k;
        k.Init(x, bias, y, rows, workspace, td.perBlock, td.scale, td.hasBias, td.rows);
        k.Process();
    }
}
"""

PROJECT = {"op_host/scale_tiling.h": TILING_H, "op_host/sin.cpp": HOST, "op_kernel/sin.cpp": KERNEL}

# The example's host program, as the library's examples write one: aclCreateTensor, the two
# phases, aclrtMemcpy back, files in ../input and ../output (run from build/).
MAIN = r"""
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>
#include "acl/acl.h"
#include "aclnn_sin.h"

static aclTensor* make(std::vector<int64_t> shape, aclDataType dt, void** dev, const void* host, size_t bytes) {
    aclrtMalloc(dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (host) aclrtMemcpy(*dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    return aclCreateTensor(shape.data(), shape.size(), dt, nullptr, 0, aclFormat::ACL_FORMAT_ND, shape.data(),
                           shape.size(), *dev);
}

int main(int argc, char** argv) {
    const int64_t n = 64;
    bool withBias = argc > 1;
    std::vector<float> x(n), b(n), y(n);
    std::ifstream("../input/x.bin", std::ios::binary).read((char*)x.data(), n * 4);
    std::ifstream("../input/b.bin", std::ios::binary).read((char*)b.data(), n * 4);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    void *dx, *db, *dy, *dr;
    aclTensor* tx = make({n}, ACL_FLOAT, &dx, x.data(), n * 4);
    aclTensor* tb = make({n}, ACL_FLOAT, &db, b.data(), n * 4);
    aclTensor* ty = make({n}, ACL_FLOAT, &dy, nullptr, n * 4);
    aclTensor* tr = make({8}, ACL_INT32, &dr, nullptr, 32);
    int64_t dimsv[2] = {5, 9}, padsv[2] = {0, 1};
    aclIntArray* dims = aclCreateIntArray(dimsv, 2);
    aclIntArray* pads = aclCreateIntArray(padsv, 2);
    uint64_t wsSize = 0;
    aclOpExecutor* ex = nullptr;
    int ret = aclnnSinGetWorkspaceSize(tx, withBias ? tb : nullptr, dims, 2.0, pads, ty, tr, &wsSize, &ex);
    if (ret != 0) { printf("GetWorkspaceSize failed %d\n", ret); return 1; }
    void* ws = nullptr;
    if (wsSize > 0) aclrtMalloc(&ws, wsSize, ACL_MEM_MALLOC_HUGE_FIRST);
    ret = aclnnSin(ws, wsSize, ex, stream);
    if (ret != 0 || aclrtSynchronizeStream(stream) != 0) { printf("launch failed\n"); return 1; }
    aclrtMemcpy(y.data(), n * 4, dy, n * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    int32_t rows = 0;
    aclrtMemcpy(&rows, 4, dr, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    std::ofstream("../output/y.bin", std::ios::binary).write((const char*)y.data(), n * 4);
    printf("ws=%llu rows=%d\n", (unsigned long long)wsSize, rows);
    aclDestroyTensor(tx); aclDestroyTensor(tb); aclDestroyTensor(ty); aclDestroyTensor(tr);
    aclDestroyIntArray(dims); aclDestroyIntArray(pads);
    aclrtFree(dx); aclrtFree(db); aclrtFree(dy); aclrtFree(dr);
    if (ws) aclrtFree(ws);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def _inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, dict[str, bytes]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    return x, b, {"input/x.bin": x.tobytes(), "input/b.bin": b.tobytes()}


def test_generated_aclnn_runs_an_unmodified_main():
    """The OpDef's aclnn pair: attribute scale 2.0 plus pads[1] = 1 (the list attribute), an optional
    bias left out, a ValueDepend input read by the tiling, two outputs."""
    x, _, inputs = _inputs()
    run = run_aclnn_example(PROJECT, {"main.cpp": MAIN}, inputs, cwd="build")
    assert run.ok, (run.error, run.stdout, run.stderr)
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float32)
    np.testing.assert_allclose(y, x * 3.0, rtol=1e-6)
    assert f"ws={16 * 1024 * 1024 + 64} rows=5" in run.stdout
    assert run.launches and run.launches[0].num_blocks == 2


@pytest.mark.slow  # a second build of the project (the first test covers the path)
def test_generated_aclnn_passes_an_optional_input():
    x, b, inputs = _inputs(1)
    run = run_aclnn_example(
        PROJECT, {"main.cpp": MAIN.replace("bool withBias = argc > 1;", "bool withBias = true;")}, inputs, cwd="build"
    )
    assert run.ok, (run.error, run.stderr)
    y = np.frombuffer(run.files["output/y.bin"], dtype=np.float32)
    np.testing.assert_allclose(y, x * 3.0 + b, rtol=1e-6)


def test_aclnn_signature_follows_the_opdef():
    """Parameter types by the documented rules: optional input <name>Optional, DYNAMIC a list, Scalar()
    an aclScalar, Float a double, String a char *, ListInt an aclIntArray, an in-place output passed once."""
    meta = {
        "op": "AddRmsNorm",
        "inputs": [
            {"name": "x", "option": 2, "scalar": 0, "dtypes": [1]},
            {"name": "gamma", "option": 1, "scalar": 0, "dtypes": [1]},
            {"name": "xs", "option": 3, "scalar": 0, "dtypes": [1]},
            {"name": "alpha", "option": 2, "scalar": 1, "dtypes": [1]},
            {"name": "var", "option": 2, "scalar": 0, "dtypes": [1]},
        ],
        "outputs": [{"name": "y", "option": 2, "dtypes": [1]}, {"name": "var", "option": 2, "dtypes": [1]}],
        "attrs": [{"name": "eps", "type": 1}, {"name": "mode", "type": 3}, {"name": "axes", "type": 4}],
    }
    kinds = [(p.name, p.ctype) for p in op_signature(meta)]
    assert kinds[:5] == [
        ("x", "const aclTensor *"),
        ("gammaOptional", "const aclTensor *"),
        ("xs", "const aclTensorList *"),
        ("alpha", "const aclScalar *"),
        ("varRef", "aclTensor *"),
    ]
    header, impl = generate_aclnn(meta)
    assert (
        "aclnnStatus aclnnAddRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gammaOptional, "
        "const aclTensorList *xs, const aclScalar *alpha, aclTensor *varRef, double eps, char *mode, "
        "const aclIntArray *axes, const aclTensor *y, uint64_t *workspaceSize, aclOpExecutor **executor);"
    ) in header
    assert "aclnnStatus aclnnAddRmsNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, " in header
    assert "output_ref(ex, varRef)" in impl


def test_aclnn_in_place_tensor_list_is_passed_once_and_written_through_its_output():
    """A DYNAMIC input that is also an output (written in place, as scatter_list's var): the list is one
    parameter, and the same list fills the output slot without a second dtype column."""
    meta = {
        "op": "ListUpdate",
        "inputs": [
            {"name": "var", "option": 3, "scalar": 0, "dtypes": [1]},
            {"name": "updates", "option": 2, "scalar": 0, "dtypes": [1]},
        ],
        "outputs": [{"name": "var", "option": 3, "dtypes": [1]}],
        "attrs": [],
    }
    header, impl = generate_aclnn(meta)
    assert (
        "aclnnStatus aclnnListUpdateGetWorkspaceSize(const aclTensorList *var, const aclTensor *updates, "
        "uint64_t *workspaceSize, aclOpExecutor **executor);"
    ) in header
    assert "input_list(ex, var)" in impl and "output_list_ref(ex, var)" in impl


def test_missing_api_names_the_api_and_line():
    src = (
        '#include "kernel_operator.h"\n'
        'extern "C" __global__ __aicore__ void k(GM_ADDR x) {\n'
        "    AscendC::NoSuchVectorOp(x);\n"
        "}\n"
    )
    with pytest.raises(MissingApiError) as info:
        asc.load(src, name="uses_missing.cpp")
    assert info.value.api == "AscendC::NoSuchVectorOp"
    assert info.value.where == "uses_missing.cpp:3"
    assert str(info.value).startswith("missing_api: AscendC::NoSuchVectorOp (uses_missing.cpp:3)")
    assert info.value.error_class == "compile_error"


def test_missing_header_is_missing_api():
    src = '#include "kernel_operator.h"\n#include "lib/no_such/api.h"\n'
    with pytest.raises(MissingApiError) as info:
        asc.load(src, name="uses_header.cpp")
    assert info.value.api == "lib/no_such/api.h" and info.value.where == "uses_header.cpp:2"


def test_load_op_project_takes_tiling_from_the_op_impl_registry():
    """IMPL_OP_OPTILING / IMPL_OP_INFERSHAPE register by op type; the OpDef above sets neither."""
    op = asc.load_op_project({**PROJECT, "op_kernel/sin.cpp": KERNEL.replace("constexpr int SHARED_KEY = 7;", "")})
    assert op.meta["has_tiling"] and op.meta["has_infer_shape"]  # from the registry: the OpDef sets neither
    x = torch.randn(64)
    plan = op.plan(x, None, torch.tensor([4, 2], dtype=torch.int64), scale=2.0)
    assert plan["block_dim"] == 2 and plan["tiling_key"] == 7
