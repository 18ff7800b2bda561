"""Cube-side gaps found by running public cube kernels unmodified: the asc-devkit (.asc) kernel
qualifiers (`__cube__`, `__mix__(1, 2)`), names newer headers use (AscendC::tiling::TCubeTiling,
CFG_NORM in the global namespace, TOTAL_VEC_LOCAL_SIZE), `__NPU_ARCH__`, the TIK2 namespace, and
the host tiling's choice between equal splits. Each kernel here is our own, compared with PyTorch."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

# A pure-cube Matmul kernel in the asc-devkit style: the tiling passed by value, each AIC takes
# singleCoreM rows of A and C and all of B (it relies on the tiling splitting M, not N).
CUBE_ROWS_SPLIT = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

__global__ __cube__ void mm_rows(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c,
                                 AscendC::tiling::TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * tiling.N);
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>, CFG_NORM> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    uint32_t rows = AscendC::GetBlockIdx() * tiling.singleCoreM;
    mm.SetTensorA(aGm[rows * tiling.Ka]);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm[rows * tiling.N]);
    mm.End();
}

extern "C" int64_t run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t m, int32_t n, int32_t k) {
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MultiCoreMatmulTiling api(*platform);
    api.SetDim(2);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(m, n, k);
    api.SetOrgShape(m, n, k);
    api.SetBufferSpace(-1, -1, -1);
    AscendC::tiling::TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    mm_rows<<<tiling.usedCoreNum, nullptr, nullptr>>>(a, b, c, tiling);
    return int64_t(tiling.singleCoreM) * 100000 + tiling.singleCoreN;
}
"""


def test_cube_qualified_matmul_kernel_splits_rows_on_aic_cores() -> None:
    torch.manual_seed(1)
    m, n, k = 256, 256, 64
    a = torch.randn(m, k).half()
    b = torch.randn(k, n).half()
    c = torch.zeros(m, n)
    mod = asc.load(CUBE_ROWS_SPLIT)
    split = mod.run(a, b, c, m, n, k)
    # two equal splits (rows or columns over 2 cores): CANN's enumeration keeps the split over M
    assert split == 128 * 100000 + 256
    assert mod.last_run.num_blocks == 2
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


# A mixed kernel declared with `__mix__(1, 2)`: one AI Core = one AIC and two AIVs. Each AIV
# stamps its block and sub-block index; without the qualifier only one AIV would start.
MIX_QUALIFIED = r"""
#include "kernel_operator.h"

__global__ __mix__(1, 2) void stamp(__gm__ uint8_t* out)
{
    AscendC::GlobalTensor<int32_t> o;
    o.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), 16);
    if ASCEND_IS_AIV {
        int32_t idx = AscendC::GetBlockIdx();
        o.SetValue(idx * 8, 100 + idx);
        o.SetValue(idx * 8 + 1, AscendC::GetSubBlockIdx());
        AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                          AscendC::DcciDst::CACHELINE_OUT>(o[idx * 8]);
    }
}

extern "C" void run(uint8_t* out) { stamp<<<1, nullptr, nullptr>>>(out); }
"""


def test_mix_qualifier_starts_an_aic_and_two_aivs() -> None:
    out = torch.zeros(16, dtype=torch.int32)
    mod = asc.load(MIX_QUALIFIED)
    mod.run(out)
    assert out[[0, 1, 8, 9]].tolist() == [100, 0, 101, 1]


# Constants and spellings of newer headers and of the TIK2 era, in one vector kernel: the UB size
# named TOTAL_VEC_LOCAL_SIZE sizes a buffer, the A2 branch of `__NPU_ARCH__` is the one compiled,
# and `using namespace tik2` reaches the Ascend C API.
CONSTANTS = r"""
#include "kernel_operator.h"
using namespace tik2;

extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> big;
    pipe.InitBuffer(big, AscendC::TOTAL_VEC_LOCAL_SIZE);
    LocalTensor<float> t = big.Get<float>();
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 64);
    yg.SetGlobalBuffer((__gm__ float*)y, 64);
    DataCopy(t, xg, 64);
    PipeBarrier<PIPE_ALL>();
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 2201)
    Muls(t, t, 3.0f, 64);
#else
    Muls(t, t, -1.0f, 64);
#endif
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, t, 64);
}

extern "C" void run(uint8_t* x, uint8_t* y) { scale<<<1, nullptr, nullptr>>>(x, y); }
"""


