"""The Matmul high-level API (lib/matmul_intf.h) with its host tiling (MultiCoreMatmulTiling into a
TCubeTiling field of the tiling data), in operator projects, compared with PyTorch."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

TILING_H = r'''
#pragma once
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulCustomTilingData)
TILING_DATA_FIELD_DEF(float, alpha);
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cube);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(MatmulCustom, MatmulCustomTilingData)
}
'''

# Host side: a [M, K] half, b [K, N] half (or [N, K] with transpose_b), bias [N] float -> c [M, N]
# float. The C matrix is split over `aiv` vector cores; a mixed kernel launches aiv / 2 AI Cores.
HOST = r'''
#include "matmul_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/tiling_api.h"
using namespace matmul_tiling;

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& a = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& b = context->GetInputShape(1)->GetStorageShape();
    bool transB = *context->GetAttrs()->GetAttrPointer<bool>(1);
    int32_t m = a.GetDim(0), k = a.GetDim(1), n = transB ? b.GetDim(0) : b.GetDim(1);
    int32_t aiv = *context->GetAttrs()->GetAttrPointer<int64_t>(2);
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    MultiCoreMatmulTiling mm(platform);
    mm.SetDim(aiv);
    mm.SetAType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    mm.SetBType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16, transB);
    mm.SetCType(TPosition::VECIN, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    mm.SetBiasType(TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    mm.SetShape(m, n, k);
    mm.SetOrgShape(m, n, k);
    mm.SetFixSplit(64, 64, -1);
    mm.SetBias(true);
    mm.SetBufferSpace(-1, -1, -1);
    MatmulCustomTilingData tiling;
    if (mm.GetTiling(tiling.cube) == -1) return ge::GRAPH_FAILED;
    tiling.set_alpha(*context->GetAttrs()->GetAttrPointer<float>(0));
    context->SetBlockDim((tiling.cube.usedCoreNum + 1) / 2);
    context->SetTilingKey(transB ? 2 : 1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    const gert::Shape* a = context->GetInputShape(0);
    const gert::Shape* b = context->GetInputShape(1);
    bool transB = *context->GetAttrs()->GetAttrPointer<bool>(1);
    gert::Shape* c = context->GetOutputShape(0);
    c->SetDimNum(2);
    c->SetDim(0, a->GetDim(0));
    c->SetDim(1, transB ? b->GetDim(0) : b->GetDim(1));
    return GRAPH_SUCCESS;
}
static graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, ge::DT_FLOAT);
    return GRAPH_SUCCESS;
}
}

namespace ops {
class MatmulCustom : public OpDef {
public:
    explicit MatmulCustom(const char* name) : OpDef(name)
    {
        this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("c").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("alpha").AttrType(OPTIONAL).Float(0.1f);
        this->Attr("transpose_b").AttrType(OPTIONAL).Bool(false);
        this->Attr("aiv").AttrType(OPTIONAL).Int(4);
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MatmulCustom);
}
'''

# Kernel side. Key 1: Iterate + GetTensorC into UB, LeakyRelu on the vector unit, copy out by
# block (M-major iteration order). Key 2: IterateAll straight to GM with transposed B, the edge
# cores' shapes set by SetTail; then LeakyRelu over this core's rows of C.
KERNEL = r'''
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace matmul;

using AType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using BType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CType = MatmulType<TPosition::VECIN, CubeFormat::ND, float>;
using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

class MatmulLeaky {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, const TCubeTiling& t, float alpha,
                                bool transB, TPipe* pipe)
    {
        tiling = t;
        this->alpha = alpha;
        uint32_t mBlocks = (t.M + t.singleCoreM - 1) / t.singleCoreM;
        uint32_t mIdx = GetBlockIdx() % mBlocks, nIdx = GetBlockIdx() / mBlocks;
        row0 = mIdx * t.singleCoreM;
        col0 = nIdx * t.singleCoreN;
        tailM = t.M - row0 < (uint32_t)t.singleCoreM ? t.M - row0 : t.singleCoreM;
        tailN = t.N - col0 < (uint32_t)t.singleCoreN ? t.N - col0 : t.singleCoreN;
        aGm.SetGlobalBuffer((__gm__ half*)a + row0 * t.Ka, tailM * t.Ka);
        bGm.SetGlobalBuffer((__gm__ half*)b + (transB ? col0 * t.Kb : col0), t.Kb * t.N);
        biasGm.SetGlobalBuffer((__gm__ float*)bias + col0, tailN);
        cGm.SetGlobalBuffer((__gm__ float*)c + row0 * t.N + col0, t.M * t.N - row0 * t.N - col0);
        pipe->InitBuffer(outQue, 1, t.baseM * t.baseN * sizeof(float));
    }
    __aicore__ inline void ProcessByBlock()
    {
        mm.SetTensorA(aGm);
        mm.SetTensorB(bGm);
        mm.SetBias(biasGm);
        uint32_t roundM = tiling.singleCoreM / tiling.baseM;
        uint32_t count = 0;
        while (mm.template Iterate<true>()) {
            LocalTensor<float> out = outQue.AllocTensor<float>();
            mm.template GetTensorC<true>(out, false, true);
            LeakyRelu(out, out, alpha, tiling.baseM * tiling.baseN);
            outQue.EnQue(out);
            out = outQue.DeQue<float>();
            uint32_t offset = (count % roundM) * tiling.baseM * tiling.N + (count / roundM) * tiling.baseN;
            DataCopyParams p{(uint16_t)tiling.baseM, (uint16_t)(tiling.baseN * sizeof(float) / DEFAULT_C0_SIZE), 0,
                             (uint16_t)((tiling.N - tiling.baseN) * sizeof(float) / DEFAULT_C0_SIZE)};
            DataCopy(cGm[offset], out, p);
            outQue.FreeTensor(out);
            ++count;
        }
        mm.End();
    }
    __aicore__ inline void ProcessAll()
    {
        mm.SetTail(tailM, tailN);
        mm.SetTensorA(aGm);
        mm.SetTensorB(bGm, true);
        mm.SetBias(biasGm);
        mm.IterateAll(cGm);
        mm.End();
        LocalTensor<float> row = outQue.AllocTensor<float>();   // LeakyRelu on this core's rows, in place
        uint32_t padded = (tailN + 7) / 8 * 8;
        for (uint32_t r = 0; r < tailM; ++r) {
            DataCopyExtParams in{1, (uint32_t)(tailN * sizeof(float)), 0, 0, 0};
            DataCopyPad(row, cGm[r * tiling.N], in, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
            PipeBarrier<PIPE_ALL>();
            LeakyRelu(row, row, alpha, padded);
            PipeBarrier<PIPE_ALL>();
            DataCopyPad(cGm[r * tiling.N], row, in);
            PipeBarrier<PIPE_ALL>();
        }
        outQue.FreeTensor(row);
    }

    Matmul<AType, BType, CType, BiasType> mm;
    TCubeTiling tiling;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> biasGm, cGm;
    TQue<QuePosition::VECOUT, 1> outQue;
    uint32_t row0, col0, tailM, tailN;
    float alpha;
};

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                    GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    MatmulLeaky op;
    TPipe pipe;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.mm, &tilingData.cube);
    if (GetBlockIdx() >= (uint32_t)tilingData.cube.usedCoreNum) return;
    op.Init(a, b, bias, c, tilingData.cube, tilingData.alpha, TILING_KEY_IS(2), &pipe);
    if (TILING_KEY_IS(1)) op.ProcessByBlock();
    else op.ProcessAll();
}
'''


@pytest.fixture(scope="module")
def op():
    return asc.load_op_project({"op_host/matmul_custom_tiling.h": TILING_H, "op_host/matmul_custom.cpp": HOST,
                                "op_kernel/matmul_custom.cpp": KERNEL})


def _want(a, b, bias, alpha, trans_b):
    bm = b.float().t() if trans_b else b.float()
    return torch.nn.functional.leaky_relu(a.float() @ bm + bias, alpha)


def test_iterate_get_tensor_c_with_vector_epilogue(op) -> None:
    m, k, n = 256, 96, 192
    a = torch.randn(m, k).half()
    b = torch.randn(k, n).half()
    bias = torch.randn(n)
    c = op(a, b, bias, alpha=0.1, transpose_b=False, aiv=4)
    torch.testing.assert_close(c, _want(a, b, bias, 0.1, False), rtol=1e-4, atol=1e-3)
    assert op.last_tiling["block_dim"] == 2
    run = op.last_run
    assert run.num_blocks == 2 and run.blocks_run == 6 and not run.faults   # 2 AI Cores: 2 AIC + 4 AIV
    assert run.per_pipe_busy["M"] > 0 and run.per_pipe_busy["FIX"] > 0


@pytest.mark.parametrize("m,k,n,aiv", [(200, 72, 136, 8), (64, 32, 48, 1)])
def test_iterate_all_transposed_b_with_tails(op, m, k, n, aiv) -> None:
    a = torch.randn(m, k).half()
    b = torch.randn(n, k).half()
    bias = torch.randn(n)
    c = op(a, b, bias, alpha=0.2, transpose_b=True, aiv=aiv)
    torch.testing.assert_close(c, _want(a, b, bias, 0.2, True), rtol=1e-4, atol=1e-3)
    assert not op.last_run.faults


def test_host_tiling_splits_c_over_the_cores() -> None:
    """The tiling's single-core shapes cover C; more cores make the simulated kernel faster."""
    op = asc.load_op_project({"op_host/matmul_custom_tiling.h": TILING_H, "op_host/matmul_custom.cpp": HOST,
                              "op_kernel/matmul_custom.cpp": KERNEL})
    m, k, n = 512, 128, 256
    a, b, bias = torch.randn(m, k).half(), torch.randn(n, k).half(), torch.randn(n)
    times = {}
    for aiv in (2, 8):
        c = op(a, b, bias, alpha=0.1, transpose_b=True, aiv=aiv)
        torch.testing.assert_close(c, _want(a, b, bias, 0.1, True), rtol=1e-4, atol=1e-3)
        times[aiv] = op.last_run.latency_s
    assert times[8] < times[2] / 2


