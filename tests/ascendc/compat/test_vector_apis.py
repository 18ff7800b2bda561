"""Vector-side APIs that public Ascend C kernels call: advanced math (with and without a
sharedTmpBuffer), Sum, GatherMask, Brcb, BroadCast, Copy, the compare-mask register, TBuf
AllocTensor/FreeTensor, the whole-UB allocation, ReduceSum's documented accumulation and the
host sizing helpers. Every result is compared with PyTorch."""

import math

import pytest
import torch

import kernel_gym.ascendc as asc

# One kernel in the classic TPipe/TQue style: x (and z for binary APIs) -> y, OP picks the API,
# WITH_TMP the overload with a caller-given sharedTmpBuffer taken from a TBuf.
MATH = r'''
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
class KernelMath {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, GM_ADDR y, uint32_t n, uint32_t tmpBytes)
    {
        n_ = n;
        xg.SetGlobalBuffer((__gm__ T*)x, n);
        zg.SetGlobalBuffer((__gm__ T*)z, n);
        yg.SetGlobalBuffer((__gm__ T*)y, n);
        pipe.InitBuffer(inQ, 2, n * sizeof(T));
        pipe.InitBuffer(outQ, 1, n * sizeof(T));
        pipe.InitBuffer(tmpBuf, tmpBytes);
    }
    __aicore__ inline void Process(int op, int withTmp, float s)
    {
        LocalTensor<T> a = inQ.AllocTensor<T>();
        LocalTensor<T> b = inQ.AllocTensor<T>();
        DataCopy(a, xg, n_);
        DataCopy(b, zg, n_);
        inQ.EnQue(a);
        inQ.EnQue(b);
        a = inQ.DeQue<T>();
        b = inQ.DeQue<T>();
        LocalTensor<T> c = outQ.AllocTensor<T>();
        LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
        T sc = (T)s;
        if (withTmp) {
            switch (op) {
                case 0: Tanh(c, a, tmp, n_); break;
                case 1: Sigmoid(c, a, tmp, n_); break;
                case 2: Log(c, a, tmp, n_); break;
                case 3: Log2(c, a, tmp, n_); break;
                case 4: Log10(c, a, tmp, n_); break;
                case 5: Exp<T, 2>(c, a, tmp, n_); break;
                case 6: Erf(c, a, tmp, n_); break;
                case 7: Gelu(c, a, tmp, n_); break;
                case 8: FasterGelu(c, a, tmp, n_); break;
                case 9: Silu(c, a, n_); break;
                case 10: Swish(c, a, n_, sc); break;
                case 11: Sin(c, a, tmp, n_); break;
                case 12: Cos(c, a, tmp, n_); break;
                case 13: Asin(c, a, tmp, n_); break;
                case 14: Acos(c, a, tmp, n_); break;
                case 15: Atan(c, a, tmp, n_); break;
                case 16: Sinh(c, a, tmp, n_); break;
                case 17: Cosh(c, a, tmp, n_); break;
                case 18: Floor(c, a, tmp, n_); break;
                case 19: Ceil(c, a, tmp, n_); break;
                case 20: Round(c, a, tmp, n_); break;
                case 21: Trunc(c, a, tmp, n_); break;
                case 22: Sign(c, a, tmp, n_); break;
                case 23: ClampMax(c, a, tmp, sc, n_); break;
                case 24: ClampMin(c, a, tmp, sc, n_); break;
                case 25: Power(c, a, b, tmp, n_); break;
                case 26: Power(c, a, sc, tmp, n_); break;
                case 27: Power(c, sc, b, tmp, n_); break;
                case 28: Erfc(c, a, tmp, n_); break;
                case 29: Tan(c, a, tmp, n_); break;
                case 30: Frac(c, a, tmp, n_); break;
                case 31: Softplus(c, a, tmp, n_); break;
                case 32: DataCopy(c, b, n_); Axpy(c, a, sc, tmp, n_); break;
            }
        } else {
            switch (op) {
                case 0: Tanh(c, a, n_); break;
                case 1: Sigmoid(c, a, n_); break;
                case 2: Log(c, a, n_); break;
                case 3: Log2(c, a, n_); break;
                case 4: Log10(c, a, n_); break;
                case 5: Exp<T, 0>(c, a, n_); break;
                case 6: Erf(c, a, n_); break;
                case 7: Gelu(c, a, n_); break;
                case 8: FasterGelu(c, a, n_); break;
                case 9: Silu(c, a, n_); break;
                case 10: Swish(c, a, n_, sc); break;
                case 11: Sin(c, a, n_); break;
                case 12: Cos(c, a, n_); break;
                case 13: Asin(c, a, n_); break;
                case 14: Acos(c, a, n_); break;
                case 15: Atan(c, a, n_); break;
                case 16: Sinh(c, a, n_); break;
                case 17: Cosh(c, a, n_); break;
                case 18: Floor(c, a, n_); break;
                case 19: Ceil(c, a, n_); break;
                case 20: Round(c, a, n_); break;
                case 21: Trunc(c, a, n_); break;
                case 22: Sign(c, a, n_); break;
                case 23: ClampMax(c, a, sc, n_); break;
                case 24: ClampMin(c, a, sc, n_); break;
                case 25: Power(c, a, b, n_); break;
                case 26: Power(c, a, sc, n_); break;
                case 27: Power(c, sc, b, n_); break;
                case 28: Erfc(c, a, n_); break;
                case 29: Tan(c, a, n_); break;
                case 30: Frac(c, a, n_); break;
                case 31: Softplus(c, a, n_); break;
                case 32: DataCopy(c, b, n_); Axpy(c, a, sc, tmp, n_); break;
            }
        }
        outQ.EnQue(c);
        inQ.FreeTensor(a);
        inQ.FreeTensor(b);
        c = outQ.DeQue<T>();
        DataCopy(yg, c, n_);
        outQ.FreeTensor(c);
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> tmpBuf;
    GlobalTensor<T> xg, zg, yg;
    uint32_t n_;
};

template <typename T>
__global__ __aicore__ void math_kernel(GM_ADDR x, GM_ADDR z, GM_ADDR y, uint32_t n, int op, int withTmp, float s,
                                       uint32_t tmpBytes)
{
    KernelMath<T> k;
    k.Init(x, z, y, n, tmpBytes);
    k.Process(op, withTmp, s);
}

extern "C" void run_f32(uint8_t* x, uint8_t* z, uint8_t* y, uint32_t n, int op, int withTmp, float s, uint32_t tmp)
{
    math_kernel<float><<<1, nullptr, nullptr>>>(x, z, y, n, op, withTmp, s, tmp);
}
extern "C" void run_f16(uint8_t* x, uint8_t* z, uint8_t* y, uint32_t n, int op, int withTmp, float s, uint32_t tmp)
{
    math_kernel<half><<<1, nullptr, nullptr>>>(x, z, y, n, op, withTmp, s, tmp);
}
'''

