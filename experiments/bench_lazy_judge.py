"""Peak memory of one published-shape verification of a task whose reference holds a large
nn.Linear weight (docs/benchmarks.md, "Level 2 within 2 GiB", "The verifier's published-shape
check"): the judge's and the runner's peak resident memory, as the judge reads them.

    python -m experiments.bench_lazy_judge [--in-features 16384] [--out-features 16384] [--batch 128]

The task is y = x @ W^T (``nn.Linear`` without bias), verified at 16 x 256 x 256 and checked at
the published shape given; the answer is the cube kernel below (64 x 64 C tiles dealt round 32
blocks), whose ModelNew builds the weight as the Model does. tests/verify/
test_published_lazy_parameters.py verifies the same task and answer at a smaller shape.
"""

from __future__ import annotations

import argparse
import json
import time

from kernel_gym.tasks.spec import TaskSpec

TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        return self.linear(x)


batch_size = {batch}
in_features = {k}
out_features = {n}


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
"""

# y = x @ w^T on the cube unit, 64 x 64 C tiles dealt round the blocks (the package's naive
# level-2 matmul, spread over blocks so that a published-shape run samples them); SKIP_K_AT=k
# leaves out the first K step where K >= k (right at the verified shapes, wrong at the published)
KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

#ifndef SKIP_K_AT
#define SKIP_K_AT 0xffffffffu
#endif

constexpr uint32_t K0 = 8;     // fp32 elements of a 32-byte column block
constexpr uint32_t FRAC = 128; // fp32 elements of a 512-byte fractal
constexpr uint32_t BM = 64, BN = 64, BK = 64;

__aicore__ inline uint32_t DivUp(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Align16(uint32_t a) { return (a + 15) / 16 * 16; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

// y[M, N] = x[M, K] @ w[N, K]^T: the C tiles dealt round the blocks
class KernelLinear {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t M, uint32_t N, uint32_t K)
    {
        m_ = M; n_ = N; k_ = K;
        aGm.SetGlobalBuffer((__gm__ float*)x, M * K);
        bGm.SetGlobalBuffer((__gm__ float*)w, (uint64_t)N * K);
        cGm.SetGlobalBuffer((__gm__ float*)y, M * N);
        pipe.InitBuffer(qA1, 1, BM * BK * sizeof(float));
        pipe.InitBuffer(qB1, 1, BK * BN * sizeof(float));
        pipe.InitBuffer(qA2, 1, BM * BK * sizeof(float));
        pipe.InitBuffer(qB2, 1, BK * BN * sizeof(float));
        pipe.InitBuffer(qC, 1, BM * BN * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t mt = DivUp(m_, BM), nt = DivUp(n_, BN);
        for (uint32_t t = GetBlockIdx(); t < mt * nt; t += GetBlockNum()) {
            uint32_t m0 = t / nt * BM, n0 = t % nt * BN;
            Tile(m0, n0, MinU(BM, m_ - m0), MinU(BN, n_ - n0));
        }
    }

private:
    __aicore__ inline void Tile(uint32_t m0, uint32_t n0, uint32_t bm, uint32_t bn)
    {
        LocalTensor<float> co1 = qC.AllocTensor<float>();
        uint32_t first = k_ >= SKIP_K_AT ? BK : 0;  // wrong at scale: the first K step left out
        for (uint32_t k0 = first; k0 < k_; k0 += BK) {
            uint32_t bk = MinU(BK, k_ - k0);
            CopyA(m0, k0, bm, bk);
            CopyB(k0, n0, bk, bn);
            SplitA(bm, bk);
            SplitB(bk, bn);
            LocalTensor<float> a2 = qA2.DeQue<float>();
            LocalTensor<float> b2 = qB2.DeQue<float>();
            MmadParams p;
            p.m = bm; p.n = bn; p.k = bk;
            p.cmatrixInitVal = k0 == first;
            Mmad(co1, a2, b2, p);
            qA2.FreeTensor(a2);
            qB2.FreeTensor(b2);
        }
        qC.EnQue(co1);
        co1 = qC.DeQue<float>();
        FixpipeParamsV220 f;
        f.nSize = bn; f.mSize = bm; f.srcStride = Align16(bm); f.dstStride = n_;
        Fixpipe(cGm[m0 * n_ + n0], co1, f);
        qC.FreeTensor(co1);
    }
    __aicore__ inline void CopyA(uint32_t m0, uint32_t k0, uint32_t bm, uint32_t bk)
    {
        LocalTensor<float> a1 = qA1.AllocTensor<float>();
        Nd2NzParams p;
        p.ndNum = 1; p.nValue = bm; p.dValue = bk; p.srcNdMatrixStride = 0; p.srcDValue = k_;
        p.dstNzC0Stride = Align16(bm); p.dstNzNStride = 1; p.dstNzMatrixStride = 0;
        DataCopy(a1, aGm[m0 * k_ + k0], p);
        qA1.EnQue(a1);
    }
    __aicore__ inline void SplitA(uint32_t bm, uint32_t bk)
    {
        LocalTensor<float> a1 = qA1.DeQue<float>();
        LocalTensor<float> a2 = qA2.AllocTensor<float>();
        uint32_t m1 = DivUp(bm, 16), k1 = DivUp(bk, K0);
        LoadData2DParams p;
        p.repeatTimes = k1;
        p.srcStride = m1;
        for (uint32_t i = 0; i < m1; ++i) LoadData(a2[i * k1 * FRAC], a1[i * FRAC], p);
        qA2.EnQue(a2);
        qA1.FreeTensor(a1);
    }
    // rows of w are columns of B: the [bn, bk] tile of w in NZ is the Zn layout L0B takes
    __aicore__ inline void CopyB(uint32_t k0, uint32_t n0, uint32_t bk, uint32_t bn)
    {
        LocalTensor<float> b1 = qB1.AllocTensor<float>();
        Nd2NzParams p;
        p.ndNum = 1; p.nValue = bn; p.dValue = bk; p.srcNdMatrixStride = 0; p.srcDValue = k_;
        p.dstNzC0Stride = Align16(bn); p.dstNzNStride = 1; p.dstNzMatrixStride = 0;
        DataCopy(b1, bGm[(uint64_t)n0 * k_ + k0], p);
        qB1.EnQue(b1);
    }
    __aicore__ inline void SplitB(uint32_t bk, uint32_t bn)
    {
        LocalTensor<float> b1 = qB1.DeQue<float>();
        LocalTensor<float> b2 = qB2.AllocTensor<float>();
        LoadData2DParams p;
        p.repeatTimes = DivUp(bk, K0) * DivUp(bn, 16);
        p.srcStride = 1;
        LoadData(b2, b1, p);
        qB2.EnQue(b2);
        qB1.FreeTensor(b1);
    }

    TPipe pipe;
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 1> qB1;
    TQue<TPosition::A2, 1> qA2;
    TQue<TPosition::B2, 1> qB2;
    TQue<TPosition::CO1, 1> qC;
    GlobalTensor<float> aGm, bGm, cGm;
    uint32_t m_, n_, k_;
};

extern "C" __global__ __cube__ void linear_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t M, uint32_t N, uint32_t K)
{
    KernelLinear op;
    op.Init(x, w, y, M, N, K);
    op.Process();
}

extern "C" void linear_do(uint32_t blocks, uint8_t* x, uint8_t* w, uint8_t* y, uint32_t M, uint32_t N, uint32_t K)
{
    linear_kernel<<<blocks, nullptr, nullptr>>>(x, w, y, M, N, K);
}
"""

