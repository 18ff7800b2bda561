"""Ascend C answer for level2/001_matmul_bias_relu (naive: x @ W^T on one AI Core (cube fp32, 64 x 64 x 64 tiles) into a workspace, then + bias, ReLU on one vector core, row by row)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

using T = float;                              // A and B element type; the cube accumulates in fp32
constexpr uint32_t K0 = 32 / sizeof(T);      // elements of a 32-byte column block
constexpr uint32_t FRAC = 512 / sizeof(T);   // elements of a 512-byte fractal
constexpr uint32_t BM = 64, BN = 64, BK = 64;  // C tile BM x BN, K step BK

__aicore__ inline uint32_t DivUp(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t Align16(uint32_t a) { return (a + 15) / 16 * 16; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

class KernelMatmul {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t M, uint32_t N, uint32_t K)
    {
        m_ = M; n_ = N; k_ = K;
        aGm.SetGlobalBuffer((__gm__ T*)a, M * K);
        bGm.SetGlobalBuffer((__gm__ T*)b, K * N);
        cGm.SetGlobalBuffer((__gm__ float*)c, M * N);
        pipe.InitBuffer(qA1, 1, BM * BK * sizeof(T));
        pipe.InitBuffer(qB1, 1, BK * BN * sizeof(T));
        pipe.InitBuffer(qA2, 1, BM * BK * sizeof(T));
        pipe.InitBuffer(qB2, 1, BK * BN * sizeof(T));
        pipe.InitBuffer(qC, 1, BM * BN * sizeof(float));
    }
    // every C tile in turn on this one core: K loop accumulating in L0C, then Fixpipe to GM
    __aicore__ inline void Process()
    {
        for (uint32_t m0 = 0; m0 < m_; m0 += BM)
            for (uint32_t n0 = 0; n0 < n_; n0 += BN) Tile(m0, n0, MinU(BM, m_ - m0), MinU(BN, n_ - n0));
    }

private:
    __aicore__ inline void Tile(uint32_t m0, uint32_t n0, uint32_t bm, uint32_t bn)
    {
        LocalTensor<float> co1 = qC.AllocTensor<float>();
        for (uint32_t k0 = 0; k0 < k_; k0 += BK) {
            uint32_t bk = MinU(BK, k_ - k0);
            CopyA(m0, k0, bm, bk);
            CopyB(k0, n0, bk, bn);
            SplitA(bm, bk);
            SplitB(bk, bn);
            LocalTensor<T> a2 = qA2.DeQue<T>();
            LocalTensor<T> b2 = qB2.DeQue<T>();
            MmadParams p;
            p.m = bm; p.n = bn; p.k = bk;
            p.cmatrixInitVal = k0 == 0;  // the first K step overwrites L0C, the others accumulate
            Mmad(co1, a2, b2, p);
            qA2.FreeTensor(a2);
            qB2.FreeTensor(b2);
        }
        qC.EnQue(co1);
        co1 = qC.DeQue<float>();
        FixpipeParamsV220 f;  // L0C (NZ) -> GM row-major, fp32 as accumulated
        f.nSize = bn; f.mSize = bm; f.srcStride = Align16(bm); f.dstStride = n_;
        Fixpipe(cGm[m0 * n_ + n0], co1, f);
        qC.FreeTensor(co1);
    }
    // A tile [bm, bk] of row-major A[M, K] -> L1 in NZ (column blocks of K0 elements, Align16(bm) rows each)
    __aicore__ inline void CopyA(uint32_t m0, uint32_t k0, uint32_t bm, uint32_t bk)
    {
        LocalTensor<T> a1 = qA1.AllocTensor<T>();
        Nd2NzParams p;
        p.ndNum = 1; p.nValue = bm; p.dValue = bk; p.srcNdMatrixStride = 0; p.srcDValue = k_;
        p.dstNzC0Stride = Align16(bm); p.dstNzNStride = 1; p.dstNzMatrixStride = 0;
        DataCopy(a1, aGm[m0 * k_ + k0], p);
        qA1.EnQue(a1);
    }
    // L1 NZ -> L0A Zz: for each 16-row block, its K1 fractals (M1 apart in L1) side by side
    __aicore__ inline void SplitA(uint32_t bm, uint32_t bk)
    {
        LocalTensor<T> a1 = qA1.DeQue<T>();
        LocalTensor<T> a2 = qA2.AllocTensor<T>();
        uint32_t m1 = DivUp(bm, 16), k1 = DivUp(bk, K0);
        LoadData2DParams p;
        p.repeatTimes = k1;
        p.srcStride = m1;
        for (uint32_t i = 0; i < m1; ++i) LoadData(a2[i * k1 * FRAC], a1[i * FRAC], p);
        qA2.EnQue(a2);
        qA1.FreeTensor(a1);
    }
    // B is given as Bt[N, K] (row n = column n of B): the tile [bn, bk] of Bt in NZ is already
    // the Zn layout L0B wants (k0 x 16 fractals, K1 rows of N1 fractals)
    __aicore__ inline void CopyB(uint32_t k0, uint32_t n0, uint32_t bk, uint32_t bn)
    {
        LocalTensor<T> b1 = qB1.AllocTensor<T>();
        Nd2NzParams p;
        p.ndNum = 1; p.nValue = bn; p.dValue = bk; p.srcNdMatrixStride = 0; p.srcDValue = k_;
        p.dstNzC0Stride = Align16(bn); p.dstNzNStride = 1; p.dstNzMatrixStride = 0;
        DataCopy(b1, bGm[n0 * k_ + k0], p);
        qB1.EnQue(b1);
    }
    __aicore__ inline void SplitB(uint32_t bk, uint32_t bn)
    {
        LocalTensor<T> b1 = qB1.DeQue<T>();
        LocalTensor<T> b2 = qB2.AllocTensor<T>();
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
    GlobalTensor<T> aGm, bGm;
    GlobalTensor<float> cGm;
    uint32_t m_, n_, k_;
};

extern "C" __global__ __cube__ void matmul_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t M, uint32_t N, uint32_t K)
{
    KernelMatmul op;
    op.Init(a, b, c, M, N, K);
    op.Process();
}

// ---- vector pass: y = relu(ws + bias), one block, one row at a time ----
constexpr uint32_t EROWS = 1;  // rows per UB tile
constexpr uint32_t EBUF = 1;   // buffers per queue

class KernelEpilogue {
public:
    __aicore__ inline void Init(GM_ADDR ws, GM_ADDR bias, GM_ADDR y, uint32_t m, uint32_t n)
    {
        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();
        uint32_t per = m / nb, rem = m % nb;  // rows over the blocks, the first `rem` take one more
        row0 = bi * per + (bi < rem ? bi : rem);
        rows = per + (bi < rem ? 1 : 0);
        n_ = n;
        nPad = (n + 7) / 8 * 8;  // UB row stride: rows start on 32-byte boundaries
        wsGm.SetGlobalBuffer((__gm__ float*)ws, m * n);
        yGm.SetGlobalBuffer((__gm__ float*)y, m * n);
        biasGm.SetGlobalBuffer((__gm__ float*)bias, n);
        pipe.InitBuffer(inQ, EBUF, EROWS * nPad * sizeof(float));
        pipe.InitBuffer(outQ, EBUF, EROWS * nPad * sizeof(float));
        pipe.InitBuffer(biasQ, 1, nPad * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> b = biasQ.AllocTensor<float>();  // the bias row, loaded once, kept to the end
        LoadRows(b, biasGm, 1);
        biasQ.EnQue(b);
        bias = biasQ.DeQue<float>();
        for (uint32_t r0 = 0; r0 < rows; r0 += EROWS) {
            uint32_t r = rows - r0 < EROWS ? rows - r0 : EROWS;
            CopyIn(row0 + r0, r);
            Compute(r);
            CopyOut(row0 + r0, r);
        }
        biasQ.FreeTensor(bias);
    }

private:
    // r rows of n elements from GM, each padded in UB to nPad
    template <class U>
    __aicore__ inline void LoadRows(const LocalTensor<U>& dst, const GlobalTensor<U>& src, uint32_t r)
    {
        DataCopyExtParams p{static_cast<uint16_t>(r), static_cast<uint32_t>(n_ * sizeof(U)), 0,
                            static_cast<uint32_t>((nPad - n_) * sizeof(U) / 32), 0};
        DataCopyPadExtParams<U> pad{false, 0, 0, 0};
        DataCopyPad(dst, src, p, pad);
    }
    __aicore__ inline void CopyIn(uint32_t i0, uint32_t r)
    {
        LocalTensor<float> t = inQ.AllocTensor<float>();
        LoadRows(t, wsGm[i0 * n_], r);
        inQ.EnQue(t);
    }
    __aicore__ inline void Compute(uint32_t r)
    {
        LocalTensor<float> t = inQ.DeQue<float>();
        LocalTensor<float> o = outQ.AllocTensor<float>();
        for (uint32_t i = 0; i < r; ++i) {
            LocalTensor<float> x = t[i * nPad];
            LocalTensor<float> z = o[i * nPad];
            Add(x, x, bias, n_);  // + bias
            Relu(z, x, n_);
        }
        outQ.EnQue(o);
        inQ.FreeTensor(t);
    }
    __aicore__ inline void CopyOut(uint32_t i0, uint32_t r)
    {
        LocalTensor<float> o = outQ.DeQue<float>();
        DataCopyExtParams p{static_cast<uint16_t>(r), static_cast<uint32_t>(n_ * sizeof(float)),
                            static_cast<uint32_t>((nPad - n_) * sizeof(float) / 32), 0, 0};
        DataCopyPad(yGm[i0 * n_], o, p);
        outQ.FreeTensor(o);
    }
    TPipe pipe;
    TQue<TPosition::VECIN, EBUF> inQ;
    TQue<TPosition::VECOUT, EBUF> outQ;
    TQue<TPosition::VECIN, 1> biasQ;
    LocalTensor<float> bias;
    GlobalTensor<float> biasGm;
    GlobalTensor<float> wsGm;
    GlobalTensor<float> yGm;
    uint32_t row0, rows, n_, nPad;
};

extern "C" __global__ __aicore__ void epilogue_kernel(GM_ADDR ws, GM_ADDR bias, GM_ADDR y, uint32_t m, uint32_t n)
{
    KernelEpilogue op;
    op.Init(ws, bias, y, m, n);
    op.Process();
}

extern "C" void linear_do(uint8_t* x, uint8_t* w, uint8_t* bias, uint8_t* ws, uint8_t* y, uint32_t M, uint32_t N, uint32_t K)
{
    // host tiling (naive): x @ W^T on one AI Core into the fp32 workspace ws [M, N], then the epilogue on one
    // vector core
    matmul_kernel<<<1, nullptr, nullptr>>>(x, w, ws, M, N, K);
    epilogue_kernel<<<1, nullptr, nullptr>>>(ws, bias, y, M, N);
}
"""


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        M, K = x.shape
        N = self.linear.out_features
        ws = torch.empty(M, N, dtype=torch.float32)  # the matmul's fp32 result (workspace)
        y = torch.empty(M, N, dtype=x.dtype)
        self.mod.linear_do(x, self.linear.weight, self.linear.bias, ws, y, M, N, K)
        return y
