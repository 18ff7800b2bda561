"""System and debug APIs and headers the cann-ops kernels use, written here from the Ascend C API
documentation, never from an op's code: GetDataBlockSizeInBytes (the bytes of one DataBlock, a
constexpr int16_t, by which kernels size masks and repeats), Trap (the kernel stops where it is
called: a kernel_trap fault, KernelTrap, which is a KernelAssert as CANN's CPU build treats it),
and the headers kernel_operator_intf.h (the gathered interface headers) and kernel_type.h (the data
type and format codes as macros of ge's numbering)."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

FILE = "system_apis.cpp"

SOURCE = r"""
#include "kernel_operator.h"
#include "kernel_operator_intf.h"
#include "kernel_type.h"
using namespace AscendC;

static_assert(GetDataBlockSizeInBytes() == 32, "a DataBlock is 32 bytes");
static_assert(std::is_same_v<decltype(GetDataBlockSizeInBytes()), int16_t>, "int16_t, as documented");
#if DT_BF16 != 27 || FORMAT_NCDHW != 30
#error "kernel_type.h codes are ge's"
#endif

// y = x + x over n floats, the mask and repeat count computed from GetDataBlockSizeInBytes as the
// documentation's example does; y[n] = the DataBlock size itself
extern "C" __global__ __aicore__ void add_by_block_size(GM_ADDR x, GM_ADDR y, int32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n + 8);
    pipe.InitBuffer(buf, 2 * n * sizeof(float) + 32);
    LocalTensor<float> a = buf.Get<float>();
    LocalTensor<float> c = a[n];
    int16_t dataBlockSize = GetDataBlockSizeInBytes();
    uint64_t mask = 8 * dataBlockSize / sizeof(float);
    uint8_t repeat = n / mask;
    DataCopy(a, xg, n);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Add(c, a, a, mask, repeat, {1, 1, 1, 8, 8, 8});
    Duplicate(c[n], float(dataBlockSize), 8);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, c, n + 8);
}
extern "C" void run_add_by_block_size(uint8_t* x, uint8_t* y, int32_t n)
{
    add_by_block_size<<<1, nullptr, nullptr>>>(x, y, n);
}

// each block stores 1 at y[8 * block]; the block `trap_block` then calls Trap(); every block that
// goes on stores 2 at y[8 * block + 1]
extern "C" __global__ __aicore__ void trap_when(GM_ADDR y, int32_t trap_block)
{
    __gm__ int32_t* out = (__gm__ int32_t*)y + 8 * GetBlockIdx();
    out[0] = 1;
    if (GetBlockIdx() == trap_block) {
        Trap();  // marker: trap
    }
    out[1] = 2;
}
extern "C" void run_trap_when(uint8_t* y, int32_t blocks, int32_t trap_block)
{
    trap_when<<<blocks, nullptr, nullptr>>>(y, trap_block);
}

