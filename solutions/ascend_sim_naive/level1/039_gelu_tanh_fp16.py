"""Ascend C answer for level1/039_gelu_tanh_fp16 (naive: one block, single-buffered)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
using T = half;
constexpr uint32_t TILE = 2048;             // elements per tile
constexpr uint32_t BUFN = 1;                // buffers per queue (2 = double buffering)
constexpr uint32_t UNIT = 16;               // elements per split unit (one 32-byte block)
constexpr uint32_t ALIGN = 32 / sizeof(T);  // elements per 32-byte block

// y = 0.5 x (1 + tanh(k (x + 0.044715 x^3))) = x / (1 + exp(-2k (x + 0.044715 x^3))), k = sqrt(2 / pi), all
// in float16 (exp overflowing to inf for very negative x gives -0)
class KernelGeluTanh {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t total) {
        // this block's range: the elements split in whole UNITs, the first `rem` blocks one unit more
        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();
        uint32_t units = (total + UNIT - 1) / UNIT;
        uint32_t per = units / nb, rem = units % nb;
        uint32_t start = (bi * per + (bi < rem ? bi : rem)) * UNIT;
        uint32_t end = start + (per + (bi < rem ? 1 : 0)) * UNIT;
        if (end > total) end = total;
        len = end > start ? end - start : 0;
        xGm.SetGlobalBuffer((__gm__ T*)x + start, len);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, len);
        pipe.InitBuffer(xQ, BUFN, TILE * sizeof(T));
        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));
        pipe.InitBuffer(tBuf, TILE * sizeof(T));
    }
    __aicore__ inline void Process() {
        for (uint32_t off = 0; off < len; off += TILE) {
            uint32_t n = len - off < TILE ? len - off : TILE;
            CopyIn(off, n);
            Compute(n);
            CopyOut(off, n);
        }
    }
private:
    // GM -> UB; a tail that is not a whole number of 32-byte blocks goes through DataCopyPad
    template <class Q> __aicore__ inline void Load(Q& q, GlobalTensor<T>& g, uint32_t off, uint32_t n) {
        LocalTensor<T> l = q.template AllocTensor<T>();
        if (n % ALIGN == 0) {
            DataCopy(l, g[off], n);
        } else {
            DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(l, g[off], p, pad);
        }
        q.EnQue(l);
    }
    __aicore__ inline void CopyIn(uint32_t off, uint32_t n) {
        Load(xQ, xGm, off, n);
    }
    __aicore__ inline void Compute(uint32_t n) {
        LocalTensor<T> x = xQ.DeQue<T>();
        LocalTensor<T> t = tBuf.Get<T>();
        LocalTensor<T> y = outQ.AllocTensor<T>();
        Mul(t, x, x, n);
        Muls(t, t, (T)0.044715f, n);
        Adds(t, t, (T)1.0f, n);
        Mul(t, t, x, n);                 // x + 0.044715 x^3
        Muls(t, t, (T)(-2.0f * 0.7978845608028654f), n);
        Exp(t, t, n);
        Adds(t, t, (T)1.0f, n);
        Div(y, x, t, n);
        outQ.EnQue(y);
        xQ.FreeTensor(x);
    }
    __aicore__ inline void CopyOut(uint32_t off, uint32_t n) {
        LocalTensor<T> y = outQ.DeQue<T>();
        if (n % ALIGN == 0) {
            DataCopy(yGm[off], y, n);
        } else {
            DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm[off], y, p);
        }
        outQ.FreeTensor(y);
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> xQ;
    TQue<QuePosition::VECOUT, BUFN> outQ;
    TBuf<QuePosition::VECCALC> tBuf;
    GlobalTensor<T> xGm, yGm;
    uint32_t len;
};

extern "C" __global__ __aicore__ void gelu_kernel(GM_ADDR x, GM_ADDR y, uint32_t total) {
    KernelGeluTanh op;
    op.Init(x, y, total);
    op.Process();
}

extern "C" void gelu_do(uint8_t* x, uint8_t* y, uint32_t total) {
    // host tiling: one block, one buffer per queue (naive)
    uint32_t blocks = 1;
    gelu_kernel<<<blocks, nullptr, nullptr>>>(x, y, total);
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        y = torch.empty_like(x)
        self.mod.gelu_do(x, y, x.numel())
        return y
