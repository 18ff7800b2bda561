"""Ascend C answer for level2/039_mish_residual_scale (optimised: planes over many blocks, multi-plane tiles, double-buffered, fused formula)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 8192;      // floats per tile
constexpr uint32_t BUFN = 2;         // buffers per queue (double buffering)
constexpr uint32_t ALIGN = 8;        // floats per 32-byte block
constexpr uint32_t MAXC = 4096;      // most channels (gamma values held in UB)

// y[b, c, :, :] = (mish(x) + x) * gamma[c]. With v = 1 + exp(x), tanh(softplus(x)) = (v^2 - 1) / (v^2 + 1),
// so mish(x) + x = 2 x v^2 / (v^2 + 1): one Exp and one Div. x is capped at 20 before the Exp (the ratio is 1
// in float there) so v^2 cannot overflow. The 2 is folded into the per-plane scale 2 * gamma[c].
// Each block takes a contiguous run of the B * C planes (H * W elements each). A tile holds `ppt` whole planes
// at a stride of `pitch` floats (H * W rounded up to 32 bytes) when a plane fits a tile, or one piece of a
// plane when it does not (ppt = 0).
class KernelMishResidualScale {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, uint32_t planes, uint32_t channels,
                                uint32_t hw, uint32_t ppt) {
        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();
        uint32_t per = planes / nb, rem = planes % nb;
        p0 = bi * per + (bi < rem ? bi : rem);
        np = per + (bi < rem ? 1 : 0);
        this->channels = channels;
        this->hw = hw;
        this->ppt = ppt;
        pitch = (hw + ALIGN - 1) / ALIGN * ALIGN;
        xGm.SetGlobalBuffer((__gm__ float*)x + uint64_t(p0) * hw, uint64_t(np) * hw);
        yGm.SetGlobalBuffer((__gm__ float*)y + uint64_t(p0) * hw, uint64_t(np) * hw);
        gGm.SetGlobalBuffer((__gm__ float*)gamma, channels);
        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(float));
        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(float));
        pipe.InitBuffer(tBuf, TILE * sizeof(float));
        pipe.InitBuffer(gBuf, (channels + ALIGN - 1) / ALIGN * ALIGN * sizeof(float));
    }
    __aicore__ inline void Process() {
        // every gamma value into UB once; the scalar unit reads them after the copy lands
        LocalTensor<float> g = gBuf.Get<float>();
        DataCopyExtParams gp{1, static_cast<uint32_t>(channels * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> gpad{false, 0, 0, 0};
        DataCopyPad(g, gGm, gp, gpad);
        SetFlag<HardEvent::MTE2_S>(0);
        WaitFlag<HardEvent::MTE2_S>(0);
        if (ppt > 0) {
            for (uint32_t p = 0; p < np; p += ppt) {
                uint32_t nr = np - p < ppt ? np - p : ppt;
                CopyIn(uint64_t(p) * hw, nr, hw);
                Compute(p, nr, pitch, hw, g);
                CopyOut(uint64_t(p) * hw, nr, hw);
            }
        } else {
            for (uint32_t p = 0; p < np; ++p) {
                for (uint32_t off = 0; off < hw; off += TILE) {
                    uint32_t n = hw - off < TILE ? hw - off : TILE;
                    CopyIn(uint64_t(p) * hw + off, 1, n);
                    Compute(p, 1, TILE, n, g);
                    CopyOut(uint64_t(p) * hw + off, 1, n);
                }
            }
        }
    }
private:
    // nr runs of n floats, contiguous in GM, `pitch` apart in UB (DataCopyPad pads each run to 32 bytes)
    __aicore__ inline void CopyIn(uint64_t base, uint32_t nr, uint32_t n) {
        LocalTensor<float> xl = inQ.AllocTensor<float>();
        if (n % ALIGN == 0) {
            DataCopy(xl, xGm[base], nr * n);
        } else {
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(xl, xGm[base], p, pad);
        }
        inQ.EnQue(xl);
    }
    // planes p .. p + nr - 1 of this block, `stride` floats apart in the tile, n valid floats each
    __aicore__ inline void Compute(uint32_t p, uint32_t nr, uint32_t stride, uint32_t n, LocalTensor<float>& g) {
        uint32_t len = (nr - 1) * stride + n;
        LocalTensor<float> xv = inQ.DeQue<float>();
        LocalTensor<float> t = tBuf.Get<float>();
        LocalTensor<float> yl = outQ.AllocTensor<float>();
        Mins(t, xv, 20.0f, len);
        Exp(t, t, len);
        Adds(t, t, 1.0f, len);              // v
        Mul(t, t, t, len);                  // v^2
        Adds(yl, t, 1.0f, len);
        Div(t, t, yl, len);                 // v^2 / (v^2 + 1)
        Mul(yl, t, xv, len);
        for (uint32_t i = 0; i < nr; ++i) {
            float s = 2.0f * g.GetValue((p0 + p + i) % channels);
            Muls(yl[i * stride], yl[i * stride], s, n);
        }
        outQ.EnQue(yl);
        inQ.FreeTensor(xv);
    }
    __aicore__ inline void CopyOut(uint64_t base, uint32_t nr, uint32_t n) {
        LocalTensor<float> yv = outQ.DeQue<float>();
        if (n % ALIGN == 0) {
            DataCopy(yGm[base], yv, nr * n);
        } else {
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
            DataCopyPad(yGm[base], yv, p);
        }
        outQ.FreeTensor(yv);
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFN> inQ;
    TQue<QuePosition::VECOUT, BUFN> outQ;
    TBuf<QuePosition::VECCALC> tBuf, gBuf;
    GlobalTensor<float> xGm, gGm, yGm;
    uint32_t p0, np, channels, hw, pitch, ppt;
};

extern "C" __global__ __aicore__ void mrs_kernel(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, uint32_t planes,
                                                 uint32_t channels, uint32_t hw, uint32_t ppt) {
    KernelMishResidualScale op;
    op.Init(x, gamma, y, planes, channels, hw, ppt);
    op.Process();
}

extern "C" void mrs_do(uint8_t* x, uint8_t* gamma, uint8_t* y, uint32_t planes, uint32_t channels, uint32_t hw) {
    // host tiling: ppt whole planes (padded to 32 bytes) per 8192-float tile, 0 when a plane is larger;
    // one block per 8192 elements, at most 24 blocks
    uint32_t pitch = (hw + 7) / 8 * 8;
    uint32_t ppt = 8192 / pitch;
    uint64_t total = uint64_t(planes) * hw;
    uint32_t blocks = uint32_t((total + 8191) / 8192);
    if (blocks > planes) blocks = planes;
    if (blocks > 24) blocks = 24;
    if (blocks < 1) blocks = 1;
    mrs_kernel<<<blocks, nullptr, nullptr>>>(x, gamma, y, planes, channels, hw, ppt);
}
"""


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gamma = nn.Parameter(1.0 + torch.randn(channels, 1, 1) * 0.1)
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        channels = self.gamma.numel()
        if channels > 4096:
            raise ValueError("this kernel holds at most 4096 channel scales")
        hw = x.shape[-2] * x.shape[-1]
        y = torch.empty_like(x)
        self.mod.mrs_do(x, self.gamma, y, x.numel() // hw, channels, hw)
        return y
