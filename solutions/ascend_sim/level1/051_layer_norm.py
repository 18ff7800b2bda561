"""Ascend C answer for level1/051_layer_norm (optimised: multi-block, double-buffered)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
#include <cmath>
using namespace AscendC;
constexpr uint32_t BUFN = 2;   // buffers per queue (2 = double buffering)
constexpr uint32_t MAXBLOCKS = 40;
__aicore__ inline uint32_t Up8(uint32_t n) { return (n + 7) / 8 * 8; }
// rows [r0, r0 + nr) of this block: an even split with the remainder on the first blocks
__aicore__ inline void RowRange(uint32_t rows, uint32_t& r0, uint32_t& nr) {
    uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = rows / nb, rem = rows % nb;
    r0 = bi * per + (bi < rem ? bi : rem);
    nr = per + (bi < rem ? 1 : 0);
}
template <class T> __aicore__ inline void LoadRow(LocalTensor<T>& l, GlobalTensor<T>& g, uint64_t off, uint32_t n) {
    if (n % 8 == 0) { DataCopy(l, g[off], n); return; }
    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPadExtParams<T> pad{false, 0, 0, 0};
    DataCopyPad(l, g[off], p, pad);
}
template <class T> __aicore__ inline void StoreRow(GlobalTensor<T>& g, uint64_t off, LocalTensor<T>& l, uint32_t n) {
    if (n % 8 == 0) { DataCopy(g[off], l, n); return; }
    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(g[off], l, p);
}
__aicore__ inline float ScalarOf(LocalTensor<float>& red) {   // wait for the vector pipe, then read red[0]
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    float v = red.GetValue(0);
    SetFlag<HardEvent::S_V>(0);
    WaitFlag<HardEvent::S_V>(0);
    return v;
}
__aicore__ inline uint32_t Blocks(uint32_t units) { return units < MAXBLOCKS ? (units ? units : 1) : MAXBLOCKS; }

// LayerNorm over the trailing `cols` elements: the whole row stays in UB; weight and bias
// stream through in chunks of CH elements together with the output
constexpr uint32_t CH = 4096;
class KernelLn {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, uint32_t rows, uint32_t cols, float eps) {
        RowRange(rows, r0, nr);
        this->cols = cols;
        this->eps = eps;
        xGm.SetGlobalBuffer((__gm__ float*)x);
        wGm.SetGlobalBuffer((__gm__ float*)w);
        bGm.SetGlobalBuffer((__gm__ float*)b);
        yGm.SetGlobalBuffer((__gm__ float*)y);
        pipe.InitBuffer(inQ, 1, Up8(cols) * sizeof(float));
        pipe.InitBuffer(wQ, BUFN, CH * sizeof(float));
        pipe.InitBuffer(bQ, BUFN, CH * sizeof(float));
        pipe.InitBuffer(outQ, BUFN, CH * sizeof(float));
        pipe.InitBuffer(tmpBuf, CH * sizeof(float));
        pipe.InitBuffer(redBuf, 64 * sizeof(float));
    }
    __aicore__ inline void Process() {
        LocalTensor<float> red = redBuf.Get<float>();
        LocalTensor<float> t = tmpBuf.Get<float>();
        for (uint32_t i = 0; i < nr; ++i) {
            uint64_t off = uint64_t(r0 + i) * cols;
            LocalTensor<float> l = inQ.AllocTensor<float>();
            LoadRow(l, xGm, off, cols);
            inQ.EnQue(l);
            LocalTensor<float> xin = inQ.DeQue<float>();
            ReduceSum(red, xin, red[8], cols);
            float mean = ScalarOf(red) / float(cols);
            float var = 0.0f;
            for (uint32_t c = 0; c < cols; c += CH) {   // two-pass variance, chunk by chunk
                uint32_t n = cols - c < CH ? cols - c : CH;
                Adds(t, xin[c], -mean, n);
                Mul(t, t, t, n);
                ReduceSum(red, t, red[8], n);
                var += ScalarOf(red);
            }
            float rstd = 1.0f / std::sqrt(var / float(cols) + eps);
            for (uint32_t c = 0; c < cols; c += CH) {
                uint32_t n = cols - c < CH ? cols - c : CH;
                LocalTensor<float> wl = wQ.AllocTensor<float>();
                LoadRow(wl, wGm, c, n);
                wQ.EnQue(wl);
                LocalTensor<float> bl = bQ.AllocTensor<float>();
                LoadRow(bl, bGm, c, n);
                bQ.EnQue(bl);
                LocalTensor<float> wv = wQ.DeQue<float>();
                LocalTensor<float> bv = bQ.DeQue<float>();
                LocalTensor<float> y = outQ.AllocTensor<float>();
                Adds(y, xin[c], -mean, n);
                Muls(y, y, rstd, n);
                Mul(y, y, wv, n);
                Add(y, y, bv, n);
                wQ.FreeTensor(wv);
                bQ.FreeTensor(bv);
                outQ.EnQue(y);
                LocalTensor<float> o = outQ.DeQue<float>();
                StoreRow(yGm, off + c, o, n);
                outQ.FreeTensor(o);
            }
            inQ.FreeTensor(xin);
        }
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECIN, 2> wQ, bQ;
    TQue<QuePosition::VECOUT, 2> outQ;
    TBuf<QuePosition::VECCALC> tmpBuf, redBuf;
    GlobalTensor<float> xGm, wGm, bGm, yGm;
    uint32_t r0, nr, cols;
    float eps;
};
extern "C" __global__ __aicore__ void ln_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, uint32_t rows, uint32_t cols, float eps) {
    KernelLn op;
    op.Init(x, w, b, y, rows, cols, eps);
    op.Process();
}
extern "C" void ln_do(uint8_t* x, uint8_t* w, uint8_t* b, uint8_t* y, uint32_t rows, uint32_t cols, float eps) {
    ln_kernel<<<Blocks(rows), nullptr, nullptr>>>(x, w, b, y, rows, cols, eps);
}
"""

class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        cols = self.ln.weight.numel()
        y = torch.empty_like(x)
        self.mod.ln_do(x, self.ln.weight, self.ln.bias, y, x.numel() // cols, cols, self.ln.eps)
        return y
