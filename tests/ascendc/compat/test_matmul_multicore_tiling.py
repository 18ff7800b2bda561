"""Cube-side gaps found by a second corpus of public cube kernels: the multi-core Matmul tiling splits C
over the cores as CANN's enumeration does (a kernel that assumes the documented split direction reads the
right operands), a core's share is a whole number of 16-row fractals (a fixed base block larger than it is
cut down), and MultiCoreMatmulTiling::EnableMultiCoreSplitK shares K among the idle cores. Each kernel
here is our own, compared with PyTorch."""

from __future__ import annotations

import torch

import kernel_gym.ascendc as asc

# A mixed kernel whose AIVs each take a column slice of C (it relies on the tiling splitting N): A is
# read whole, B, bias and C at blockIdx * singleCoreN. M x N x K = 512 x 128 x 128 on two AIVs with a
# fixed 128 x 64 base block: the split CANN's tiling documents for this shape is over N.
SPLIT_N_KERNEL = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

__global__ __mix__(1, 2) void mm_cols(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* bias,
                                      __gm__ uint8_t* c, AscendC::tiling::TCubeTiling tiling)
{
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm, biasGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), tiling.Kb * tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), tiling.M * tiling.N);
    biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), tiling.N);
    AscendC::Matmul<AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    uint32_t col = AscendC::GetBlockIdx() * tiling.singleCoreN;
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm[col]);
    mm.SetBias(biasGm[col]);
    mm.IterateAll(cGm[col]);
    mm.End();
}

extern "C" int64_t run(uint8_t* a, uint8_t* b, uint8_t* bias, uint8_t* c, int32_t m, int32_t n, int32_t k,
                       int32_t baseM, int32_t baseN) {
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MultiCoreMatmulTiling api(*platform);
    api.SetDim(2);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetBiasType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetOrgShape(m, n, k);
    api.SetShape(m, n, k);
    api.EnableBias(true);
    api.SetFixSplit(baseM, baseN, 128);
    api.SetBufferSpace(-1, -1, -1);
    AscendC::tiling::TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    if (tiling.singleCoreN * 2 == n) mm_cols<<<1, nullptr, nullptr>>>(a, b, bias, c, tiling);
    return int64_t(tiling.singleCoreM) * 100000 + tiling.singleCoreN * 100 + tiling.baseN;
}
"""


def test_multicore_tiling_splits_n_as_cann_does_for_a_narrow_c() -> None:
    torch.manual_seed(2)
    m, n, k = 512, 128, 128
    a = torch.randint(-3, 4, (m, k)).half()
    b = torch.randint(-3, 4, (k, n)).half()
    bias = torch.randint(-3, 4, (n,)).float()
    c = torch.zeros(m, n)
    mod = asc.load(SPLIT_N_KERNEL)
    # each AIV: all 512 rows, 64 of the 128 columns, base block 128 x 64
    assert mod.run(a, b, bias, c, m, n, k, 128, 64) == 512 * 100000 + 64 * 100 + 64
    torch.testing.assert_close(c, a.float() @ b.float() + bias)
    # a fixed base block wider than the core's share is cut down to it (64 columns, not 128)
    c.zero_()
    assert mod.run(a, b, bias, c, m, n, k, 128, 128) == 512 * 100000 + 64 * 100 + 64
    torch.testing.assert_close(c, a.float() @ b.float() + bias)


# Split K: each AIC multiplies a K chunk of A and B and adds its partial C into C (zeroed by the host)
# with atomic add; the block index walks M and N first, then the K chunks, as the tiling counts them.
SPLIT_K_KERNEL = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

__global__ __cube__ void mm_split_k(__gm__ uint8_t* a, __gm__ uint8_t* b, __gm__ uint8_t* c,
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
                    AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    uint32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    uint32_t nBlocks = (tiling.N + tiling.singleCoreN - 1) / tiling.singleCoreN;
    uint32_t idx = AscendC::GetBlockIdx(), mn = idx % (mBlocks * nBlocks), kIdx = idx / (mBlocks * nBlocks);
    uint32_t row = (mn % mBlocks) * tiling.singleCoreM, col = (mn / mBlocks) * tiling.singleCoreN;
    uint32_t k0 = kIdx * tiling.singleCoreK;
    mm.SetTensorA(aGm[row * tiling.Ka + k0]);
    mm.SetTensorB(bGm[k0 * tiling.N + col]);
    mm.IterateAll(cGm[row * tiling.N + col], 1);
    mm.End();
}

extern "C" int64_t run(uint8_t* a, uint8_t* b, uint8_t* c, int32_t m, int32_t n, int32_t k, int32_t cores) {
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MultiCoreMatmulTiling api(*platform);
    api.SetDim(cores);
    api.SetAType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetOrgShape(m, n, k);
    api.SetShape(m, n, k);
    api.SetBufferSpace(-1, -1, -1);
    api.EnableMultiCoreSplitK(true);
    AscendC::tiling::TCubeTiling tiling;
    if (api.GetTiling(tiling) == -1) return -1;
    mm_split_k<<<tiling.usedCoreNum, nullptr, nullptr>>>(a, b, c, tiling);
    return int64_t(tiling.usedCoreNum) * 100000 + tiling.singleCoreK;
}
"""


def test_enable_multicore_split_k_shares_k_among_the_cores() -> None:
    torch.manual_seed(3)
    m, n, k = 16, 16, 1024
    a = torch.randint(-3, 4, (m, k)).half()
    b = torch.randint(-3, 4, (k, n)).half()
    c = torch.zeros(m, n)
    mod = asc.load(SPLIT_K_KERNEL)
    used_and_k = mod.run(a, b, c, m, n, k, 8)
    used, single_k = divmod(used_and_k, 100000)
    assert used > 1 and used * single_k == k and single_k % 16 == 0
    torch.testing.assert_close(c, a.float() @ b.float())
