"""Ascend C answer for level1/089_max_pool_2d_dilated (naive: one block, one plane per tile, single-buffered, a loop over output rows)."""
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

// MaxPool2d (dilated) on planes of H x W (1-D pooling is a plane of one row). For each horizontal tap b the
// plane is loaded once with DataCopyPad so that row r of the load buffer holds
// x[r - ph, j + b * dw - pw] for window starts j = 0 .. wc - 1 (pad value outside, from a Duplicate and
// the copy's left/right padding); the taps are combined elementwise, a GatherMask keeps every sw-th
// window start (sw = 2: pattern 1, sw = 4: pattern 3), and the vertical taps combine whole rows.
using T = float;
constexpr bool IS_MAX = true;
constexpr uint32_t EPB = 32 / sizeof(T);    // elements per 32-byte block
constexpr uint32_t TILE = 1;           // elements of a load buffer (whole planes, at least one)
constexpr bool VREPEAT = false;         // vertical taps: one repeat per output row (else a loop over rows)
struct PoolShape {
    uint32_t planes, h, w, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw;
};
__aicore__ inline uint32_t RoundUp(uint32_t n, uint32_t m) { return (n + m - 1) / m * m; }
__aicore__ inline void Op(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint32_t n) {
    if (IS_MAX) Max(d, a, b, n); else Add(d, a, b, n);
}

class KernelPool {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const PoolShape& shape) {
        s = shape;
        RowRange(s.planes, q0, nq);
        hp = s.h + 2 * s.ph;
        wc = (s.wo - 1) * s.sw + 1;               // window starts before the horizontal subsampling
        rs = RoundUp(wc + EPB, EPB * s.sw);       // row stride of the load buffers
        rsc = rs / s.sw;                          // row stride after the subsampling (and of the output)
        plane = hp * rs;
        tp = TILE / plane ? TILE / plane : 1;
        padv = IS_MAX ? (T)-3.0e38f : (T)0;
        xGm.SetGlobalBuffer((__gm__ T*)x);
        yGm.SetGlobalBuffer((__gm__ T*)y);
        pipe.InitBuffer(inQ, BUFN, tp * plane * sizeof(T));
        pipe.InitBuffer(mBuf, tp * plane * sizeof(T));
        pipe.InitBuffer(cBuf, (s.sw > 1 ? tp * plane / s.sw : EPB) * sizeof(T));
        pipe.InitBuffer(outQ, BUFN, tp * s.ho * rsc * sizeof(T));
    }
    __aicore__ inline void Process() {
        for (uint32_t q = 0; q < nq; q += tp) {
            uint32_t n = nq - q < tp ? nq - q : tp;
            LocalTensor<T> m = mBuf.Get<T>();
            for (uint32_t b = 0; b < s.kw; ++b) {      // horizontal taps
                LocalTensor<T> l = inQ.AllocTensor<T>();
                LoadTap(l, q0 + q, n, b);
                inQ.EnQue(l);
                LocalTensor<T> t = inQ.DeQue<T>();
                if (b == 0) Adds(m, t, (T)0, n * plane); else Op(m, m, t, n * plane);
                inQ.FreeTensor(t);
            }
            LocalTensor<T> c = m;
            if (s.sw > 1) {                            // keep every sw-th window start of each row
                uint64_t got = 0;
                c = cBuf.Get<T>();
                GatherMask(c, m, (uint8_t)(s.sw == 2 ? 1 : 3), true, n * plane, GatherMaskParams{1, 1, 0, 0}, got);
            }
            LocalTensor<T> o = outQ.AllocTensor<T>();
            if (s.kh == 1 && s.sh == 1 && s.ph == 0) { // 1-D: the rows are the output rows
                if (IS_MAX) Adds(o, c, (T)0, n * s.ho * rsc); else Muls(o, c, (T)(1.0f / s.kw), n * s.ho * rsc);
            } else {
                for (uint32_t p = 0; p < n; ++p) Vertical(o[p * s.ho * rsc], c[p * plane / s.sw]);
            }
            outQ.EnQue(o);
            LocalTensor<T> r = outQ.DeQue<T>();
            DataCopyExtParams cp{static_cast<uint16_t>(n * s.ho), static_cast<uint32_t>(s.wo * sizeof(T)),
                                 (rsc - RoundUp(s.wo, EPB)) / EPB, 0, 0};
            DataCopyPad(yGm[uint64_t(q0 + q) * s.ho * s.wo], r, cp);
            outQ.FreeTensor(r);
        }
    }