F = torch.nn.functional
S = 0.7  # the scalar operand (Swish beta, Clamp bound, Power exponent/base, Axpy alpha)
# op -> (reference(x, z), input domain of x)
OPS = {
    0: ("Tanh", lambda x, z: torch.tanh(x), (-4, 4)),
    1: ("Sigmoid", lambda x, z: torch.sigmoid(x), (-8, 8)),
    2: ("Log", lambda x, z: torch.log(x), (0.1, 10)),
    3: ("Log2", lambda x, z: torch.log2(x), (0.1, 10)),
    4: ("Log10", lambda x, z: torch.log10(x), (0.1, 10)),
    5: ("Exp", lambda x, z: torch.exp(x), (-4, 4)),
    6: ("Erf", lambda x, z: torch.erf(x), (-3, 3)),
    7: ("Gelu", lambda x, z: F.gelu(x, approximate="tanh"), (-4, 4)),
    8: ("FasterGelu", lambda x, z: x * torch.sigmoid(1.702 * x), (-4, 4)),
    9: ("Silu", lambda x, z: F.silu(x), (-6, 6)),
    10: ("Swish", lambda x, z: x * torch.sigmoid(S * x), (-6, 6)),
    11: ("Sin", lambda x, z: torch.sin(x), (-6, 6)),
    12: ("Cos", lambda x, z: torch.cos(x), (-6, 6)),
    13: ("Asin", lambda x, z: torch.asin(x), (-0.99, 0.99)),
    14: ("Acos", lambda x, z: torch.acos(x), (-0.99, 0.99)),
    15: ("Atan", lambda x, z: torch.atan(x), (-5, 5)),
    16: ("Sinh", lambda x, z: torch.sinh(x), (-3, 3)),
    17: ("Cosh", lambda x, z: torch.cosh(x), (-3, 3)),
    18: ("Floor", lambda x, z: torch.floor(x), (-9, 9)),
    19: ("Ceil", lambda x, z: torch.ceil(x), (-9, 9)),
    20: ("Round", lambda x, z: torch.round(x), (-9, 9)),
    21: ("Trunc", lambda x, z: torch.trunc(x), (-9, 9)),
    22: ("Sign", lambda x, z: torch.sign(x), (-2, 2)),
    23: ("ClampMax", lambda x, z: torch.clamp(x, max=S), (-2, 2)),
    24: ("ClampMin", lambda x, z: torch.clamp(x, min=S), (-2, 2)),
    25: ("Power tensor^tensor", lambda x, z: torch.pow(x, z), (0.2, 3)),
    26: ("Power tensor^scalar", lambda x, z: torch.pow(x, S), (0.2, 3)),
    27: ("Power scalar^tensor", lambda x, z: torch.pow(torch.tensor(S), z), (0.2, 3)),
    28: ("Erfc", lambda x, z: torch.erfc(x), (-3, 3)),
    29: ("Tan", lambda x, z: torch.tan(x), (-1.2, 1.2)),
    30: ("Frac", lambda x, z: x - torch.trunc(x), (-9, 9)),
    31: ("Softplus", lambda x, z: F.softplus(x), (-6, 6)),
    32: ("Axpy", lambda x, z: z + S * x, (-3, 3)),
}
N = 2048


@pytest.fixture(scope="module")
def math_mod():
    return asc.load(MATH, name="vector_apis.cpp")


def _inputs(lo, hi, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(N, generator=g) * (hi - lo) + lo).to(dtype)
    z = (torch.rand(N, generator=g) * 2.8 + 0.2).to(dtype)  # Power exponents/bases, Axpy's y
    return x, z


