"""High-level Ascend C APIs of the simulator against PyTorch: Asinh, Acosh, Atanh, Lgamma, Digamma,
FasterGeluV2, SoftMax / SimpleSoftMax / LogSoftMax (last axis of [m, k], sum and max outputs
broadcast over a 32-byte block, a padded last axis through SoftMaxShapeInfo), LayerNorm, RmsNorm,
CumSum (both axes), Mean and Pad, in float and half, each with a tail that is not a whole repeat.
The host tiling helpers are used as a kernel would use them: a temporary buffer of the documented
minimum size works, a smaller one is a fault. Clamp with both bounds is an Ascend 950 API: on the
simulated Atlas A2 it is a compile error."""

import math

import pytest
import torch

import kernel_gym.ascendc as asc

COMMON = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
using namespace AscendC;

template <typename T>
__aicore__ inline void load(const LocalTensor<T>& t, GM_ADDR p, uint32_t n)
{
    GlobalTensor<T> g;
    g.SetGlobalBuffer((__gm__ T*)p, n);
    DataCopy(t, g, n);
}
template <typename T>
__aicore__ inline void store(GM_ADDR p, const LocalTensor<T>& t, uint32_t n)
{
    GlobalTensor<T> g;
    g.SetGlobalBuffer((__gm__ T*)p, n);
    DataCopy(g, t, n);
}
"""

# ---- element-wise math ---------------------------------------------------------------------------
ELEM = (
    COMMON
    + r"""
template <typename T>
__global__ __aicore__ void elem_kernel(GM_ADDR x, GM_ADDR z, GM_ADDR y, uint32_t n, uint32_t cnt, int op, int withTmp,
                                       uint32_t tmpBytes)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bz, by, bt;
    pipe.InitBuffer(bx, n * sizeof(T));
    pipe.InitBuffer(bz, n * sizeof(T));
    pipe.InitBuffer(by, n * sizeof(T));
    pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<T> a = bx.Get<T>(), b = bz.Get<T>(), c = by.Get<T>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    load(a, x, n);
    load(b, z, n);
    PipeBarrier<PIPE_ALL>();
    if (withTmp) {
        switch (op) {
            case 0: Asinh(c, a, tmp, cnt); break;
            case 1: Acosh(c, a, tmp, cnt); break;
            case 2: Atanh(c, a, tmp, cnt); break;
            case 3: Lgamma(c, a, tmp, cnt); break;
            case 4: Digamma(c, a, tmp, cnt); break;
            case 5: FasterGeluV2(c, a, tmp, cnt); break;
        }
    } else {
        switch (op) {
            case 0: Asinh(c, a, cnt); break;
            case 1: Acosh(c, a, cnt); break;
            case 2: Atanh(c, a, cnt); break;
            case 3: Lgamma(c, a, cnt); break;
            case 4: Digamma(c, a, cnt); break;
            case 5: FasterGeluV2(c, a, cnt); break;
        }
    }
    PipeBarrier<PIPE_ALL>();
    store(y, c, n);
}
extern "C" void run_f32(uint8_t* x, uint8_t* z, uint8_t* y, uint32_t n, uint32_t cnt, int op, int withTmp, uint32_t tmp)
{
    elem_kernel<float><<<1, nullptr, nullptr>>>(x, z, y, n, cnt, op, withTmp, tmp);
}
extern "C" void run_f16(uint8_t* x, uint8_t* z, uint8_t* y, uint32_t n, uint32_t cnt, int op, int withTmp, uint32_t tmp)
{
    elem_kernel<half><<<1, nullptr, nullptr>>>(x, z, y, n, cnt, op, withTmp, tmp);
}
extern "C" void elem_tmp_sizes(uint32_t* out, uint32_t n)
{
    ge::Shape s(std::vector<int64_t>{int64_t(n)});
    GetAsinhMaxMinTmpSize(s, 4, false, out[0], out[1]);
    GetAcoshMaxMinTmpSize(s, 2, false, out[2], out[3]);
    GetAtanhMaxMinTmpSize(s, 2, false, out[4], out[5]);
    GetLgammaMaxMinTmpSize(s, 4, false, out[6], out[7]);
    GetDigammaMaxMinTmpSize(s, 2, false, out[8], out[9]);
}
"""
)

F = torch.nn.functional


def _fgelu_v2(x):
    c = torch.clamp(torch.abs(0.7071 * x), max=1.769) - 1.769
    return x * (torch.sign(x + 1e-12) * (-0.1444 * c * c + 0.5) + 0.5)


ELEM_OPS = {
    0: ("Asinh", torch.asinh, (-5, 5)),
    1: ("Acosh", torch.acosh, (1.01, 6)),
    2: ("Atanh", torch.atanh, (-0.95, 0.95)),
    3: ("Lgamma", torch.lgamma, (0.2, 8)),
    4: ("Digamma", torch.digamma, (0.3, 8)),
    5: ("FasterGeluV2", _fgelu_v2, (-4, 4)),
}
N, CNT = 1024, 1001  # a count that is not a whole number of repeats


@pytest.fixture(scope="module")
def elem_mod():
    return asc.load(ELEM, name="advanced_elem.cpp")


@pytest.mark.parametrize("with_tmp", [1, 0], ids=["sharedTmpBuffer", "framework_tmp"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("op", sorted(ELEM_OPS), ids=[ELEM_OPS[k][0] for k in sorted(ELEM_OPS)])
def test_elementwise_matches_torch(elem_mod, op, dtype, with_tmp):
    name, ref, (lo, hi) = ELEM_OPS[op]
    g = torch.Generator().manual_seed(op)
    x = (torch.rand(N, generator=g) * (hi - lo) + lo).to(dtype)
    z = (torch.rand(N, generator=g) - 0.5).to(dtype)
    y = torch.zeros(N, dtype=dtype)
    fn = elem_mod.run_f32 if dtype == torch.float32 else elem_mod.run_f16
    fn(x, z, y, N, CNT, op, with_tmp, 64 * 1024)
    xf = x.float()[:CNT]
    expect = ref(xf).to(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(y[:CNT], expect, **tol, msg=name)
    assert elem_mod.last_run.per_pipe_busy["V"] > 0


def test_elementwise_tmp_sizes_follow_the_tiling_helpers(elem_mod):
    out = torch.zeros(10, dtype=torch.int32)
    elem_mod.elem_tmp_sizes(out, 1000)
    o = out.tolist()
    assert o[0:2] == [3 * 4000, 3 * 256]  # Asinh float: 3 live nodes
    assert o[2:4] == [2 * 1000 * 2, 2 * 256]  # Acosh half: max(2n, 256) elements
    assert o[4:6] == [4 * 2000, 4 * 256]  # Atanh half
    assert o[6:8] == [8 * 4000, 8 * 256]  # Lgamma float
    assert o[8:10] == [16 * 2000, 16 * 256]  # Digamma half


def test_clamp_with_both_bounds_is_not_on_atlas_a2():
    # CANN documents Clamp(dst, src, min, max, count) for Ascend 950 only; its A2 build compiles the call to nothing
    src = (
        COMMON
        + r"""
