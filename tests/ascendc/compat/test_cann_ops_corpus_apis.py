"""APIs and forms the cann-ops corpus needs (issue 28), each written here from the Ascend C API
documentation: the vector APIs used as function-pointer template arguments (a kernel template
parameterised by `void (*)(const LocalTensor<T>&, ...)` instantiated with `Div` or
`Acos<float, false>`, as the documented signatures allow)."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

# One kernel template per documented signature: the API arrives as a template argument and the
# kernel calls it through the pointer.
FN_POINTERS = r"""
#include "kernel_operator.h"
using namespace AscendC;

template <typename T> using UnaryCount = void(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&);
template <typename T> using MathCount = void(const LocalTensor<T>&, const LocalTensor<T>&, const uint32_t);
template <typename T>
using BinaryCount = void(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&);
template <typename T>
using ScalarCount = void(const LocalTensor<T>&, const LocalTensor<T>&, const T&, const int32_t&);
template <typename T>
using BinaryLevel0 = void(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, uint64_t,
                          const uint8_t, const BinaryRepeatParams&);

template <typename T, UnaryCount<T>* un, MathCount<T>* math, BinaryCount<T>* bin, ScalarCount<T>* sc,
          BinaryLevel0<T>* bin0>
class Apply {
public:
    __aicore__ inline void Run(GM_ADDR x, GM_ADDR z, GM_ADDR y, int32_t n, int which, float s)
    {
        GlobalTensor<T> xg, zg, yg;
        xg.SetGlobalBuffer((__gm__ T*)x, n);
        zg.SetGlobalBuffer((__gm__ T*)z, n);
        yg.SetGlobalBuffer((__gm__ T*)y, n);
        pipe.InitBuffer(buf, 3 * n * sizeof(T));
        LocalTensor<T> a = buf.Get<T>();
        LocalTensor<T> b = a[n];
        LocalTensor<T> c = a[2 * n];
        DataCopy(a, xg, n);
        DataCopy(b, zg, n);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        if (which == 0) un(c, a, n);
        if (which == 1) math(c, a, uint32_t(n));
        if (which == 2) bin(c, a, b, n);
        if (which == 3) sc(c, a, T(s), n);
        if (which == 4) bin0(c, a, b, 64, uint8_t(n / 64), {1, 1, 1, 8, 8, 8});
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(yg, c, n);
    }
private:
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
};

extern "C" __global__ __aicore__ void fn_pointers(GM_ADDR x, GM_ADDR z, GM_ADDR y, int32_t n, int which, float s)
{
    Apply<float, Exp, Acos<float, false>, Div, Adds, Sub> k;
    k.Run(x, z, y, n, which, s);
}
extern "C" void run_fn_pointers(uint8_t* x, uint8_t* z, uint8_t* y, int32_t n, int which, float s)
{
    fn_pointers<<<1, nullptr, nullptr>>>(x, z, y, n, which, s);
}
"""


@pytest.fixture(scope="module")
def fn_mod():
    return asc.load(FN_POINTERS, name="fn_pointers.cpp")


@pytest.mark.parametrize(
    "which,ref",
    [
        (0, lambda x, z: torch.exp(x)),
        (1, lambda x, z: torch.acos(x)),
        (2, lambda x, z: x / z),
        (3, lambda x, z: x + 0.25),
        (4, lambda x, z: x - z),
    ],
    ids=["Exp", "Acos<float,false>", "Div", "Adds", "Sub level-0"],
)
def test_vector_api_as_function_pointer_template_argument(fn_mod, which, ref):
    n = 256
    g = torch.Generator().manual_seed(which)
    x = torch.rand(n, generator=g) * 1.8 - 0.9
    z = torch.rand(n, generator=g) + 0.5
    y = torch.zeros(n)
    fn_mod.run_fn_pointers(x, z, y, n, which, 0.25)
    torch.testing.assert_close(y, ref(x, z), rtol=2e-3, atol=2e-3)


# GetReduceMaxMinCount after WholeReduceMax (the Atlas A2 recipe of its documentation: the
# index register is exact after WholeReduceMax, stored as integer bits in a T); the compiler
# intrinsics get_block_idx / get_block_num; SelectWithBytesMask (CANN 8.0's name of the byte-mask
# Select: mask 0 picks src0); CompareScalar with a bitwise mask array (mask[0] low 64 lanes).
REGISTERS = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void registers(GM_ADDR x, GM_ADDR m, GM_ADDR y, GM_ADDR info, int32_t n)
{
    if (get_block_idx() != get_block_num() - 1) return;  // the last block of three does the work
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bm, by, bt, bc;
    pipe.InitBuffer(bx, n * 4);
    pipe.InitBuffer(bm, n);
    pipe.InitBuffer(by, n * 4);
    pipe.InitBuffer(bt, 8192);
    pipe.InitBuffer(bc, 256);
    LocalTensor<float> xl = bx.Get<float>(), yl = by.Get<float>();
    LocalTensor<uint8_t> ml = bm.Get<uint8_t>(), tmp = bt.Get<uint8_t>(), cmp = bc.Get<uint8_t>();
    GlobalTensor<float> xg, yg, ig;
    GlobalTensor<uint8_t> mg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    mg.SetGlobalBuffer((__gm__ uint8_t*)m, n);
    ig.SetGlobalBuffer((__gm__ float*)info, 16);
    DataCopy(xl, xg, n);
    DataCopy(ml, mg, n);
    PipeBarrier<PIPE_ALL>();
    // the maximum of x[0..n) over n / 64 repeats, and its index from the register
    WholeReduceMax<float>(yl, xl, 64, n / 64, 1, 1, 8);
    PipeBarrier<PIPE_ALL>();
    float val = 0, idx = 0;
    GetReduceMaxMinCount<float>(val, idx);
    ig.SetValue(0, val);
    ig.SetValue(1, float(*reinterpret_cast<uint32_t*>(&idx)));
    ig.SetValue(2, float(get_block_idx()));
    ig.SetValue(3, float(get_block_num()));
    // x <= 0.5 over the first 64 lanes only (mask {all ones, 0}), one bit per element
    uint64_t mask[2] = {~0ull, 0};
    Duplicate(cmp.ReinterpretCast<uint16_t>(), uint16_t(0), 128);
    PipeBarrier<PIPE_ALL>();
    CompareScalar(cmp, xl, 0.5f, CMPMODE::LE, mask, 1, {1, 1, 8, 8});
    PipeBarrier<PIPE_ALL>();
    for (int k = 0; k < 8; ++k) ig.SetValue(4 + k, float(cmp.GetValue(k)));
    SelectWithBytesMaskShapeInfo shape;
    shape.firstAxis = 1;
    shape.srcLastAxis = n;
    shape.maskLastAxis = n;
    SelectWithBytesMask(yl, xl, -1.0f, ml, tmp, shape);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, yl, n);
}
extern "C" void run_registers(uint8_t* x, uint8_t* m, uint8_t* y, uint8_t* info, int32_t n)
{
    registers<<<3, nullptr, nullptr>>>(x, m, y, info, n);
}
"""