def test_a2_constants_npu_arch_and_tik2_namespace() -> None:
    x = torch.randn(64)
    y = torch.zeros(64)
    mod = asc.load(CONSTANTS)
    mod.run(x, y)
    torch.testing.assert_close(y, 3 * x)


# C in the ND_ALIGN format: every row of C in GM starts 32-byte aligned (N = 20 floats -> 24).
ND_ALIGN_OUT = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

__global__ __cube__ void mm_align(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * 24);
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND_ALIGN, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm);
    mm.End();
}

extern "C" void run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t m, int32_t n, int32_t k) {
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MatmulApiTiling api(*platform);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND_ALIGN, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(m, n, k);
    api.SetOrgShape(m, n, k);
    api.SetBufferSpace(-1, -1, -1);
    TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return;
    mm_align<<<1, nullptr, nullptr>>>(a, b, c, tiling);
}
"""


def test_nd_align_output_rows_are_padded_to_32_bytes() -> None:
    torch.manual_seed(2)
    m, n, k = 16, 20, 32
    a = torch.randn(m, k).half()
    b = torch.randn(k, n).half()
    c = torch.full((m, 24), -7.0)
    asc.load(ND_ALIGN_OUT).run(a, b, c, m, n, k)
    torch.testing.assert_close(c[:, :n], a.float() @ b.float(), rtol=1e-3, atol=1e-3)
    assert bool((c[:, n:] == -7.0).all())  # the padding columns are not C's


# Asynchronous Iterate in a mixed kernel: one Iterate<false> has the AIC compute all of this AIV's C
# into the workspace, and each GetTensorC<false> copies the next baseM x baseN block (M fastest) to
# UB; the AIV writes it to its place in C. whileLoop 1 selects the `while (Iterate<false>())` form,
# 2 IterateAll<false> (asynchronous for the caller, but no workspace pass) straight into C.
ASYNC_ITERATE = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

__global__ __mix__(1, 2) void mm_async(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c,
                                       __gm__ uint8_t* ws, TCubeTiling tiling, int32_t whileLoop)
{
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm, wsGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * tiling.N);
    wsGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws), tiling.M * tiling.N);
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::VECIN, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, tiling.baseM * tiling.baseN * sizeof(float));
    // this core's part of C: the tiling may split M or N over the two AIVs
    int32_t mCores = tiling.M / tiling.singleCoreM, bi = AscendC::GetBlockIdx();
    int32_t row0 = (bi % mCores) * tiling.singleCoreM, col0 = (bi / mCores) * tiling.singleCoreN;
    mm.SetWorkspace(wsGm[bi * tiling.singleCoreM * tiling.singleCoreN]);
    mm.SetTensorA(aGm[row0 * tiling.Ka]);
    mm.SetTensorB(bGm[col0]);
    int32_t mBlocks = tiling.singleCoreM / tiling.baseM;
    int32_t blocks = mBlocks * (tiling.singleCoreN / tiling.baseN);
    AscendC::DataCopyParams out{uint16_t(tiling.baseM), uint16_t(tiling.baseN * sizeof(float) / 32), 0,
                                uint16_t((tiling.N - tiling.baseN) * sizeof(float) / 32)};
    if (whileLoop == 2) {  // IterateAll<false>: the AIV goes on at once and waits with WaitIterateAll
        mm.template IterateAll<false>(cGm[row0 * tiling.N + col0], 0, false, true);
        mm.WaitIterateAll();
        mm.End();
        return;
    }
    int32_t i = 0;
    if (!whileLoop) mm.template Iterate<false>();
    while (whileLoop ? mm.template Iterate<false>() : i < blocks) {
        auto blk = inQ.AllocTensor<float>();
        mm.template GetTensorC<false>(blk);
        inQ.EnQue(blk);
        blk = inQ.DeQue<float>();
        int32_t r = row0 + (i % mBlocks) * tiling.baseM, col = col0 + (i / mBlocks) * tiling.baseN;
        AscendC::DataCopy(cGm[r * tiling.N + col], blk, out);
        inQ.FreeTensor(blk);
        ++i;
    }
    mm.End();
}

extern "C" int32_t run(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* ws, int32_t m, int32_t n, int32_t k,
                       int32_t whileLoop) {
    matmul_tiling::MultiCoreMatmulTiling api;
    api.SetDim(2);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::VECIN, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(m, n, k);
    api.SetOrgShape(m, n, k);
    api.SetFixSplit(32, 32, -1);
    TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1 || tiling.usedCoreNum != 2) return -1;
    mm_async<<<1, nullptr, nullptr>>>(a, b, c, ws, tiling, whileLoop);
    return 0;
}
"""