__global__ __aicore__ void k(GM_ADDR x)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 256);
    LocalTensor<float> t = b.Get<float>();
    Clamp(t, t, -1.0f, 1.0f, 64);
}
extern "C" void run(uint8_t* x) { k<<<1, nullptr, nullptr>>>(x); }
"""
    )
    with pytest.raises(asc.UnsupportedDtypeError, match="Clamp: not available on Atlas A2"):
        asc.load(src, name="clamp_a2.cpp")


def test_lgamma_too_small_tmp_is_rejected(elem_mod):
    x = torch.rand(N) + 1
    with pytest.raises(asc.InvalidArgument, match="Lgamma: sharedTmpBuffer holds 1024 B"):
        elem_mod.run_f32(x, x, torch.zeros(N), N, CNT, 3, 1, 1024)  # float needs 8 x 256 B


# ---- SoftMax family ----------------------------------------------------------------------------
SOFTMAX = (
    COMMON
    + r"""
template <typename T, typename S>
__global__ __aicore__ void softmax_kernel(GM_ADDR x, GM_ADDR sum, GM_ADDR max, GM_ADDR y, SoftMaxTiling tiling,
                                          uint32_t m, uint32_t k, uint32_t oriK, int mode, uint32_t tmpBytes)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bs, bm, bt;
    const uint32_t sepb = 32 / sizeof(S);
    pipe.InitBuffer(bx, m * k * sizeof(T));
    pipe.InitBuffer(by, m * k * sizeof(T));
    pipe.InitBuffer(bs, m * 32);
    pipe.InitBuffer(bm, m * 32);
    if (mode != 0) pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<T> a = bx.Get<T>(), c = by.Get<T>();
    LocalTensor<S> s = bs.Get<S>(), mx = bm.Get<S>();
    load(a, x, m * k);
    if (mode == 2) {
        load(s, sum, m * sepb);
        load(mx, max, m * sepb);
    }
    PipeBarrier<PIPE_ALL>();
    SoftMaxShapeInfo shape{m, k, m, oriK};
    if (mode == 0) {
        SoftMax<T>(c, s, mx, a, tiling, shape);
    } else {
        LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
        if (mode == 1) SoftMax<T>(c, s, mx, a, tmp, tiling, shape);
        if (mode == 2) SimpleSoftMax<T>(c, s, mx, a, tmp, tiling, shape);
        if constexpr (sizeof(T) == sizeof(S)) {
            if (mode == 3) LogSoftMax<T>(c, s, mx, a, tmp, tiling, shape);
            if (mode == 4) SoftMax<T>(c, a, tmp, tiling, shape);
        }
    }
    PipeBarrier<PIPE_ALL>();
    store(y, c, m * k);
    if (mode != 2 && mode != 4) {
        store(sum, s, m * sepb);
        store(max, mx, m * sepb);
    }
}
// tmpMode: 0 the minimum of GetSoftMaxMinTmpSize, 1 the maximum, 2 too small (64 B)
template <typename T, typename S>
static void run(uint8_t* x, uint8_t* sum, uint8_t* max, uint8_t* y, uint32_t m, uint32_t k, uint32_t oriK, int mode,
                int tmpMode)
{
    ge::Shape shape(std::vector<int64_t>{int64_t(m), int64_t(k)});
    uint32_t minB = GetSoftMaxMinTmpSize(shape, sizeof(S), false), maxB = GetSoftMaxMaxTmpSize(shape, sizeof(S), false);
    uint32_t tmpBytes = tmpMode == 0 ? minB : (tmpMode == 1 ? maxB : 64);
    SoftMaxTiling tiling;
    SoftMaxTilingFunc(shape, sizeof(S), tmpBytes, tiling);
    softmax_kernel<T, S><<<1, nullptr, nullptr>>>(x, sum, max, y, tiling, m, k, oriK, mode, tmpBytes);
}
extern "C" void run_f32(uint8_t* x, uint8_t* s, uint8_t* mx, uint8_t* y, uint32_t m, uint32_t k, uint32_t oriK,
                        int mode, int tmpMode) { run<float, float>(x, s, mx, y, m, k, oriK, mode, tmpMode); }
extern "C" void run_f16(uint8_t* x, uint8_t* s, uint8_t* mx, uint8_t* y, uint32_t m, uint32_t k, uint32_t oriK,
                        int mode, int tmpMode) { run<half, half>(x, s, mx, y, m, k, oriK, mode, tmpMode); }
extern "C" void run_f16_f32(uint8_t* x, uint8_t* s, uint8_t* mx, uint8_t* y, uint32_t m, uint32_t k, uint32_t oriK,
                            int mode, int tmpMode) { run<half, float>(x, s, mx, y, m, k, oriK, mode, tmpMode); }
