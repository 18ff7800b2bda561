"""A tiling header that names TCubeTiling while including only register/tilingdata_base.h (its host
sources include tiling/tiling_api.h first, as CANN's image operators do), and a host tiling that sizes
MatmulApiTiling with matmul_tiling::PlatformInfo (asc-devkit's matmul_tiling_base.h) instead of a
PlatformAscendC. The kernel build sees TCubeTiling as CANN's kernel build does (kernel_tiling.h)."""

from __future__ import annotations

import torch

import kernel_gym.ascendc as asc

TILING_H = r"""
#pragma once
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(CubeEchoTilingData)
TILING_DATA_FIELD_DEF(uint32_t, count);
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, mm);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(CubeEcho, CubeEchoTilingData)
}
"""

HOST = r"""
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "cube_echo_tiling.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto ascendc = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    matmul_tiling::PlatformInfo info;
    info.socVersion = ascendc.GetSocVersion();
    uint64_t ub = 0, l1 = 0, l0c = 0;
    ascendc.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    ascendc.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
    ascendc.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, l0c);
    info.ubSize = ub, info.l1Size = l1 / 2, info.l0CSize = l0c;  // half of L1 for this matmul
    matmul_tiling::MatmulApiTiling mm(info);
    mm.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    mm.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    mm.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    mm.SetShape(48, 80, 64);
    mm.SetOrgShape(48, 80, 64);
    mm.SetBias(false);
    CubeEchoTilingData tiling;
    if (mm.GetTiling(tiling.mm) == -1) return ge::GRAPH_FAILED;
    tiling.set_count(4);
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}

namespace ops {
class CubeEcho : public OpDef {
public:
    explicit CubeEcho(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(CubeEcho);
}
"""

# The kernel writes back what the host's tiling carried: M, N, Ka and the L1 space PlatformInfo gave.
KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void cube_echo(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GlobalTensor<int32_t> yGm;
    yGm.SetGlobalBuffer((__gm__ int32_t*)y, t.count);
    yGm.SetValue(0, t.mm.M);
    yGm.SetValue(1, t.mm.N);
    yGm.SetValue(2, t.mm.Ka);
    yGm.SetValue(3, t.mm.shareL1Size);
}
"""


def test_a_tiling_header_naming_tcubetiling_builds_and_platforminfo_sizes_the_tiling():
    op = asc.load_op_project(
        {
            "op_host/cube_echo_tiling.h": TILING_H,
            "op_host/cube_echo.cpp": HOST,
            "op_kernel/cube_echo.cpp": KERNEL,
        }
    )
    y = op(torch.zeros(4, dtype=torch.int32))
    # half of the L1 PlatformAscendC reports: 512 KB less the 256 bytes CANN's implementation keeps
    # back on an Atlas A2 part
    assert y.tolist() == [48, 80, 64, (512 * 1024 - 256) // 2]