def test_async_iterate_fetches_each_block_once() -> None:
    torch.manual_seed(2)
    m, n, k = 128, 64, 32
    a = torch.randint(-4, 5, (m, k)).half()
    b = torch.randint(-4, 5, (k, n)).half()
    mod = asc.load(ASYNC_ITERATE)
    for while_loop in (0, 1, 2):
        c = torch.zeros(m, n)
        ws = torch.zeros(m, n)
        assert mod.run(a, b, c, ws, m, n, k, while_loop) == 0
        torch.testing.assert_close(c, a.float() @ b.float(), rtol=0, atol=0)


# Batch Matmul: A and B in BSNGD layout (B, S, N, G, D), C in BNGS1S2, one batch index per AIV; B has
# fewer G groups than A and is broadcast over them (grouped heads). The host tiling carries the axes
# (SetALayout/SetBLayout/SetCLayout/SetBatchNum) and IterateBatch computes N * G products per call.
BATCH_BSNGD = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"
using AT = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, false, LayoutMode::BSNGD>;
using BT = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half, true, LayoutMode::BSNGD>;
using CT = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float, false, LayoutMode::BNGS1S2>;
__global__ __mix__(1, 2) void bmm(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::Matmul<AT, BT, CT> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    int32_t bi = AscendC::GetBlockIdx();
    int32_t heads = tiling.ALayoutInfoN * tiling.ALayoutInfoG;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a) + bi * tiling.ALayoutInfoS * heads * tiling.ALayoutInfoD);
    int32_t bHeads = tiling.BLayoutInfoN * tiling.BLayoutInfoG;
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b) + bi * tiling.BLayoutInfoS * bHeads * tiling.BLayoutInfoD);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c) + bi * heads * tiling.CLayoutInfoS1 * tiling.CLayoutInfoS2);
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm, true);
    mm.IterateBatch(cGm, heads, tiling.BLayoutInfoN * tiling.BLayoutInfoG, false);
    mm.End();
}
extern "C" int32_t run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t batch, int32_t s1, int32_t s2, int32_t n,
                       int32_t ga, int32_t gb, int32_t d) {
    matmul_tiling::MultiCoreMatmulTiling api;
    api.SetDim(1);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16, true);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(s1, s2, d);
    api.SetOrgShape(s1, s2, d);
    api.SetFixSplit(16, 16, -1);
    api.SetALayout(batch, s1, n, ga, d);
    api.SetBLayout(batch, s2, n, gb, d);
    api.SetCLayout(batch, s1, n, ga, s2);
    api.SetBatchNum(n * ga);
    TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    bmm<<<batch / 2, nullptr, nullptr>>>(a, b, c, tiling);
    return 0;
}
"""


def test_iterate_batch_bsngd_layouts_with_broadcast_b() -> None:
    torch.manual_seed(3)
    batch, s1, s2, heads, ga, gb, d = 2, 32, 48, 2, 2, 1, 32
    a = torch.randint(-4, 5, (batch, s1, heads, ga, d)).half()
    b = torch.randint(-4, 5, (batch, s2, heads, gb, d)).half()
    c = torch.zeros(batch, heads, ga, s1, s2)
    mod = asc.load(BATCH_BSNGD)
    assert mod.run(a, b, c, batch, s1, s2, heads, ga, gb, d) == 0
    # C[b, n, g] = A[b, :, n, g, :] @ B[b, :, n, 0, :]^T
    ref = a.float().permute(0, 2, 3, 1, 4) @ b.float().permute(0, 2, 3, 4, 1)
    torch.testing.assert_close(c, ref, rtol=0, atol=0)


# A sample whose main ends without `return`: legal for main, undefined behaviour for the function the
# loader renames it to unless the loader supplies the return.
MAIN_WITHOUT_RETURN = r"""
#include <string>
#include "acl/acl.h"
#include "kernel_operator.h"