extern "C" void tiling_fields(uint32_t* out, uint32_t m, uint32_t k, uint32_t work)
{
    ge::Shape shape(std::vector<int64_t>{int64_t(m), int64_t(k)});
    SoftMaxTiling t;
    SoftMaxTilingFunc(shape, 4, work, t);
    out[0] = t.srcM; out[1] = t.srcK; out[2] = t.splitM; out[3] = t.rangeM; out[4] = t.tailM; out[5] = t.outMaxK;
    out[6] = GetSoftMaxMinTmpSize(shape, 4, false);
    out[7] = GetSoftMaxMaxTmpSize(shape, 4, false);
    out[8] = GetLogSoftMaxMaxTmpSize(shape, 2, false);
}
"""
)

M, K, ORI_K = 5, 48, 40  # 5 rows, a padded last axis of 48 with 40 valid columns


@pytest.fixture(scope="module")
def softmax_mod():
    return asc.load(SOFTMAX, name="advanced_softmax.cpp")


def _softmax_inputs(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(M, K, generator=g) * 3
    x[:, ORI_K:] = 0
    return x.to(dtype)


SOFTMAX_RUNS = {
    "fp32": (torch.float32, torch.float32, "run_f32"),
    "fp16": (torch.float16, torch.float16, "run_f16"),
    "fp16_data_fp32_stats": (torch.float16, torch.float32, "run_f16_f32"),
}


@pytest.mark.parametrize("mode", [0, 1], ids=["framework_tmp", "sharedTmpBuffer"])
@pytest.mark.parametrize("run", sorted(SOFTMAX_RUNS))
def test_softmax_last_axis_with_sum_and_max(softmax_mod, run, mode):
    dtype, sdtype, fn = SOFTMAX_RUNS[run]
    sepb = 32 // sdtype.itemsize
    x = _softmax_inputs(dtype)
    s, mx, y = torch.zeros(M, sepb, dtype=sdtype), torch.zeros(M, sepb, dtype=sdtype), torch.zeros(M, K, dtype=dtype)
    getattr(softmax_mod, fn)(x, s, mx, y, M, K, ORI_K, mode, 0)
    xv = x.float()[:, :ORI_K]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(y[:, :ORI_K].float(), torch.softmax(xv, dim=-1), **tol)
    row_max = xv.max(dim=-1, keepdim=True).values
    row_sum = torch.exp(xv - row_max).sum(dim=-1, keepdim=True)
    torch.testing.assert_close(mx.float(), row_max.expand(M, sepb), **tol)  # one 32-byte block per row
    torch.testing.assert_close(s.float(), row_sum.expand(M, sepb), rtol=tol["rtol"], atol=tol["atol"] * 10)
    assert softmax_mod.last_run.per_pipe_busy["V"] > 0


@pytest.mark.parametrize("run", sorted(SOFTMAX_RUNS))
def test_simple_softmax_uses_the_given_sum_and_max(softmax_mod, run):
    dtype, sdtype, fn = SOFTMAX_RUNS[run]
    sepb = 32 // sdtype.itemsize
    x = _softmax_inputs(dtype, 1)
    xv = x.float()[:, :ORI_K]
    row_max = xv.max(dim=-1, keepdim=True).values + 0.5  # not the true max: the API must use what it is given
    row_sum = torch.exp(xv - row_max).sum(dim=-1, keepdim=True)
    s, mx = row_sum.expand(M, sepb).to(sdtype).contiguous(), row_max.expand(M, sepb).to(sdtype).contiguous()
    y = torch.zeros(M, K, dtype=dtype)
    getattr(softmax_mod, fn)(x, s, mx, y, M, K, ORI_K, 2, 0)
    expect = torch.exp(xv - mx.float()[:, :1]) / s.float()[:, :1]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(y[:, :ORI_K].float(), expect, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
def test_log_softmax_is_log10_of_softmax_as_documented(softmax_mod, dtype):
    x = _softmax_inputs(dtype, 2)
    sepb = 32 // dtype.itemsize
    s, mx, y = torch.zeros(M, sepb, dtype=dtype), torch.zeros(M, sepb, dtype=dtype), torch.zeros(M, K, dtype=dtype)
    (softmax_mod.run_f32 if dtype == torch.float32 else softmax_mod.run_f16)(x, s, mx, y, M, K, ORI_K, 3, 0)
    expect = torch.log_softmax(x.float()[:, :ORI_K], dim=-1) / math.log(10)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=3e-3, atol=3e-3)
    torch.testing.assert_close(y[:, :ORI_K].float(), expect, **tol)


def test_softmax_without_sum_and_max(softmax_mod):
    x = _softmax_inputs(torch.float32, 3)
    y = torch.zeros(M, K)
    softmax_mod.run_f32(x, torch.zeros(M, 8), torch.zeros(M, 8), y, M, K, ORI_K, 4, 1)
    torch.testing.assert_close(y[:, :ORI_K], torch.softmax(x[:, :ORI_K], dim=-1), rtol=1e-5, atol=1e-6)


def test_softmax_tiling_helpers(softmax_mod):
    out = torch.zeros(9, dtype=torch.int32)
    softmax_mod.tiling_fields(out, 37, 64, 10 * (8 + 64 + 64) * 4)  # room for 10 rows
    srcM, srcK, splitM, rangeM, tailM, outMaxK, mn, mxb, log_max = out.tolist()
    assert (srcM, srcK, outMaxK) == (37, 64, 8)
    assert splitM == 8 and rangeM * splitM + tailM == 37  # rows per pass rounded down to 8
    assert mn == (8 + 64 + 64) * 4 and mxb == 37 * mn
    assert log_max == 37 * (16 + 64 + 64) * 4


def test_softmax_too_small_tmp_is_rejected(softmax_mod):
    x = _softmax_inputs(torch.float32)
    with pytest.raises(asc.InvalidArgument, match="SoftMax: sharedTmpBuffer holds 64 B"):
        softmax_mod.run_f32(x, torch.zeros(M, 8), torch.zeros(M, 8), torch.zeros(M, K), M, K, ORI_K, 1, 2)


def test_softmax_costs_more_than_a_copy_and_scales_with_rows(softmax_mod):
    costs = []
    for m in (8, 64):
        x = torch.randn(m, 64)
        softmax_mod.run_f32(x, torch.zeros(m, 8), torch.zeros(m, 8), torch.zeros(m, 64), m, 64, 64, 1, 0)
        costs.append(softmax_mod.last_run.per_pipe_busy["V"])
    assert costs[1] > 4 * costs[0]


# ---- LayerNorm, RmsNorm -----------------------------------------------------------------------------
NORM = (
    COMMON
    + r"""