// the codes of kernel_type.h in C++: DT_FLOAT16, DT_INT64, FORMAT_ND, FORMAT_NDC1HWC0, and ge's
// enumerators of the same names, still usable qualified
extern "C" void kernel_type_codes(uint8_t* y)
{
    int32_t* out = (int32_t*)y;
    out[0] = DT_FLOAT16;
    out[1] = DT_INT64;
    out[2] = FORMAT_ND;
    out[3] = FORMAT_NDC1HWC0;
    out[4] = int32_t(ge::GetSizeByDataType(static_cast<ge::DataType>(DT_INT64)));
}
"""


@pytest.fixture(scope="module")
def mod():
    return asc.load(SOURCE, name=FILE)


def _line(marker: str) -> int:
    return next(i for i, t in enumerate(SOURCE.splitlines(), 1) if f"marker: {marker}" in t)


def test_get_data_block_size_in_bytes_sizes_the_mask_and_repeat(mod):
    n = 256
    x = torch.arange(n, dtype=torch.float32)
    y = torch.full((n + 8,), -1.0)
    mod.run_add_by_block_size(x, y, n)
    assert torch.equal(y[:n], 2 * x)
    assert torch.equal(y[n:], torch.full((8,), 32.0))


def test_trap_not_reached_lets_the_kernel_finish(mod):
    y = torch.zeros(16, dtype=torch.int32)
    mod.run_trap_when(y, 2, -1)
    assert y[[0, 1, 8, 9]].tolist() == [1, 2, 1, 2]


def test_trap_stops_the_kernel_with_a_kernel_trap_fault(mod):
    y = torch.zeros(8, dtype=torch.int32)
    with pytest.raises(asc.KernelTrap) as info:
        mod.run_trap_when(y, 1, 0)
    err = info.value
    assert isinstance(err, asc.KernelAssert)  # CANN's CPU build treats Trap as a failed assert
    assert err.error_class == "kernel_trap" and err.category == "kernel_assert"
    assert (err.file, err.line) == (FILE, _line("trap")), str(err)
    assert err.block == 0
    assert mod.last_run.faults[0]["error_class"] == "kernel_trap"
    assert asc.FAULT_CLASSES["kernel_trap"] is asc.KernelTrap
    # the block stopped at the Trap: its store before it stands, the one after it never ran
    assert y[:2].tolist() == [1, 0]


def test_kernel_type_codes_are_ge_numbering(mod):
    out = torch.zeros(5, dtype=torch.int32)
    mod.kernel_type_codes(out)
    assert out.tolist() == [1, 9, 2, 32, 8]


# kernel_type.h in an operator project's DTYPE_ kernel, where the loader defines the DT_* codes
# before the kernel: the header's definitions are the same macros; the kernel compares the codes in
# the preprocessor and in C++ (conv3d_backprop's GetFormat(int format) form)
KERNEL_TYPE_DTYPE_KERNEL = r"""
#include "kernel_operator.h"
#include "kernel_operator_intf.h"
#include "kernel_type.h"
__aicore__ inline constexpr int32_t FormatRank(int format)
{
    return format == FORMAT_NCDHW ? 5 : format == FORMAT_ND ? 1 : 0;
}
extern "C" __global__ __aicore__ void which(GM_ADDR x, GM_ADDR code, GM_ADDR workspace, GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<int32_t> out;
    out.SetGlobalBuffer((__gm__ int32_t*)code, t.n);
#if ORIG_DTYPE_X == DT_FLOAT16
    out.SetValue(0, 16);
#else
    out.SetValue(0, -1);
#endif
    out.SetValue(1, FormatRank(FORMAT_NCDHW));
    out.SetValue(2, DT_BF16);
}
"""


def test_kernel_type_in_a_dtype_kernel_of_an_operator_project():
    from tests.ascendc.compat.test_cann_ops_runtime import DTYPE_HOST

    op = asc.load_op_project({"op_host/which.cpp": DTYPE_HOST, "op_kernel/which.cpp": KERNEL_TYPE_DTYPE_KERNEL})
    code = op(torch.zeros(8, dtype=torch.float16))
    assert code[:3].tolist() == [16, 5, 27]


# AscendC::Ceil(a, b), a plain uint32_t function, called unqualified under `using namespace AscendC`
# on other integer types as CANN's own kernels do; a kernel's own Ceil template that matches exactly
# still wins (no ambiguity), and the vector Ceil keeps its LocalTensor calls
CEIL_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
static_assert(ConstCeil(10, 4) == 3, "ConstCeil is constexpr");
namespace own {
template <typename T> __aicore__ inline T Ceil(T a, T b) { return a / b + 100; }  // marks the kernel's own
}
extern "C" __global__ __aicore__ void ceil_forms(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    __gm__ int64_t* out = (__gm__ int64_t*)z;
    int64_t rows = 10, per = 4;
    out[0] = Ceil(rows, per);                    // AscendC's, through uint32_t: 3
    out[1] = Ceil(uint8_t(12), 4ul);             // 3
    {
        using namespace own;
        out[2] = Ceil(rows, per);                // the kernel's own template is preferred: 102
    }
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * 64 * sizeof(float));
    LocalTensor<float> a = buf.Get<float>(), b = a[64];
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 64);
    yg.SetGlobalBuffer((__gm__ float*)y, 64);
    DataCopy(a, xg, 64);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Ceil(b, a, 64);                              // the vector Ceil
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, b, 64);
}
extern "C" void run_ceil_forms(uint8_t* x, uint8_t* y, uint8_t* z)
{
    ceil_forms<<<1, nullptr, nullptr>>>(x, y, z);
}
"""


def test_integer_ceil_of_ascendc_beside_a_kernels_own_and_the_vector_ceil():
    m = asc.load(CEIL_SOURCE, name="ceil_forms.cpp")
    x = torch.linspace(-3.7, 3.7, 64)
    y, z = torch.zeros(64), torch.zeros(3, dtype=torch.int64)
    m.run_ceil_forms(x, y, z)
    assert z.tolist() == [3, 3, 102]
    assert torch.equal(y, torch.ceil(x))


