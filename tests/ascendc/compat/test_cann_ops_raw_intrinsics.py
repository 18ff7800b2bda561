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


# The builtins under Or, Duplicate, DataCopy (UB -> UB), Transpose and TransDataTo5HD, on int16 data:
# x is 512 elements, a = x[0:256], b = x[256:512] in UB; y gets the 256 elements of the result c.
B16_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void raw_b16(GM_ADDR x, GM_ADDR y, int which)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<int16_t> xg, yg;
    xg.SetGlobalBuffer((__gm__ int16_t*)x, 512);
    yg.SetGlobalBuffer((__gm__ int16_t*)y, 256);
    pipe.InitBuffer(buf, 768 * sizeof(int16_t));
    LocalTensor<int16_t> a = buf.Get<int16_t>();
    LocalTensor<int16_t> b = a[256];
    LocalTensor<int16_t> c = a[512];
    DataCopy(a, xg, 512);
    Duplicate(c, (int16_t)0, 256);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    __ubuf__ int16_t* pa = (__ubuf__ int16_t*)a.GetPhyAddr();
    __ubuf__ int16_t* pb = (__ubuf__ int16_t*)b.GetPhyAddr();
    __ubuf__ int16_t* pc = (__ubuf__ int16_t*)c.GetPhyAddr();
    if (which == 0) {  // the first 16 lanes of one repeat
        SetVectorMask<int16_t>(0, 0xffff);
        vector_dup(pc, (int16_t)7, 1, 1, 1, 8, 8);
    } else if (which == 1) {  // two full repeats
        SetVectorMask<int16_t>(static_cast<uint64_t>(-1), static_cast<uint64_t>(-1));
        vor(pc, pa, pb, 2, 1, 1, 1, 8, 8, 8);
    } else if (which == 2) {  // blocks 0 and 2 of a into blocks 0 and 3 of c
        copy_ubuf_to_ubuf(pc, pa, 0, 2, 1, 1, 2);
    } else if (which == 5) {  // counter mode: 200 elements over two repeats, then back to the bit mask
        set_mask_count();
        SetVectorMask<int16_t>(0, 200);
        vor(pc, pa, pb, 2, 1, 1, 1, 8, 8, 8);
        set_mask_norm();
        SetVectorMask<int16_t>(0, 0xf);
        vor(pc + 240, pa, pb, 1, 1, 1, 1, 8, 8, 8);
    } else if (which == 3) {
        vtranspose((__ubuf__ uint16_t*)pc, (__ubuf__ uint16_t*)pa);
    } else {  // 16 rows of a (16 elements each) into 16 rows of c, through the VA registers
        uint64_t d0[8], d1[8], s0[8], s1[8];
        for (int i = 0; i < 8; ++i) {
            d0[i] = (uint64_t)(pc + 16 * i);
            d1[i] = (uint64_t)(pc + 16 * (i + 8));
            s0[i] = (uint64_t)(pa + 16 * i);
            s1[i] = (uint64_t)(pa + 16 * (i + 8));
        }
        set_va_reg_sb(VA4, d0);
        set_va_reg_sb(VA5, d1);
        set_va_reg_sb(VA6, s0);
        set_va_reg_sb(VA7, s1);
        scatter_vnchwconv_b16(VA4, VA6, 1, 0, 0);
    }
    ResetMask();
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, c, 256);
}
extern "C" void run_raw_b16(uint8_t* x, uint8_t* y, int which)
{
    raw_b16<<<1, nullptr, nullptr>>>(x, y, which);
}
"""


@pytest.fixture(scope="module")
def b16_mod():
    return asc.load(B16_SOURCE, name="raw_b16.cpp")


def _b16(b16_mod, which):
    x = torch.arange(512, dtype=torch.int16) * 3 + 1
    y = torch.full((256,), -1, dtype=torch.int16)
    b16_mod.run_raw_b16(x, y, which)
    return x[:256], x[256:], y


def test_vector_dup_fills_the_masked_lanes(b16_mod):
    _, _, y = _b16(b16_mod, 0)
    want = torch.zeros(256, dtype=torch.int16)
    want[:16] = 7
    assert torch.equal(y, want)


def test_vor_ors_two_repeats(b16_mod):
    a, b, y = _b16(b16_mod, 1)
    assert torch.equal(y, a | b)


def test_copy_ubuf_to_ubuf_counts_bursts_and_gaps_in_blocks(b16_mod):
    a, _, y = _b16(b16_mod, 2)
    want = torch.zeros(256, dtype=torch.int16)
    want[0:16] = a[0:16]
    want[48:64] = a[32:48]
    assert torch.equal(y, want)


def test_vtranspose_transposes_a_16x16_b16_block(b16_mod):
    a, _, y = _b16(b16_mod, 3)
    assert torch.equal(y.view(16, 16), a.view(16, 16).t())


def test_scatter_vnchwconv_b16_reads_its_lists_from_the_va_registers(b16_mod):
    a, _, y = _b16(b16_mod, 4)
    assert torch.equal(y.view(16, 16), a.view(16, 16).t())


def test_set_mask_count_and_set_mask_norm_switch_the_mask_mode(b16_mod):
    a, b, y = _b16(b16_mod, 5)
    want = torch.zeros(256, dtype=torch.int16)
    want[:200] = (a | b)[:200]
    want[240:244] = (a | b)[:4]
    assert torch.equal(y, want)