template <typename T>
__global__ __aicore__ void norm_kernel(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean, GM_ADDR var,
                                       LayerNormTiling ln, RmsNormTiling rms, uint32_t rows, uint32_t h, int mode,
                                       uint32_t tmpBytes, float eps)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bg, bb, by, bm, bv, bt;
    pipe.InitBuffer(bx, rows * h * sizeof(T));
    pipe.InitBuffer(by, rows * h * sizeof(T));
    pipe.InitBuffer(bg, h * sizeof(T));
    pipe.InitBuffer(bb, h * sizeof(T));
    pipe.InitBuffer(bm, 64 * sizeof(T));
    pipe.InitBuffer(bv, 64 * sizeof(T));
    if (mode % 2 == 0) pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<T> a = bx.Get<T>(), c = by.Get<T>(), g = bg.Get<T>(), b = bb.Get<T>(), mu = bm.Get<T>(),
                   va = bv.Get<T>();
    load(a, x, rows * h);
    load(g, gamma, h);
    load(b, beta, h);
    PipeBarrier<PIPE_ALL>();
    if (mode == 0) LayerNorm<T>(c, mu, va, a, g, b, bt.Get<uint8_t>(), (T)eps, ln);
    if (mode == 1) LayerNorm<T>(c, mu, va, a, g, b, (T)eps, ln);
    if (mode == 2) RmsNorm<T>(c, a, g, bt.Get<uint8_t>(), (T)eps, rms);
    if (mode == 3) RmsNorm<T>(c, a, g, (T)eps, rms);
    PipeBarrier<PIPE_ALL>();
    store(y, c, rows * h);
    if (mode < 2) {
        store(mean, mu, 64);
        store(var, va, 64);
    }
}
// tmpMode 0: the helper's minimum, 2: 32 B
template <typename T>
static void run(uint8_t* x, uint8_t* g, uint8_t* b, uint8_t* y, uint8_t* mean, uint8_t* var, uint32_t bl, uint32_t sl,
                uint32_t h, uint32_t oriH, int mode, int tmpMode, float eps)
{
    uint32_t mx = 0, mn = 0;
    LayerNormTiling ln;
    RmsNormTiling rms;
    if (mode < 2) {
        ge::Shape shape(std::vector<int64_t>{bl, sl, h, oriH});
        GetLayerNormMaxMinTmpSize(shape, sizeof(T), false, mx, mn);
        GetLayerNormNDTilingInfo(shape, mn, sizeof(T), false, ln);
    } else {
        ge::Shape shape(std::vector<int64_t>{bl, sl, h}), ori(std::vector<int64_t>{bl, sl, oriH});
        GetRmsNormMaxMinTmpSize(shape, sizeof(T), mx, mn);
        if (!GetRmsNormTilingInfo(shape, ori, mn, sizeof(T), rms)) return;
    }
    uint32_t tmp = tmpMode == 0 ? mn : 32;
    norm_kernel<T><<<1, nullptr, nullptr>>>(x, g, b, y, mean, var, ln, rms, bl * sl, h, mode, tmp, eps);
}
extern "C" void run_f32(uint8_t* x, uint8_t* g, uint8_t* b, uint8_t* y, uint8_t* mean, uint8_t* var, uint32_t bl,
                        uint32_t sl, uint32_t h, uint32_t oriH, int mode, int tmpMode, float eps)
{ run<float>(x, g, b, y, mean, var, bl, sl, h, oriH, mode, tmpMode, eps); }
extern "C" void run_f16(uint8_t* x, uint8_t* g, uint8_t* b, uint8_t* y, uint8_t* mean, uint8_t* var, uint32_t bl,
                        uint32_t sl, uint32_t h, uint32_t oriH, int mode, int tmpMode, float eps)
{ run<half>(x, g, b, y, mean, var, bl, sl, h, oriH, mode, tmpMode, eps); }
"""
)

B, S, H, ORI_H = 2, 3, 48, 40
EPS = 1e-5


@pytest.fixture(scope="module")
def norm_mod():
    return asc.load(NORM, name="advanced_norm.cpp")


def _norm_inputs(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B * S, H, generator=g) * 2 + 0.5
    x[:, ORI_H:] = 0
    gamma, beta = torch.randn(H, generator=g), torch.randn(H, generator=g)
    return x.to(dtype), gamma.to(dtype), beta.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("mode", [0, 1, 2, 3], ids=["layernorm_tmp", "layernorm", "rmsnorm_tmp", "rmsnorm"])
def test_norms_match_torch(norm_mod, mode, dtype):
    x, gamma, beta = _norm_inputs(dtype, mode)
    y = torch.zeros(B * S, H, dtype=dtype)
    mean, var = torch.zeros(64, dtype=dtype), torch.zeros(64, dtype=dtype)
    fn = norm_mod.run_f32 if dtype == torch.float32 else norm_mod.run_f16
    fn(x, gamma, beta, y, mean, var, B, S, H, ORI_H, mode, 0, EPS)
    xv, gv, bv = x.float()[:, :ORI_H], gamma.float()[:ORI_H], beta.float()[:ORI_H]
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=5e-3, atol=5e-3)
    if mode < 2:
        expect = F.layer_norm(xv, (ORI_H,), gv, bv, EPS)
        torch.testing.assert_close(mean[: B * S].float(), xv.mean(dim=-1), **tol)
        torch.testing.assert_close(var[: B * S].float(), xv.var(dim=-1, unbiased=False), **tol)
    else:
        expect = xv * torch.rsqrt(xv.pow(2).mean(dim=-1, keepdim=True) + EPS) * gv
    torch.testing.assert_close(y[:, :ORI_H].float(), expect, **tol)


@pytest.mark.parametrize("mode,api", [(0, "LayerNorm"), (2, "RmsNorm")])
def test_norm_too_small_tmp_is_rejected(norm_mod, mode, api):
    x, gamma, beta = _norm_inputs(torch.float32, 0)
    with pytest.raises(asc.InvalidArgument, match=f"{api}: sharedTmpBuffer holds 32 B"):
        norm_mod.run_f32(
            x, gamma, beta, torch.zeros(B * S, H), torch.zeros(64), torch.zeros(64), B, S, H, ORI_H, mode, 2, EPS
        )


# ---- CumSum, Mean, Pad --------------------------------------------------------------------------------
MISC = (
    COMMON
    + r"""
