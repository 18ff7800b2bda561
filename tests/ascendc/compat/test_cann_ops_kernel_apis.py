"""Kernel APIs the cann-ops kernels use (issue 28), written here from the Ascend C API
documentation, never from an op's code: GetAccVal<T> (the result of the last count-form ReduceSum),
the mask setters of AscendCUtils (SetMask<T>(len), SetMask<T>(high, low), SetMaskCount<T>,
SetMaskNorm<T>), which act as SetVectorMask's forms and the mode switches, and InitOutput, whose
documented prototype takes the GlobalTensor by value (a view `y[k]` is passed directly), and
SoftMaxFlashV2TilingFuncImpl, the kernel-side form of SoftMaxFlashV2TilingFunc (shape as srcM, srcK;
work space in floats; the tiling returned by value), and BRCB_BROADCAST_NUMBER, Brcb's elements per
repeat, by which kernels size a Brcb call."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

// which 0: ReduceSum over the first n elements, its result read back with GetAccVal<float>
// which 1: AscendCUtils::SetMask<float>(n), then a mask-placeholder Add of one 64-element repeat
// which 2: AscendCUtils::SetMask<float>(high, low) (bit masks), then the same Add
// which 3: counter mode by AscendCUtils::SetMaskCount<float>, SetMask<float>(n) counts n elements of 2 repeats
extern "C" __global__ __aicore__ void norm_apis(GM_ADDR x, GM_ADDR y, int32_t n, int which, uint64_t lo)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 128);
    yg.SetGlobalBuffer((__gm__ float*)y, 128);
    pipe.InitBuffer(buf, 3 * 128 * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    LocalTensor<float> c = a[128];
    LocalTensor<float> w = a[256];
    DataCopy(a, xg, 128);
    Duplicate(c, 0.0f, 128);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    if (which == 0) {
        ReduceSum(w, a, w, n);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        c.SetValue(0, GetAccVal<float>());
        SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
    } else {
        if (which == 1) AscendCUtils::SetMask<float>(n);
        if (which == 2) AscendCUtils::SetMask<float>(0, lo);
        if (which == 3) {
            AscendCUtils::SetMaskCount<float>();
            AscendCUtils::SetMask<float>(n);
        }
        Add<float, false>(c, a, a, MASK_PLACEHOLDER, which == 3 ? 2 : 1, {1, 1, 1, 8, 8, 8});
        if (which == 3) AscendCUtils::SetMaskNorm<float>();
        ResetMask();
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    }
    DataCopy(yg, c, 128);
}
// InitOutput on views of y: elements [8, 8 + n) set to 5, [64, 64 + n) to the default 0
extern "C" __global__ __aicore__ void init_output_views(GM_ADDR y, int32_t n)
{
    GlobalTensor<float> yg;
    yg.SetGlobalBuffer((__gm__ float*)y, 128);
    InitOutput<float>(yg[8], n, 5.0f);
    InitOutput<float>(yg[64], n);
}
extern "C" void run_init_output_views(uint8_t* y, int32_t n)
{
    init_output_views<<<1, nullptr, nullptr>>>(y, n);
}
// the kernel-side SoftmaxFlashV2 tiling of an [m, k] float input with workFloats floats of work space
extern "C" __global__ __aicore__ void flashv2_tiling(GM_ADDR y, uint32_t m, uint32_t k, uint32_t workFloats)
{
    SoftMaxTiling t = SoftMaxFlashV2TilingFuncImpl(m, k, sizeof(float), sizeof(float), workFloats, true, false);
    uint32_t* out = (uint32_t*)y;
    out[0] = t.srcM;
    out[1] = t.srcK;
    out[2] = t.splitM;
    out[3] = t.splitK;
    out[4] = t.rangeM;
    out[5] = t.tailM;
    out[6] = t.reduceK;
}
extern "C" void run_flashv2_tiling(uint8_t* y, uint32_t m, uint32_t k, uint32_t workFloats)
{
    flashv2_tiling<<<1, nullptr, nullptr>>>(y, m, k, workFloats);
}
// Brcb of n floats, its repeat count from BRCB_BROADCAST_NUMBER: element i fills block i of y
extern "C" __global__ __aicore__ void brcb_by_constant(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 16);
    yg.SetGlobalBuffer((__gm__ float*)y, 128);
    pipe.InitBuffer(buf, (16 + 128) * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    LocalTensor<float> c = a[16];
    DataCopy(a, xg, 16);
    Duplicate(c, 0.0f, 128);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Brcb(c, a, uint8_t(n / BRCB_BROADCAST_NUMBER), {1, 8});
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, c, 128);
}
extern "C" void run_brcb_by_constant(uint8_t* x, uint8_t* y, uint32_t n)
{
    brcb_by_constant<<<1, nullptr, nullptr>>>(x, y, n);
}
extern "C" void run_norm_apis(uint8_t* x, uint8_t* y, int32_t n, int which, uint64_t lo)
{
    norm_apis<<<1, nullptr, nullptr>>>(x, y, n, which, lo);
}
"""


@pytest.fixture(scope="module")
def mod():
    return asc.load(SOURCE, name="norm_apis.cpp")


