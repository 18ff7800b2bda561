"""Raw vector intrinsics that cann-ops' norm kernels call under the Ascend C API (issue 28), written
here from the documented semantics of the APIs built on them, never from an op's code.

vcadd(dst, src, repeat, dstRepStride, srcBlkStride, srcRepStride[, false]) is WholeReduceSum's
instruction with the mask taken from the mask register: one sum per repeat of the selected
elements, results dstRepStride apart, source strides in 32-byte blocks."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

// form 0: the dav_c220 form (last flag false); form 1: the older six-operand form; form 2: flag true
extern "C" __global__ __aicore__ void vcadd_k(GM_ADDR x, GM_ADDR y, int32_t n, int32_t repeat, int32_t dstRep,
                                              int32_t srcRep, int form)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 256);
    yg.SetGlobalBuffer((__gm__ float*)y, 64);
    pipe.InitBuffer(buf, (256 + 64) * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    LocalTensor<float> c = a[256];
    DataCopy(a, xg, 256);
    Duplicate(c, 0.0f, 64);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    AscendCUtils::SetMask<float>(n);
    if (form == 1)
        vcadd((__ubuf__ float*)c.GetPhyAddr(), (__ubuf__ float*)a.GetPhyAddr(), repeat, dstRep, 1, srcRep);
    else
        vcadd((__ubuf__ float*)c.GetPhyAddr(), (__ubuf__ float*)a.GetPhyAddr(), repeat, dstRep, 1, srcRep, form == 2);
    ResetMask();
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, c, 64);
}
extern "C" void run_vcadd(uint8_t* x, uint8_t* y, int32_t n, int32_t repeat, int32_t dstRep, int32_t srcRep, int form)
{
    vcadd_k<<<1, nullptr, nullptr>>>(x, y, n, repeat, dstRep, srcRep, form);
}
"""


@pytest.fixture(scope="module")
def mod():
    return asc.load(SOURCE, name="raw_intrinsics.cpp")


def _vcadd(mod, n, repeat, dst_rep, src_rep, form):
    x = torch.arange(1, 257, dtype=torch.float32)
    y = torch.full((64,), -1.0)
    mod.run_vcadd(x, y, n, repeat, dst_rep, src_rep, form)
    return x, y


@pytest.mark.parametrize("form", [0, 1])
def test_vcadd_sums_the_masked_elements_of_each_repeat(mod, form):
    x, y = _vcadd(mod, 40, 3, 1, 8, form)
    want = torch.zeros(64)
    for r in range(3):
        want[r] = x[64 * r : 64 * r + 40].sum()
    assert torch.equal(y, want)


def test_vcadd_strides_place_results_and_read_sources(mod):
    # results two apart; repeats start 16 blocks (128 floats) apart
    x, y = _vcadd(mod, 64, 2, 2, 16, 0)
    want = torch.zeros(64)
    want[0] = x[:64].sum()
    want[2] = x[128:192].sum()
    assert torch.equal(y, want)


def test_vcadd_with_its_flag_set_is_refused_by_name(mod):
    with pytest.raises(Exception, match="vcadd with its last flag true"):
        _vcadd(mod, 64, 1, 1, 8, 2)