@pytest.mark.parametrize("with_tmp", [1, 0], ids=["sharedTmpBuffer", "framework_tmp"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("op", sorted(OPS), ids=[OPS[k][0].replace(" ", "_") for k in sorted(OPS)])
def test_advanced_math_matches_torch(math_mod, op, dtype, with_tmp):
    name, ref, (lo, hi) = OPS[op]
    x, z = _inputs(lo, hi, dtype, op)
    if op in (18, 19, 20, 21, 30):  # keep rounding inputs away from ties and integers
        x = (torch.floor(x.float()) + torch.rand(N) * 0.8 + 0.1).to(dtype)
    y = torch.zeros(N, dtype=dtype)
    fn = math_mod.run_f32 if dtype == torch.float32 else math_mod.run_f16
    fn(x, z, y, N, op, with_tmp, S, 64 * 1024)
    expect = ref(x.float(), z.float()).to(dtype)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(y, expect, **tol, msg=name)
    assert math_mod.last_run.per_pipe_busy["V"] > 0


def test_transcendental_api_costs_more_than_a_rounding_api(math_mod):
    x, z = _inputs(0.5, 2, torch.float32, 0)
    y = torch.zeros(N)
    costs = {}
    for op in (18, 6):  # Floor, Erf
        math_mod.run_f32(x, z, y, N, op, 1, S, 64 * 1024)
        costs[op] = math_mod.last_run.per_pipe_busy["V"]
    assert costs[6] > 2 * costs[18]


def test_too_small_shared_tmp_buffer_is_rejected(math_mod):
    x, z = _inputs(-1, 1, torch.float16, 1)
    with pytest.raises(asc.InvalidArgument, match="sharedTmpBuffer holds 256 B"):
        math_mod.run_f16(x, z, torch.zeros(N, dtype=torch.float16), N, 0, 1, S, 256)  # Tanh half needs 4 x 256 B


def test_framework_tmp_needs_free_ub(math_mod):
    # 3 x n floats of queues + a 32-byte TBuf leave 160 B, less than Tanh's 256 B of temporary space
    n = 16368
    x = torch.rand(n)
    with pytest.raises(asc.UBOverflow, match="Tanh without sharedTmpBuffer"):
        math_mod.run_f32(x, x, torch.zeros(n), n, 0, 0, S, 32)


# ---- host sizing helpers, Sum, data rearrangement, false-fault fixes ---------------------------
MISC = r'''
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
#include "graph/utils/type_utils.h"
using namespace AscendC;

extern "C" void tmp_sizes(uint32_t* out, uint32_t n)
{
    ge::Shape shape(std::vector<int64_t>{int64_t(n)});
    GetTanhMaxMinTmpSize(shape, 2, false, out[0], out[1]);
    GetTanhTmpBufferFactorSize(4, out[2], out[3]);
    GetSumMaxMinTmpSize(n, 4, false, out[4], out[5]);
    GetGeluMaxMinTmpSize(shape, 4, out[6], out[7]);
    out[8] = DivCeil(n, 7u);
    out[9] = AlignUp(n + 1, 32u);
    uint32_t len = 0;
    ge::TypeUtils::GetDataTypeLength(ge::DT_FLOAT16, len);
    out[10] = len;
    out[11] = ge::TypeUtils::DataTypeToSerialString(ge::DT_FLOAT) == "DT_FLOAT";
}

// Sum over `rows` rows of n floats (rows padded to inner); the result row by row
__global__ __aicore__ void sum_kernel(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t n, uint32_t inner, int withTmp)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> tmpBuf;
    pipe.InitBuffer(inQ, 1, rows * inner * sizeof(float));
    pipe.InitBuffer(outQ, 1, 64 * sizeof(float));
    uint32_t maxTmp, minTmp;
    GetSumMaxMinTmpSize(n, sizeof(float), false, maxTmp, minTmp);
    pipe.InitBuffer(tmpBuf, minTmp);
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, rows * inner);
    yg.SetGlobalBuffer((__gm__ float*)y, 64);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopy(a, xg, rows * inner);
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    LocalTensor<float> c = outQ.AllocTensor<float>();
    Duplicate(c, 0.0f, 64);
    SumParams params{rows, inner, n};
    if (withTmp) Sum(c, a, tmpBuf.Get<uint8_t>(), params);
    else Sum(c, a, params);
    outQ.EnQue(c);
    inQ.FreeTensor(a);
    c = outQ.DeQue<float>();
    DataCopy(yg, c, 64);
    outQ.FreeTensor(c);
}
extern "C" void run_sum(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t n, uint32_t inner, int withTmp)
{
    sum_kernel<<<1, nullptr, nullptr>>>(x, y, rows, n, inner, withTmp);
}

// GatherMask (fixed pattern or a uint32 pattern tensor), Brcb, BroadCast, Copy and the compare mask
// register on 512 floats; y receives the result, cnt[0] the kept-element count.
__global__ __aicore__ void rearrange_kernel(GM_ADDR x, GM_ADDR pat, GM_ADDR y, GM_ADDR cnt, int op, int arg)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ, patQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    pipe.InitBuffer(inQ, 1, 512 * sizeof(float));
    pipe.InitBuffer(patQ, 1, 64 * sizeof(uint32_t));
    pipe.InitBuffer(outQ, 1, 4096 * sizeof(float));
    GlobalTensor<float> xg, yg;
    GlobalTensor<uint32_t> pg;
    GlobalTensor<int32_t> cg;
    xg.SetGlobalBuffer((__gm__ float*)x, 512);
    pg.SetGlobalBuffer((__gm__ uint32_t*)pat, 64);
    yg.SetGlobalBuffer((__gm__ float*)y, 4096);
    cg.SetGlobalBuffer((__gm__ int32_t*)cnt, 8);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    LocalTensor<uint32_t> p = patQ.AllocTensor<uint32_t>();
    DataCopy(a, xg, 512);
    DataCopy(p, pg, 64);
    inQ.EnQue(a);
    patQ.EnQue(p);
    a = inQ.DeQue<float>();
    p = patQ.DeQue<uint32_t>();
    LocalTensor<float> c = outQ.AllocTensor<float>();
    Duplicate(c, -1.0f, 4096);
    uint64_t kept = 0;
    if (op == 0) {  // fixed pattern, normal mode: 8 repeats of 64 floats
        GatherMaskParams gp{1, 8, 8, 0};
        GatherMask(c, a, (uint8_t)arg, false, 0, gp, kept);
    } else if (op == 1) {  // pattern tensor, normal mode; each repeat has its own 64-bit pattern
        GatherMaskParams gp{1, 8, 8, 1};
        GatherMask(c, a, p, false, 0, gp, kept);
    } else if (op == 2) {  // Brcb: 64 floats -> 64 blocks of 8
        BrcbRepeatParams bp{1, 8};
        Brcb(c, a, 8, bp);
    } else if (op == 3) {  // BroadCast [1, 64] -> [8, 64] (axis 0) or [8, 1] -> [8, 64] (axis 1)
        uint32_t dstShape[2] = {8, 64};
        if (arg == 0) {
            uint32_t srcShape[2] = {1, 64};
            BroadCast<float, 2, 0>(c, a, dstShape, srcShape);
        } else {
            uint32_t srcShape[2] = {8, 1};
            BroadCast<float, 2, 1>(c, a, dstShape, srcShape);
        }
    } else if (op == 4) {  // Copy: the first `arg` floats of each of 4 repeats, source repeats 16 blocks apart
        CopyRepeatParams cp{1, 1, 8, 16};
        Copy(c, a, (uint64_t)arg, 4, cp);
    } else if (op == 5) {  // SetCmpMask then GetCmpMask round-trips 128 bits
        SetCmpMask(p);
        GetCmpMask(c);
    }
    cg.SetValue(0, (int32_t)kept);
    outQ.EnQue(c);
    inQ.FreeTensor(a);
    patQ.FreeTensor(p);
    c = outQ.DeQue<float>();
    DataCopy(yg, c, 4096);
    outQ.FreeTensor(c);
}
extern "C" void run_rearrange(uint8_t* x, uint8_t* pat, uint8_t* y, uint8_t* cnt, int op, int arg)
{
    rearrange_kernel<<<1, nullptr, nullptr>>>(x, pat, y, cnt, op, arg);
}

// The whole 192 KB of UB: three 64 KB buffers (two queues and a TBuf); TBuf AllocTensor/FreeTensor.
__global__ __aicore__ void full_ub_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(inQ, 1, 65536);
    pipe.InitBuffer(outQ, 1, 65536);
    pipe.InitBuffer(calc, 65536);
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 16384);
    yg.SetGlobalBuffer((__gm__ float*)y, 16384);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopy(a, xg, 16384);
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    LocalTensor<float> t = calc.AllocTensor<float>();
    Muls(t, a, 2.0f, 16384);
    LocalTensor<float> c = outQ.AllocTensor<float>();
    Adds(c, t, 1.0f, 16384);
    calc.FreeTensor(t);
    ASSERT(false);  // compiled out, as in an NPU build
    outQ.EnQue(c);
    inQ.FreeTensor(a);
    c = outQ.DeQue<float>();
    DataCopy(yg, c, 16384);
    outQ.FreeTensor(c);
}
extern "C" void run_full_ub(uint8_t* x, uint8_t* y) { full_ub_kernel<<<1, nullptr, nullptr>>>(x, y); }

// ReduceSum count form (repeats accumulated in order) and mask form (needs a sized work buffer)
__global__ __aicore__ void reduce_kernel(GM_ADDR x, GM_ADDR y, uint32_t n, int form, uint32_t workElems)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> work;
    pipe.InitBuffer(inQ, 1, n * sizeof(float));
    pipe.InitBuffer(outQ, 1, 32);
    pipe.InitBuffer(work, workElems * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, 8);
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopy(a, xg, n);
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    LocalTensor<float> c = outQ.AllocTensor<float>();
    Duplicate(c, 0.0f, 8);
    LocalTensor<float> w = work.Get<float>();
    if (form == 0) ReduceSum(c, a, w, (int32_t)n);
    else ReduceSum(c, a, w, 64, (int32_t)(n / 64), 8);
    outQ.EnQue(c);
    inQ.FreeTensor(a);
    c = outQ.DeQue<float>();
    DataCopy(yg, c, 8);
    outQ.FreeTensor(c);
}
extern "C" void run_reduce(uint8_t* x, uint8_t* y, uint32_t n, int form, uint32_t workElems)
{
    reduce_kernel<<<1, nullptr, nullptr>>>(x, y, n, form, workElems);
}
'''


@pytest.fixture(scope="module")
def misc_mod():
    return asc.load(MISC, name="vector_misc.cpp")


def test_host_sizing_helpers(misc_mod):
    out = torch.zeros(12, dtype=torch.int32)
    misc_mod.tmp_sizes(out, 1000)
    o = out.tolist()
    assert o[0:2] == [4 * 1000 * 2, 4 * 256]  # Tanh half: 4 live nodes
    assert o[2:4] == [1, 0]  # Tanh float factor
    assert o[4] == o[5] == math.ceil(math.ceil(1000 / 64) / 8) * 8 * 4  # Sum work space
    assert o[6:8] == [3 * 1000 * 4, 3 * 256]  # Gelu
    assert o[8:] == [math.ceil(1000 / 7), 1024, 2, 1]


@pytest.mark.parametrize("with_tmp", [1, 0])
def test_sum_rows(misc_mod, with_tmp):
    rows, n, inner = 6, 300, 304
    x = torch.randn(rows, inner)
    y = torch.zeros(64)
    misc_mod.run_sum(x.reshape(-1), y, rows, n, inner, with_tmp)
    torch.testing.assert_close(y[:rows], x[:, :n].sum(dim=1), rtol=1e-5, atol=1e-5)
    assert torch.all(y[rows:] == 0)


def _rearrange(mod, op, arg, pat=None):
    x = torch.arange(512, dtype=torch.float32) + 0.5
    pat = torch.zeros(64, dtype=torch.int64).to(torch.int32) if pat is None else pat
    y = torch.zeros(4096)
    cnt = torch.zeros(8, dtype=torch.int32)
    mod.run_rearrange(x, pat, y, cnt, op, arg)
    return x, y, int(cnt[0])


@pytest.mark.parametrize("pattern,keep", [(1, lambda i: i % 2 == 0), (2, lambda i: i % 2 == 1),
                                          (3, lambda i: i % 4 == 0), (6, lambda i: i % 4 == 3),
                                          (7, lambda i: True)])
def test_gather_mask_fixed_patterns(misc_mod, pattern, keep):
    x, y, kept = _rearrange(misc_mod, 0, pattern)
    idx = torch.tensor([i for i in range(512) if keep(i % 64)])
    assert kept == len(idx)
    assert torch.equal(y[:kept], x[idx])


def test_gather_mask_pattern_tensor(misc_mod):
    g = torch.Generator().manual_seed(3)
    bits = torch.randint(0, 2, (8, 64), generator=g, dtype=torch.int64)
    words = torch.zeros(64, dtype=torch.int64)  # repeat r's 64 bits are words 8r, 8r+1 (src1RepeatStride 1 block)
    for r in range(8):
        lo = sum(int(bits[r, i]) << i for i in range(32))
        hi = sum(int(bits[r, 32 + i]) << i for i in range(32))
        words[8 * r], words[8 * r + 1] = lo, hi
    x, y, kept = _rearrange(misc_mod, 1, 0, words.to(torch.uint32).view(torch.int32))
    expect = x.reshape(8, 64)[bits.bool()]
    assert kept == expect.numel()
    assert torch.equal(y[:kept], expect)


def test_brcb(misc_mod):
    x, y, _ = _rearrange(misc_mod, 2, 0)
    assert torch.equal(y[:512], x[:64].repeat_interleave(8))


@pytest.mark.parametrize("axis", [0, 1])
def test_broadcast(misc_mod, axis):
    x, y, _ = _rearrange(misc_mod, 3, axis)
    src = x[:64].reshape(1, 64) if axis == 0 else x[:8].reshape(8, 1)
    assert torch.equal(y[:512].reshape(8, 64), src.expand(8, 64))


def test_copy_with_mask_and_strides(misc_mod):
    x, y, _ = _rearrange(misc_mod, 4, 40)
    out = y[:256].reshape(4, 64)
    src = x.reshape(8, 64)[0::2]  # source repeats 16 blocks = 128 floats apart
    assert torch.equal(out[:, :40], src[:, :40])
    assert torch.all(out[:, 40:] == -1)


def test_cmp_mask_round_trip(misc_mod):
    pat = torch.arange(64, dtype=torch.int32) * 7919
    _, y, _ = _rearrange(misc_mod, 5, 0, pat)
    assert torch.equal(y[:4].view(torch.int32), pat[:4])


def test_whole_ub_and_tbuf_free_tensor_are_accepted(misc_mod):
    x = torch.randn(16384)
    y = torch.zeros(16384)
    misc_mod.run_full_ub(x, y)
    torch.testing.assert_close(y, x * 2 + 1)
    assert asc.SOC_PROFILES["Ascend910B2"].usable_ub_bytes == 196608


def test_reduce_sum_count_form_accumulates_repeats_in_order(misc_mod):
    n = 64 * 40
    x = torch.randn(n) * torch.logspace(0, 4, n)
    y = torch.zeros(8)
    misc_mod.run_reduce(x, y, n, 0, 8)
    acc = torch.tensor(0.0)
    for r in range(40):  # tree within a repeat is exact enough here; order across repeats matters
        acc = (acc + x[64 * r:64 * (r + 1)].sum()).float()
    torch.testing.assert_close(y[0], acc, rtol=1e-5, atol=1e-3)


def test_reduce_sum_mask_form_needs_its_documented_work_buffer(misc_mod):
    n = 64 * 40  # 40 repeats -> DivCeil(40, 8) * 8 = 40 work elements
    x = torch.randn(n)
    y = torch.zeros(8)
    misc_mod.run_reduce(x, y, n, 1, 40)
    torch.testing.assert_close(y[0], x.sum(), rtol=1e-5, atol=1e-4)
    # a smaller work buffer: the NPU writes the partial sums past it into whatever UB follows
    # (a warning by default); bounds_mode="strict" makes it the fault
    misc_mod.run_reduce(x, y, n, 1, 32)
    assert any(w["error_class"] == "local_out_of_bounds" and "sharedTmpBuffer" in w["message"]
               for w in misc_mod.last_run.warnings), misc_mod.last_run.warnings
    strict = asc.load(MISC, name="vector_misc.cpp", bounds_mode="strict")
    with pytest.raises(asc.LocalOutOfBounds, match="sharedTmpBuffer"):
        strict.run_reduce(x, y, n, 1, 32)


def test_coverage_table_is_generated_from_the_headers():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "experiments" / "ascendc_api_coverage.py"
    spec = importlib.util.spec_from_file_location("ascendc_api_coverage", path)
    cov = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cov)
    status = {name: st for _, name, st, _ in cov.coverage()}
    assert status["Tanh"] == status["GatherMask"] == status["GetTanhMaxMinTmpSize"] == "supported"
    assert status["SyncAll"] == "supported" and status["BroadCast"] == "partial" and status["Sort"] == "supported"
    assert status["Ands"] == status["Scatter"] == "partial"  # not on Atlas A2: the note says so
    assert cov.main(["--check"]) == 0, "docs/ascendc_api_coverage.md is stale: rerun the script"


# ---- fused element-wise ops, RepeatReduceSum, CastDeq, Gather/Gatherb, Sort32/MrgSort/Sort, Transpose,
# TransDataTo5HD, Scatter/Ands (not on Atlas A2), ListTensorDesc --------------------------------------
# One kernel: a, b, c (16 KiB each) are copied into UB, API `op` runs, 32 KiB of UB go back to y.
# Buffers are TBufs viewed as whatever type the API takes; p0/p1/n are the API's parameters.
APIS = r'''
#include "kernel_operator.h"
using namespace AscendC;

__global__ __aicore__ void apis_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR y, int op, int n, int p0, int p1)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> ab, bb, cb, yb, tb;
    pipe.InitBuffer(ab, 16384);
    pipe.InitBuffer(bb, 16384);
    pipe.InitBuffer(cb, 16384);
    pipe.InitBuffer(yb, 32768);
    pipe.InitBuffer(tb, 16384);
    GlobalTensor<uint8_t> ag, bg, cg, yg;
    ag.SetGlobalBuffer((__gm__ uint8_t*)a, 16384);
    bg.SetGlobalBuffer((__gm__ uint8_t*)b, 16384);
    cg.SetGlobalBuffer((__gm__ uint8_t*)c, 16384);
    yg.SetGlobalBuffer((__gm__ uint8_t*)y, 32768);
    LocalTensor<uint8_t> A = ab.Get<uint8_t>(), B = bb.Get<uint8_t>(), C = cb.Get<uint8_t>(), Y = yb.Get<uint8_t>();
    LocalTensor<uint8_t> Tmp = tb.Get<uint8_t>();
    DataCopy(A, ag, 16384);
    DataCopy(B, bg, 16384);
    DataCopy(C, cg, 16384);
    DataCopy(Y, yg, 32768);
    PipeBarrier<PIPE_ALL>();
    auto Af = A.ReinterpretCast<float>(); auto Bf = B.ReinterpretCast<float>(); auto Cf = C.ReinterpretCast<float>();
    auto Ah = A.ReinterpretCast<half>(); auto Bh = B.ReinterpretCast<half>(); auto Ch = C.ReinterpretCast<half>();
    auto Yf = Y.ReinterpretCast<float>(); auto Yh = Y.ReinterpretCast<half>();
    auto Bu = B.ReinterpretCast<uint32_t>();
    BinaryRepeatParams bp(1, 1, 1, 8, 8, 8);
    switch (op) {
        case 0: AddRelu(Yf, Af, Bf, n); break;
        case 1: SubRelu(Yh, Ah, Bh, n); break;
        case 2: AddRelu(Y.ReinterpretCast<int16_t>(), A.ReinterpretCast<int16_t>(), B.ReinterpretCast<int16_t>(), n); break;
        case 3: DataCopy(Yf, Cf, 4096); PipeBarrier<PIPE_V>(); FusedMulAdd(Yf, Af, Bf, n); break;
        case 4: DataCopy(Yf, Cf, 4096); PipeBarrier<PIPE_V>(); MulAddDst(Yf, Ah, Bh, n); break;
        case 5: DataCopy(Yh, Ch, 8192); PipeBarrier<PIPE_V>(); MulAddDst(Yh, Ah, Bh, (uint64_t)p0, p1, bp); break;
        case 6: AddRelu(Yf, Af, Bf, (uint64_t)p0, p1, bp); break;
        case 7: RepeatReduceSum(Yf, Af, p1, p0, 0, 1, 1, 8); break;
        case 8: SetDeqScale((half)0.5); CastDeq(Yh, A.ReinterpretCast<int32_t>(), n); break;
        case 9: Gather(Yf, Af, Bu, (uint32_t)p0, (uint32_t)n); break;
        case 10: Gather(Yh, Ah, Bu, (uint32_t)p0, (uint64_t)64, (uint8_t)p1, (uint16_t)8); break;
        case 11: Gatherb(Y.ReinterpretCast<uint32_t>(), A.ReinterpretCast<uint32_t>(), Bu, (uint8_t)p1,
                         GatherRepeatParams(1, 8)); break;
        case 12: Sort32(Yf, Af, Bu, p1); break;
        case 13: Sort32(Yh, Ah, Bu, p1); break;
        case 14: {  // 4 sorted queues of p0 float structures each, one after another in A
            uint16_t lens[4] = {(uint16_t)p0, (uint16_t)p0, (uint16_t)p0, (uint16_t)p0};
            MrgSortSrcList<float> list(Af, Af[2 * p0], Af[4 * p0], Af[6 * p0]);
            MrgSort4Info info(lens, p1 != 0, 15, 1);
            MrgSort(Yf, list, info);
            uint16_t r0, r1, r2, r3;
            GetMrgSortResult(r0, r1, r2, r3);
            PipeBarrier<PIPE_ALL>();
            auto Yu = Y.ReinterpretCast<uint32_t>();
            Yu.SetValue(8000, r0); Yu.SetValue(8001, r1); Yu.SetValue(8002, r2); Yu.SetValue(8003, r3);
            break;
        }
        case 15: {  // 2 queues of p0 and p1 float structures (A and B), advanced form
            uint16_t lens[4] = {(uint16_t)p0, (uint16_t)p1, 0, 0};
            uint32_t done[4];
            MrgSortSrcList<float> list(Af, Bf, Cf, Cf);
            MrgSort<float, false>(Yf, list, lens, done, 3, 1);
            break;
        }
        case 16: {  // full sort of 32 * p1 floats: Concat, Sort<float, true>, Extract
            auto Cc = C.ReinterpretCast<float>();
            auto T = Tmp.ReinterpretCast<float>();
            Concat(Cc, Af, T, p1 * 2);
            PipeBarrier<PIPE_V>();
            Sort<float, true>(Yf[4096], Cc, Bu, T, p1);
            PipeBarrier<PIPE_V>();
            Extract(Yf, Y.ReinterpretCast<uint32_t>()[2048], Yf[4096], p1);
            break;
        }
        case 17: Transpose(Yh, Ah); break;
        case 18: Transpose(Yf, Af, Tmp, TransposeParamsExt(2, 3, 2, 8, (TransposeType)p0)); break;
        case 19: case 20: {  // 16 x 16 half blocks (19: LocalTensor lists, 20: GetPhyAddr lists), p1 repeats
            LocalTensor<half> dl[16], sl[16];
            uint64_t da[16], sa[16];
            for (int i = 0; i < 16; ++i) {
                dl[i] = Yh[16 * i]; sl[i] = Ah[p0 * i];
                da[i] = Yh[16 * i].GetPhyAddr(); sa[i] = Ah[p0 * i].GetPhyAddr();
            }
            TransDataTo5HDParams prm(false, false, (uint8_t)p1, (uint16_t)(p1 > 1 ? 16 : 0), (uint16_t)(p1 > 1 ? 1 : 0));
            if (op == 19) TransDataTo5HD<half>(dl, sl, prm);
            else TransDataTo5HD<half>(da, sa, prm);
            break;
        }
        case 21: {  // float blocks
            uint64_t da[16], sa[16];
            for (int i = 0; i < 16; ++i) { da[i] = Yf[8 * i].GetPhyAddr(); sa[i] = Af[8 * i].GetPhyAddr(); }
            TransDataTo5HDParams prm(false, false, 1, 0, 0);
            TransDataTo5HD<float>(da, sa, prm);
            break;
        }
        case 22: {  // int8: low halves of the sources into the high halves of dst
            LocalTensor<int8_t> dl[16], sl[16];
            auto Y8 = Y.ReinterpretCast<int8_t>(); auto A8 = A.ReinterpretCast<int8_t>();
            for (int i = 0; i < 16; ++i) { dl[i] = Y8[32 * i]; sl[i] = A8[32 * i]; }
            TransDataTo5HD<int8_t>(dl, sl, TransDataTo5HDParams(true, p0 != 0, 1, 0, 0));
            break;
        }
        case 23: Scatter(Yf, Af, Bu, 0u, (uint32_t)n); break;
    }
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, Y, 32768);
}
extern "C" void run_api(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* y, int op, int n, int p0, int p1)
{
    apis_kernel<<<1, nullptr, nullptr>>>(a, b, c, y, op, n, p0, p1);
}
'''


@pytest.fixture(scope="module")
def apis_mod():
    return asc.load(APIS, name="basic_apis.cpp")


def _buf(t: torch.Tensor, nbytes: int = 16384) -> torch.Tensor:
    out = torch.zeros(nbytes, dtype=torch.uint8)
    raw = t.contiguous().reshape(-1).view(torch.uint8)
    out[: raw.numel()] = raw
    return out


def _run(mod, op, a=None, b=None, c=None, n=0, p0=0, p1=0, y=None):
    a, b, c = (_buf(t) if t is not None else torch.zeros(16384, dtype=torch.uint8) for t in (a, b, c))
    y = _buf(y, 32768) if y is not None else torch.zeros(32768, dtype=torch.uint8)
    mod.run_api(a, b, c, y, op, n, p0, p1)
    return y


def _rand(n, dtype, seed, lo=-4.0, hi=4.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g) * (hi - lo) + lo).to(dtype)