__global__ __aicore__ void fill(__gm__ uint8_t* out)
{
    reinterpret_cast<__gm__ int32_t*>(out)[0] = 42;
}

int32_t main(int32_t argc, char* argv[])
{
    aclInit(nullptr);
    uint8_t* dev = nullptr;
    aclrtMalloc((void**)&dev, 32, ACL_MEM_MALLOC_HUGE_FIRST);
    fill<<<1, nullptr, nullptr>>>(dev);
    int32_t host = 0;
    aclrtMemcpy(&host, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    std::string path = "./output/out.bin";
    FILE* f = fopen(path.c_str(), "wb");
    fwrite(&host, 4, 1, f);
    fclose(f);
    aclrtFree(dev);
    aclFinalize();
}
"""


def test_sample_main_without_return_exits_zero() -> None:
    run = asc.run_sample({"fill.asc": MAIN_WITHOUT_RETURN})
    assert run.error is None, run.error
    assert run.files["output/out.bin"] == (42).to_bytes(4, "little")


# Matrix A from UB (MatmulType position VECOUT, ND): the AIV loads its rows with DataCopyPad, which pads
# each row to 32 bytes, so a K of 31 halves leaves rows 32 elements apart; the Matmul reads them so.
A_FROM_UB = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

__global__ __mix__(1, 2) void mm_ub_a(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::VECOUT, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    if (AscendC::GetBlockIdx() != 0) return;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * tiling.N);
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> q;
    int32_t kPad = (tiling.Ka + 15) / 16 * 16;
    pipe.InitBuffer(q, 1, tiling.M * kPad * sizeof(half));
    auto aLocal = q.AllocTensor<half>();
    AscendC::DataCopyPad(aLocal, aGm, {uint16_t(tiling.M), uint32_t(tiling.Ka * sizeof(half)), 0, 0, 0},
                         {false, 0, 0, 0});
    q.EnQue(aLocal);
    aLocal = q.DeQue<half>();
    mm.SetTensorA(aLocal);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm);
    mm.End();
    q.FreeTensor(aLocal);
}

extern "C" int32_t run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t m, int32_t n, int32_t k) {
    matmul_tiling::MultiCoreMatmulTiling api;
    api.SetDim(1);
    api.SetAType(matmul_tiling::TPosition::VECOUT, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(m, n, k);
    api.SetOrgShape(m, n, k);
    TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    mm_ub_a<<<1, nullptr, nullptr>>>(a, b, c, tiling);
    return 0;
}
"""


def test_matmul_reads_ub_matrix_a_with_rows_padded_to_32_bytes() -> None:
    torch.manual_seed(4)
    m, n, k = 16, 32, 31
    a = torch.randint(-4, 5, (m, k)).half()
    b = torch.randint(-4, 5, (k, n)).half()
    c = torch.zeros(m, n)
    assert asc.load(A_FROM_UB).run(a, b, c, m, n, k) == 0
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=0, atol=0)


# Configurations spelled the newer ways: GetMMConfig<MatmulConfigMode> with parameter groups, the full
# GetMDLConfig argument list, IterateOrder/ScheduleType unqualified. The results do not depend on them.
MM_CONFIG_FORMS = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

constexpr MatmulShapeParams kShape = {32, 32, 64, 32, 32, 64};
constexpr MatmulConfig kShapeCfg = GetMMConfig<MatmulConfigMode::CONFIG_MDL>(kShape);
constexpr MatmulConfig kReorderCfg = GetMDLConfig(false, false, 0, false, false, false, false, true, true, false,
                                                  false, true);
