"""Ascend C answer for level1/053_rms_norm_tail (naive: one block, single-buffered)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
#include <cmath>
using namespace AscendC;
constexpr uint32_t BUFN = 1;   // buffers per queue (2 = double buffering)
constexpr uint32_t MAXBLOCKS = 1;
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

// y = x / sqrt(mean(x^2) + eps) * w, one row per tile, w resident in UB
class KernelRms {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t rows, uint32_t cols, float eps, uint32_t hasW) {
        RowRange(rows, r0, nr);
        this->cols = cols;
        this->eps = eps;
        this->hasW = hasW;
        xGm.SetGlobalBuffer((__gm__ float*)x);
        wGm.SetGlobalBuffer((__gm__ float*)w);
        yGm.SetGlobalBuffer((__gm__ float*)y);
        uint32_t rowBytes = Up8(cols) * sizeof(float);
        pipe.InitBuffer(inQ, BUFN, rowBytes);
        pipe.InitBuffer(outQ, BUFN, rowBytes);
        pipe.InitBuffer(wQ, 1, rowBytes);
        pipe.InitBuffer(redBuf, 64 * sizeof(float));
    }
    __aicore__ inline void Process() {
        if (nr == 0) return;
        LocalTensor<float> wl = wQ.AllocTensor<float>();
        if (hasW) LoadRow(wl, wGm, 0, cols);
        wQ.EnQue(wl);
        LocalTensor<float> w = wQ.DeQue<float>();
        LocalTensor<float> red = redBuf.Get<float>();
        for (uint32_t i = 0; i < nr; ++i) {
            uint64_t off = uint64_t(r0 + i) * cols;
            LocalTensor<float> l = inQ.AllocTensor<float>();
            LoadRow(l, xGm, off, cols);
            inQ.EnQue(l);
            LocalTensor<float> xin = inQ.DeQue<float>();
            LocalTensor<float> y = outQ.AllocTensor<float>();
            Mul(y, xin, xin, cols);
            ReduceSum(red, y, red[8], cols);
            float s = ScalarOf(red);
            float r = 1.0f / std::sqrt(s / float(cols) + eps);
            Muls(y, xin, r, cols);
            inQ.FreeTensor(xin);
            if (hasW) Mul(y, y, w, cols);
            outQ.EnQue(y);
            LocalTensor<float> o = outQ.DeQue<float>();
            StoreRow(yGm, off, o, cols);
            outQ.FreeTensor(o);
        }
        wQ.FreeTensor(w);
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQ;
    TQue<QuePosition::VECIN, 1> wQ;
    TQue<QuePosition::VECOUT, 2> outQ;
    TBuf<QuePosition::VECCALC> redBuf;
    GlobalTensor<float> xGm, wGm, yGm;
    uint32_t r0, nr, cols, hasW;
    float eps;
};
extern "C" __global__ __aicore__ void rms_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t rows, uint32_t cols, float eps, uint32_t hasW) {
    KernelRms op;
    op.Init(x, w, y, rows, cols, eps, hasW);
    op.Process();
}
extern "C" void rms_do(uint8_t* x, uint8_t* w, uint8_t* y, uint32_t rows, uint32_t cols, float eps, uint32_t hasW) {
    // one block
    rms_kernel<<<Blocks(rows / 1), nullptr, nullptr>>>(x, w, y, rows, cols, eps, hasW);
}
"""

class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        cols = x.shape[-1]
        y = torch.empty_like(x)
        # no weight: hasW = 0 (the weight pointer is never read)
        self.mod.rms_do(x, x, y, x.numel() // cols, cols, self.eps, 0)
        return y
