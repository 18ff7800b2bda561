"""Cube unit benchmark: simulated TFLOPS of a tiled fp16 matmul written with the low-level cube API
(Nd2Nz, LoadData, Mmad, Fixpipe on TQue-managed A1/B1/A2/B2/CO1), single- and double-buffered,
against the documented fp16 peak of the SoC profile, and the simulator's host speed (simulated
MACs per host second).

    python -m experiments.bench_cube [--soc Ascend910B2]

Each AI Core (AIC) computes a 128-row panel of C: the 128 x K panel of A is copied to L1 once,
B streams through L1 in 64 x 256 blocks (K x N), C leaves L0C in 128 x 256 fp16 tiles.
"""

from __future__ import annotations

import argparse
import time

import torch

import kernel_gym.ascendc as asc

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t BM = 128, BN = 256, BK = 64;  // C tile 128 x 256 (128 KB fp32 = all of L0C), K step 64

template <int NBUF>
__global__ __cube__ void matmul_panel(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t M, uint32_t N, uint32_t K)
{
    TPipe pipe;
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, NBUF> qB1;
    TQue<TPosition::A2, NBUF> qA2;
    TQue<TPosition::B2, NBUF> qB2;
    TQue<TPosition::CO1, 1> qC;
    pipe.InitBuffer(qA1, 1, BM * K * sizeof(half));
    pipe.InitBuffer(qB1, NBUF, BK * BN * sizeof(half));
    pipe.InitBuffer(qA2, NBUF, BM * BK * sizeof(half));
    pipe.InitBuffer(qB2, NBUF, BK * BN * sizeof(half));
    pipe.InitBuffer(qC, 1, BM * BN * sizeof(float));
    GlobalTensor<half> aGM, bGM, cGM;
    uint32_t row0 = GetBlockIdx() * BM;
    aGM.SetGlobalBuffer((__gm__ half*)a + row0 * K, BM * K);
    bGM.SetGlobalBuffer((__gm__ half*)b, K * N);
    cGM.SetGlobalBuffer((__gm__ half*)c + row0 * N, BM * N);

    // the A panel (BM x K) in NZ: column blocks of 16 halves, BM rows each
    LocalTensor<half> a1 = qA1.AllocTensor<half>();
    Nd2NzParams pa = {1, (uint16_t)BM, (uint16_t)K, 0, (uint16_t)K, (uint16_t)BM, 1, 0};
    DataCopy(a1, aGM, pa);
    qA1.EnQue(a1);
    a1 = qA1.DeQue<half>();
    for (uint32_t n0 = 0; n0 < N; n0 += BN) {
        LocalTensor<float> co1 = qC.AllocTensor<float>();
        for (uint32_t k0 = 0; k0 < K; k0 += BK) {
            LocalTensor<half> b1 = qB1.template AllocTensor<half>();
            Nd2NzParams pb = {1, (uint16_t)BK, (uint16_t)BN, 0, (uint16_t)N, (uint16_t)BK, 1, 0};
            DataCopy(b1, bGM[k0 * N + n0], pb);
            qB1.EnQue(b1);
            b1 = qB1.template DeQue<half>();
            LocalTensor<half> a2 = qA2.template AllocTensor<half>();
            LoadData2DParams la;
            la.repeatTimes = BK / 16;
            la.srcStride = BM / 16;
            for (uint32_t i = 0; i < BM / 16; ++i)
                LoadData(a2[i * BK * 16], a1[(k0 / 16) * BM * 16 + i * 256], la);
            qA2.EnQue(a2);
            LocalTensor<half> b2 = qB2.template AllocTensor<half>();
            LoadData2DParams lb;
            lb.repeatTimes = BN / 16;
            lb.srcStride = BK / 16;
            lb.ifTranspose = true;
            for (uint32_t kb = 0; kb < BK / 16; ++kb) LoadData(b2[kb * BN * 16], b1[kb * 256], lb);
            qB2.EnQue(b2);
            qB1.FreeTensor(b1);
            a2 = qA2.template DeQue<half>();
            b2 = qB2.template DeQue<half>();
            MmadParams mp;
            mp.m = BM;
            mp.n = BN;
            mp.k = BK;
            mp.cmatrixInitVal = k0 == 0;
            Mmad(co1, a2, b2, mp);
            qA2.FreeTensor(a2);
            qB2.FreeTensor(b2);
        }
        qC.EnQue(co1);
        co1 = qC.DeQue<float>();
        FixpipeParamsV220 fp;
        fp.nSize = BN;
        fp.mSize = BM;
        fp.srcStride = BM;
        fp.dstStride = N;
        fp.quantPre = QuantMode_t::F322F16;
        Fixpipe(cGM[n0], co1, fp);
        qC.FreeTensor(co1);
    }
    qA1.FreeTensor(a1);
}