@pytest.mark.parametrize("n", [2048, 1000, 37])  # whole repeats, a tail, less than one block
def test_add_sub_relu_match_torch(apis_mod, n):
    a, b = _rand(n, torch.float32, 1), _rand(n, torch.float32, 2)
    y = _run(apis_mod, 0, a, b, n=n).view(torch.float32)
    torch.testing.assert_close(y[:n], torch.relu(a + b))
    assert torch.all(y[n:] == 0)  # nothing past count is written
    ah, bh = a.half(), b.half()
    y = _run(apis_mod, 1, ah, bh, n=n).view(torch.float16)
    torch.testing.assert_close(y[:n], torch.relu(ah - bh))
    ai = (a * 3000).to(torch.int16)
    bi = (b * 3000).to(torch.int16)
    y = _run(apis_mod, 2, ai, bi, n=n).view(torch.int16)
    assert torch.equal(y[:n], torch.relu(ai + bi))
    assert apis_mod.last_run.per_pipe_busy["V"] > 0


def test_fused_mul_add_and_mul_add_dst(apis_mod):
    n = 1000
    a, b, c = _rand(n, torch.float32, 3), _rand(n, torch.float32, 4), _rand(n, torch.float32, 5)
    y = _run(apis_mod, 3, a, b, c, n=n).view(torch.float32)  # dst = src0 * dst + src1
    torch.testing.assert_close(y[:n], a * c + b)
    ah, bh = a.half(), b.half()
    y = _run(apis_mod, 4, ah, bh, c, n=n).view(torch.float32)  # float dst += half * half
    torch.testing.assert_close(y[:n], ah.float() * bh.float() + c, rtol=1e-6, atol=1e-6)
    # mask form, half: 3 repeats of the first 100 of 128 elements
    ch = c.half()
    y = _run(apis_mod, 5, _rand(384, torch.float16, 6), _rand(384, torch.float16, 7), _rand(384, torch.float16, 8),
             p0=100, p1=3).view(torch.float16)
    a5, b5, c5 = _rand(384, torch.float16, 6), _rand(384, torch.float16, 7), _rand(384, torch.float16, 8)
    exp = c5.clone().view(3, 128)
    exp[:, :100] = (a5.float() * b5.float() + c5.float()).half().view(3, 128)[:, :100]
    torch.testing.assert_close(y[:384], exp.reshape(-1), rtol=1e-3, atol=1e-3)
    del ch


