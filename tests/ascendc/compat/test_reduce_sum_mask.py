"""The count form of ReduceSum and the mask the caller sets, from the ReduceSum documentation
(Atlas A2/A3): with isSetMask = true (the default) the API sets counter mode and its own count,
so a mask set before the call has no effect; with isSetMask = false the API leaves the mask alone,
the SetVectorMask value decides what is summed (an element count in counter mode, the bits of one
repeat in normal mode) and the count argument is not used (the docs suggest 1)."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

// which 0: counter mode, SetVectorMask(0, m), ReduceSum<float, false>(..., 1)
// which 1: normal mode, SetVectorMask(0, bits), ReduceSum<float, false>(..., 1)
// which 2: counter mode, SetVectorMask(0, m), then the default ReduceSum(..., n), which sets its own count
// y[0] = the GetAccVal register, y[1] = dst[0]
extern "C" __global__ __aicore__ void reduce_sum_mask(GM_ADDR x, GM_ADDR y, int32_t n, int which, uint64_t m)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 128);
    yg.SetGlobalBuffer((__gm__ float*)y, 8);
    pipe.InitBuffer(buf, (128 + 64 + 8) * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    LocalTensor<float> w = a[128];
    LocalTensor<float> c = a[192];
    DataCopy(a, xg, 128);
    Duplicate(w, 0.0f, 64);
    Duplicate(c, 0.0f, 8);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    if (which == 0 || which == 2) SetMaskCount();
    SetVectorMask<float>(0, m);
    if (which == 2) {
        ReduceSum(w, a, w, n);
    } else {
        ReduceSum<float, false>(w, a, w, 1);
    }
    SetMaskNorm();
    ResetMask();
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    c.SetValue(0, GetAccVal<float>());
    c.SetValue(1, w.GetValue(0));
    SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
    DataCopy(yg, c, 8);
}
extern "C" void run_reduce_sum_mask(uint8_t* x, uint8_t* y, int32_t n, int which, uint64_t m)
{
    reduce_sum_mask<<<1, nullptr, nullptr>>>(x, y, n, which, m);
}
"""


@pytest.fixture(scope="module")
def mod():
    return asc.load(SOURCE, name="reduce_sum_mask.cpp")


def _run(mod, which, m, n=1):
    x = torch.arange(1, 129, dtype=torch.float32)
    y = torch.full((8,), -1.0)
    mod.run_reduce_sum_mask(x, y, n, which, m)
    return x, y


@pytest.mark.parametrize("m", [16, 100])
def test_without_set_mask_the_counter_mask_counts_the_elements(mod, m):
    x, y = _run(mod, 0, m)
    want = x[:m].sum().item()
    assert y[0].item() == pytest.approx(want)
    assert y[1].item() == pytest.approx(want)


def test_without_set_mask_in_normal_mode_the_mask_bits_select(mod):
    x, y = _run(mod, 1, 0b1011)
    want = x[[0, 1, 3]].sum().item()
    assert y[0].item() == pytest.approx(want)
    assert y[1].item() == pytest.approx(want)


def test_with_set_mask_the_count_argument_replaces_the_callers_mask(mod):
    # a counter mask of 16 set before the call does not limit the default form to 16 elements
    x, y = _run(mod, 2, 16, n=64)
    want = x[:64].sum().item()
    assert y[0].item() == pytest.approx(want)
    assert y[1].item() == pytest.approx(want)