ANSWER = '''
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""{source}"""
mod = asc.load(SOURCE, name="linear.cpp")


class Halves(nn.Module):
    """The weight drawn as two Linear layers of half the rows each, concatenated: in a plain build
    seeded alike the same values as one Linear's."""

    def __init__(self, in_features, out_features):
        super().__init__()
        top = nn.Linear(in_features, out_features // 2, bias=False)
        bottom = nn.Linear(in_features, out_features - out_features // 2, bias=False)
        self.weight = nn.Parameter(torch.cat([top.weight, bottom.weight]).detach())


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        # a constant scratch buffer (32 MiB at the published shape) before the weight: no draw
        self.register_buffer("scratch", torch.zeros(in_features * 1024))
        self.linear = {linear}(in_features, out_features{bias})

    def forward(self, x):
        w = self.linear.weight
        y = torch.empty(x.shape[0], w.shape[0])
        mod.linear_do(32, x, w, y, x.shape[0], w.shape[0], x.shape[1])
        return y
'''


def task_spec(in_features: int, out_features: int, batch: int = 16) -> TaskSpec:
    """The task verified at 16 x 256 x 256, published at ``batch`` x ``in_features`` x ``out_features``."""
    return TaskSpec(
        id="bench/linear_published",
        level=2,
        category="matmul",
        dtype="float32",
        source=TASK.format(batch=16, k=256, n=256),
        published_source=TASK.format(batch=batch, k=in_features, n=out_features),
    )


def answer(wrong_at_scale: bool = False, halves: bool = False) -> str:
    """The answer: right, wrong at scale (the first K step left out where K >= 4096), or right but
    drawing its weight as two half-size layers (the values of one Linear in a plain build, not
    once lazy: the judge then has both models built eagerly)."""
    source = KERNEL.replace("#define SKIP_K_AT 0xffffffffu", "#define SKIP_K_AT 4096u") if wrong_at_scale else KERNEL
    linear, bias = ("Halves", "") if halves else ("nn.Linear", ", bias=False")
    return ANSWER.format(source=source, linear=linear, bias=bias)


def main(argv: list[str] | None = None) -> int:
    from kernel_gym.verify import verify

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--in-features", type=int, default=16384)
    ap.add_argument("--out-features", type=int, default=16384)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--memory-limit-mb", type=int, default=12288)
    ap.add_argument("--timeout-s", type=int, default=900)
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    result = verify(
        task_spec(args.in_features, args.out_features, args.batch),
        answer(),
        backend="ascend_sim",
        use_cache=False,
        published_shapes=True,
        memory_limit_mb=args.memory_limit_mb,
        timing_trials=1,
        warmup_runs=0,
        correctness_trials=2,
        timeout_s=args.timeout_s,
    )
    pub = result.details.get("published", {})
    row = {
        "weight_mib": args.in_features * args.out_features * 4 >> 20,
        "correct": result.correct,
        "message": result.message,
        "published_ok": pub.get("ok"),
        "checked_elements": pub.get("checked_elements"),
        "lazy_parameter_mib": (pub.get("lazy_parameter_bytes") or 0) >> 20,
        "peak_rss_mb": pub.get("peak_rss_mb"),
        "published_s": round(result.details.get("stage_seconds", {}).get("published", 0.0), 1),
        "wall_s": round(time.monotonic() - t0, 1),
    }
    print(json.dumps(row))
    return 0 if pub.get("ok") else 1


if __name__ == "__main__":
    raise SystemExit(main())