constexpr MatmulConfig OrderedCfg() {
    MatmulConfig c = CFG_MDL;
    c.iterateOrder = IterateOrder::ORDER_M;
    c.scheduleType = ScheduleType::OUTER_PRODUCT;
    return c;
}
constexpr MatmulConfig kOrderedCfg = OrderedCfg();
static_assert(kShapeCfg.singleCoreK == 64 && kShapeCfg.basicM == 32 && !kShapeCfg.doNorm);
static_assert(!kReorderCfg.doNorm && kOrderedCfg.iterateOrder == IterateOrder::ORDER_M);

template <const auto& CFG>
__aicore__ void run_one(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, const TCubeTiling& tiling) {
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * tiling.N);
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>, CFG> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm);
    mm.End();
}

__global__ __cube__ void mm_cfg(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c, TCubeTiling tiling,
                                int32_t which) {
    if (which == 0) run_one<kShapeCfg>(a, b, c, tiling);
    else if (which == 1) run_one<kReorderCfg>(a, b, c, tiling);
    else run_one<kOrderedCfg>(a, b, c, tiling);
}

extern "C" int32_t run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t which) {
    matmul_tiling::MultiCoreMatmulTiling api;
    api.SetDim(1);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(32, 32, 64);
    api.SetOrgShape(32, 32, 64);
    TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    mm_cfg<<<1, nullptr, nullptr>>>(a, b, c, tiling, which);
    return 0;
}
"""


def test_matmul_config_forms_compile_and_compute_alike() -> None:
    torch.manual_seed(5)
    a = torch.randint(-4, 5, (32, 64)).half()
    b = torch.randint(-4, 5, (64, 32)).half()
    mod = asc.load(MM_CONFIG_FORMS)
    for which in (0, 1, 2):
        c = torch.zeros(32, 32)
        assert mod.run(a, b, c, which) == 0
        torch.testing.assert_close(c, a.float() @ b.float(), rtol=0, atol=0)


# Load3D v2 (image to column) into L0A with a 3 x 3 filter and padding 1, and into L0B with a
# 1 x 1 filter (the documented way to load an NZ matrix), then Mmad and Fixpipe: a convolution.
# The feature map arrives in NC1HWC0 (C1 = 1, C0 = 16); the weights as a 144 x 16 ND matrix.
LOAD3D_CONV = r"""
#include "kernel_operator.h"

constexpr uint32_t H = 4, W = 4, C = 16, N = 16, K = C * 9, M = H * W;

__global__ __cube__ void conv(__gm__ uint8_t* fm, __gm__ uint8_t* w, __gm__ uint8_t* out)
{
    AscendC::GlobalTensor<half> fmGm, wGm;
    AscendC::GlobalTensor<float> outGm;
    fmGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(fm), C * H * W);
    wGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(w), K * N);
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), M * N);
    AscendC::LocalTensor<half> fmL1(AscendC::TPosition::A1, 0, C * H * W);
    AscendC::LocalTensor<half> wL1(AscendC::TPosition::B1, 1024, K * N);
    AscendC::LocalTensor<half> a2(AscendC::TPosition::A2, 0, M * K);
    AscendC::LocalTensor<half> b2(AscendC::TPosition::B2, 0, K * N);
    AscendC::LocalTensor<float> c1(AscendC::TPosition::CO1, 0, M * N);
    AscendC::DataCopy(fmL1, fmGm, C * H * W);
    AscendC::Nd2NzParams nd;
    nd.ndNum = 1; nd.nValue = K; nd.dValue = N; nd.srcNdMatrixStride = 0; nd.srcDValue = N;
    nd.dstNzC0Stride = K; nd.dstNzNStride = 1; nd.dstNzMatrixStride = 0;
    AscendC::DataCopy(wL1, wGm, nd);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::LoadData3DParamsV2<half> pa;
    for (int i = 0; i < 4; ++i) pa.padList[i] = 1;
    pa.l1H = H; pa.l1W = W; pa.channelSize = C; pa.kExtension = K; pa.mExtension = M;
    pa.filterW = 3; pa.filterH = 3;
    AscendC::LoadData(a2, fmL1, pa);
    AscendC::LoadData3DParamsV2<half> pb;
    pb.l1H = 1; pb.l1W = K; pb.channelSize = N; pb.kExtension = N; pb.mExtension = K;
    AscendC::LoadData(b2, wL1, pb);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::MmadParams mp;
    mp.m = M; mp.n = N; mp.k = K;
    AscendC::Mmad(c1, a2, b2, mp);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::FixpipeParamsV220 fp;
    fp.nSize = N; fp.mSize = M; fp.srcStride = M; fp.dstStride = N;
    AscendC::Fixpipe(outGm, c1, fp);
}

