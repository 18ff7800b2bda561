"""Ascend C answer for level1/057_batch_norm_1d_eval (optimised: multi-block, double-buffered, 8192-element tiles)."""
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

// eval-mode BatchNorm on x viewed as rows = N * C of L elements (row r has channel r % C):
// y = x * scale[c] + shift[c] with scale = w / sqrt(var + eps) and shift = b - mean * scale,
// computed once per block as vectors; tiles of whole rows stream through (rows padded to 32 B in UB)
constexpr uint32_t TILE = 8192;   // elements per tile (at least one row)
class KernelBn {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR mean, GM_ADDR var, GM_ADDR w, GM_ADDR b, GM_ADDR y,
                                uint32_t rows, uint32_t ch, uint32_t len, float eps) {
        RowRange(rows, r0, nr);
        this->ch = ch;
        this->len = len;
        stride = Up8(len);
        rpt = TILE / stride ? TILE / stride : 1;
        xGm.SetGlobalBuffer((__gm__ float*)x);
        yGm.SetGlobalBuffer((__gm__ float*)y);
        pipe.InitBuffer(inQ, BUFN, rpt * stride * sizeof(float));
        pipe.InitBuffer(outQ, BUFN, rpt * stride * sizeof(float));
        pipe.InitBuffer(parBuf, 4 * Up8(ch) * sizeof(float));
        // per-channel parameters -> scale (slot 0) and shift (slot 1)
        uint32_t cs = Up8(ch);
        LocalTensor<float> par = parBuf.Get<float>();
        GM_ADDR src[4] = {w, var, mean, b};
        for (int k = 0; k < 4; ++k) {
            GlobalTensor<float> g;
            g.SetGlobalBuffer((__gm__ float*)src[k], ch);
            LocalTensor<float> d = par[k * cs];
            LoadRow(d, g, 0, ch);
        }
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        LocalTensor<float> wv = par[0], vv = par[cs], mv = par[2 * cs], bv = par[3 * cs];
        Adds(vv, vv, eps, ch);
        Sqrt(vv, vv, ch);
        Div(wv, wv, vv, ch);          // scale
        Mul(mv, mv, wv, ch);
        Sub(par[cs], bv, mv, ch);     // shift
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
    }
    __aicore__ inline void Process() {
        LocalTensor<float> par = parBuf.Get<float>();
        uint32_t cs = Up8(ch);
        for (uint32_t i = 0; i < nr; i += rpt) {
            uint32_t nrow = nr - i < rpt ? nr - i : rpt;
            uint64_t off = uint64_t(r0 + i) * len;
            DataCopyExtParams p{static_cast<uint16_t>(nrow), static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            LocalTensor<float> l = inQ.AllocTensor<float>();
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(l, xGm[off], p, pad);
            inQ.EnQue(l);
            LocalTensor<float> xin = inQ.DeQue<float>();
            LocalTensor<float> y = outQ.AllocTensor<float>();
            for (uint32_t k = 0; k < nrow; ++k) {
                uint32_t c = (r0 + i + k) % ch;
                Muls(y[k * stride], xin[k * stride], par.GetValue(c), len);
                Adds(y[k * stride], y[k * stride], par.GetValue(cs + c), len);
            }
            inQ.FreeTensor(xin);
            outQ.EnQue(y);
            LocalTensor<float> o = outQ.DeQue<float>();
            DataCopyPad(yGm[off], o, p);
            outQ.FreeTensor(o);
        }
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> inQ;
    TQue<QuePosition::VECOUT, BUFN> outQ;
    TBuf<QuePosition::VECCALC> parBuf;
    GlobalTensor<float> xGm, yGm;
    uint32_t r0, nr, ch, len, stride, rpt;
};
extern "C" __global__ __aicore__ void bn_kernel(GM_ADDR x, GM_ADDR mean, GM_ADDR var, GM_ADDR w, GM_ADDR b, GM_ADDR y,
                                                uint32_t rows, uint32_t ch, uint32_t len, float eps) {
    KernelBn op;
    op.Init(x, mean, var, w, b, y, rows, ch, len, eps);
    op.Process();
}
extern "C" void bn_do(uint8_t* x, uint8_t* mean, uint8_t* var, uint8_t* w, uint8_t* b, uint8_t* y,
                      uint32_t rows, uint32_t ch, uint32_t len, float eps) {
    bn_kernel<<<Blocks(rows), nullptr, nullptr>>>(x, mean, var, w, b, y, rows, ch, len, eps);
}
"""

class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(num_features)
        with torch.no_grad():   # the task's parameters and running statistics
            self.bn.weight.copy_(torch.linspace(0.5, 1.5, num_features))
            self.bn.bias.copy_(torch.linspace(-0.25, 0.25, num_features))
            self.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, num_features))
            self.bn.running_var.copy_(torch.linspace(0.5, 2.0, num_features))
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        bn = self.bn
        n, c = x.shape[0], x.shape[1]
        y = torch.empty_like(x)
        self.mod.bn_do(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, y,
                       n * c, c, x.numel() // (n * c), bn.eps)
        return y