constexpr CumSumConfig kLast{true, false, true};
constexpr CumSumConfig kFirst{false, false, true};
template <typename T>
__global__ __aicore__ void cumsum_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR last, uint32_t outter, uint32_t inner,
                                         int lastAxis, int withTmp)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bl, bt;
    pipe.InitBuffer(bx, outter * inner * sizeof(T));
    pipe.InitBuffer(by, outter * inner * sizeof(T));
    pipe.InitBuffer(bl, 64 * sizeof(T));
    uint32_t mx = 0, mn = 0;
    GetCumSumMaxMinTmpSize(ge::Shape(std::vector<int64_t>{outter, inner}), sizeof(T), lastAxis, false, mx, mn);
    pipe.InitBuffer(bt, mn + 32);
    LocalTensor<T> a = bx.Get<T>(), c = by.Get<T>(), l = bl.Get<T>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    load(a, x, outter * inner);
    PipeBarrier<PIPE_ALL>();
    CumSumInfo info{outter, inner};
    if (lastAxis) {
        if (withTmp) CumSum<T, kLast>(c, l, a, tmp, info);
        else CumSum<T, kLast>(c, l, a, info);
    } else {
        if (withTmp) CumSum<T, kFirst>(c, l, a, tmp, info);
        else CumSum<T, kFirst>(c, l, a, info);
    }
    PipeBarrier<PIPE_ALL>();
    store(y, c, outter * inner);
    store(last, l, 64);
}
template <typename T, typename Acc>
__global__ __aicore__ void mean_kernel(GM_ADDR x, GM_ADDR y, uint32_t outter, uint32_t inner, uint32_t n, int withTmp)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bt;
    pipe.InitBuffer(bx, outter * inner * sizeof(T));
    pipe.InitBuffer(by, 64 * sizeof(T));
    uint32_t mx = 0, mn = 0;
    GetMeanMaxMinTmpSize(n, sizeof(T), sizeof(Acc), false, mx, mn);
    pipe.InitBuffer(bt, (mn + 31) / 32 * 32);
    LocalTensor<T> a = bx.Get<T>(), c = by.Get<T>();
    load(a, x, outter * inner);
    PipeBarrier<PIPE_ALL>();
    MeanParams p{outter, inner, n};
    if (withTmp) Mean<T, Acc>(c, a, bt.Get<uint8_t>(), p);
    else Mean<T, Acc>(c, a, p);
    PipeBarrier<PIPE_ALL>();
    store(y, c, 64);
}
template <typename T>
__global__ __aicore__ void pad_kernel(GM_ADDR x, GM_ADDR y, PadTiling tiling, uint32_t inElems, uint32_t outElems,
                                      uint16_t left, uint16_t right, int32_t value, uint32_t tmpBytes)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bt;
    pipe.InitBuffer(bx, inElems * sizeof(T));
    pipe.InitBuffer(by, outElems * sizeof(T));
    pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<T> a = bx.Get<T>(), c = by.Get<T>();
    load(a, x, inElems);
    PipeBarrier<PIPE_ALL>();
    PadParams p{left, right, value};
    Pad(c, a, p, bt.Get<uint8_t>(), tiling);
    PipeBarrier<PIPE_ALL>();
    store(y, c, outElems);
}
extern "C" void cumsum_f32(uint8_t* x, uint8_t* y, uint8_t* l, uint32_t o, uint32_t i, int last, int tmp)
{ cumsum_kernel<float><<<1, nullptr, nullptr>>>(x, y, l, o, i, last, tmp); }
extern "C" void cumsum_f16(uint8_t* x, uint8_t* y, uint8_t* l, uint32_t o, uint32_t i, int last, int tmp)
{ cumsum_kernel<half><<<1, nullptr, nullptr>>>(x, y, l, o, i, last, tmp); }
extern "C" void mean_f32(uint8_t* x, uint8_t* y, uint32_t o, uint32_t i, uint32_t n, int tmp)
{ mean_kernel<float, float><<<1, nullptr, nullptr>>>(x, y, o, i, n, tmp); }
extern "C" void mean_f16(uint8_t* x, uint8_t* y, uint32_t o, uint32_t i, uint32_t n, int tmp)
{ mean_kernel<half, float><<<1, nullptr, nullptr>>>(x, y, o, i, n, tmp); }
template <typename T>
static void pad(uint8_t* x, uint8_t* y, uint32_t h, uint32_t w, uint32_t oriW, uint16_t left, uint16_t right,
                int32_t value, uint32_t outW, int tooSmall)
{
    PadTiling t;
    ge::Shape shape(std::vector<int64_t>{h, w}), ori(std::vector<int64_t>{h, oriW});
    uint32_t mx = 0, mn = 0;
    GetPadMaxMinTmpSize(shape, sizeof(T), mx, mn);
    PadTilingFunc(shape, ori, mn, sizeof(T), t);
    pad_kernel<T><<<1, nullptr, nullptr>>>(x, y, t, h * w, h * outW, left, right, value, tooSmall ? 32 : mn);
}
extern "C" void pad_f32(uint8_t* x, uint8_t* y, uint32_t h, uint32_t w, uint32_t oriW, uint16_t l, uint16_t r,
                        int32_t v, uint32_t outW, int tooSmall) { pad<float>(x, y, h, w, oriW, l, r, v, outW, tooSmall); }