extern "C" void run(uint8_t* fm, uint8_t* w, uint8_t* out) { conv<<<1, nullptr, nullptr>>>(fm, w, out); }
"""


def test_load3dv2_im2col_convolution_and_nz_matrix_load() -> None:
    torch.manual_seed(3)
    x = torch.randn(1, 16, 4, 4).half()
    weight = torch.randn(16, 16, 3, 3).half()
    fm = x[0].permute(1, 2, 0).contiguous()  # NC1HWC0 with C1 = 1: H x W x C0
    w = weight.permute(2, 3, 1, 0).reshape(144, 16).contiguous()  # K = (kh, kw, c), N = out channel
    out = torch.zeros(16, 16)
    asc.load(LOAD3D_CONV).run(fm, w, out)
    ref = torch.nn.functional.conv2d(x.float(), weight.float(), padding=1)[0].permute(1, 2, 0).reshape(16, 16)
    torch.testing.assert_close(out, ref, rtol=1e-3, atol=1e-2)


# Every AIV of a mixed kernel runs the same Matmul into the same C (a tiling for one core launched
# on one AI Core, whose two AIVs both compute): the stores carry identical bytes, so the result does
# not depend on their order and it is not a race. Different bytes at the same place still are.
SAME_C_TWICE = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

__global__ __aicore__ void mm_same(GM_ADDR a, GM_ADDR b, GM_ADDR c, AscendC::tiling::TCubeTiling tiling, int32_t skew)
{
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<float> aGm, bGm, cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(b), tiling.Kb * tiling.N * 2);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * tiling.N);
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm[skew * AscendC::GetBlockIdx() * tiling.Kb * tiling.N]);  // skew 1: another B per AIV
    mm.IterateAll(cGm);
    mm.End();
}

extern "C" int64_t run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t m, int32_t n, int32_t k, int32_t skew) {
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MultiCoreMatmulTiling api(*platform);
    api.SetDim(1);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(m, n, k);
    api.SetOrgShape(m, n, k);
    api.SetFixSplit(16, 16, -1);
    api.SetBufferSpace(-1, -1, -1);
    AscendC::tiling::TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    mm_same<<<1, nullptr, nullptr>>>(a, b, c, tiling, skew);
    return 0;
}
"""


def test_blocks_storing_identical_matmul_results_are_not_a_race() -> None:
    torch.manual_seed(4)
    m, n, k = 128, 96, 64  # 48 base blocks of 16 x 16 per AIV: more stores than a short window holds
    a, b = torch.randn(m, k), torch.randn(2, k, n)
    mod = asc.load(SAME_C_TWICE)
    c = torch.zeros(m, n)
    assert mod.run(a, b, c, m, n, k, 0) == 0
    assert mod.last_run.num_blocks == 1
    torch.testing.assert_close(c, a @ b[0], rtol=1e-4, atol=1e-4)
    with pytest.raises(asc.AscendCFault) as err:  # the two AIVs store different products
        mod.run(a, b, torch.zeros(m, n), m, n, k, 1)
    assert err.value.error_class == "gm_race"


