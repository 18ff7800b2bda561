"""Ascend C answer for level2/013_batchnorm_eval_hardswish (optimised: multi-block, several rows per tile, double-buffered)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t BUFN = 2;         // buffers per queue (2 = double buffering)
constexpr uint32_t MAXBLOCKS = 40;   // blocks at most; rows are split evenly over them
constexpr uint32_t TILE = 8192;      // elements per tile: as many whole rows as fit, at least one
__aicore__ inline uint32_t Up8(uint32_t n) { return (n + 7) / 8 * 8; }
// rows [r0, r0 + nr) of this block: an even split with the remainder on the first blocks
__aicore__ inline void RowRange(uint32_t rows, uint32_t& r0, uint32_t& nr) {
    uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = rows / nb, rem = rows % nb;
    r0 = bi * per + (bi < rem ? bi : rem);
    nr = per + (bi < rem ? 1 : 0);
}
__aicore__ inline uint32_t Blocks(uint32_t units) { return units < MAXBLOCKS ? (units ? units : 1) : MAXBLOCKS; }

// y = hardswish(batch_norm_eval(x)) on x viewed as rows = N * C of L = H W elements (row r has channel r % C):
// bn = x * scale[c] + shift[c] with scale = w / sqrt(var + eps), shift = b - mean * scale, computed once per block
// as vectors; hardswish(v) = v * min(max(v + 3, 0), 6) / 6. Tiles of whole rows (padded to 32 B in UB) stream through.
class KernelBnHs {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR mean, GM_ADDR var, GM_ADDR w, GM_ADDR b, GM_ADDR y,
                                uint32_t rows, uint32_t ch, uint32_t len, float eps) {
        RowRange(rows, r0, nr);
        this->ch = ch;
        this->len = len;
        stride = Up8(len);
        rpt = TILE / stride ? TILE / stride : 1;
        if (rpt > nr && nr > 0) rpt = nr;
        xGm.SetGlobalBuffer((__gm__ float*)x);
        yGm.SetGlobalBuffer((__gm__ float*)y);
        pipe.InitBuffer(inQ, BUFN, rpt * stride * sizeof(float));
        pipe.InitBuffer(outQ, BUFN, rpt * stride * sizeof(float));
        pipe.InitBuffer(tmpBuf, stride * sizeof(float));
        // per-channel parameters -> scale (slot 0) and shift (slot 1)
        uint32_t cs = Up8(ch);
        pipe.InitBuffer(parBuf, 4 * cs * sizeof(float));
        LocalTensor<float> par = parBuf.Get<float>();
        GM_ADDR src[4] = {w, var, mean, b};
        for (int k = 0; k < 4; ++k) {
            GlobalTensor<float> g;
            g.SetGlobalBuffer((__gm__ float*)src[k], ch);
            DataCopyExtParams p{1, static_cast<uint32_t>(ch * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(par[k * cs], g, p, pad);
        }
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        LocalTensor<float> wv = par[0], vv = par[cs], mv = par[2 * cs], bv = par[3 * cs];
        Adds(vv, vv, eps, ch);
        Sqrt(vv, vv, ch);
        Div(wv, wv, vv, ch);          // scale
        Mul(mv, mv, wv, ch);
        Sub(par[cs], bv, mv, ch);     // shift
        SetFlag<HardEvent::V_S>(0);   // the scalar unit reads scale and shift per row
        WaitFlag<HardEvent::V_S>(0);
    }
    __aicore__ inline void Process() {
        for (uint32_t i = 0; i < nr; i += rpt) {
            uint32_t n = nr - i < rpt ? nr - i : rpt;
            uint64_t off = uint64_t(r0 + i) * len;
            CopyIn(off, n);
            Compute(r0 + i, n);
            CopyOut(off, n);
        }
    }
private:
    __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
        DataCopyExtParams p{static_cast<uint16_t>(n), static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        LocalTensor<float> l = inQ.AllocTensor<float>();
        DataCopyPad(l, xGm[off], p, pad);
        inQ.EnQue(l);
    }
    __aicore__ inline void Compute(uint32_t row0, uint32_t n) {   // rows [row0, row0 + n)
        LocalTensor<float> par = parBuf.Get<float>();
        LocalTensor<float> t = tmpBuf.Get<float>();
        uint32_t cs = Up8(ch);
        LocalTensor<float> xin = inQ.DeQue<float>();
        LocalTensor<float> y = outQ.AllocTensor<float>();
        for (uint32_t k = 0; k < n; ++k) {
            uint32_t c = (row0 + k) % ch;
            LocalTensor<float> v = xin[k * stride];
            Muls(v, v, par.GetValue(c), len);
            Adds(v, v, par.GetValue(cs + c), len);   // v = bn(x)
            Adds(t, v, 3.0f, len);
            Maxs(t, t, 0.0f, len);
            Mins(t, t, 6.0f, len);
            Mul(t, t, v, len);
            Muls(y[k * stride], t, 1.0f / 6.0f, len);
        }
        inQ.FreeTensor(xin);
        outQ.EnQue(y);
    }
    __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
        DataCopyExtParams p{static_cast<uint16_t>(n), static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        LocalTensor<float> o = outQ.DeQue<float>();
        DataCopyPad(yGm[off], o, p);
        outQ.FreeTensor(o);
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> inQ;
    TQue<QuePosition::VECOUT, BUFN> outQ;
    TBuf<QuePosition::VECCALC> tmpBuf, parBuf;
    GlobalTensor<float> xGm, yGm;
    uint32_t r0, nr, ch, len, stride, rpt;
};
extern "C" __global__ __aicore__ void bnhs_kernel(GM_ADDR x, GM_ADDR mean, GM_ADDR var, GM_ADDR w, GM_ADDR b, GM_ADDR y,
                                                  uint32_t rows, uint32_t ch, uint32_t len, float eps) {
    KernelBnHs op;
    op.Init(x, mean, var, w, b, y, rows, ch, len, eps);
    op.Process();
}
extern "C" void bnhs_do(uint8_t* x, uint8_t* mean, uint8_t* var, uint8_t* w, uint8_t* b, uint8_t* y,
                        uint32_t rows, uint32_t ch, uint32_t len, float eps) {
    bnhs_kernel<<<Blocks(rows), nullptr, nullptr>>>(x, mean, var, w, b, y, rows, ch, len, eps);
}
"""


class ModelNew(nn.Module):
    def __init__(self, channels, eps):
        super().__init__()
        # the task's parameters and buffers, created in the same order (same random stream)
        self.weight = nn.Parameter(1.0 + torch.randn(channels) * 0.1)
        self.bias = nn.Parameter(torch.randn(channels) * 0.1)
        self.register_buffer("running_mean", torch.randn(channels) * 0.2)
        self.register_buffer("running_var", torch.rand(channels) + 0.5)
        self.eps = float(eps)
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        n, c = x.shape[0], x.shape[1]
        y = torch.empty_like(x)
        self.mod.bnhs_do(x, self.running_mean, self.running_var, self.weight, self.bias, y,
                         n * c, c, x.numel() // (n * c), self.eps)
        return y