extern "C" void pad_f16(uint8_t* x, uint8_t* y, uint32_t h, uint32_t w, uint32_t oriW, uint16_t l, uint16_t r,
                        int32_t v, uint32_t outW, int tooSmall) { pad<half>(x, y, h, w, oriW, l, r, v, outW, tooSmall); }
"""
)


@pytest.fixture(scope="module")
def misc_mod():
    return asc.load(MISC, name="advanced_misc.cpp")


@pytest.mark.parametrize("with_tmp", [1, 0], ids=["sharedTmpBuffer", "framework_tmp"])
@pytest.mark.parametrize("last_axis", [1, 0], ids=["last_axis", "first_axis"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
def test_cumsum_matches_torch(misc_mod, dtype, last_axis, with_tmp):
    outter, inner = 5, 48
    x = torch.randn(outter, inner).to(dtype)
    y, last = torch.zeros(outter, inner, dtype=dtype), torch.zeros(64, dtype=dtype)
    (misc_mod.cumsum_f32 if dtype == torch.float32 else misc_mod.cumsum_f16)(
        x, y, last, outter, inner, last_axis, with_tmp
    )
    expect = torch.cumsum(x.float(), dim=1 if last_axis else 0)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=5e-3, atol=1e-2)
    torch.testing.assert_close(y.float(), expect, **tol)
    want_last = expect[:, -1] if last_axis else expect[-1]  # the last column / the last row
    torch.testing.assert_close(last[: want_last.numel()].float(), want_last, **tol)


@pytest.mark.parametrize("with_tmp", [1, 0], ids=["sharedTmpBuffer", "framework_tmp"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16_acc_fp32"])
def test_mean_rows(misc_mod, dtype, with_tmp):
    outter, n, inner = 3, 300, 304  # n is not a whole number of repeats; rows are 32-byte aligned
    x = torch.randn(outter, inner).to(dtype)
    y = torch.zeros(64, dtype=dtype)
    (misc_mod.mean_f32 if dtype == torch.float32 else misc_mod.mean_f16)(x, y, outter, inner, n, with_tmp)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(y[:outter].float(), x.float()[:, :n].mean(dim=1), **tol)


def test_pad_aligned_rows_fill_the_redundant_columns(misc_mod):
    h, w, ori_w = 4, 16, 13
    x = torch.randn(h, w)
    y = torch.zeros(h, w)
    misc_mod.pad_f32(x, y, h, w, ori_w, 0, 3, 7, w, 0)
    expect = x.clone()
    expect[:, ori_w:] = 7
    torch.testing.assert_close(y, expect)


def test_pad_unaligned_rows_to_32_bytes(misc_mod):
    h, w = 16, 15  # half rows of 30 bytes become 32
    x = torch.randn(h, w).to(torch.float16)
    y = torch.zeros(h, 16, dtype=torch.float16)
    misc_mod.pad_f16(x, y, h, w, w, 0, 1, -3, 16, 0)
    torch.testing.assert_close(y, F.pad(x, (0, 1), value=-3.0))
    with pytest.raises(asc.InvalidArgument, match="Pad: sharedTmpBuffer holds 32 B"):
        misc_mod.pad_f16(x, y, h, w, w, 0, 1, -3, 16, 1)


# ---- GeGLU, SwiGLU, Fmod (float) and Xor (int16): binary element-wise advanced APIs ----------------
GLU_FMOD_XOR = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
constexpr uint32_t N = 256;
extern "C" __global__ __aicore__ void glu(GM_ADDR a, GM_ADDR b, GM_ADDR ia, GM_ADDR ib, GM_ADDR out, GM_ADDR iout,
                                          uint32_t tmpBytes)
{
    AscendC::GlobalTensor<float> aGm, bGm, oGm;
    AscendC::GlobalTensor<int16_t> iaGm, ibGm, ioGm;
    aGm.SetGlobalBuffer((__gm__ float*)a, N);
    bGm.SetGlobalBuffer((__gm__ float*)b, N);
    oGm.SetGlobalBuffer((__gm__ float*)out, 3 * N);
    iaGm.SetGlobalBuffer((__gm__ int16_t*)ia, N);
    ibGm.SetGlobalBuffer((__gm__ int16_t*)ib, N);
    ioGm.SetGlobalBuffer((__gm__ int16_t*)iout, N);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> fb, sb, tb;
    pipe.InitBuffer(fb, 5 * N * 4);
    pipe.InitBuffer(sb, 3 * N * 2);
    pipe.InitBuffer(tb, tmpBytes);
    AscendC::LocalTensor<float> x0 = fb.Get<float>(), x1 = x0[N], y0 = x0[2 * N], y1 = x0[3 * N], y2 = x0[4 * N];
    AscendC::LocalTensor<int16_t> i0 = sb.Get<int16_t>(), i1 = i0[N], i2 = i0[2 * N];
    AscendC::LocalTensor<uint8_t> tmp = tb.Get<uint8_t>();
    AscendC::DataCopy(x0, aGm, N);
    AscendC::DataCopy(x1, bGm, N);
    AscendC::DataCopy(i0, iaGm, N);
    AscendC::DataCopy(i1, ibGm, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::GeGLU<float, false>(y0, x0, x1, tmp, N);
    AscendC::SwiGLU<float, false>(y1, x0, x1, 1.5f, tmp, N);
    AscendC::Fmod(y2, x0, x1, tmp, N);
    AscendC::Xor(i2, i0, i1, N);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(oGm, y0, 3 * N);
    AscendC::DataCopy(ioGm, i2, N);
}
extern "C" void run(GM_ADDR a, GM_ADDR b, GM_ADDR ia, GM_ADDR ib, GM_ADDR out, GM_ADDR iout, uint32_t tmpBytes)
{
    glu<<<1, nullptr, nullptr>>>(a, b, ia, ib, out, iout, tmpBytes);
}
extern "C" int64_t min_tmp()
{
    // the largest minimum of the three float APIs that take the caller's buffer
    uint32_t maxValue = 0, minValue = 0, need = 0;
    ge::Shape shape({int64_t(N)});
    AscendC::GetGeGLUMaxMinTmpSize(shape, 4, false, maxValue, minValue);
    need = minValue;
    AscendC::GetSwiGLUMaxMinTmpSize(shape, 4, maxValue, minValue, false);
    need = minValue > need ? minValue : need;
    AscendC::GetFmodMaxMinTmpSize(shape, 4, false, maxValue, minValue);
    return int64_t(minValue > need ? minValue : need);
}
"""


