"""Forms from a second pass over public Ascend C operator projects the simulator was not tuned on
(personal and competition repositories), each in a small kernel or project of our own:

- an empty mask in normal mode (a bit mask of two zero words, or a continuous mask of 0), as a kernel
  whose tiling computes the mask of a tail that is empty: on Atlas A2 the instruction is a NOP
  (asc-devkit's ``CheckMaskArray`` / ``CheckMaskValue`` only warn; the assertion is for the 310P's
  ``__NPU_ARCH__`` 2002).
"""

from __future__ import annotations

import torch

import kernel_gym.ascendc as asc

# ---- an empty mask is a NOP -------------------------------------------------------------------------------
EMPTY_MASK = r"""
#include "kernel_operator.h"
using namespace AscendC;

__global__ __aicore__ void empty_mask_kernel(GM_ADDR x, GM_ADDR y, uint64_t lo, uint64_t cont)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * 64 * sizeof(float));
    LocalTensor<float> a = buf.Get<float>(), b = a[64];
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer((__gm__ float*)x, 64);
    gy.SetGlobalBuffer((__gm__ float*)y, 64);
    DataCopy(a, gx, 64);
    DataCopy(b, gx, 64);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    uint64_t mask[2] = {lo, 0};
    Adds(a, a, 1.0f, mask, 1, {1, 1, 8, 8});                 // bit mask: lanes of lo get +1
    Add(b, b, b, cont, 1, {1, 1, 1, 8, 8, 8});               // continuous mask: the first cont lanes double
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(gy, a, 64);
    DataCopy(gy[64], b, 64);
}

extern "C" void run(uint8_t* x, uint8_t* y, uint64_t lo, uint64_t cont, void* stream)
{
    empty_mask_kernel<<<1, nullptr, stream>>>(x, y, lo, cont);
}
"""


def test_empty_mask_is_a_nop() -> None:
    mod = asc.load(EMPTY_MASK)
    x = torch.randn(64)
    y = torch.full((128,), float("nan"))
    mod.run(x, y, 0, 0, None)
    assert mod.last_run is not None
    assert mod.last_run.faults == []
    assert any("empty_mask" in str(w) for w in mod.last_run.warnings)
    torch.testing.assert_close(y, torch.cat([x, x]))
    # the same kernel with masks that select lanes still computes them
    y2 = torch.empty(128)
    mod.run(x, y2, 0b101, 3, None)
    want_a, want_b = x.clone(), x.clone()
    want_a[[0, 2]] += 1
    want_b[:3] *= 2
    torch.testing.assert_close(y2, torch.cat([want_a, want_b]))