def test_add_relu_mask_form_leaves_masked_elements(apis_mod):
    a, b = _rand(256, torch.float32, 9), _rand(256, torch.float32, 10)
    y = _run(apis_mod, 6, a, b, p0=40, p1=4).view(torch.float32)[:256].view(4, 64)
    torch.testing.assert_close(y[:, :40], torch.relu(a + b).view(4, 64)[:, :40])
    assert torch.all(y[:, 40:] == 0)


def test_repeat_reduce_sum(apis_mod):
    a = _rand(64 * 5, torch.float32, 11)
    y = _run(apis_mod, 7, a, p0=50, p1=5).view(torch.float32)
    torch.testing.assert_close(y[:5], a.view(5, 64)[:, :50].sum(1), rtol=1e-5, atol=1e-5)
    with pytest.raises(asc.MaskOutOfRange):
        _run(apis_mod, 7, a, p0=65, p1=1)


def test_cast_deq_int32_to_half_with_deq_scale(apis_mod):
    n = 77
    a = torch.randint(-2000, 2000, (n,), dtype=torch.int32)
    y = _run(apis_mod, 8, a, n=n).view(torch.float16)
    assert torch.equal(y[:n], (a.float() * 0.5).half())


def test_gather_count_form(apis_mod):
    src = _rand(1024, torch.float32, 12)
    n = 300
    idx = torch.randint(0, 1000, (n,))
    off = (idx * 4).to(torch.int32)  # byte offsets
    base = 64  # srcBaseAddr: 16 floats in
    y = _run(apis_mod, 9, src, off, n=n, p0=base).view(torch.float32)
    assert torch.equal(y[:n], src[idx + 16])
    assert torch.all(y[n:] == 0)