def test_geglu_swiglu_fmod_xor() -> None:
    mod = asc.load(GLU_FMOD_XOR)
    a, b = torch.randn(256) * 3, torch.randn(256) + 0.1
    b[b.abs() < 0.05] = 0.5
    ia, ib = (
        torch.randint(-30000, 30000, (256,), dtype=torch.int16),
        torch.randint(-30000, 30000, (256,), dtype=torch.int16),
    )
    out, iout = torch.zeros(3 * 256), torch.zeros(256, dtype=torch.int16)
    need = mod.min_tmp()
    assert need > 0
    mod.run(a, b, ia, ib, out, iout, need)
    torch.testing.assert_close(out[:256], a * torch.nn.functional.gelu(b, approximate="tanh"), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out[256:512], a * b * torch.sigmoid(1.5 * b), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out[512:], torch.fmod(a, b), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(iout, ia ^ ib)
    # a sharedTmpBuffer below the documented minimum is a fault, as on the NPU
    with pytest.raises(asc.InvalidArgument, match="GeGLU: sharedTmpBuffer holds 32 B"):
        mod.run(a, b, ia, ib, out, iout, 32)


# ---- UnPad: drop rightPad columns of each 32-byte aligned row; its host tiling helpers ------------------
UNPAD = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
#include "tiling/platform/platform_ascendc.h"
constexpr uint32_t H = 8, W = 16, RIGHT = RIGHT_PAD;
extern "C" __global__ __aicore__ void unpad(GM_ADDR x, GM_ADDR y, GM_ADDR tilingGm)
{
    UnPadTiling tiling = *reinterpret_cast<__gm__ UnPadTiling*>(tilingGm);
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, H * W);
    yGm.SetGlobalBuffer((__gm__ float*)y, H * W);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> a, b, t;
    pipe.InitBuffer(a, H * W * 4);
    pipe.InitBuffer(b, H * W * 4);
    pipe.InitBuffer(t, 4096);
    AscendC::LocalTensor<float> src = a.Get<float>(), dst = b.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = t.Get<uint8_t>();
    AscendC::DataCopy(src, xGm, H * W);
    AscendC::Duplicate(dst, -1.0f, H * W);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::UnPadParams params;
    params.rightPad = RIGHT;
    AscendC::UnPad<float>(dst, src, params, tmp, tiling);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, dst, H * W);
}
extern "C" void run(GM_ADDR x, GM_ADDR y)
{
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    ge::Shape shape({int64_t(H), int64_t(W)});
    uint32_t maxValue = 0, minValue = 0;
    AscendC::GetUnPadMaxMinTmpSize(*platform, shape, 4, maxValue, minValue);
    optiling::UnPadTiling tiling;
    AscendC::UnPadTilingFunc(shape, minValue, 4, tiling);
    UnPadTiling* dev = (UnPadTiling*)malloc(sizeof(UnPadTiling));
    *dev = tiling;
    unpad<<<1, nullptr, nullptr>>>(x, y, (GM_ADDR)dev);
    free(dev);
}
"""


def test_unpad_drops_right_columns() -> None:
    mod = asc.load(UNPAD.replace("RIGHT_PAD", "3"))
    x, y = torch.randn(8, 16), torch.zeros(8 * 16)
    mod.run(x, y)
    torch.testing.assert_close(y[: 8 * 13], x[:, :13].reshape(-1))
    assert bool((y[8 * 13 :] == -1.0).all())  # the rest of dst is untouched
    # a rightPad of a whole 32-byte block (8 floats) is not an unpad the API does
    with pytest.raises(asc.InvalidArgument, match="UnPad: only a rightPad"):
        asc.load(UNPAD.replace("RIGHT_PAD", "8")).run(x, y)


# ---- SoftmaxGrad / SoftmaxGradFront: the softmax backward pass, with their host sizing and tiling -------
SOFTMAX_GRAD = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
constexpr uint32_t M = 4, K = 64;
extern "C" __global__ __aicore__ void sgrad(GM_ADDR g, GM_ADDR s, GM_ADDR y, GM_ADDR f, GM_ADDR t, uint32_t tmpBytes)
{
    SoftMaxTiling tiling = *reinterpret_cast<__gm__ SoftMaxTiling*>(t);
    AscendC::GlobalTensor<float> gGm, sGm, yGm, fGm;
    gGm.SetGlobalBuffer((__gm__ float*)g, M * K);
    sGm.SetGlobalBuffer((__gm__ float*)s, M * K);
    yGm.SetGlobalBuffer((__gm__ float*)y, M * K);
    fGm.SetGlobalBuffer((__gm__ float*)f, M * 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> gb, sb, yb, fb, tb;
    pipe.InitBuffer(gb, M * K * 4);
    pipe.InitBuffer(sb, M * K * 4);
    pipe.InitBuffer(yb, M * K * 4);
    pipe.InitBuffer(fb, M * 32);
    pipe.InitBuffer(tb, tmpBytes);
    AscendC::LocalTensor<float> gl = gb.Get<float>(), sl = sb.Get<float>(), yl = yb.Get<float>(), fl = fb.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = tb.Get<uint8_t>();
    AscendC::DataCopy(gl, gGm, M * K);
    AscendC::DataCopy(sl, sGm, M * K);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::SoftMaxShapeInfo shape = {M, K, M, K};
    AscendC::SoftmaxGrad<float, false>(yl, gl, sl, tmp, tiling, false, shape);
    AscendC::SoftmaxGradFront<float>(fl, gl, sl, tmp, tiling, shape);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yGm, yl, M * K);
    AscendC::DataCopy(fGm, fl, M * 8);
}
extern "C" void run(GM_ADDR g, GM_ADDR s, GM_ADDR y, GM_ADDR f, uint32_t tmpBytes)
{
    ge::Shape shape({int64_t(M), int64_t(K)});
    uint32_t need = AscendC::GetSoftMaxGradMinTmpSize(shape, 4, false, false);
    SoftMaxTiling* tiling = (SoftMaxTiling*)malloc(sizeof(SoftMaxTiling));
    AscendC::SoftMaxGradTilingFunc(shape, 4, need, *tiling, false);
    sgrad<<<1, nullptr, nullptr>>>(g, s, y, f, (GM_ADDR)tiling, tmpBytes ? tmpBytes : need);
    free(tiling);
}
"""


