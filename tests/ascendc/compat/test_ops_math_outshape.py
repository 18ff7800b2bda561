"""An op whose output shape depends on the computation (OpDef OutputShapeDependOnCompute, as CANN's
masked_select is): its l0 op passes a shape tensor with OP_OUTSHAPE({tensor, 0}), and the kernel
takes it as one more GM_ADDR after its outputs (x, y, shape_out, workspace, tiling) and writes the
real shape there. A project of our own: the positive elements of x, packed to the front of y."""

from __future__ import annotations

import numpy as np

from kernel_gym.ascendc.aclnn import run_aclnn_example

TILING_H = r"""
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(KeepPositiveTiling)
TILING_DATA_FIELD_DEF(uint32_t, total);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(KeepPositive, KeepPositiveTiling)
}
"""

HOST = r"""
#include "keep_positive_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
    KeepPositiveTiling t;
    t.set_total(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    context->SetBlockDim(1);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class KeepPositive : public OpDef {
public:
    explicit KeepPositive(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND})
            .OutputShapeDependOnCompute();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(KeepPositive);
}
"""

L0 = r"""
#include "opdev/make_op_executor.h"
#include "opdev/op_def.h"
#include "opdev/op_dfx.h"
#include "opdev/op_executor.h"
#include "opdev/op_log.h"
using namespace op;
namespace l0op {
OP_TYPE_REGISTER(KeepPositive);
const aclTensor* KeepPositive(const aclTensor* x, aclTensor* y, aclTensor* shape, aclOpExecutor* executor) {
    L0_DFX(KeepPositive, x, y);
    auto ret = ADD_TO_LAUNCHER_LIST_AICORE(KeepPositive, OP_INPUT(x), OP_OUTPUT(y), OP_OUTSHAPE({shape, 0}));
    OP_CHECK(ret == ACLNN_SUCCESS, OP_LOGE(ACLNN_ERR_INNER_NULLPTR, "launch failed"), return nullptr);
    return y;
}
}
"""

ACLNN = r"""
#include "aclnn/aclnn_base.h"
#include "opdev/op_executor.h"
#include "opdev/make_op_executor.h"
#include "opdev/op_log.h"
using namespace op;
namespace l0op {
const aclTensor* KeepPositive(const aclTensor* x, aclTensor* y, aclTensor* shape, aclOpExecutor* executor);
}
extern "C" aclnnStatus aclnnKeepPositiveGetWorkspaceSize(const aclTensor* x, aclTensor* y, aclTensor* shape,
                                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
    auto uniqueExecutor = CREATE_EXECUTOR();
    auto r = l0op::KeepPositive(x, y, shape, uniqueExecutor.get());
    CHECK_RET(r != nullptr, ACLNN_ERR_INNER_NULLPTR);
    *workspaceSize = uniqueExecutor->GetWorkspaceSize();
    uniqueExecutor.ReleaseTo(executor);
    return ACLNN_SUCCESS;
}
extern "C" aclnnStatus aclnnKeepPositive(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                         aclrtStream stream) {
    return CommonOpExecutorRun(workspace, workspaceSize, executor, stream);
}
"""

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void keep_positive(GM_ADDR x, GM_ADDR y, GM_ADDR shape_out, GM_ADDR workspace,
                                                   GM_ADDR tiling) {
    GET_TILING_DATA(td, tiling);
    GlobalTensor<float> xGm, yGm;
    GlobalTensor<uint64_t> sGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, td.total);
    yGm.SetGlobalBuffer((__gm__ float*)y, td.total);
    sGm.SetGlobalBuffer((__gm__ uint64_t*)shape_out, 2);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < td.total; ++i) {
        float v = xGm.GetValue(i);
        if (v > 0.0f) yGm.SetValue(kept++, v);
    }
    sGm.SetValue(0, 1);  // the rank, then the dims
    sGm.SetValue(1, kept);
}
"""

MAIN = r"""
#include <cstdint>
#include <cstdio>
#include <vector>
#include "acl/acl.h"
extern "C" aclnnStatus aclnnKeepPositiveGetWorkspaceSize(const aclTensor*, aclTensor*, aclTensor*, uint64_t*,
                                                         aclOpExecutor**);
extern "C" aclnnStatus aclnnKeepPositive(void*, uint64_t, aclOpExecutor*, aclrtStream);
int main() {
    std::vector<float> x = {1.5f, -2.0f, 3.0f, 0.0f, -1.0f, 4.5f, 2.0f, -3.0f}, y(8, 0.0f);
    std::vector<uint64_t> shape(2, 0);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    void *dx, *dy, *ds;
    aclrtMalloc(&dx, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&dy, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&ds, 16, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dx, 32, x.data(), 32, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(dy, 32, y.data(), 32, ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t n = 8, two = 2;
    aclTensor* tx = aclCreateTensor(&n, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &n, 1, dx);
    aclTensor* ty = aclCreateTensor(&n, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, &n, 1, dy);
    aclTensor* ts = aclCreateTensor(&two, 1, ACL_UINT64, nullptr, 0, ACL_FORMAT_ND, &two, 1, ds);
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    if (aclnnKeepPositiveGetWorkspaceSize(tx, ty, ts, &ws, &ex) != 0) return 2;
    if (aclnnKeepPositive(nullptr, ws, ex, stream) != 0 || aclrtSynchronizeStream(stream) != 0) return 3;
    aclrtMemcpy(y.data(), 32, dy, 32, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(shape.data(), 16, ds, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    printf("shape %lu %lu\n", (unsigned long)shape[0], (unsigned long)shape[1]);
    for (uint64_t i = 0; i < shape[1]; ++i) printf("y %g\n", y[i]);
    return 0;
}
"""

PROJECT = {
    "op_host/keep_positive_tiling.h": TILING_H,
    "op_host/keep_positive.cpp": HOST,
    "op_host/keep_positive_l0.cpp": L0,
    "op_host/aclnn_keep_positive.cpp": ACLNN,
    "op_kernel/keep_positive.cpp": KERNEL,
}


def test_outshape_tensor_is_the_kernel_parameter_after_the_outputs():
    run = run_aclnn_example(PROJECT, {"main.cpp": MAIN}, {})
    assert run.ok, (run.error, run.stdout, run.stderr)
    assert "shape 1 4" in run.stdout
    got = [float(line.split()[1]) for line in run.stdout.splitlines() if line.startswith("y ")]
    x = np.array([1.5, -2.0, 3.0, 0.0, -1.0, 4.5, 2.0, -3.0])
    assert got == x[x > 0].tolist()
