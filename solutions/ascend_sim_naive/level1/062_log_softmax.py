"""Ascend C answer for level1/062_log_softmax (naive: one block, single-buffered)."""
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
// units [u0, u0 + nu) of this block: an even split with the remainder on the first blocks
__aicore__ inline void RowRange(uint32_t rows, uint32_t& r0, uint32_t& nr) {
    uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = rows / nb, rem = rows % nb;
    r0 = bi * per + (bi < rem ? bi : rem);
    nr = per + (bi < rem ? 1 : 0);
}
template <class T> __aicore__ inline void LoadRow(LocalTensor<T>& l, GlobalTensor<T>& g, uint64_t off, uint32_t n) {
    if (n * sizeof(T) % 32 == 0) { DataCopy(l, g[off], n); return; }
    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPadExtParams<T> pad{false, 0, 0, 0};
    DataCopyPad(l, g[off], p, pad);
}
template <class T> __aicore__ inline void StoreRow(GlobalTensor<T>& g, uint64_t off, LocalTensor<T>& l, uint32_t n) {
    if (n * sizeof(T) % 32 == 0) { DataCopy(g[off], l, n); return; }
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

// elements of sharedTmpBuffer a count-form ReduceMax of n floats may need: the value/index pairs of
// its first level (two per 64-element repeat) plus room for the later levels (CANN ReduceMax docs)
__aicore__ inline uint32_t MaxWorkElems(uint32_t n) { return ((n + 63) / 64 * 2 + 63) / 64 * 64 + 128; }
// log_softmax over the last dim, one row per tile (the row lives in UB):
// y = x - m - ln(sum(exp(x - m))), m = max(x); exp(x - m) is written over the consumed input row
class KernelLogSoftmax {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols) {
        RowRange(rows, r0, nr);
        this->cols = cols;
        xGm.SetGlobalBuffer((__gm__ float*)x);
        yGm.SetGlobalBuffer((__gm__ float*)y);
        uint32_t rowBytes = Up8(cols) * sizeof(float);
        // double-buffer only when two input and two output rows fit in UB
        uint32_t nbuf = (BUFN == 2 && nr > 1 && 4 * rowBytes <= 176 * 1024) ? 2 : 1;
        pipe.InitBuffer(inQ, nbuf, rowBytes);
        pipe.InitBuffer(outQ, nbuf, rowBytes);
        pipe.InitBuffer(redBuf, 64 * sizeof(float));
        pipe.InitBuffer(workBuf, MaxWorkElems(cols) * sizeof(float));
    }
    __aicore__ inline void Process() {
        LocalTensor<float> red = redBuf.Get<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        for (uint32_t i = 0; i < nr; ++i) {
            uint64_t off = uint64_t(r0 + i) * cols;
            LocalTensor<float> l = inQ.AllocTensor<float>();
            LoadRow(l, xGm, off, cols);
            inQ.EnQue(l);
            LocalTensor<float> xin = inQ.DeQue<float>();
            LocalTensor<float> y = outQ.AllocTensor<float>();
            ReduceMax(red, xin, work, cols);
            float m = ScalarOf(red);
            Adds(y, xin, -m, cols);          // y = x - m
            Exp(xin, y, cols);               // exp(x - m), over the input row
            ReduceSum(red, xin, red[8], cols);
            inQ.FreeTensor(xin);
            Ln(red, red, 1);                 // ln(s) on the vector unit
            float lns = ScalarOf(red);
            Adds(y, y, -lns, cols);
            outQ.EnQue(y);
            LocalTensor<float> o = outQ.DeQue<float>();
            StoreRow(yGm, off, o, cols);
            outQ.FreeTensor(o);
        }
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQ;
    TQue<QuePosition::VECOUT, 2> outQ;
    TBuf<QuePosition::VECCALC> redBuf, workBuf;
    GlobalTensor<float> xGm, yGm;
    uint32_t r0, nr, cols;
};
extern "C" __global__ __aicore__ void logsoftmax_kernel(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols) {
    KernelLogSoftmax op;
    op.Init(x, y, rows, cols);
    op.Process();
}
extern "C" void logsoftmax_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols) {
    logsoftmax_kernel<<<Blocks(rows), nullptr, nullptr>>>(x, y, rows, cols);
}
"""

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        cols = x.shape[-1]
        y = torch.empty_like(x)
        self.mod.logsoftmax_do(x, y, x.numel() // cols, cols)
        return y
