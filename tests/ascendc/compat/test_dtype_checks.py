"""Where a data type is refused: at build, or when the call runs.

asc-devkit (the public Ascend C implementation, Atlas A2) refuses some types at build (a
static_assert, or no overload of a typed intrinsic for them) and checks others only at run time or
in a debug build (ASCENDC_ASSERT, a debug assert, a dispatch on the element width). A call of the
second kind builds on the NPU toolchain, so a kernel templated over several types may hold one in a
branch its type never takes; the simulator builds it too and faults (unsupported_dtype) only when
such a call runs. A call of the first kind still fails to build, with the message naming the API
and the types it takes."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

FILE = "dtype_checks.cpp"

# `which` picks the call: 0 copies x to y (through Copy on bfloat16_t bits, a type asc-devkit's Copy
# takes), every other value reaches one call on a type the API lacks on Atlas A2
SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void dtype_branches(GM_ADDR x, GM_ADDR y, int32_t which)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<bfloat16_t> a = buf.Get<bfloat16_t>(), b = a[256];
    LocalTensor<int8_t> i8 = buf.Get<int8_t>()[1024];
    LocalTensor<float> f32 = buf.Get<float>()[512];
    LocalTensor<uint32_t> offs = buf.Get<uint32_t>()[768];
    GlobalTensor<bfloat16_t> xg, yg;
    xg.SetGlobalBuffer((__gm__ bfloat16_t*)x, 128);
    yg.SetGlobalBuffer((__gm__ bfloat16_t*)y, 128);
    DataCopy(a, xg, 128);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    uint64_t rsvd = 0;
    int32_t v = 0, idx = 0;
    if (which == 1) {
        Gather(i8, i8[64], offs, 0u, 32u);  // marker: gather
    } else if (which == 2) {
        Brcb(i8, i8[64], 1, {1, 8});  // marker: brcb
    } else if (which == 3) {
        Transpose(f32, f32[256]);  // marker: transpose
    } else if (which == 4) {
        GetReduceMaxMinCount<int32_t>(v, idx);  // marker: spr
    } else if (which == 5) {
        GatherMask(i8, i8[64], 1, false, 0, {1, 1, 8, 0}, rsvd);  // marker: gathermask
    } else {
        Copy(b, a, 128, 1, {1, 1, 8, 8});
    }
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, b, 128);
}
extern "C" void run_dtype_branches(uint8_t* x, uint8_t* y, int32_t which)
{
    dtype_branches<<<1, nullptr, nullptr>>>(x, y, which);
}
"""


@pytest.fixture(scope="module")
def mod():
    return asc.load(SOURCE, name=FILE)


def _line(marker: str) -> int:
    return next(i for i, t in enumerate(SOURCE.splitlines(), 1) if f"marker: {marker}" in t)


def test_calls_on_types_checked_at_run_time_build_and_the_untaken_branches_do_not_fault(mod):
    x = torch.arange(128, dtype=torch.float32).to(torch.bfloat16)
    y = torch.zeros(128, dtype=torch.bfloat16)
    mod.run_dtype_branches(x, y, 0)
    assert torch.equal(y.view(torch.int16), x.view(torch.int16))  # Copy moved the bfloat16_t bits


@pytest.mark.parametrize(
    ("which", "marker", "api", "dtype"),
    [
        (1, "gather", "Gather", "int8_t"),
        (2, "brcb", "Brcb", "int8_t"),
        (3, "transpose", "Transpose", "float"),
        (4, "spr", "GetReduceMaxMinCount", "int32_t"),
        (5, "gathermask", "GatherMask", "int8_t"),
    ],
)
def test_a_taken_call_on_an_unsupported_type_faults_naming_the_api(mod, which, marker, api, dtype):
    x = torch.zeros(128, dtype=torch.bfloat16)
    with pytest.raises(asc.RuntimeUnsupportedDtype) as info:
        mod.run_dtype_branches(x, torch.zeros(128, dtype=torch.bfloat16), which)
    err = info.value
    assert err.error_class == "unsupported_dtype"
    assert (err.file, err.line) == (FILE, _line(marker)), str(err)
    assert f"{api}: this data type ({dtype}) is not supported" in str(err)
    assert "Atlas A2" in str(err)


# asc-devkit's Exp refuses int32_t with a static_assert; the TransDataTo5HD tensor-list form has no
# intrinsic overload for bfloat16_t: both still fail to build, in a branch never taken as well
COMPILE_TIME = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void refused(GM_ADDR y, int32_t which)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<int32_t> t = buf.Get<int32_t>();
    if (which == 7) {
        CALL;
    }
}
"""

FIVE_HD = (
    "LocalTensor<bfloat16_t> l[16] = {buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), "
    "buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), "
    "buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), "
    "buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), buf.Get<bfloat16_t>(), "
    "buf.Get<bfloat16_t>()}; TransDataTo5HD<bfloat16_t>(l, l, TransDataTo5HDParams())"
)


@pytest.mark.parametrize(
    ("call", "api", "supported"),
    [
        ("Exp(t, t, 64)", "Exp", "half, float"),
        (FIVE_HD, "TransDataTo5HD", "int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float"),
    ],
)
def test_a_type_asc_devkit_refuses_at_build_still_fails_to_build(call, api, supported):
    with pytest.raises(asc.UnsupportedDtypeError) as info:
        asc.load(COMPILE_TIME.replace("CALL", call), name=f"refused_{api}.cpp")
    msg = str(info.value)
    assert info.value.error_class == "unsupported_dtype"
    assert f"{api}: this data type is not supported by the API on Atlas A2" in msg
    assert f"supported: {supported}" in msg  # the type list, spelled out even where a macro names it