def test_gather_mask_form_half(apis_mod):
    src = _rand(2048, torch.float16, 13)
    idx = torch.randint(0, 2048, (3 * 128,))
    y = _run(apis_mod, 10, src, (idx * 2).to(torch.int32), p0=0, p1=3).view(torch.float16)
    got = y[: 3 * 128].view(3, 128)
    exp = src[idx].view(3, 128)
    assert torch.equal(got[:, :64], exp[:, :64])  # mask 64: the second half of each repeat is untouched
    assert torch.all(got[:, 64:] == 0)


def test_gather_faults(apis_mod):
    src = _rand(1024, torch.float32, 14)
    with pytest.raises(asc.InvalidArgument, match="not a multiple of sizeof"):
        _run(apis_mod, 9, src, torch.tensor([4, 6], dtype=torch.int32), n=2)  # 6 bytes: not float aligned
    with pytest.raises(asc.LocalOutOfBounds, match="srcOffset"):
        _run(apis_mod, 9, src, torch.tensor([16384], dtype=torch.int32), n=1)  # past the src buffer


def test_gatherb_blocks(apis_mod):
    src = torch.arange(4096, dtype=torch.int32)
    blocks = torch.randint(0, 512, (16,))
    y = _run(apis_mod, 11, src, (blocks * 32).to(torch.int32), p1=2).view(torch.int32)
    exp = torch.stack([src[int(k) * 8: int(k) * 8 + 8] for k in blocks]).reshape(-1)
    assert torch.equal(y[:128], exp)
    with pytest.raises(asc.InvalidArgument, match="32-byte aligned"):
        _run(apis_mod, 11, src, torch.tensor([16] * 8, dtype=torch.int32), p1=1)


