"""Ascend C answer for level2/038_hardswish_sub_mean_tail (optimised: rows over many blocks, multi-row tiles with one Sum per tile, double-buffered with prefetch)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 8192;    // floats per tile: rpt whole rows, each padded to a 32-byte multiple
constexpr uint32_t BUFN = 2;       // buffers per queue (double buffering)
constexpr uint32_t ALIGN = 8;      // floats per 32-byte block
constexpr uint32_t MAXRPT = 64;    // most rows per tile

// per row: h = hardswish(x) = x * clamp(x / 6 + 0.5, 0, 1); y = (h - mean(h)) * scale = scale * h - scale * mean.
// A tile holds rpt rows at a stride of `pitch` floats (feats rounded up to 32 bytes), so the element-wise part
// runs as one instruction per step over the whole tile and one Sum gives every row's total. The scalar unit
// must wait for those totals, so the next tile's copy-in is issued before that wait (prefetch) to keep MTE2 busy.
class KernelHswishSubMean {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t feats, uint32_t rpt, float scale) {
        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();
        uint32_t per = rows / nb, rem = rows % nb;
        uint32_t r0 = bi * per + (bi < rem ? bi : rem);
        nrows = per + (bi < rem ? 1 : 0);
        this->feats = feats;
        this->rpt = rpt;
        this->scale = scale;
        pitch = (feats + ALIGN - 1) / ALIGN * ALIGN;
        xGm.SetGlobalBuffer((__gm__ float*)x + uint64_t(r0) * feats, uint64_t(nrows) * feats);
        yGm.SetGlobalBuffer((__gm__ float*)y + uint64_t(r0) * feats, uint64_t(nrows) * feats);
        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(float));
        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(float));
        pipe.InitBuffer(hBuf, TILE * sizeof(float));
        pipe.InitBuffer(sumBuf, MAXRPT * sizeof(float));
        // Sum's scratch: one float per 64-float repeat of a row, rounded up to 32 bytes (GetSumMaxMinTmpSize)
        pipe.InitBuffer(sumTmp, ((pitch + 63) / 64 + ALIGN - 1) / ALIGN * ALIGN * sizeof(float));
    }
    __aicore__ inline void Process() {
        if (nrows == 0) return;
        CopyIn(0, nrows < rpt ? nrows : rpt);
        for (uint32_t r = 0; r < nrows; r += rpt) {
            uint32_t nr = nrows - r < rpt ? nrows - r : rpt;
            uint32_t next = r + rpt;
            if (next < nrows) CopyIn(next, nrows - next < rpt ? nrows - next : rpt);   // prefetch
            Compute(nr);
            CopyOut(r, nr);
        }
    }
private:
    // nr rows from GM (contiguous, feats apart) to UB (pitch apart): one strided copy; rows whose bytes
    // are not a 32-byte multiple go through DataCopyPad, which pads each row in UB
    __aicore__ inline void CopyIn(uint32_t r, uint32_t nr) {
        LocalTensor<float> xl = inQ.AllocTensor<float>();
        if (feats % ALIGN == 0) {
            DataCopy(xl, xGm[uint64_t(r) * feats], nr * feats);
        } else {
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(feats * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(xl, xGm[uint64_t(r) * feats], p, pad);
        }
        inQ.EnQue(xl);
    }
    __aicore__ inline void Compute(uint32_t nr) {
        uint32_t n = nr * pitch;
        LocalTensor<float> xv = inQ.DeQue<float>();
        LocalTensor<float> h = hBuf.Get<float>();
        LocalTensor<float> sums = sumBuf.Get<float>();
        LocalTensor<uint8_t> tmp = sumTmp.Get<uint8_t>();
        Muls(h, xv, 1.0f / 6.0f, n);
        Adds(h, h, 0.5f, n);
        Maxs(h, h, 0.0f, n);
        Mins(h, h, 1.0f, n);
        Mul(h, h, xv, n);                       // h = hardswish(x), pad lanes included (never summed)
        inQ.FreeTensor(xv);
        SumParams sp{nr, pitch, feats};
        Sum(sums, h, tmp, sp);                  // sums[i] = sum of row i's feats values
        LocalTensor<float> yl = outQ.AllocTensor<float>();
        Muls(yl, h, scale, n);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        float k = -scale / float(feats);
        float shift[MAXRPT];
        for (uint32_t i = 0; i < nr; ++i) shift[i] = sums.GetValue(i) * k;
        SetFlag<HardEvent::S_V>(0);
        WaitFlag<HardEvent::S_V>(0);
        for (uint32_t i = 0; i < nr; ++i) Adds(yl[i * pitch], yl[i * pitch], shift[i], feats);
        outQ.EnQue(yl);
    }
    __aicore__ inline void CopyOut(uint32_t r, uint32_t nr) {
        LocalTensor<float> yv = outQ.DeQue<float>();
        if (feats % ALIGN == 0) {
            DataCopy(yGm[uint64_t(r) * feats], yv, nr * feats);
        } else {
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(feats * sizeof(float)), 0, 0, 0};
            DataCopyPad(yGm[uint64_t(r) * feats], yv, p);
        }
        outQ.FreeTensor(yv);
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> inQ;
    TQue<QuePosition::VECOUT, BUFN> outQ;
    TBuf<QuePosition::VECCALC> hBuf, sumBuf, sumTmp;
    GlobalTensor<float> xGm, yGm;
    uint32_t nrows, feats, pitch, rpt;
    float scale;
};

extern "C" __global__ __aicore__ void hsm_kernel(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t feats, uint32_t rpt,
                                                 float scale) {
    KernelHswishSubMean op;
    op.Init(x, y, rows, feats, rpt, scale);
    op.Process();
}

extern "C" void hsm_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t feats, float scale) {
    // host tiling: rpt rows (padded to 32 bytes) per 8192-float tile, at most 64; one block per full tile
    // of rows, at most 24 blocks (beyond that the launch cost outgrows the gain)
    uint32_t pitch = (feats + 7) / 8 * 8;
    uint32_t rpt = 8192 / pitch;
    if (rpt > 64) rpt = 64;
    uint32_t blocks = rows / rpt;
    if (blocks > 24) blocks = 24;
    if (blocks < 1) blocks = 1;
    hsm_kernel<<<blocks, nullptr, nullptr>>>(x, y, rows, feats, rpt, scale);
}
"""


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = float(scale)
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        feats = x.shape[-1]
        if feats > 8192:
            raise ValueError("this kernel holds rows of at most 8192 features")
        y = torch.empty_like(x)
        self.mod.hsm_do(x, y, x.numel() // feats, feats, self.scale)
        return y
