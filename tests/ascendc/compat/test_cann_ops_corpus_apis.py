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
extern "C" void run(uint8_t* x, uint8_t* z, uint8_t* y, int32_t n, int which, float s)
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
    fn_mod.run(x, z, y, n, which, 0.25)
    torch.testing.assert_close(y, ref(x, z), rtol=2e-3, atol=2e-3)