def _run(mod, n, which, lo=0):
    x = torch.arange(1, 129, dtype=torch.float32)
    y = torch.full((128,), -1.0)
    mod.run_norm_apis(x, y, n, which, lo)
    return x, y


def test_get_acc_val_reads_the_count_form_reduce_sum(mod):
    x, y = _run(mod, 100, 0)
    assert y[0].item() == pytest.approx(x[:100].sum().item())


def test_set_mask_len_selects_the_first_elements_of_a_repeat(mod):
    x, y = _run(mod, 40, 1)
    want = torch.zeros(128)
    want[:40] = 2 * x[:40]
    assert torch.equal(y, want)


def test_set_mask_bits_select_the_set_bits(mod):
    x, y = _run(mod, 0, 2, lo=0b1011)
    want = torch.zeros(128)
    want[[0, 1, 3]] = 2 * x[[0, 1, 3]]
    assert torch.equal(y, want)


def test_set_mask_in_counter_mode_counts_elements_across_repeats(mod):
    x, y = _run(mod, 100, 3)
    want = torch.zeros(128)
    want[:100] = 2 * x[:100]
    assert torch.equal(y, want)


def test_init_output_takes_a_view_by_value(mod):
    y = torch.full((128,), -1.0)
    mod.run_init_output_views(y, 16)
    want = torch.full((128,), -1.0)
    want[8:24] = 5.0
    want[64:80] = 0.0
    assert torch.equal(y, want)


# Older and less common forms the library writes, from the same documentation: TQueBind's
# position-naming EnQue<srcUserPos, dstUserPos, T> / DeQue<srcUserPos, dstUserPos, T> (a VECIN/VECOUT
# queue reused across vector compute), a DeQue whose tensor is not kept, the untyped GetAccVal()
# (the raw register: the sum's bits in the reduction's type), AscendCUtils::GetC0Count (elements per
# 32-byte C0 block), a queue passed by value to a helper (a copy allocates from the same buffers),
# and fe::PlatFormInfos::GetLocalMemSize next to the unqualified `vector` that platform_info.h allows.
FORMS_SOURCE = r"""
#include "kernel_operator.h"
#include "platform/platform_info.h"
using namespace AscendC;

// a helper taking the queue by value: allocates from the copy, doubles x into it, frees it again
static float double_first_through_copy(TQue<TPosition::VECIN, 1> que, const LocalTensor<float>& x)
{
    LocalTensor<float> t = que.AllocTensor<float>();
    Add(t, x, x, 64);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    float v = t.GetValue(1);
    que.FreeTensor(t);
    return v;
}

// which 0: GM -> VECIN and VECOUT -> GM named on one TQueBind<VECIN, VECOUT>; y = 2x
// which 1: DeQue() keeping nothing, the tensor used as allocated; y = 3x
// which 2: untyped GetAccVal after a float ReduceSum of n elements; y[0] = the sum
// which 3: untyped GetAccVal after a half ReduceSum of n elements; y[0] = the sum
// which 4: GetC0Count of 4-, 2- and 1-byte types in y[0..2]
// which 5: a queue copied into a helper and then allocated again from the original; y[0] = 2 x[1]
extern "C" __global__ __aicore__ void queue_forms(GM_ADDR x, GM_ADDR y, int32_t n, int which)
{
    TPipe pipe;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 128);
    yg.SetGlobalBuffer((__gm__ float*)y, 128);
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 128 * sizeof(float));
    LocalTensor<float> c = buf.Get<float>();
    LocalTensor<float> w = c[128];
    if (which == 0) {
        TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
        pipe.InitBuffer(que, 1, 128 * sizeof(float));
        LocalTensor<float> t = que.AllocTensor<float>();
        DataCopy(t, xg, 128);
        que.EnQue<TPosition::GM, TPosition::VECIN, float>(t);
        LocalTensor<float> in = que.DeQue<TPosition::GM, TPosition::VECIN, float>();
        Add(in, in, in, 128);
        que.EnQue<TPosition::VECOUT, TPosition::GM, float>(in);
        LocalTensor<float> out = que.DeQue<TPosition::VECOUT, TPosition::GM, float>();
        DataCopy(yg, out, 128);
        que.FreeTensor(out);
        return;
    }
    if (which == 1) {
        TQue<TPosition::VECIN, 1> que;
        pipe.InitBuffer(que, 1, 128 * sizeof(float));
        LocalTensor<float> t = que.AllocTensor<float>();
        DataCopy(t, xg, 128);
        que.EnQue(t);
        que.DeQue();
        Muls(c, t, 3.0f, 128);
        que.FreeTensor(t);
    } else if (which == 2 || which == 3) {
        LocalTensor<float> a = c[256];
        DataCopy(a, xg, 128);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Duplicate(c, 0.0f, 128);
        float sum = 0.0f;
        if (which == 2) {
            ReduceSum(w, a, w, n);
            SetFlag<HardEvent::V_S>(EVENT_ID0);
            WaitFlag<HardEvent::V_S>(EVENT_ID0);
            uint64_t acc = GetAccVal();
            sum = *reinterpret_cast<float*>(&acc);
        } else {
            LocalTensor<half> ah = w.ReinterpretCast<half>();
            LocalTensor<half> wh = ah[128];
            Cast(ah, a, RoundMode::CAST_NONE, 128);
            ReduceSum(wh, ah, wh, n);
            SetFlag<HardEvent::V_S>(EVENT_ID0);
            WaitFlag<HardEvent::V_S>(EVENT_ID0);
            uint64_t acc = GetAccVal();
            sum = float(*reinterpret_cast<half*>(&acc));
        }
        c.SetValue(0, sum);
    } else {
        LocalTensor<float> a = c[256];
        DataCopy(a, xg, 128);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Duplicate(c, 0.0f, 128);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        if (which == 4) {
            c.SetValue(0, float(AscendCUtils::GetC0Count(sizeof(float))));
            c.SetValue(1, float(AscendCUtils::GetC0Count(sizeof(half))));
            c.SetValue(2, float(AscendCUtils::GetC0Count(sizeof(int8_t))));
        } else {
            TQue<TPosition::VECIN, 1> que;
            pipe.InitBuffer(que, 1, 64 * sizeof(float));
            float v = double_first_through_copy(que, a);
            LocalTensor<float> again = que.AllocTensor<float>();  // the copy freed the only buffer
            que.FreeTensor(again);
            c.SetValue(0, v);
        }
    }
    SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, c, 128);
}
extern "C" void run_queue_forms(uint8_t* x, uint8_t* y, int32_t n, int which)
{
    queue_forms<<<1, nullptr, nullptr>>>(x, y, n, which);
}
// the UB size through fe::PlatFormInfos next to PlatformAscendC's (which keeps 256 bytes back on an
// Atlas A2 part, as CANN's implementation does), and a shape in an unqualified vector
extern "C" int64_t local_ub_bytes()
{
    fe::PlatFormInfos* info = fe::PlatFormInfos::Instance();
    uint64_t ub = 0, core_ub = 0;
    info->GetLocalMemSize(fe::LocalMemType::UB, ub);
    platform_ascendc::PlatformAscendC(info).GetCoreMemSize(platform_ascendc::CoreMemType::UB, core_ub);
    vector<int64_t> dims{int64_t(ub), int64_t(core_ub)};
    return dims[0] == dims[1] + 256 ? dims[0] : -1;
}
"""