def test_reduce_register_block_intrinsics_byte_mask_select_and_masked_compare():
    mod = asc.load(REGISTERS, name="registers.cpp")
    n = 256
    g = torch.Generator().manual_seed(11)
    x = torch.rand(n, generator=g)
    x[200] = 5.0  # the maximum, in the fourth repeat
    m = torch.randint(0, 2, (n,), generator=g, dtype=torch.uint8)
    y, info = torch.zeros(n), torch.zeros(16)
    mod.run_registers(x, m, y, info, n)
    assert info[0].item() == 5.0 and info[1].item() == 200.0  # value and index over all repeats
    assert info[2].item() == 2.0 and info[3].item() == 3.0
    bits = torch.tensor([int(b) for b in info[4:12].tolist()], dtype=torch.uint8)
    lanes = ((bits.unsqueeze(-1).int() >> torch.arange(8)) & 1).reshape(64).bool()  # LSB first
    assert torch.equal(lanes, x[:64] <= 0.5)
    torch.testing.assert_close(y, torch.where(m.bool(), torch.tensor(-1.0), x))


# The operator forms of LocalTensor (`c = a + b`, `mask = a >= b`: Add/Sub/Mul/Div and Compare over
# all of a's elements), and, built in the same kernel, the constant matmul tiling of a MatmulConfig
# (GetMatmulApiTiling: the configuration's shape fields, -1 where it leaves them open).
OPERATORS = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace AscendC;
using AT = matmul::MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CT = matmul::MatmulType<TPosition::GM, CubeFormat::ND, float>;
constexpr static MatmulShapeParams kShape = {128, 256, 64, 64, 128, 32};
constexpr static MatmulApiStaticTiling kTiling =
    GetMatmulApiTiling<AT, AT, CT, CT>(GetMMConfig<MatmulConfigMode::CONFIG_NORM>(kShape));
static_assert(kTiling.singleCoreN == 256 && kTiling.baseK == 32 && kTiling.M == -1, "constant tiling fields");

extern "C" __global__ __aicore__ void operators(GM_ADDR x, GM_ADDR z, GM_ADDR y, GM_ADDR m)
{
    // (the matmul header makes this a mixed AIC:AIV kernel: one vector block does the work)
    if ASCEND_IS_AIC {
        return;
    }
    if (GetBlockIdx() != 0) return;
    constexpr int32_t n = 128;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf, mbuf;
    pipe.InitBuffer(buf, 4 * n * sizeof(float));
    pipe.InitBuffer(mbuf, n / 8);
    LocalTensor<float> a = buf.Get<float>(), b = a[n], c = a[2 * n], d = a[3 * n];
    LocalTensor<uint8_t> mask = mbuf.Get<uint8_t>();
    a.SetSize(n);  // each tensor is n elements: the operators run over a's size
    b.SetSize(n);
    c.SetSize(n);
    GlobalTensor<float> xg, zg, yg;
    GlobalTensor<uint8_t> mg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    zg.SetGlobalBuffer((__gm__ float*)z, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    mg.SetGlobalBuffer((__gm__ uint8_t*)m, n / 8);
    DataCopy(a, xg, n);
    DataCopy(b, zg, n);
    PipeBarrier<PIPE_ALL>();
    c = a + b;
    PipeBarrier<PIPE_V>();
    d = c * a;
    PipeBarrier<PIPE_V>();
    c = d / b;
    mask = a >= b;
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, c, n);
    for (int k = 0; k < n / 8; ++k) mg.SetValue(k, mask.GetValue(k));
}
extern "C" void run_operators(uint8_t* x, uint8_t* z, uint8_t* y, uint8_t* m)
{
    operators<<<1, nullptr, nullptr>>>(x, z, y, m);
}
"""


def test_tensor_operator_forms_and_constant_matmul_tiling():
    mod = asc.load(OPERATORS, name="operators.cpp")
    g = torch.Generator().manual_seed(3)
    x, z = torch.rand(128, generator=g) + 0.5, torch.rand(128, generator=g) + 0.5
    y, m = torch.zeros(128), torch.zeros(16, dtype=torch.uint8)
    mod.run_operators(x, z, y, m)
    torch.testing.assert_close(y, (x + z) * x / z, rtol=1e-5, atol=1e-6)
    lanes = ((m.unsqueeze(-1).int() >> torch.arange(8)) & 1).reshape(128).bool()  # LSB first
    assert torch.equal(lanes, x >= z)
