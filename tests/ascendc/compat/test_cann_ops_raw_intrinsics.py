"""Raw vector intrinsics that cann-ops' norm kernels call under the Ascend C API (issue 28), written
here from the documented semantics of the APIs built on them, never from an op's code.

vcadd(dst, src, repeat, dstRepStride, srcBlkStride, srcRepStride[, false]) is WholeReduceSum's
instruction with the mask taken from the mask register: one sum per repeat of the selected
elements, results dstRepStride apart, source strides in 32-byte blocks. get_max_min_cnt() is the
register GetReduceMaxMinCount reads: the last max/min's bit pattern in the low 32 bits (low 16 for
half) and its index in the high 32 bits."""

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


MAX_MIN_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

// get_max_min_cnt after WholeReduceMax over one 64-element float repeat (or a 128-element half repeat):
// y[0] the low 32 bits, y[1] the high 32 bits of the register
template <class T>
__aicore__ inline void max_min_cnt_of(GM_ADDR x, GM_ADDR y, int32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<T> xg;
    xg.SetGlobalBuffer((__gm__ T*)x, 128);
    pipe.InitBuffer(buf, 256 * sizeof(T));
    LocalTensor<T> a = buf.Get<T>();
    LocalTensor<T> d = a[128];
    DataCopy(a, xg, 128);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WholeReduceMax(d, a, n, 1, 1, 1, 8);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    uint64_t reg = get_max_min_cnt();
    ((uint32_t*)y)[0] = uint32_t(reg);
    ((uint32_t*)y)[1] = uint32_t(reg >> 32);
}
extern "C" __global__ __aicore__ void max_min_cnt_f32(GM_ADDR x, GM_ADDR y, int32_t n)
{
    max_min_cnt_of<float>(x, y, n);
}
extern "C" __global__ __aicore__ void max_min_cnt_f16(GM_ADDR x, GM_ADDR y, int32_t n)
{
    max_min_cnt_of<half>(x, y, n);
}
extern "C" void run_max_min_cnt(uint8_t* x, uint8_t* y, int32_t n, int half_type)
{
    if (half_type)
        max_min_cnt_f16<<<1, nullptr, nullptr>>>(x, y, n);
    else
        max_min_cnt_f32<<<1, nullptr, nullptr>>>(x, y, n);
}
"""


@pytest.fixture(scope="module")
def max_min_mod():
    return asc.load(MAX_MIN_SOURCE, name="raw_max_min_cnt.cpp")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_get_max_min_cnt_holds_the_value_bits_low_and_the_index_high(max_min_mod, dtype):
    x = torch.zeros(128, dtype=dtype)
    x[5] = 3.5
    x[50] = 7.25  # the maximum of the first 60 elements
    x[61] = 100.0  # outside the mask
    y = torch.zeros(2, dtype=torch.int32)
    max_min_mod.run_max_min_cnt(x, y, 60, int(dtype == torch.float16))
    low, high = y.tolist()
    if dtype == torch.float32:
        value = torch.tensor([low], dtype=torch.int32).view(torch.float32).item()
    else:
        assert low >> 16 == 0  # half fills the low 16 bits only
        value = torch.tensor([low], dtype=torch.int16).view(torch.float16).item()
    assert value == 7.25
    assert high == 50