def test_softmax_grad_and_front() -> None:
    mod = asc.load(SOFTMAX_GRAD)
    grad, s = torch.randn(4, 64), torch.softmax(torch.randn(4, 64), dim=1)
    y, front = torch.zeros(4, 64), torch.zeros(4, 8)
    mod.run(grad, s, y, front, 0)
    dot = (grad * s).sum(dim=1, keepdim=True)
    torch.testing.assert_close(y, s * (grad - dot), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(front, dot.expand(4, 8), rtol=1e-5, atol=1e-5)
    with pytest.raises(asc.InvalidArgument, match="SoftmaxGrad: sharedTmpBuffer holds 32 B"):
        mod.run(grad, s, y, front, 32)


# ---- SoftmaxFlashV2: a row's max and sum updated chunk by chunk (FlashAttention-2); memcpy_s on the host -
FLASH_V2 = r"""
#include "acl/acl.h"
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
constexpr uint32_t M = 8, K = 64, CHUNKS = 2;
extern "C" __global__ __aicore__ void flash(GM_ADDR x, GM_ADDR y, GM_ADDR stats, GM_ADDR t)
{
    SoftMaxTiling tiling = *reinterpret_cast<__gm__ SoftMaxTiling*>(t);
    AscendC::GlobalTensor<float> xGm, yGm, sGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, M * K * CHUNKS);
    yGm.SetGlobalBuffer((__gm__ float*)y, M * K * CHUNKS);
    sGm.SetGlobalBuffer((__gm__ float*)stats, 3 * M * 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, sb, mb, eb, tb;
    pipe.InitBuffer(xb, M * K * 4);
    pipe.InitBuffer(sb, M * 32);
    pipe.InitBuffer(mb, M * 32);
    pipe.InitBuffer(eb, M * 32);
    pipe.InitBuffer(tb, 8192);
    AscendC::LocalTensor<float> xl = xb.Get<float>(), sum = sb.Get<float>(), mx = mb.Get<float>(),
                                expMax = eb.Get<float>();
    AscendC::LocalTensor<uint8_t> tmp = tb.Get<uint8_t>();
    AscendC::SoftMaxShapeInfo shape = {M, K, M, K};
    for (uint32_t c = 0; c < CHUNKS; ++c) {
        for (uint32_t r = 0; r < M; ++r) AscendC::DataCopy(xl[r * K], xGm[r * K * CHUNKS + c * K], K);
        AscendC::PipeBarrier<PIPE_ALL>();
        if (c == 0) {
            AscendC::SoftmaxFlashV2<float, false>(xl, sum, mx, xl, expMax, sum, mx, tmp, tiling, shape);
        } else {
            AscendC::SoftmaxFlashV2<float, true>(xl, sum, mx, xl, expMax, sum, mx, tmp, tiling, shape);
        }
        AscendC::PipeBarrier<PIPE_ALL>();
        for (uint32_t r = 0; r < M; ++r) AscendC::DataCopy(yGm[r * K * CHUNKS + c * K], xl[r * K], K);
        AscendC::PipeBarrier<PIPE_ALL>();
    }
    AscendC::DataCopy(sGm, mx, M * 8);
    AscendC::DataCopy(sGm[M * 8], sum, M * 8);
    AscendC::DataCopy(sGm[2 * M * 8], expMax, M * 8);
}
extern "C" void run(GM_ADDR x, GM_ADDR y, GM_ADDR stats)
{
    ge::Shape shape({int64_t(M), int64_t(K)});
    uint32_t need = AscendC::GetSoftMaxFlashV2MinTmpSize(shape, 4, 4, true, false);
    SoftMaxTiling tiling;
    AscendC::SoftMaxFlashV2TilingFunc(shape, 4, 4, need, tiling, true, false);
    SoftMaxTiling* dev = (SoftMaxTiling*)malloc(sizeof(SoftMaxTiling));
    if (memcpy_s(dev, sizeof(SoftMaxTiling), &tiling, sizeof(SoftMaxTiling)) != 0) return;
    flash<<<1, nullptr, nullptr>>>(x, y, stats, (GM_ADDR)dev);
    free(dev);
}
"""


def test_softmax_flash_v2_updates_row_stats() -> None:
    mod = asc.load(FLASH_V2)
    x = torch.randn(8, 128) * 2
    y, stats = torch.zeros(8, 128), torch.zeros(3, 8, 8)
    mod.run(x, y, stats)
    first, second = x[:, :64], x[:, 64:]
    max1 = first.max(dim=1, keepdim=True).values
    full_max = x.max(dim=1, keepdim=True).values
    torch.testing.assert_close(y[:, :64], torch.exp(first - max1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(y[:, 64:], torch.exp(second - full_max), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(stats[0], full_max.expand(8, 8))
    # the running sum, rescaled by exp(old max - new max), equals the sum over the whole row
    torch.testing.assert_close(
        stats[1], torch.exp(x - full_max).sum(dim=1, keepdim=True).expand(8, 8), rtol=1e-5, atol=1e-5
    )
    torch.testing.assert_close(stats[2], torch.exp(max1 - full_max).expand(8, 8), rtol=1e-5, atol=1e-6)