@pytest.fixture(scope="module")
def forms():
    return asc.load(FORMS_SOURCE, name="queue_forms.cpp")


def _forms(forms, which, n=0):
    x = torch.arange(1, 129, dtype=torch.float32)
    y = torch.full((128,), -1.0)
    forms.run_queue_forms(x, y, n, which)
    return x, y


def test_position_naming_enque_deque_pass_a_tensor_through_a_bound_queue(forms):
    x, y = _forms(forms, 0)
    assert torch.equal(y, 2 * x)


def test_deque_without_a_type_releases_the_tensor_for_use(forms):
    x, y = _forms(forms, 1)
    assert torch.equal(y, 3 * x)


@pytest.mark.parametrize("which", [2, 3])
def test_untyped_get_acc_val_holds_the_sum_bits_in_the_reduction_type(forms, which):
    x, y = _forms(forms, which, n=16)
    assert y[0].item() == x[:16].sum().item()  # 136: exact in half too
    assert torch.equal(y[1:], torch.zeros(127))


def test_get_c0_count_is_elements_per_32_byte_block(forms):
    _, y = _forms(forms, 4)
    assert y[:3].tolist() == [8.0, 16.0, 32.0]


def test_a_queue_copied_by_value_shares_its_buffers(forms):
    x, y = _forms(forms, 5)
    assert y[0].item() == 2 * x[1].item()


def test_local_mem_size_is_the_ub_a_kernel_may_allocate(forms):
    ub = forms.local_ub_bytes()
    assert ub == 192 * 1024


@pytest.mark.parametrize("m,k,work", [(64, 128, 64 * 1024 // 4), (40, 72, 4096)])
def test_flash_v2_tiling_impl_splits_the_rows_to_fit_the_work_space(mod, m, k, work):
    out = torch.zeros(7, dtype=torch.int32)
    mod.run_flashv2_tiling(out, m, k, work)
    src_m, src_k, split_m, split_k, range_m, tail_m, reduce_k = out.tolist()
    assert (src_m, src_k, split_k, reduce_k) == (m, k, k, 8)  # reduce rows hold one 32-byte block of floats
    assert 0 < split_m <= m and split_m * range_m + tail_m == m
    # a pass of splitM rows needs (32 / 4 + k + 64) floats per row of work space
    assert split_m * (8 + k + 64) <= work


def test_brcb_broadcast_number_is_the_elements_of_one_brcb_repeat(mod):
    x = torch.arange(1, 17, dtype=torch.float32)
    y = torch.full((128,), -1.0)
    mod.run_brcb_by_constant(x, y, 16)  # 16 elements: two repeats of 8
    assert torch.equal(y.view(16, 8), x[:, None].expand(16, 8))