def test_gm_to_l1_staging_pays_per_row_copies_and_unaligned_rows(op) -> None:
    """ND2NZ's source row stride is 16-bit (<= 65535 elements): CANN's Matmul copies operands whose rows
    lie further apart one row per DataCopy (K = 65536 pays an issue per row that K = 65280 does not);
    rows that do not start on 512 B of GM move at mte2_unaligned_efficiency of the rate (K = 65296)."""
    per_elem = {}
    for k in (65280, 65296, 65536):
        a, b, bias = torch.randn(16, k).half(), torch.randn(16, k).half(), torch.randn(16)
        c = op(a, b, bias, alpha=0.1, transpose_b=True, aiv=1)
        torch.testing.assert_close(c, _want(a, b, bias, 0.1, True), rtol=1e-3, atol=0.1)
        per_elem[k] = op.last_run.per_pipe_busy["MTE2"] / k
    assert per_elem[65536] > 1.1 * per_elem[65280]
    assert per_elem[65296] > 1.2 * per_elem[65280]


def test_set_org_shape_orgkc_is_the_row_width_of_c() -> None:
    """SetOrgShape(orgM, orgN, orgKa, orgKb, orgKc): orgKc is C's N in GM where it differs from B's (0: B's N).
    The kernel computes the left half of C's columns (B's N = n / 2) into rows n elements apart."""
    half_c = KERNEL.replace(
        "mm.SetTail(tailM, tailN);",
        "mm.SetOrgShape(tiling.M, tailN / 2, tiling.Ka, tiling.Kb, tiling.N);\n        mm.SetTail(tailM, tailN / 2);",
    )
    op = asc.load_op_project(
        {
            "op_host/matmul_custom_tiling.h": TILING_H,
            "op_host/matmul_custom.cpp": HOST,
            "op_kernel/matmul_custom.cpp": half_c,
        }
    )
    m, k, n = 64, 32, 96
    a, b, bias = torch.randn(m, k).half(), torch.randn(n, k).half(), torch.randn(n)
    c = op(a, b, bias, alpha=0.2, transpose_b=True, aiv=1)
    want = _want(a, b[: n // 2], bias[: n // 2], 0.2, True)
    torch.testing.assert_close(c[:, : n // 2], want, rtol=1e-4, atol=1e-3)


def test_regist_matmul_obj_takes_the_tiling_as_any_pointer() -> None:
    """asc-devkit's registration takes the argument after a Matmul object as its tiling by its size,
    so a kernel may pass `(void*)&tiling` (cann-ops' rfft1_d does): the same result as a TCubeTiling*."""
    void_tiling = KERNEL.replace(
        "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.mm, &tilingData.cube);",
        "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.mm, (void*)&tilingData.cube);",
    )
    assert void_tiling != KERNEL
    op = asc.load_op_project(
        {
            "op_host/matmul_custom_tiling.h": TILING_H,
            "op_host/matmul_custom.cpp": HOST,
            "op_kernel/matmul_custom.cpp": void_tiling,
        }
    )
    a, b, bias = torch.randn(128, 64).half(), torch.randn(64, 96).half(), torch.randn(96)
    c = op(a, b, bias, alpha=0.1, transpose_b=False, aiv=2)
    torch.testing.assert_close(c, _want(a, b, bias, 0.1, False), rtol=1e-4, atol=1e-3)