private:
    // load buffer for horizontal tap b of planes [p0, p0 + n): pad value everywhere, then the rows
    __aicore__ inline void LoadTap(LocalTensor<T>& l, uint32_t p0, uint32_t n, uint32_t b) {
        Duplicate(l, padv, n * plane);
        SetFlag<HardEvent::V_MTE2>(0);
        WaitFlag<HardEvent::V_MTE2>(0);
        int32_t c0 = int32_t(b * s.dw) - int32_t(s.pw);      // input column of window start 0
        uint32_t jl = c0 < 0 ? uint32_t(-c0) : 0;              // first window start inside the row
        int32_t jh = int32_t(s.w) - c0 < int32_t(wc) ? int32_t(s.w) - c0 : int32_t(wc);
        uint32_t cnt = uint32_t(jh) - jl;
        uint32_t rp = RoundUp(jl + cnt, EPB) - (jl + cnt);
        DataCopyPadExtParams<T> pad{true, static_cast<uint8_t>(jl), static_cast<uint8_t>(rp), padv};
        uint32_t gapBlk = (rs - (jl + cnt + rp)) / EPB;
        uint64_t src = uint64_t(p0) * s.h * s.w + uint32_t(int32_t(jl) + c0);
        if (s.ph == 0) {   // planes follow each other without pad rows: one copy for all rows
            DataCopyExtParams cp{static_cast<uint16_t>(n * s.h), cnt * uint32_t(sizeof(T)),
                                 (s.w - cnt) * uint32_t(sizeof(T)), gapBlk, 0};
            DataCopyPad(l, xGm[src], cp, pad);
        } else {
            DataCopyExtParams cp{static_cast<uint16_t>(s.h), cnt * uint32_t(sizeof(T)),
                                 (s.w - cnt) * uint32_t(sizeof(T)), gapBlk, 0};
            for (uint32_t p = 0; p < n; ++p)
                DataCopyPad(l[p * plane + s.ph * rs], xGm[src + uint64_t(p) * s.h * s.w], cp, pad);
        }
    }
    // output rows of one plane: o[i] = op over a of c[i * sh + a * dh] (rows in padded coordinates)
    __aicore__ inline void Vertical(const LocalTensor<T>& o, const LocalTensor<T>& c) {
        if (VREPEAT && s.kh >= 2 && s.wo <= 256 / sizeof(T)) {
            uint8_t os = rsc / EPB, is = s.sh * rsc / EPB;
            for (uint32_t a = 1; a < s.kh; ++a) {
                const LocalTensor<T>& first = a == 1 ? c : o;
                BinaryRepeatParams rp(1, 1, 1, os, a == 1 ? is : os, is);
                if (IS_MAX) Max(o, first, c[a * s.dh * rsc], (uint64_t)s.wo, s.ho, rp);
                else Add(o, first, c[a * s.dh * rsc], (uint64_t)s.wo, s.ho, rp);
            }
            if (!IS_MAX) Muls(o, o, (T)(1.0f / (s.kh * s.kw)), (uint64_t)s.wo, s.ho, UnaryRepeatParams(1, 1, os, os));
            return;
        }
        for (uint32_t i = 0; i < s.ho; ++i) {
            LocalTensor<T> d = o[i * rsc];
            for (uint32_t a = 0; a < s.kh; ++a) {
                LocalTensor<T> r = c[(i * s.sh + a * s.dh) * rsc];
                if (a == 0) Adds(d, r, (T)0, s.wo); else Op(d, d, r, s.wo);
            }
            if (!IS_MAX) Muls(d, d, (T)(1.0f / (s.kh * s.kw)), s.wo);   // count_include_pad: divide by the window size
        }
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> inQ;
    TQue<QuePosition::VECOUT, BUFN> outQ;
    TBuf<QuePosition::VECCALC> mBuf, cBuf;
    GlobalTensor<T> xGm, yGm;
    PoolShape s;
    uint32_t q0, nq, hp, wc, rs, rsc, plane, tp;
    T padv;
};
extern "C" __global__ __aicore__ void pool_kernel(GM_ADDR x, GM_ADDR y, PoolShape s) {
    KernelPool op;
    op.Init(x, y, s);
    op.Process();
}
extern "C" void pool_do(uint8_t* x, uint8_t* y, uint32_t planes, uint32_t h, uint32_t w, uint32_t ho, uint32_t wo,
                        uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw,
                        uint32_t dh, uint32_t dw) {
    PoolShape s{planes, h, w, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw};
    pool_kernel<<<Blocks(planes), nullptr, nullptr>>>(x, y, s);
}
"""

class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, dilation: int):
        super().__init__()
        self.k, self.s, self.dilation = kernel_size, stride, dilation
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        n, c, h, w = x.shape
        k, s, p, d = self.k, self.s, 0, self.dilation
        ho = (h + 2 * p - d * (k - 1) - 1) // s + 1
        wo = (w + 2 * p - d * (k - 1) - 1) // s + 1
        y = torch.empty(n, c, ho, wo, dtype=x.dtype)
        self.mod.pool_do(x, y, n * c, h, w, ho, wo, k, k, s, s, p, p, d, d)
        return y
