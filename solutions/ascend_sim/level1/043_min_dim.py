"""Ascend C answer for level1/043_min_dim (optimised: multi-block, double-buffered, many rows per tile)."""
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

// y = min(x, dim=-1).values (the task reduces the last dim)
// rows are loaded k at a time (UB rows cp elements apart, padded to 32 bytes); each row is reduced
// with a count-form reduction and its result collected in UB, then post-processed and stored once
// (or, when the row length allows, all rows of a tile at once by chunk folds and one WholeReduce)
constexpr uint32_t TILE = 16384;   // elements per input tile (one row when it is longer)
class KernelRowReduce {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols) {
        RowRange(rows, r0, nr);
        this->cols = cols;
        cp = (cols * sizeof(float) + 31) / 32 * 32 / sizeof(float);
        k = TILE / cp;
        if (k == 0) k = 1;
        if (k > 248) k = 248;   // repeat counts stay below 256
        // the vector-only path needs 64-element chunks, a row stride below 256 blocks and tiles of
        // a multiple of 8 rows (each tile's results start 32-byte aligned)
        fold = cols % 64 == 0 && cp / 8 <= 255 && k >= 8;
        if (fold) k = k / 8 * 8;
        if (k > nr) k = nr ? nr : 1;
        xGm.SetGlobalBuffer((__gm__ float*)x);
        yGm.SetGlobalBuffer((__gm__ float*)y);
        pipe.InitBuffer(inQ, BUFN, k * cp * sizeof(float));
        pipe.InitBuffer(resBuf, Up8(nr) * sizeof(float));
        pipe.InitBuffer(outQ, 1, (nr + 3) / 4 * 4 * sizeof(float) + 32);
        pipe.InitBuffer(redBuf, 64 * sizeof(float));
        pipe.InitBuffer(workBuf, Up8(2 * cols) * sizeof(float));
    }
    __aicore__ inline void Process() {
        if (nr == 0) return;
        LocalTensor<float> res = resBuf.Get<float>();
        LocalTensor<float> red = redBuf.Get<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        for (uint32_t i = 0; i < nr; i += k) {
            uint32_t kk = nr - i < k ? nr - i : k;
            uint64_t off = uint64_t(r0 + i) * cols;
            DataCopyExtParams cp1{static_cast<uint16_t>(kk), static_cast<uint32_t>(cols * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            LocalTensor<float> l = inQ.AllocTensor<float>();
            DataCopyPad(l, xGm[off], cp1, pad);
            inQ.EnQue(l);
            LocalTensor<float> xv = inQ.DeQue<float>();
            if (fold) {
                // fold every row's 64-element chunks onto its first one (one repeat per row), then one
                // WholeReduceMin writes the kk row results to res[i, i + kk)
                uint8_t rs = static_cast<uint8_t>(cp / 8);
                for (uint32_t c = 64; c < cols; c += 64) Min(xv, xv, xv[c], 64, kk, {1, 1, 1, rs, rs, rs});
                WholeReduceMin(res[i], xv, 64, kk, 1, 1, cp / 8, ReduceOrder::ORDER_ONLY_VALUE);
                inQ.FreeTensor(xv);
                continue;
            }
            for (uint32_t j = 0; j < kk; ++j) {
                ReduceMin(red, xv[j * cp], work, cols);
                res.SetValue(i + j, ScalarOf(red));
            }
            inQ.FreeTensor(xv);
        }
        SetFlag<HardEvent::S_V>(1);
        WaitFlag<HardEvent::S_V>(1);
        LocalTensor<float> o = outQ.AllocTensor<float>();
        Adds(o, res, 0.0f, nr);   // the row minima, moved into the output buffer
        outQ.EnQue(o);
        LocalTensor<float> ov = outQ.DeQue<float>();
        StoreRow(yGm, r0, ov, nr);
        outQ.FreeTensor(ov);
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<QuePosition::VECCALC> resBuf, redBuf, workBuf;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    uint32_t r0, nr, cols, cp, k;
    bool fold;
};
extern "C" __global__ __aicore__ void rowreduce_kernel(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols) {
    KernelRowReduce op;
    op.Init(x, y, rows, cols);
    op.Process();
}
extern "C" void rowreduce_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols) {
    // at least 16 rows per block so that each block's store of results is whole 32-byte blocks
    rowreduce_kernel<<<Blocks(rows / 16), nullptr, nullptr>>>(x, y, rows, cols);
}
"""

class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        if self.dim % x.dim() != x.dim() - 1:   # this kernel reduces the last (contiguous) dim
            raise ValueError("only the last dim is supported")
        cols = x.shape[-1]
        y = torch.empty(x.shape[:-1], dtype=x.dtype)
        self.mod.rowreduce_do(x, y, x.numel() // cols, cols)
        return y