# asc-devkit's type utilities (AscendC::IsSameType, PrimT) and a static CO1 tensor that an Mmad
# runs past: int8 Mmad rounds n up to 32 columns while the kernel sized its L0C tile for n = 16
# (the asc-devkit mmad sample does this); the tensor is a view the kernel placed, L0C is 128 KB.
INT8_MMAD_WIDE_N = r"""
#include "kernel_operator.h"

template <class U>
__aicore__ inline uint32_t MmadN(uint32_t n) { return AscendC::IsSameType<U, int8_t>::value ? (n + 31) / 32 * 32 : n; }

__global__ __cube__ void mm8(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c)
{
    using T = AscendC::PrimT<int8_t>;
    AscendC::GlobalTensor<T> aGm, bGm;
    AscendC::GlobalTensor<int32_t> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a), 16 * 32);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b), 32 * 32);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(c), 16 * 16);
    AscendC::LocalTensor<T> a2(AscendC::TPosition::A2, 0, 16 * 32);
    AscendC::LocalTensor<T> b2(AscendC::TPosition::B2, 0, 32 * 32);
    AscendC::LocalTensor<int32_t> c1(AscendC::TPosition::CO1, 0, 16 * 16);  // sized for n = 16
    AscendC::LoadData2DParams la;
    la.repeatTimes = 1;
    AscendC::LoadData(a2, aGm, la);  // one 16 x 32 fractal: A row-major is already Zz
    AscendC::LoadData2DParams lb;
    lb.repeatTimes = 2;
    AscendC::LoadData(b2, bGm, lb);  // two 16 (n) x 32 (k) fractals: B^T row-major is Zn
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::MmadParams mp;
    mp.m = 16; mp.k = 32; mp.n = MmadN<T>(16);
    AscendC::Mmad(c1, a2, b2, mp);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::FixpipeParamsV220 fp;
    fp.nSize = 16; fp.mSize = 16; fp.srcStride = 16; fp.dstStride = 16;
    AscendC::Fixpipe(cGm, c1, fp);
}

extern "C" void run(uint8_t* a, uint8_t* b, uint8_t* c) { mm8<<<1, nullptr, nullptr>>>(a, b, c); }
"""


def test_is_same_type_and_mmad_past_a_static_l0c_tile() -> None:
    torch.manual_seed(5)
    a = torch.randint(-8, 8, (16, 32), dtype=torch.int8)
    bt = torch.randint(-8, 8, (32, 32), dtype=torch.int8)  # B^T: n x k
    c = torch.zeros(16, 16, dtype=torch.int32)
    asc.load(INT8_MMAD_WIDE_N).run(a, bt, c)
    torch.testing.assert_close(c, (a.int() @ bt.int().T)[:, :16])


# An aclnn caller allocates outputs with the dtype of the OpDef column its inputs select;
# InferDataType (graph mode) copying the input's dtype does not decide it (cann-ops mmad does this).
WIDEN_FILES = {
    "op_host/widen_custom_tiling.h": """
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(WidenTiling)
  TILING_DATA_FIELD_DEF(uint32_t, n);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(WidenCustom, WidenTiling)
}
""",
    "op_host/widen_custom.cpp": """
#include "widen_custom_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context) {
    WidenTiling t;
    t.set_n(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    context->SetBlockDim(1);
    t.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(t.GetDataSize());
    return ge::GRAPH_SUCCESS;
}
}
namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context) {
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
static ge::graphStatus InferDataType(gert::InferDataTypeContext* context) {
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}
}
namespace ops {
class WidenCustom : public OpDef {
public:
    explicit WidenCustom(const char* name) : OpDef(name) {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(WidenCustom);
}
""",
    "op_kernel/widen_custom.cpp": """
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void widen_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> hb, fb;
    pipe.InitBuffer(hb, t.n * sizeof(half));
    pipe.InitBuffer(fb, t.n * sizeof(float));
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<float> yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, t.n);
    yGm.SetGlobalBuffer((__gm__ float*)y, t.n);
    AscendC::LocalTensor<half> h = hb.Get<half>();
    AscendC::LocalTensor<float> f = fb.Get<float>();
    AscendC::DataCopy(h, xGm, t.n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Cast(f, h, AscendC::RoundMode::CAST_NONE, t.n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, f, t.n);
}
""",
}


def test_op_project_outputs_take_the_opdef_column_dtype() -> None:
    op = asc.load_op_project(WIDEN_FILES)
    x = torch.randn(4, 64).half()
    y = op(x)
    assert y.dtype == torch.float32 and y.shape == x.shape
    torch.testing.assert_close(y, x.float())