# SetAtomicAdd<T> with a type Atlas A2 has no atomic for (uint8_t) compiles, as asc-devkit's run-time
# type assert lets it, so a kernel can keep such a branch for a dtype the example does not run; taking
# the branch is an unsupported_dtype fault at the call
ATOMIC_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void atomic_by_type(GM_ADDR x, GM_ADDR y, int32_t n, int32_t use_u8)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    DataCopy(t, xg, n);
    SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    if (use_u8) {
        SetAtomicAdd<uint8_t>();  // marker: u8
    } else {
        SetAtomicAdd<float>();
    }
    DataCopy(yg, t, n);
    SetAtomicNone();
}
extern "C" void run_atomic_by_type(uint8_t* x, uint8_t* y, int32_t n, int32_t use_u8)
{
    atomic_by_type<<<2, nullptr, nullptr>>>(x, y, n, use_u8);
}
"""


def test_an_atomic_type_a2_lacks_compiles_and_faults_only_where_it_runs():
    m = asc.load(ATOMIC_SOURCE, name="atomic_by_type.cpp")
    x, y = torch.rand(64), torch.ones(64)
    m.run_atomic_by_type(x, y, 64, 0)
    torch.testing.assert_close(y, 1 + 2 * x)  # two blocks added into y atomically
    with pytest.raises(asc.RuntimeUnsupportedDtype) as info:
        m.run_atomic_by_type(x, torch.ones(64), 64, 1)
    assert info.value.error_class == "unsupported_dtype"
    assert info.value.line == next(i for i, t in enumerate(ATOMIC_SOURCE.splitlines(), 1) if "marker: u8" in t)
    assert "SetAtomicAdd" in str(info.value) and "int8_t" in str(info.value)


# And / Or with a count on a type other than int16_t (cann-ops gather_v3 ANDs uint8_t compare masks):
# asc-devkit runs the bytes as `count` int16_t elements, so count = n covers 2n bytes of uint8_t
BITWISE_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void bitwise_u8(GM_ADDR a, GM_ADDR b, GM_ADDR y, int32_t count)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 512);
    LocalTensor<uint8_t> ta = buf.Get<uint8_t>(), tb = ta[512], tc = ta[1024];
    GlobalTensor<uint8_t> ag, bg, yg;
    ag.SetGlobalBuffer((__gm__ uint8_t*)a, 512);
    bg.SetGlobalBuffer((__gm__ uint8_t*)b, 512);
    yg.SetGlobalBuffer((__gm__ uint8_t*)y, 1024);
    DataCopy(ta, ag, 512);
    DataCopy(tb, bg, 512);
    Duplicate(tc.ReinterpretCast<int16_t>(), int16_t(0), 256);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    And(tc, ta, tb, count);
    Or(tc[256], ta[256], tb[256], count);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(yg, tc, 512);
}
extern "C" void run_bitwise_u8(uint8_t* a, uint8_t* b, uint8_t* y, int32_t count)
{
    bitwise_u8<<<1, nullptr, nullptr>>>(a, b, y, count);
}
"""


def test_and_or_with_a_count_run_any_type_as_int16_elements():
    m = asc.load(BITWISE_SOURCE, name="bitwise_u8.cpp")
    g = torch.Generator().manual_seed(0)
    a = torch.randint(0, 256, (512,), dtype=torch.uint8, generator=g)
    b = torch.randint(0, 256, (512,), dtype=torch.uint8, generator=g)
    y = torch.zeros(1024, dtype=torch.uint8)
    m.run_bitwise_u8(a, b, y, 64)  # 64 int16 elements: 128 bytes of each
    assert torch.equal(y[:128], a[:128] & b[:128])
    assert torch.equal(y[128:256], torch.zeros(128, dtype=torch.uint8))  # past 2 x count bytes: untouched
    assert torch.equal(y[256:384], a[256:384] | b[256:384])
    assert torch.equal(y[384:512], torch.zeros(128, dtype=torch.uint8))


# Ascend C's kernel assert: assert(expr) and assert(expr, fmt, args...) (cann-ops gather_v3's index
# check); a false expr stops the kernel with a kernel_assert fault, not the process
ASSERT_SOURCE = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void checked_index(GM_ADDR y, int32_t idx, int32_t size)
{
    __gm__ int32_t* out = (__gm__ int32_t*)y;
    assert(size > 0);
    assert((0 <= idx && idx < size), "Index %d out of range[%d %d)!\\n", idx, 0, size);  // marker: assert
    out[0] = idx;
}
extern "C" void run_checked_index(uint8_t* y, int32_t idx, int32_t size)
{
    checked_index<<<1, nullptr, nullptr>>>(y, idx, size);
}
"""


def test_kernel_assert_with_a_message_stops_the_kernel_with_a_fault():
    m = asc.load(ASSERT_SOURCE, name="checked_index.cpp")
    y = torch.full((8,), -1, dtype=torch.int32)
    m.run_checked_index(y, 3, 8)
    assert y[0].item() == 3
    y = torch.full((8,), -1, dtype=torch.int32)
    with pytest.raises(asc.KernelAssert) as info:
        m.run_checked_index(y, 9, 8)
    assert info.value.error_class == "kernel_assert"
    assert info.value.line == next(i for i, t in enumerate(ASSERT_SOURCE.splitlines(), 1) if "marker: assert" in t)
    assert y[0].item() == -1  # the store after the assert never ran