def _structs_f32(y: torch.Tensor, n: int):
    s = y[: n * 8].view(n, 2, 4)
    return s[:, 0].contiguous().view(torch.float32).reshape(-1), s[:, 1].contiguous().view(torch.int32).reshape(-1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
def test_sort32_sorts_each_group_of_32_descending_stable(apis_mod, dtype):
    r = 3
    scores = torch.randint(-8, 8, (32 * r,)).to(dtype)  # many ties: the earlier element comes first
    idx = torch.arange(32 * r, dtype=torch.int32) + 1000
    y = _run(apis_mod, 12 if dtype == torch.float32 else 13, scores, idx, p1=r)
    s = y[: 32 * r * 8].view(32 * r, 8)
    got_i = s[:, 4:].contiguous().view(torch.int32).reshape(-1)
    got_s = s[:, : scores.element_size()].contiguous().view(dtype).reshape(-1)
    for g in range(r):
        v = scores[32 * g: 32 * g + 32].float()
        order = sorted(range(32), key=lambda k: (-v[k].item(), k))
        assert torch.equal(got_i[32 * g: 32 * g + 32], idx[32 * g + torch.tensor(order)])
        assert torch.equal(got_s[32 * g: 32 * g + 32], scores[32 * g + torch.tensor(order)])
    if dtype == torch.float16:
        assert torch.all(s[:, 2:4] == 0)  # reserved bytes
    with pytest.raises(asc.RepeatOutOfRange):
        _run(apis_mod, 12, scores, idx, p1=256)


def _queue_bytes(scores: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    s = torch.zeros(scores.numel(), 2, dtype=torch.int32)
    s[:, 0] = scores.float().view(torch.int32)
    s[:, 1] = idx
    return s.view(torch.uint8).reshape(-1)


def test_mrg_sort_merges_four_queues(apis_mod):
    q = 20
    scores = [torch.sort(_rand(q, torch.float32, 20 + i), descending=True).values for i in range(4)]
    scores[2][5] = scores[0][3]  # a tie across queues: queue 1 comes first
    scores[2] = torch.sort(scores[2], descending=True).values
    idx = [torch.arange(q, dtype=torch.int32) + 100 * i for i in range(4)]
    a = torch.cat([_queue_bytes(s, i) for s, i in zip(scores, idx)])
    y = _run(apis_mod, 14, a, p0=q, p1=0)
    got_s, got_i = _structs_f32(y, 4 * q)
    all_s, all_i = torch.cat(scores), torch.cat(idx)
    order = sorted(range(4 * q), key=lambda k: (-all_s[k].item(), k))
    assert torch.equal(got_i, all_i[torch.tensor(order)])
    assert torch.equal(got_s, all_s[torch.tensor(order)])
    assert y.view(torch.int32)[8000:8004].tolist() == [q] * 4
    # exhausted suspension: stops when the first queue runs dry; GetMrgSortResult reports the counts
    y = _run(apis_mod, 14, a, p0=q, p1=1)
    counts = y.view(torch.int32)[8000:8004].tolist()
    assert q in counts and sum(counts) < 4 * q
    got_s, _ = _structs_f32(y, sum(counts))
    assert torch.equal(got_s, all_s[torch.tensor(order[: sum(counts)])])


def test_mrg_sort_two_queues_of_different_length(apis_mod):
    s0 = torch.sort(_rand(7, torch.float32, 30), descending=True).values
    s1 = torch.sort(_rand(13, torch.float32, 31), descending=True).values
    y = _run(apis_mod, 15, _queue_bytes(s0, torch.arange(7, dtype=torch.int32)),
             _queue_bytes(s1, torch.arange(13, dtype=torch.int32) + 50), p0=7, p1=13)
    got_s, _ = _structs_f32(y, 20)
    assert torch.equal(got_s, torch.sort(torch.cat([s0, s1]), descending=True).values)
    assert torch.all(y[20 * 8:] == 0)


def test_sort_concat_extract_full_sort(apis_mod):
    r = 4
    v = _rand(32 * r, torch.float32, 40)
    idx = torch.arange(32 * r, dtype=torch.int32)
    y = _run(apis_mod, 16, v, idx, p1=r)
    vals = y.view(torch.float32)[: 32 * r]
    inds = y.view(torch.int32)[2048: 2048 + 32 * r]
    exp = torch.sort(v, descending=True, stable=True)
    assert torch.equal(vals, exp.values)
    assert torch.equal(inds, exp.indices.to(torch.int32))


def test_transpose_16x16_and_nchw_nhwc(apis_mod):
    m = _rand(256, torch.float16, 50)
    y = _run(apis_mod, 17, m).view(torch.float16)
    assert torch.equal(y[:256].view(16, 16), m.view(16, 16).T)
    x = _rand(2 * 3 * 16, torch.float32, 51)
    y = _run(apis_mod, 18, x, p0=11).view(torch.float32)  # TRANSPOSE_NCHW2NHWC on [2, 3, 2, 8]
    assert torch.equal(y[:96], x.view(2, 3, 2, 8).permute(0, 2, 3, 1).reshape(-1))
    y = _run(apis_mod, 18, x, p0=12).view(torch.float32)  # TRANSPOSE_NHWC2NCHW
    assert torch.equal(y[:96], x.view(2, 2, 8, 3).permute(0, 3, 1, 2).reshape(-1))
    with pytest.raises(asc.UnsupportedAPI):
        _run(apis_mod, 18, x, p0=1)  # TRANSPOSE_NZ2ND_0213: documented as not supported


@pytest.mark.parametrize("op", [19, 20], ids=["tensor_lists", "address_lists"])
def test_trans_data_to_5hd_half(apis_mod, op):
    m = _rand(256, torch.float16, 60)
    # one repeat with zero strides... but repeatTimes == 1 starts one stride in (CANN): strides are 0 here
    y = _run(apis_mod, op, m, p0=16, p1=1).view(torch.float16)
    assert torch.equal(y[:256].view(16, 16), m.view(16, 16).T)
    # NCHW -> NC1HWC0 for C = 16, H*W = 32: sources are the 16 channel planes, two repeats along HW
    x = _rand(16 * 32, torch.float16, 61)
    y = _run(apis_mod, op, x, p0=32, p1=2).view(torch.float16)
    assert torch.equal(y[:512].view(32, 16), x.view(16, 32).T)


def test_trans_data_to_5hd_b32_and_b8(apis_mod):
    m = _rand(128, torch.float32, 62)
    y = _run(apis_mod, 21, m).view(torch.float32)[:128].view(16, 8)  # dst block j: 8 floats
    src = m.view(16, 8)  # 16 source blocks of 8 floats
    for k in range(8):
        assert torch.equal(y[2 * k], src[:8, k]) and torch.equal(y[2 * k + 1], src[8:, k])
    a = torch.randint(-100, 100, (512,), dtype=torch.int8)
    for src_high in (0, 1):
        y = _run(apis_mod, 22, a, p0=src_high).view(torch.int8)[:512].view(16, 32)
        exp = a.view(16, 32)[:, 16 * src_high: 16 * src_high + 16].T  # [j, i] = src block i, element j
        assert torch.equal(y[:, 16:], exp)
        assert torch.all(y[:, :16] == 0)  # the low halves are not written


def test_scatter_and_ands_are_not_on_atlas_a2(apis_mod):
    # asc-devkit's A2 build compiles Scatter to nothing: the call leaves y as it was, with a warning
    y0 = torch.arange(32768, dtype=torch.int32).to(torch.uint8)
    y = _run(apis_mod, 23, n=8, y=y0.clone())
    assert torch.equal(y, y0)
    assert apis_mod.last_run.faults == []
    assert any("Scatter is not supported on Atlas A2" in str(w) for w in apis_mod.last_run.warnings)
    src = APIS.replace("case 23: Scatter(Yf, Af, Bu, 0u, (uint32_t)n); break;",
                       "case 23: Ands(Y.ReinterpretCast<int16_t>(), A.ReinterpretCast<int16_t>(), (int16_t)3, n); break;")
    with pytest.raises(asc.UnsupportedDtypeError, match="Ands: not available on Atlas A2"):
        asc.load(src, name="ands.cpp")


def test_unaligned_operand_faults(apis_mod):
    src = APIS.replace("case 0: AddRelu(Yf, Af, Bf, n); break;", "case 0: AddRelu(Yf, Af[4], Bf, n); break;")
    mod = asc.load(src, name="unaligned.cpp")
    with pytest.raises(asc.UnalignedLocalTensor, match="AddRelu"):
        _run(mod, 0, n=64)


LIST = r'''
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"
using namespace AscendC;

// y[i] = sum of list tensor i (float, any rank); info gets size, dims and shapes
__global__ __aicore__ void list_kernel(GM_ADDR list, GM_ADDR y, GM_ADDR info)
{
    ListTensorDesc desc(list);
    GlobalTensor<float> yg;
    GlobalTensor<uint64_t> ig;
    yg.SetGlobalBuffer((__gm__ float*)y, 8);
    ig.SetGlobalBuffer((__gm__ uint64_t*)info, 32);
    uint32_t n = desc.GetSize();
    ig.SetValue(0, n);
    for (uint32_t i = 0; i < n; ++i) {
        uint64_t shape[8] = {0};
        TensorDesc<float> td;
        td.SetShapeAddr(shape);
        desc.GetDesc(td, i);
        ig.SetValue(1 + 4 * i, td.GetDim());
        ig.SetValue(2 + 4 * i, td.GetIndex());
        ig.SetValue(3 + 4 * i, td.GetShape(0));
        ig.SetValue(4 + 4 * i, td.GetShape(1));
        GlobalTensor<float> g = td.GetDataObj();
        __gm__ float* p = desc.GetDataPtr<float>(i);
        float s = 0;
        for (uint64_t k = 0; k < td.GetShape(0) * td.GetShape(1); ++k) s += g.GetValue(k);
        yg.SetValue(i, s + 0 * p[0]);
    }
}
extern "C" void run_list(uint8_t* list, uint8_t* y, uint8_t* info)
{
    list_kernel<<<1, nullptr, nullptr>>>(list, y, info);
}
// reads past the list: GetDataPtr(3) of a 3-tensor list
__global__ __aicore__ void list_oob_kernel(GM_ADDR list)
{
    ListTensorDesc desc(list);
    desc.GetDataPtr<float>(desc.GetSize());
}
extern "C" void run_list_oob(uint8_t* list) { list_oob_kernel<<<1, nullptr, nullptr>>>(list); }
'''


def test_list_tensor_desc_reads_a_packed_list():
    from kernel_gym.ascendc.list_tensor import pack_list_tensor

    mod = asc.load(LIST, name="list_tensor.cpp")
    ts = [_rand(6, torch.float32, 70).view(2, 3), _rand(20, torch.float32, 71).view(4, 5),
          _rand(7, torch.float32, 72).view(7, 1)]
    packed = pack_list_tensor(ts)
    y = torch.zeros(8)
    info = torch.zeros(32, dtype=torch.int64)
    mod.run_list(packed.buffer, y, info)
    torch.testing.assert_close(y[:3], torch.stack([t.sum() for t in ts]))
    assert info[0] == 3
    for i, t in enumerate(ts):
        assert info[1 + 4 * i: 5 + 4 * i].tolist() == [2, i, *t.shape]
    with pytest.raises(asc.InvalidArgument, match="holds 3 tensors"):
        mod.run_list_oob(packed.buffer)


def test_each_new_api_is_timed_on_the_vector_pipe(apis_mod):
    def v_busy(op, **kw):
        _run(apis_mod, op, **kw)
        return apis_mod.last_run.per_pipe_busy["V"]

    base = v_busy(99)  # no API: only the kernel's own copies
    f = _rand(4096, torch.float32, 80)
    offs = (torch.arange(2048) * 4).to(torch.int32)
    cases = {0: dict(a=f, b=f, n=2048), 3: dict(a=f, b=f, n=2048), 7: dict(a=f, p0=64, p1=8),
             9: dict(a=f, b=offs, n=2048), 11: dict(a=f, b=offs * 8, p1=4), 12: dict(a=f, b=offs, p1=8),
             16: dict(a=f, b=offs, p1=4), 17: dict(a=f), 21: dict(a=f)}
    busy = {op: v_busy(op, **kw) - base for op, kw in cases.items()}
    assert all(v > 0 for v in busy.values()), busy
    assert busy[9] > busy[0]  # a gather of 2048 floats costs more than an element-wise op on them