extern "C" void mm_single(uint32_t blocks, uint8_t* a, uint8_t* b, uint8_t* c, uint32_t M, uint32_t N, uint32_t K)
{
    matmul_panel<1><<<blocks, nullptr, nullptr>>>(a, b, c, M, N, K);
}
extern "C" void mm_double(uint32_t blocks, uint8_t* a, uint8_t* b, uint8_t* c, uint32_t M, uint32_t N, uint32_t K)
{
    matmul_panel<2><<<blocks, nullptr, nullptr>>>(a, b, c, M, N, K);
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--soc", default="Ascend910B2")
    ap.add_argument("--n", type=int, default=1024, help="N and K (M = 128 x the AIC count)")
    args = ap.parse_args()
    prof = asc.get_profile(args.soc)
    mod = asc.load(KERNEL, name="bench_cube.cpp", soc=args.soc, sync_check="error")
    aic = int(prof.aic_cores)
    m, n, k = 128 * aic, args.n, args.n
    peak = aic * prof.clock_hz * prof.cube_fp16_macs_per_cycle * 2 / 1e12
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).half()
    b = torch.randn(k, n, generator=g).half()
    ref = (a.float() @ b.float()).half()
    print(
        f"SoC {args.soc}: {aic} AIC x {prof.clock_hz / 1e9:.2f} GHz x {prof.cube_fp16_macs_per_cycle:.0f} "
        f"fp16 MAC/cycle = {peak:.1f} TFLOPS fp16 peak"
    )
    print(f"matmul C[{m}, {n}] = A[{m}, {k}] @ B[{k}, {n}], fp16 in, fp32 accumulate, fp16 out; one block per AIC")
    print()
    print(
        "| variant | simulated time | simulated TFLOPS | % of peak | bound | busy M / MTE2 / MTE1 / FIX (cycles, "
        "critical core) | host s | simulated MACs / host s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ("mm_single", "mm_double"):
        c = torch.zeros(m, n, dtype=torch.float16)
        getattr(mod, name)(aic, a, b, c, m, n, k)  # warm (first call restarts the launch on AIC cores)
        t0 = time.perf_counter()
        getattr(mod, name)(aic, a, b, c, m, n, k)
        host = time.perf_counter() - t0
        assert torch.allclose(c.float(), ref.float(), rtol=1e-2, atol=1e-1), name
        r = mod.last_run
        assert r is not None, name  # the call launched the kernel
        tflops = 2 * m * n * k / r.latency_s / 1e12
        bb = r.per_pipe_busy
        print(
            f"| {'double-buffered' if name == 'mm_double' else 'single-buffered'} | {r.latency_s * 1e6:.1f} us | "
            f"{tflops:.1f} | {100 * tflops / peak:.0f}% | {r.bound} | {bb['M']:.0f} / {bb['MTE2']:.0f} / "
            f"{bb['MTE1']:.0f} / {bb['FIX']:.0f} | {host:.2f} | {m * n * k / host / 1e9:.2f} G |"
        )
        assert r.cores_used == aic, r.cores_used


if __name__ == "__main__":
    main()
