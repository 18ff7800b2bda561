"""APIs the asc-devkit sample kernels use that the simulator lacked, each exercised by a small kernel of
our own and compared with numpy/PyTorch: AscendQuant / AscendDequant / AscendAntiQuant (Atlas A2
precision: half arithmetic for quant and half anti-quant), Arange, DisableDmaAtomic, Select with a byte
mask, DropOut (byte and bit masks), TBufPool (shared, subdivided and custom pools) and the
deterministic block order of InitDetermineComputeWorkspace / WaitPreBlock / NotifyNextBlock, the [A, R]
LayerNorm (rstd form) with Normalize, SoftmaxFlashV3 and ConfusionTranspose (NZ2ND_0213)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import kernel_gym.ascendc as asc
from tests.ascendc.compat.test_advanced_apis import COMMON  # the load/store helpers, one copy


def _half(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


# ---- AscendQuant / AscendDequant / AscendAntiQuant ---------------------------------------------------
QUANT = (
    COMMON
    + r"""
constexpr uint32_t N = 512, C = 64;
template <typename T>
__global__ __aicore__ void quant_kernel(GM_ADDR x, GM_ADDR s, GM_ADDR o, GM_ADDR y, float scale, float offset,
                                        int perChannel, uint32_t cnt, uint32_t tmpBytes)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bs, bo, by, bt;
    pipe.InitBuffer(bx, N * sizeof(T));
    pipe.InitBuffer(bs, C * sizeof(T));
    pipe.InitBuffer(bo, C * sizeof(T));
    pipe.InitBuffer(by, N);
    pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<T> xl = bx.Get<T>(), sl = bs.Get<T>(), ol = bo.Get<T>();
    LocalTensor<int8_t> yl = by.Get<int8_t>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    load(xl, x, N);
    load(sl, s, C);
    load(ol, o, C);
    PipeBarrier<PIPE_ALL>();
    if (perChannel) AscendQuant<T>(yl, xl, tmp, sl, ol, C, C, cnt);
    else AscendQuant<T>(yl, xl, tmp, scale, offset, cnt);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, N);
}
extern "C" void run_quant(GM_ADDR x, GM_ADDR s, GM_ADDR o, GM_ADDR y, float scale, float offset, int perChannel,
                          int isHalf, uint32_t cnt, uint32_t tmpBytes)
{
    uint32_t maxV = 0, minV = 0;
    AscendC::GetAscendQuantMaxMinTmpSize(ge::Shape({int64_t(N)}), isHalf ? 2 : 4, maxV, minV);
    uint32_t bytes = tmpBytes ? tmpBytes : minV;
    if (isHalf) quant_kernel<half><<<1, nullptr, nullptr>>>(x, s, o, y, scale, offset, perChannel, cnt, bytes);
    else quant_kernel<float><<<1, nullptr, nullptr>>>(x, s, o, y, scale, offset, perChannel, cnt, bytes);
}

constexpr uint32_t M = 16, K = 32;
__global__ __aicore__ void dequant_kernel(GM_ADDR x, GM_ADDR s, GM_ADDR y, uint32_t cal, int scalar)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bs, by;
    pipe.InitBuffer(bx, M * K * 4);
    pipe.InitBuffer(bs, K * 4);
    pipe.InitBuffer(by, M * K * 4);
    LocalTensor<int32_t> xl = bx.Get<int32_t>();
    LocalTensor<float> sl = bs.Get<float>(), yl = by.Get<float>();
    load(xl, x, M * K);
    load(sl, s, K);
    PipeBarrier<PIPE_ALL>();
    if (scalar) AscendDequant<float, float>(yl, xl, sl.GetValue(0), {M, K, cal});
    else AscendDequant(yl, xl, sl, {M, K, cal});
    PipeBarrier<PIPE_ALL>();
    store(y, yl, M * K);
}
extern "C" void run_dequant(GM_ADDR x, GM_ADDR s, GM_ADDR y, uint32_t cal, int scalar)
{
    dequant_kernel<<<1, nullptr, nullptr>>>(x, s, y, cal, scalar);
}

constexpr uint32_t AK = 8, AN = 128;
__global__ __aicore__ void antiquant_kernel(GM_ADDR x, GM_ADDR o, GM_ADDR s, GM_ADDR y, uint32_t groups)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bo, bs, by;
    pipe.InitBuffer(bx, AK * AN);
    pipe.InitBuffer(bo, AN * groups * 2);
    pipe.InitBuffer(bs, AN * groups * 2);
    pipe.InitBuffer(by, AK * AN * 2);
    LocalTensor<int8_t> xl = bx.Get<int8_t>();
    LocalTensor<half> ol = bo.Get<half>(), sl = bs.Get<half>(), yl = by.Get<half>();
    load(xl, x, AK * AN);
    load(ol, o, AN * groups);
    load(sl, s, AN * groups);
    PipeBarrier<PIPE_ALL>();
    AntiQuantShapeInfo info = {groups, AN, groups, AN};
    AscendAntiQuant<int8_t, half, false>(yl, xl, ol, sl, AK, info);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, AK * AN);
}
extern "C" void run_antiquant(GM_ADDR x, GM_ADDR o, GM_ADDR s, GM_ADDR y, uint32_t groups)
{
    antiquant_kernel<<<1, nullptr, nullptr>>>(x, o, s, y, groups);
}
"""
)


@pytest.fixture(scope="module")
def quant_mod():
    return asc.load(QUANT, name="devkit_quant.cpp")


def _quant_ref(x, scale, offset):
    """The A2 AscendQuant: everything in half, then round half to even into int8."""
    y = _half(_half(_half(x) * _half(scale)) + _half(offset))
    return np.clip(np.rint(y), -128, 127).astype(np.int8)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
def test_ascend_quant_per_tensor(quant_mod, dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-30, 30, 512).astype(dtype)
    y = np.zeros(512, np.int8)
    z = np.zeros(64, dtype)
    cnt = 480  # a partial count: the tail of dst is left alone
    quant_mod.run_quant(
        torch.from_numpy(x),
        torch.from_numpy(z),
        torch.from_numpy(z),
        torch.from_numpy(y),
        2.5,
        0.9,
        0,
        int(dtype == np.float16),
        cnt,
        0,
    )
    np.testing.assert_array_equal(y[:cnt], _quant_ref(x[:cnt].astype(np.float32), 2.5, 0.9))
    assert quant_mod.last_run.per_pipe_busy["V"] > 0


def test_ascend_quant_per_channel_saturates(quant_mod):
    rng = np.random.default_rng(1)
    x = rng.uniform(-100, 100, 512).astype(np.float16)
    s = rng.uniform(0.5, 3, 64).astype(np.float16)
    o = rng.uniform(-2, 2, 64).astype(np.float16)
    y = np.zeros(512, np.int8)
    quant_mod.run_quant(
        torch.from_numpy(x), torch.from_numpy(s), torch.from_numpy(o), torch.from_numpy(y), 0.0, 0.0, 1, 1, 512, 0
    )
    want = _quant_ref(x.astype(np.float32), np.tile(s, 8).astype(np.float32), np.tile(o, 8).astype(np.float32))
    np.testing.assert_array_equal(y, want)
    assert (y == 127).any() and (y == -128).any()


def test_ascend_quant_too_small_tmp_is_rejected(quant_mod):
    x = np.zeros(512, np.float32)
    with pytest.raises(asc.InvalidArgument, match="GetAscendQuantMaxMinTmpSize"):
        quant_mod.run_quant(
            torch.from_numpy(x),
            torch.zeros(64),
            torch.zeros(64),
            torch.zeros(512, dtype=torch.int8),
            1.0,
            0.0,
            0,
            0,
            512,
            256,
        )


@pytest.mark.parametrize("scalar", [0, 1], ids=["scale_tensor", "scale_scalar"])
def test_ascend_dequant_scales_the_first_calcount_columns(quant_mod, scalar):
    rng = np.random.default_rng(2)
    x = rng.integers(-1000, 1000, (16, 32)).astype(np.int32)
    s = rng.uniform(-3, 3, 32).astype(np.float32)
    y = np.zeros((16, 32), np.float32)
    cal = 24
    quant_mod.run_dequant(torch.from_numpy(x), torch.from_numpy(s), torch.from_numpy(y), cal, scalar)
    scale = np.full(32, s[0], np.float32) if scalar else s
    want = x.astype(np.float32).copy()
    want[:, :cal] = x[:, :cal].astype(np.float32) * scale[:cal]
    np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("groups", [1, 2])
def test_ascend_antiquant_per_channel_groups(quant_mod, groups):
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (8, 128)).astype(np.int8)
    o = rng.uniform(-10, 10, (groups, 128)).astype(np.float16)
    s = rng.uniform(-2, 2, (groups, 128)).astype(np.float16)
    y = np.zeros((8, 128), np.float16)
    quant_mod.run_antiquant(torch.from_numpy(x), torch.from_numpy(o), torch.from_numpy(s), torch.from_numpy(y), groups)
    g = np.arange(8) // (8 // groups)
    want = _half(_half(x.astype(np.float32) + o[g].astype(np.float32)) * s[g].astype(np.float32))
    np.testing.assert_array_equal(y.astype(np.float32), want)


def test_quant_tiling_helpers() -> None:
    src = r"""
#include "kernel_operator.h"
#include "tiling/tiling_api.h"
extern "C" void sizes(uint32_t* out)
{
    AscendC::GetAscendQuantMaxMinTmpSize(ge::Shape({1024}), 4, out[0], out[1]);
    AscendC::GetAscendDequantMaxMinTmpSize(ge::Shape({4, 64}), 4, out[2], out[3]);
    AscendC::GetAscendAntiQuantMaxMinTmpSize(ge::Shape({8, 128}), ge::Shape({1, 128}), false, ge::DT_INT8,
                                             ge::DT_FLOAT16, out[4], out[5]);
    AscendC::GetAscendAntiQuantMaxMinTmpSize(ge::Shape({8, 128}), ge::Shape({1, 128}), false, ge::DT_INT8,
                                             ge::DT_BF16, out[6], out[7]);
}
"""
    out = torch.zeros(8, dtype=torch.int32)
    asc.load(src).sizes(out)
    # quant: twice the input at most, two repeats at least; dequant: float copies plus one repeat;
    # antiquant: none for half output, float staging for bfloat16
    assert out.tolist() == [
        2048,
        512,
        (64 + 256 + 72) * 4,
        (64 + 64 + 72) * 4,
        0,
        0,
        128 * 8 + 64 * 8 * 4,
        128 * 8 + 64 * 8 * 4,
    ]


# ---- Arange, DisableDmaAtomic ------------------------------------------------------------------------
ARANGE = (
    COMMON
    + r"""
template <typename T>
__global__ __aicore__ void arange_kernel(GM_ADDR y, GM_ADDR z, float first, float diff, int32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024 * sizeof(T));
    LocalTensor<T> t = b.Get<T>();
    Arange<T>(t, static_cast<T>(first), static_cast<T>(diff), n);
    PipeBarrier<PIPE_ALL>();
    store(y, t, 1024);
    // an atomic add into z, ended by DisableDmaAtomic: the second copy overwrites
    PipeBarrier<PIPE_ALL>();
    SetAtomicAdd<T>();
    store(z, t, 1024);
    DisableDmaAtomic();
    PipeBarrier<PIPE_ALL>();
    store(z, t, 512);
}
extern "C" void run_f32(GM_ADDR y, GM_ADDR z, float first, float diff, int32_t n)
{
    arange_kernel<float><<<1, nullptr, nullptr>>>(y, z, first, diff, n);
}
extern "C" void run_i32(GM_ADDR y, GM_ADDR z, float first, float diff, int32_t n)
{
    arange_kernel<int32_t><<<1, nullptr, nullptr>>>(y, z, first, diff, n);
}
"""
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32], ids=["fp32", "int32"])
def test_arange_and_disable_dma_atomic(dtype):
    mod = asc.load(ARANGE, name="devkit_arange.cpp")
    y = torch.zeros(1024, dtype=dtype)
    z = torch.ones(1024, dtype=dtype)
    n = 1000
    (mod.run_f32 if dtype == torch.float32 else mod.run_i32)(y, z, -3.0, 2.0, n)
    want = torch.arange(n, dtype=torch.float64) * 2 - 3
    torch.testing.assert_close(y[:n].double(), want)
    torch.testing.assert_close(z[:512], y[:512])  # overwritten after DisableDmaAtomic
    torch.testing.assert_close(z[512:n], y[512:n] + 1)  # accumulated while atomic add was on
    with pytest.raises(asc.InvalidArgument, match="Arange"):
        mod.run_f32(y, z, 0.0, 1.0, 0)


# ---- Select with a byte mask, DropOut ------------------------------------------------------------------
FILTER = (
    COMMON
    + r"""
constexpr uint32_t R = 4, W = 64, MW = 96;
__global__ __aicore__ void select_kernel(GM_ADDR x, GM_ADDR m, GM_ADDR y, float scalar, int scalarFirst)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bm, by, bt;
    pipe.InitBuffer(bx, R * W * 4);
    pipe.InitBuffer(bm, R * MW);
    pipe.InitBuffer(by, R * W * 4);
    uint32_t maxV, minV;
    GetSelectMaxMinTmpSize(ge::Shape({R, W}), ge::Shape({1}), 4, ge::Shape({R, MW}), 1, true, maxV, minV);
    pipe.InitBuffer(bt, minV);
    LocalTensor<float> xl = bx.Get<float>(), yl = by.Get<float>();
    LocalTensor<uint8_t> ml = bm.Get<uint8_t>(), tmp = bt.Get<uint8_t>();
    load(xl, x, R * W);
    load(ml, m, R * MW);
    PipeBarrier<PIPE_ALL>();
    SelectWithBytesMaskShapeInfo info;
    info.firstAxis = R;
    info.srcLastAxis = W;
    info.maskLastAxis = MW;
    if (scalarFirst) Select(yl, scalar, xl, ml, tmp, info);
    else Select(yl, xl, scalar, ml, tmp, info);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, R * W);
}
extern "C" void run_select(GM_ADDR x, GM_ADDR m, GM_ADDR y, float scalar, int scalarFirst)
{
    select_kernel<<<1, nullptr, nullptr>>>(x, m, y, scalar, scalarFirst);
}
__global__ __aicore__ void dropout_kernel(GM_ADDR x, GM_ADDR m, GM_ADDR y, float keep, uint32_t maskLast)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bm, by, bt;
    pipe.InitBuffer(bx, R * W * 4);
    pipe.InitBuffer(bm, R * W);
    pipe.InitBuffer(by, R * W * 4);
    pipe.InitBuffer(bt, GetDropOutMinTmpSize(ge::Shape({R, W}), 4, false));
    LocalTensor<float> xl = bx.Get<float>(), yl = by.Get<float>();
    LocalTensor<uint8_t> ml = bm.Get<uint8_t>(), tmp = bt.Get<uint8_t>();
    load(xl, x, R * W);
    load(ml, m, R * W);
    PipeBarrier<PIPE_ALL>();
    DropOutShapeInfo info;
    info.firstAxis = R;
    info.srcLastAxis = W;
    info.maskLastAxis = maskLast;
    DropOut(yl, xl, ml, tmp, keep, info);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, R * W);
}
extern "C" void run_dropout(GM_ADDR x, GM_ADDR m, GM_ADDR y, float keep, uint32_t maskLast)
{
    dropout_kernel<<<1, nullptr, nullptr>>>(x, m, y, keep, maskLast);
}
"""
)


@pytest.fixture(scope="module")
def filter_mod():
    return asc.load(FILTER, name="devkit_filter.cpp")


@pytest.mark.parametrize("scalar_first", [0, 1], ids=["tensor_scalar", "scalar_tensor"])
def test_select_with_a_byte_mask(filter_mod, scalar_first):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(4, 64, generator=g)
    m = torch.randint(0, 2, (4, 96), generator=g, dtype=torch.uint8)
    y = torch.zeros(4, 64)
    filter_mod.run_select(x, m, y, 7.5, scalar_first)
    on = m[:, :64].bool()  # the mask's extra columns are ignored
    want = torch.where(on, x, torch.tensor(7.5)) if scalar_first else torch.where(on, torch.tensor(7.5), x)
    torch.testing.assert_close(y, want)


@pytest.mark.parametrize("bits", [0, 1], ids=["byte_mask", "bit_mask"])
def test_dropout_matches_torch(filter_mod, bits):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(4, 64, generator=g)
    keep = 0.7
    y = torch.zeros(4, 64)
    if bits:
        m = torch.randint(0, 256, (4, 64), generator=g, dtype=torch.uint8)
        rows = m.reshape(-1)[:32].reshape(4, 8)  # maskLastAxis 8: rows of 8 bytes, packed
        on = ((rows.unsqueeze(-1).int() >> torch.arange(8)) & 1).reshape(4, 64).bool()  # LSB first
        filter_mod.run_dropout(x, m, y, keep, 8)
    else:
        m = torch.randint(0, 2, (4, 64), generator=g, dtype=torch.uint8)
        on = m.bool()
        filter_mod.run_dropout(x, m, y, keep, 64)
    torch.testing.assert_close(y, torch.where(on, x * (1 / keep), torch.zeros(())))
    with pytest.raises(asc.InvalidArgument, match="keepProb"):
        filter_mod.run_dropout(x, m, y, 1.5, 64)


# ---- TBufPool ---------------------------------------------------------------------------------------------
BUFPOOL = (
    COMMON
    + r"""
constexpr uint32_t L = 256;
class MyPool {
public:
    MyPool() { Init(); }
    template <class T>
    bool InitBuffer(T& que, uint8_t num, uint32_t len)
    {
        auto h = GetBufHandle(GetCurBufSize());
        uint32_t at = GetCurAddr();
        que.InitStartBufHandle(h, num, len);
        for (uint32_t i = 0; i < num; i++) que.InitBufHandle(this, i, h, at + i * len, len);
        SetCurAddr(at + num * len);
        SetCurBufSize(GetCurBufSize() + num);
        return true;
    }
    EXTERN_IMPL_BUFPOOL(MyPool, TPosition::VECCALC, 8);
};
template <class QA, class QB, class QC>
__aicore__ inline void add_round(QA& qa, QB& qb, QC& qc, GlobalTensor<float>& x, GlobalTensor<float>& y,
                                 GlobalTensor<float>& z, float k)
{
    LocalTensor<float> a = qa.template AllocTensor<float>(), b = qb.template AllocTensor<float>();
    DataCopy(a, x, L);
    DataCopy(b, y, L);
    qa.EnQue(a);
    qb.EnQue(b);
    a = qa.template DeQue<float>();
    b = qb.template DeQue<float>();
    LocalTensor<float> c = qc.template AllocTensor<float>();
    Muls(c, a, k, L);
    Add(c, c, b, L);
    qc.EnQue(c);
    qa.FreeTensor(a);
    qb.FreeTensor(b);
    c = qc.template DeQue<float>();
    DataCopy(z, c, L);
    qc.FreeTensor(c);
}
__global__ __aicore__ void pool_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, int scenario, uint32_t poolBytes)
{
    TPipe pipe;
    GlobalTensor<float> xg, yg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x, 2 * L);
    yg.SetGlobalBuffer((__gm__ float*)y, 2 * L);
    zg.SetGlobalBuffer((__gm__ float*)z, 2 * L);
    TBufPool<TPosition::VECCALC> p0, p1, p2;
    TQue<TPosition::VECIN, 1> a0, b0, a1, b1;
    TQue<TPosition::VECOUT, 1> c0, c1;
    if (scenario == 0) {  // two pools sharing one block, one after the other
        pipe.InitBufPool(p1, poolBytes);
        pipe.InitBufPool(p2, poolBytes, p1);
        p1.InitBuffer(a0, 1, L * 4);
        p1.InitBuffer(b0, 1, L * 4);
        p1.InitBuffer(c0, 1, L * 4);
        add_round(a0, b0, c0, xg, yg, zg, 2.0f);
        p1.Reset();
        p2.InitBuffer(a1, 1, L * 4);
        p2.InitBuffer(b1, 1, L * 4);
        p2.InitBuffer(c1, 1, L * 4);
        auto zg2 = zg[L];
        auto xg2 = xg[L];
        auto yg2 = yg[L];
        add_round(a1, b1, c1, xg2, yg2, zg2, 3.0f);
        p2.Reset();
    } else if (scenario == 1) {  // a pool divided into smaller pools
        pipe.InitBufPool(p0, poolBytes);
        p0.InitBufPool(p1, 3 * L * 4);
        p0.InitBufPool(p2, 3 * L * 4, p1);
        p1.InitBuffer(a0, 1, L * 4);
        p1.InitBuffer(b0, 1, L * 4);
        p1.InitBuffer(c0, 1, L * 4);
        add_round(a0, b0, c0, xg, yg, zg, 2.0f);
        p1.Reset();
        p2.InitBuffer(a1, 1, L * 4);
        p2.InitBuffer(b1, 1, L * 4);
        p2.InitBuffer(c1, 1, L * 4);
        auto zg2 = zg[L];
        auto xg2 = xg[L];
        auto yg2 = yg[L];
        add_round(a1, b1, c1, xg2, yg2, zg2, 3.0f);
        p2.Reset();
        p0.Reset();
    } else {  // a pool class of the kernel's own
        MyPool mp;
        pipe.InitBufPool(mp, poolBytes);
        mp.InitBuffer(a0, 1, L * 4);
        mp.InitBuffer(b0, 1, L * 4);
        mp.InitBuffer(c0, 1, L * 4);
        add_round(a0, b0, c0, xg, yg, zg, 2.0f);
        mp.Reset();
        mp.InitBuffer(a1, 1, L * 4);
        mp.InitBuffer(b1, 1, L * 4);
        mp.InitBuffer(c1, 1, L * 4);
        auto zg2 = zg[L];
        auto xg2 = xg[L];
        auto yg2 = yg[L];
        add_round(a1, b1, c1, xg2, yg2, zg2, 3.0f);
    }
}
extern "C" void run(GM_ADDR x, GM_ADDR y, GM_ADDR z, int scenario, uint32_t poolBytes)
{
    pool_kernel<<<1, nullptr, nullptr>>>(x, y, z, scenario, poolBytes);
}
"""
)


@pytest.fixture(scope="module")
def pool_mod():
    return asc.load(BUFPOOL, name="devkit_bufpool.cpp")


@pytest.mark.parametrize("scenario", [0, 1, 2], ids=["shared", "subdivided", "custom"])
def test_tbufpool_scenarios(pool_mod, scenario):
    g = torch.Generator().manual_seed(6)
    x, y = torch.randn(512, generator=g), torch.randn(512, generator=g)
    z = torch.zeros(512)
    pool_mod.run(x, y, z, scenario, 4 * 256 * 4 if scenario == 1 else 3 * 256 * 4)
    torch.testing.assert_close(z[:256], 2 * x[:256] + y[:256])
    torch.testing.assert_close(z[256:], 3 * x[256:] + y[256:])


def test_tbufpool_over_allocation_is_a_fault(pool_mod):
    x = torch.zeros(512)
    with pytest.raises(asc.UBOverflow, match="TBufPool"):
        pool_mod.run(x, x.clone(), x.clone(), 0, 2 * 256 * 4)  # three queues of 1 KiB in a 2 KiB pool


# ---- InitDetermineComputeWorkspace / WaitPreBlock / NotifyNextBlock ------------------------------------
BLOCK_ORDER = r"""
#include "kernel_operator.h"
constexpr int ROUNDS = 3;
extern "C" __global__ __aicore__ void ordered(GM_ADDR counter, GM_ADDR log, GM_ADDR ws, int skipWait)
{
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<int32_t> cnt, out, gmWs;
    int32_t n = AscendC::GetBlockNum();
    cnt.SetGlobalBuffer((__gm__ int32_t*)counter, 8);
    out.SetGlobalBuffer((__gm__ int32_t*)log, ROUNDS * n);
    gmWs.SetGlobalBuffer((__gm__ int32_t*)ws, n * 8);
    AscendC::TBuf<AscendC::TPosition::VECCALC> b;
    pipe.InitBuffer(b, n * 32 + 32);
    AscendC::LocalTensor<int32_t> ubWs = b.Get<int32_t>();
    AscendC::InitDetermineComputeWorkspace(gmWs, ubWs);
    for (int r = 0; r < ROUNDS; ++r) {
        if (!skipWait) AscendC::WaitPreBlock(gmWs, ubWs);
        int32_t c = cnt.GetValue(0);  // a ticket: strictly ordered blocks take them in (round, block) order
        out.SetValue(r * n + AscendC::GetBlockIdx(), c);
        cnt.SetValue(0, c + 1);
        AscendC::NotifyNextBlock(gmWs, ubWs);
    }
}
extern "C" void run(GM_ADDR counter, GM_ADDR log, GM_ADDR ws, int blocks, int skipWait)
{
    ordered<<<blocks, nullptr, nullptr>>>(counter, log, ws, skipWait);
}
"""


def test_wait_pre_block_orders_the_blocks_round_by_round():
    mod = asc.load(BLOCK_ORDER, name="devkit_block_order.cpp")
    n = 4
    counter, log, ws = (
        torch.zeros(8, dtype=torch.int32),
        torch.zeros(3 * n, dtype=torch.int32),
        torch.zeros(n * 8, dtype=torch.int32),
    )
    mod.run(counter, log, ws, n, 0)
    assert log.tolist() == list(range(3 * n))
    assert int(counter[0]) == 3 * n
    # without the waits the blocks race on the counter: the race detector says so
    with pytest.raises(asc.AscendCFault):
        mod.run(torch.zeros(8, dtype=torch.int32), log, ws, n, 1)


# ---- DeepNorm ----------------------------------------------------------------------------------------------
DEEPNORM = (
    COMMON
    + r"""
constexpr uint32_t B = 2, S = 8, H = 64;
__global__ __aicore__ void deepnorm_kernel(GM_ADDR x, GM_ADDR gx, GM_ADDR beta, GM_ADDR gamma, GM_ADDR y, GM_ADDR mean,
                                           GM_ADDR var, GM_ADDR t, float alpha, float eps, uint32_t tmpBytes)
{
    DeepNormTiling tiling = *reinterpret_cast<__gm__ DeepNormTiling*>(t);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bg, bb, bm, by, bme, bv, bt;
    pipe.InitBuffer(bx, B * S * H * 4);
    pipe.InitBuffer(bg, B * S * H * 4);
    pipe.InitBuffer(bb, H * 4);
    pipe.InitBuffer(bm, H * 4);
    pipe.InitBuffer(by, B * S * H * 4);
    pipe.InitBuffer(bme, B * S * 4);
    pipe.InitBuffer(bv, B * S * 4);
    pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<float> xl = bx.Get<float>(), gl = bg.Get<float>(), bl = bb.Get<float>(), ml = bm.Get<float>();
    LocalTensor<float> yl = by.Get<float>(), mel = bme.Get<float>(), vl = bv.Get<float>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    load(xl, x, B * S * H);
    load(gl, gx, B * S * H);
    load(bl, beta, H);
    load(ml, gamma, H);
    PipeBarrier<PIPE_ALL>();
    DeepNorm<float>(yl, mel, vl, xl, gl, bl, ml, tmp, alpha, eps, tiling);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, B * S * H);
    store(mean, mel, B * S);
    store(var, vl, B * S);
}
extern "C" void run(GM_ADDR x, GM_ADDR gx, GM_ADDR beta, GM_ADDR gamma, GM_ADDR y, GM_ADDR mean, GM_ADDR var,
                    float alpha, float eps, uint32_t tmpBytes)
{
    ge::Shape shape({B, S, H});
    uint32_t maxV = 0, minV = 0;
    AscendC::GetDeepNormMaxMinTmpSize(shape, 4, false, true, maxV, minV);
    DeepNormTiling* tiling = (DeepNormTiling*)malloc(sizeof(DeepNormTiling));
    AscendC::GetDeepNormTilingInfo(shape, shape, minV, 4, false, true, *tiling);
    deepnorm_kernel<<<1, nullptr, nullptr>>>(x, gx, beta, gamma, y, mean, var, (GM_ADDR)tiling, alpha, eps,
                                             tmpBytes ? tmpBytes : minV);
    free(tiling);
}
"""
)


def test_deepnorm_is_layernorm_of_the_scaled_residual():
    mod = asc.load(DEEPNORM, name="devkit_deepnorm.cpp")
    g = torch.Generator().manual_seed(7)
    x, gx = torch.randn(2, 8, 64, generator=g), torch.randn(2, 8, 64, generator=g)
    beta, gamma = torch.randn(64, generator=g), torch.randn(64, generator=g)
    y, mean, var = torch.zeros(2, 8, 64), torch.zeros(2, 8), torch.zeros(2, 8)
    alpha, eps = 0.8, 1e-5
    mod.run(x, gx, beta, gamma, y, mean, var, alpha, eps, 0)
    z = alpha * x + gx
    want = torch.nn.functional.layer_norm(z, (64,), gamma, beta, eps)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, z.mean(-1), rtol=1e-5, atol=1e-5)
    # the third output is the variance, as the documented example's values show
    torch.testing.assert_close(var, z.var(-1, unbiased=False), rtol=1e-4, atol=1e-5)
    with pytest.raises(asc.InvalidArgument, match="GetDeepNormMaxMinTmpSize"):
        mod.run(x, gx, beta, gamma, y, mean, var, alpha, eps, 64)


# ---- WelfordUpdate / WelfordFinalize -------------------------------------------------------------------------
WELFORD = (
    COMMON
    + r"""
constexpr uint32_t AB = 64, CHUNKS = 4, P = 8;
__global__ __aicore__ void welford_kernel(GM_ADDR x, GM_ADDR mean, GM_ADDR var, GM_ADDR fin, uint32_t computeLen)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bm, bv, bm2, bv2, bt, bf, bfm, bfv, bc;
    pipe.InitBuffer(bx, AB * 4);
    pipe.InitBuffer(bm, AB * 4);
    pipe.InitBuffer(bv, AB * 4);
    pipe.InitBuffer(bm2, AB * 4);
    pipe.InitBuffer(bv2, AB * 4);
    uint32_t maxV, minV;
    GetWelfordUpdateMaxMinTmpSize(ge::Shape({1, AB}), 4, 4, false, true, maxV, minV);
    pipe.InitBuffer(bt, minV);
    LocalTensor<float> xl = bx.Get<float>(), m = bm.Get<float>(), v = bv.Get<float>();
    LocalTensor<float> m2 = bm2.Get<float>(), v2 = bv2.Get<float>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    Duplicate(m, 0.0f, AB);
    Duplicate(v, 0.0f, AB);
    static constexpr WelfordUpdateConfig inplace = {true};
    for (uint32_t i = 0; i < CHUNKS; ++i) {  // four chunks of AB, running mean / M2 per column
        PipeBarrier<PIPE_ALL>();
        load(xl, x + i * AB * 4, AB);
        PipeBarrier<PIPE_ALL>();
        WelfordUpdateParam p = {1, AB, computeLen, 1.0f / float(i + 1)};
        WelfordUpdate<float, float, false, inplace>(m2, v2, m, v, xl, tmp, p);
        PipeBarrier<PIPE_V>();
        Adds(m, m2, 0.0f, AB);
        Adds(v, v2, 0.0f, AB);
    }
    PipeBarrier<PIPE_ALL>();
    store(mean, m, AB);
    store(var, v, AB);
    // finalize P partials of CHUNKS samples each: with counts, and with a head / tail split
    pipe.InitBuffer(bfm, 32);
    pipe.InitBuffer(bfv, 32);
    pipe.InitBuffer(bc, P * 4);
    pipe.InitBuffer(bf, 1024);
    LocalTensor<float> fm = bfm.Get<float>(), fv = bfv.Get<float>();
    LocalTensor<int32_t> c = bc.Get<int32_t>();
    Duplicate(c, int32_t(CHUNKS), P);
    PipeBarrier<PIPE_ALL>();
    WelfordFinalizePara fp = {CHUNKS, P, CHUNKS, P, 0, 0, 1.0f / P, 1.0f / (P * CHUNKS)};
    WelfordFinalize<false>(fm, fv, m, v, c, bf.Get<uint8_t>(), fp);
    PipeBarrier<PIPE_ALL>();
    GlobalTensor<float> f;
    f.SetGlobalBuffer((__gm__ float*)fin, 4);
    f.SetValue(0, fm.GetValue(0));
    f.SetValue(1, fv.GetValue(0));
    WelfordFinalizePara fp2 = {CHUNKS, P, CHUNKS, P, 0, 0, 1.0f / P, 1.0f / (P * CHUNKS)};
    WelfordFinalize<false>(fm, fv, m, v, bf.Get<uint8_t>(), fp2);
    PipeBarrier<PIPE_ALL>();
    f.SetValue(2, fm.GetValue(0));
    f.SetValue(3, fv.GetValue(0));
}
extern "C" void run(GM_ADDR x, GM_ADDR mean, GM_ADDR var, GM_ADDR fin, uint32_t computeLen)
{
    welford_kernel<<<1, nullptr, nullptr>>>(x, mean, var, fin, computeLen);
}
"""
)


def test_welford_update_and_finalize_match_torch():
    mod = asc.load(WELFORD, name="devkit_welford.cpp")
    g = torch.Generator().manual_seed(8)
    x = torch.randn(4, 64, generator=g) * 3 + 1
    mean, var, fin = torch.zeros(64), torch.zeros(64), torch.zeros(4)
    mod.run(x, mean, var, fin, 64)
    torch.testing.assert_close(mean, x.mean(0), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(var, x.var(0, unbiased=False) * 4, rtol=1e-4, atol=1e-4)  # M2: n * variance
    cols = x[:, :8]  # the finalize step combines the first 8 columns' partials
    for got_mean, got_var in ((fin[0], fin[1]), (fin[2], fin[3])):
        torch.testing.assert_close(got_mean, cols.mean(), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got_var, cols.var(unbiased=False), rtol=1e-4, atol=1e-4)
    # a partial computeLength leaves the rest of the columns as the (in-place) inputs: zeros here
    mod.run(x, mean, var, fin, 32)
    assert bool((mean[32:] == 0).all()) and bool((var[32:] == 0).all())
    torch.testing.assert_close(mean[:32], x[:, :32].mean(0), rtol=1e-5, atol=1e-5)


# ---- TopK ------------------------------------------------------------------------------------------------------
TOPK = (
    COMMON
    + r"""
constexpr int32_t ROWS = 3, INNER = 64, K = 5, KP = 8;
template <bool small>
__global__ __aicore__ void topk_kernel(GM_ADDR x, GM_ADDR fin, GM_ADDR v, GM_ADDR i, int largest, int32_t n)
{
    constexpr int32_t inner = small ? 32 : INNER;
    constexpr int32_t kv = small ? K : KP;
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bi, bf, bv, bo, bt;
    pipe.InitBuffer(bx, ROWS * inner * 4);
    pipe.InitBuffer(bi, ROWS * inner * 4);
    pipe.InitBuffer(bf, 32);
    pipe.InitBuffer(bv, (ROWS * kv * 4 + 31) / 32 * 32);
    pipe.InitBuffer(bo, (ROWS * kv * 4 + 31) / 32 * 32);
    uint32_t maxV = 0, minV = 0;
    auto mode = small ? TopKMode::TOPK_NSMALL : TopKMode::TOPK_NORMAL;
    GetTopKMaxMinTmpSize(*platform_ascendc::PlatformAscendCManager::GetInstance(), inner, ROWS, false, false, mode,
                         largest, 4, maxV, minV);
    pipe.InitBuffer(bt, minV);
    LocalTensor<float> xl = bx.Get<float>(), vl = bv.Get<float>();
    LocalTensor<int32_t> il = bi.Get<int32_t>(), ol = bo.Get<int32_t>();
    LocalTensor<bool> fl = bf.Get<bool>();
    load(xl, x, ROWS * inner);
    load(fl.ReinterpretCast<uint8_t>(), fin, 32);
    PipeBarrier<PIPE_ALL>();
    TopKInfo info;
    info.outter = ROWS;
    info.inner = inner;
    info.n = n;
    TopkTiling tiling;
    constexpr TopKMode M = small ? TopKMode::TOPK_NSMALL : TopKMode::TOPK_NORMAL;
    TopK<float, false, !small, false, M>(vl, ol, xl, il, fl, bt.Get<uint8_t>(), K, tiling, info, largest);
    PipeBarrier<PIPE_ALL>();
    store(v, vl, (ROWS * kv + 7) / 8 * 8);
    store(i, ol, (ROWS * kv + 7) / 8 * 8);
}
extern "C" void run(GM_ADDR x, GM_ADDR fin, GM_ADDR v, GM_ADDR i, int largest, int32_t n, int small)
{
    if (small) topk_kernel<true><<<1, nullptr, nullptr>>>(x, fin, v, i, largest, n);
    else topk_kernel<false><<<1, nullptr, nullptr>>>(x, fin, v, i, largest, n);
}
"""
)


@pytest.mark.parametrize("small", [0, 1], ids=["normal", "small"])
@pytest.mark.parametrize("largest", [1, 0], ids=["largest", "smallest"])
def test_topk_matches_torch(small, largest):
    mod = asc.load(TOPK, name="devkit_topk.cpp")
    inner, kv = (32, 5) if small else (64, 8)
    g = torch.Generator().manual_seed(9)
    x = torch.randn(3, inner, generator=g)
    x[0, 3] = x[0, 10]  # a tie: the lower index comes first
    fin = torch.zeros(32, dtype=torch.uint8)
    if not small:
        fin[1] = 1  # row 1's indices become n
    v = torch.zeros((3 * kv + 7) // 8 * 8)
    i = torch.zeros((3 * kv + 7) // 8 * 8, dtype=torch.int32)
    mod.run(x, fin, v, i, largest, inner, small)
    order = torch.stack([torch.tensor(sorted(range(inner), key=lambda j: (-r[j] if largest else r[j], j))) for r in x])
    want_i = order[:, :5].int()
    want_v = torch.gather(x, 1, order[:, :5])
    got_v, got_i = v[: 3 * kv].reshape(3, kv)[:, :5], i[: 3 * kv].reshape(3, kv)[:, :5].clone()
    torch.testing.assert_close(got_v, want_v)
    if not small:
        assert bool((got_i[1] == inner).all())
        got_i[1] = want_i[1]
    torch.testing.assert_close(got_i, want_i)


# ---- Concat into a default-constructed tensor (Atlas A2: concat becomes src), Sort, Extract -------------
SORT_CONCAT = (
    COMMON
    + r"""
constexpr uint32_t NS = 64;
__global__ __aicore__ void sort_kernel(GM_ADDR x, GM_ADDR v, GM_ADDR i)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bi, bs, bt, bv, bo;
    pipe.InitBuffer(bx, NS * 4);
    pipe.InitBuffer(bi, NS * 4);
    pipe.InitBuffer(bs, NS * 8);
    pipe.InitBuffer(bt, NS * 8);
    pipe.InitBuffer(bv, NS * 4);
    pipe.InitBuffer(bo, NS * 4);
    LocalTensor<float> xl = bx.Get<float>(), sl = bs.Get<float>(), tl = bt.Get<float>(), vl = bv.Get<float>();
    LocalTensor<uint32_t> il = bi.Get<uint32_t>(), ol = bo.Get<uint32_t>();
    load(xl, x, NS);
    Arange<int32_t>(il.ReinterpretCast<int32_t>(), 0, 1, NS);
    PipeBarrier<PIPE_ALL>();
    AscendC::SortConfig cfg;
    uint32_t maxV = 1, minV = 1;
    GetSortMaxMinTmpSize(ge::Shape({NS}), ge::DT_FLOAT, ge::DT_UINT32, false, cfg, maxV, minV);
    LocalTensor<float> concat;  // filled in by Concat
    Concat(concat, xl, tl, NS / 16);
    Sort<float, true>(sl, concat, il, tl, NS / 32);
    PipeBarrier<PIPE_V>();
    Extract(vl, ol, sl, NS / 32);
    PipeBarrier<PIPE_ALL>();
    store(v, vl, NS);
    store(i, ol, NS);
    vl.SetValue(0, float(maxV + minV));  // the Ascend 950 helper gives 0 on A2
    PipeBarrier<PIPE_ALL>();
    store(v + NS * 4, vl, 8);
}
extern "C" void run(GM_ADDR x, GM_ADDR v, GM_ADDR i) { sort_kernel<<<1, nullptr, nullptr>>>(x, v, i); }
"""
)


def test_concat_into_an_empty_tensor_then_sort():
    mod = asc.load(SORT_CONCAT, name="devkit_sort.cpp")
    g = torch.Generator().manual_seed(10)
    x = torch.randn(64, generator=g)
    v, i = torch.zeros(72), torch.zeros(64, dtype=torch.int32)
    mod.run(x, v, i)
    want_v, want_i = torch.sort(x, descending=True, stable=True)
    torch.testing.assert_close(v[:64], want_v)
    torch.testing.assert_close(i.long(), want_i)
    assert float(v[64]) == 0.0


# ---- LayerNormGrad / LayerNormGradBeta ------------------------------------------------------------------------
LN_GRAD = (
    COMMON
    + r"""
constexpr uint32_t B = 2, S = 4, H = 32;
__global__ __aicore__ void lngrad_kernel(GM_ADDR dy, GM_ADDR x, GM_ADDR var, GM_ADDR mean, GM_ADDR gamma, GM_ADDR pdx,
                                         GM_ADDR pdg, GM_ADDR pdb, GM_ADDR t, float eps)
{
    LayerNormGradTiling gt = *reinterpret_cast<__gm__ LayerNormGradTiling*>(t);
    LayerNormGradBetaTiling bt = *reinterpret_cast<__gm__ LayerNormGradBetaTiling*>(t + sizeof(LayerNormGradTiling));
    TPipe pipe;
    TBuf<TPosition::VECCALC> bdy, bx, bv, bm, bg, bpx, brg, bpg, bpb, btmp;
    pipe.InitBuffer(bdy, B * S * H * 4);
    pipe.InitBuffer(bx, B * S * H * 4);
    pipe.InitBuffer(bv, B * S * 4);
    pipe.InitBuffer(bm, B * S * 4);
    pipe.InitBuffer(bg, H * 4);
    pipe.InitBuffer(bpx, B * S * H * 4);
    pipe.InitBuffer(brg, B * S * H * 4);
    pipe.InitBuffer(bpg, H * 4);
    pipe.InitBuffer(bpb, H * 4);
    pipe.InitBuffer(btmp, gt.stackBufferSize);
    LocalTensor<float> dyl = bdy.Get<float>(), xl = bx.Get<float>(), vl = bv.Get<float>(), ml = bm.Get<float>();
    LocalTensor<float> gl = bg.Get<float>(), pxl = bpx.Get<float>(), rgl = brg.Get<float>();
    LocalTensor<float> pgl = bpg.Get<float>(), pbl = bpb.Get<float>();
    LocalTensor<uint8_t> tmp = btmp.Get<uint8_t>();
    load(dyl, dy, B * S * H);
    load(xl, x, B * S * H);
    load(vl, var, B * S);
    load(ml, mean, B * S);
    load(gl, gamma, H);
    PipeBarrier<PIPE_ALL>();
    LayerNormGrad<float>(pxl, rgl, dyl, xl, vl, ml, gl, tmp, eps, gt);
    PipeBarrier<PIPE_V>();
    LayerNormGradBeta<float>(pgl, pbl, rgl, dyl, tmp, bt);
    PipeBarrier<PIPE_ALL>();
    store(pdx, pxl, B * S * H);
    store(pdg, pgl, H);
    store(pdb, pbl, H);
}
extern "C" void run(GM_ADDR dy, GM_ADDR x, GM_ADDR var, GM_ADDR mean, GM_ADDR gamma, GM_ADDR pdx, GM_ADDR pdg,
                    GM_ADDR pdb, float eps)
{
    ge::Shape shape({B, S, H, H});
    uint32_t max1, min1, max2, min2;
    AscendC::GetLayerNormGradMaxMinTmpSize(shape, 4, false, max1, min1);
    AscendC::GetLayerNormGradBetaMaxMinTmpSize(shape, 4, false, max2, min2);
    uint32_t need = min1 > min2 ? min1 : min2;
    uint8_t* t = (uint8_t*)malloc(sizeof(LayerNormGradTiling) + sizeof(LayerNormGradBetaTiling));
    AscendC::GetLayerNormGradNDTilingInfo(shape, need, 4, false, *(LayerNormGradTiling*)t);
    AscendC::GetLayerNormGradBetaNDTilingInfo(shape, need, 4, false,
                                              *(LayerNormGradBetaTiling*)(t + sizeof(LayerNormGradTiling)));
    lngrad_kernel<<<1, nullptr, nullptr>>>(dy, x, var, mean, gamma, pdx, pdg, pdb, (GM_ADDR)t, eps);
    free(t);
}
"""
)


def test_layernorm_grad_and_grad_beta_match_autograd():
    mod = asc.load(LN_GRAD, name="devkit_lngrad.cpp")
    g = torch.Generator().manual_seed(11)
    x = torch.randn(2, 4, 32, generator=g)
    gamma, beta = torch.randn(32, generator=g), torch.randn(32, generator=g)
    dy = torch.randn(2, 4, 32, generator=g)
    eps = 1e-5
    mean, var = x.mean(-1), x.var(-1, unbiased=False)
    pdx, pdg, pdb = torch.zeros(2, 4, 32), torch.zeros(32), torch.zeros(32)
    mod.run(dy, x, var, mean, gamma, pdx, pdg, pdb, eps)
    xr, gr, br = x.clone().requires_grad_(), gamma.clone().requires_grad_(), beta.clone().requires_grad_()
    torch.nn.functional.layer_norm(xr, (32,), gr, br, eps).backward(dy)
    torch.testing.assert_close(pdx, xr.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(pdg, gr.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(pdb, br.grad, rtol=1e-4, atol=1e-4)


# ---- LayerNorm (rstd form, [A, R]) / Normalize -----------------------------------------------------------------
LN_RSTD = (
    COMMON
    + r"""
constexpr uint32_t A = 8, R = 20, RP = 24;  // rows of RP floats, the statistics over the first R
template <const LayerNormConfig& cfg>
__aicore__ inline void ln_body(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean, GM_ADDR rstd,
                               GM_ADDR ny, GM_ADDR nrstd, GM_ADDR var, float eps, uint32_t tmpBytes,
                               const LayerNormSeparateTiling& tiling)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bg, bb, by, bm, br, bny, bnr, bv, bt;
    pipe.InitBuffer(bx, A * RP * 4);
    pipe.InitBuffer(bg, RP * 4);
    pipe.InitBuffer(bb, RP * 4);
    pipe.InitBuffer(by, A * RP * 4);
    pipe.InitBuffer(bm, A * 4);
    pipe.InitBuffer(br, A * 4);
    pipe.InitBuffer(bny, A * RP * 4);
    pipe.InitBuffer(bnr, A * 4);
    pipe.InitBuffer(bv, A * 4);
    pipe.InitBuffer(bt, tmpBytes);
    LocalTensor<float> xl = bx.Get<float>(), gl = bg.Get<float>(), bl = bb.Get<float>(), yl = by.Get<float>();
    LocalTensor<float> ml = bm.Get<float>(), rl = br.Get<float>(), nyl = bny.Get<float>(), nrl = bnr.Get<float>();
    LocalTensor<float> vl = bv.Get<float>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    load(xl, x, A * RP);
    load(gl, gamma, RP);
    load(bl, beta, RP);
    load(vl, var, A);
    PipeBarrier<PIPE_ALL>();
    LayerNormPara para = {A, R, RP};
    LayerNorm<float, float, false, cfg>(yl, ml, rl, xl, gl, bl, eps, tmp, para, tiling);
    PipeBarrier<PIPE_V>();
    // Normalize with LayerNorm's mean and a given variance
    NormalizePara np = {A, R, RP};
    Normalize<float, float>(nyl, nrl, ml, vl, xl, gl, bl, tmp, eps, np);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, A * RP);
    store(mean, ml, A);
    store(rstd, rl, A);
    store(ny, nyl, A * RP);
    store(nrstd, nrl, A);
}
static constexpr LayerNormConfig varCfg = {false, false, false, false};
__global__ __aicore__ void ln_rstd_kernel(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean,
                                          GM_ADDR rstd, GM_ADDR ny, GM_ADDR nrstd, GM_ADDR var, GM_ADDR t, float eps,
                                          uint32_t tmpBytes, int outVar)
{
    LayerNormSeparateTiling tiling = *reinterpret_cast<__gm__ LayerNormSeparateTiling*>(t);
    if (outVar) ln_body<varCfg>(x, gamma, beta, y, mean, rstd, ny, nrstd, var, eps, tmpBytes, tiling);
    else ln_body<LNCFG_NORM>(x, gamma, beta, y, mean, rstd, ny, nrstd, var, eps, tmpBytes, tiling);
}
extern "C" void run(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean, GM_ADDR rstd, GM_ADDR ny,
                    GM_ADDR nrstd, GM_ADDR var, float eps, uint32_t tmpBytes, int outVar)
{
    ge::Shape shape({A, R});
    uint32_t maxV = 0, minV = 0, nMax = 0, nMin = 0;
    AscendC::GetLayerNormMaxMinTmpSize(shape, 4, false, true, false, maxV, minV);
    AscendC::GetNormalizeMaxMinTmpSize(shape, 4, 4, false, true, false, nMax, nMin);
    uint32_t bytes = tmpBytes ? tmpBytes : (minV > nMin ? minV : nMin);
    LayerNormSeparateTiling* tiling = (LayerNormSeparateTiling*)malloc(sizeof(LayerNormSeparateTiling));
    AscendC::GetLayerNormNDTilingInfo(shape, bytes, 4, false, true, *tiling);
    ln_rstd_kernel<<<1, nullptr, nullptr>>>(x, gamma, beta, y, mean, rstd, ny, nrstd, var, (GM_ADDR)tiling, eps,
                                            bytes, outVar);
    free(tiling);
}
"""
)


@pytest.mark.parametrize("out_var", [0, 1], ids=["rstd", "variance"])
def test_layernorm_rstd_form_and_normalize_match_torch(out_var):
    mod = asc.load(LN_RSTD, name="devkit_ln_rstd.cpp")
    g = torch.Generator().manual_seed(5)
    a, r, rp = 8, 20, 24
    x = torch.randn(a, rp, generator=g) * 3 + 1
    gamma, beta = torch.randn(rp, generator=g), torch.randn(rp, generator=g)
    var_in = torch.rand(a, generator=g) + 0.5
    y, ny = torch.zeros(a, rp), torch.zeros(a, rp)
    mean, rstd, nrstd = torch.zeros(a), torch.zeros(a), torch.zeros(a)
    eps = 1e-5
    mod.run(x, gamma, beta, y, mean, rstd, ny, nrstd, var_in, eps, 0, out_var)
    xv = x[:, :r]
    want_mean, want_var = xv.mean(-1), xv.var(-1, unbiased=False)
    want_y = torch.nn.functional.layer_norm(xv, (r,), gamma[:r], beta[:r], eps)
    torch.testing.assert_close(y[:, :r], want_y, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, want_mean, rtol=1e-5, atol=1e-5)
    want_third = want_var if out_var else torch.rsqrt(want_var + eps)
    torch.testing.assert_close(rstd, want_third, rtol=1e-4, atol=1e-5)
    # Normalize: rstd from the given variance, y from LayerNorm's mean
    want_nrstd = torch.rsqrt(var_in + eps)
    torch.testing.assert_close(nrstd, want_nrstd, rtol=1e-5, atol=1e-6)
    want_ny = (x - want_mean[:, None]) * want_nrstd[:, None] * gamma + beta
    torch.testing.assert_close(ny, want_ny, rtol=1e-4, atol=1e-4)


def test_layernorm_rstd_form_too_small_tmp_is_rejected():
    mod = asc.load(LN_RSTD, name="devkit_ln_rstd.cpp")
    x, gamma, beta, y, ny = torch.ones(8, 24), torch.ones(24), torch.zeros(24), torch.zeros(8, 24), torch.zeros(8, 24)
    mean, rstd, nrstd = torch.zeros(8), torch.zeros(8), torch.zeros(8)
    with pytest.raises(asc.InvalidArgument, match="GetLayerNormMaxMinTmpSize"):
        mod.run(x, gamma, beta, y, mean, rstd, ny, nrstd, torch.ones(8), 1e-5, 32, 0)


# ---- SoftmaxFlashV3 ---------------------------------------------------------------------------------------------
FLASH_V3 = (
    COMMON
    + r"""
constexpr uint32_t M = 8, K = 1024;
template <bool upd>
__aicore__ inline void flash_body(GM_ADDR x, GM_ADDR inMean, GM_ADDR inSum, GM_ADDR inMax, GM_ADDR y, GM_ADDR mean,
                                  GM_ADDR sum, GM_ADDR mx, GM_ADDR em, uint32_t loopCnt, float alpha)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bm, bs, bmx, bim, bis, bimx, bem;
    pipe.InitBuffer(bx, M * K * 2);
    pipe.InitBuffer(by, M * K * 2);
    for (auto* b : {&bm, &bs, &bmx, &bim, &bis, &bimx, &bem}) pipe.InitBuffer(*b, M * 32);
    LocalTensor<half> xl = bx.Get<half>(), yl = by.Get<half>(), eml = bem.Get<half>();
    LocalTensor<float> ml = bm.Get<float>(), sl = bs.Get<float>(), mxl = bmx.Get<float>();
    LocalTensor<float> iml = bim.Get<float>(), isl = bis.Get<float>(), imxl = bimx.Get<float>();
    load(xl, x, M * K);
    load(iml, inMean, M * 8);
    load(isl, inSum, M * 8);
    load(imxl, inMax, M * 8);
    PipeBarrier<PIPE_ALL>();
    SoftMaxTiling tiling;
    SoftMaxParams params = {M, K, M, K, loopCnt, 8, alpha};
    SoftmaxFlashV3<half, float, upd>(yl, ml, sl, mxl, xl, eml, iml, isl, imxl, tiling, params);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, M * K);
    store(mean, ml, M * 8);
    store(sum, sl, M * 8);
    store(mx, mxl, M * 8);
    if (upd) store(em, eml, M * 16);
}
__global__ __aicore__ void flash_kernel(GM_ADDR x, GM_ADDR inMean, GM_ADDR inSum, GM_ADDR inMax, GM_ADDR y,
                                        GM_ADDR mean, GM_ADDR sum, GM_ADDR mx, GM_ADDR em, uint32_t loopCnt,
                                        float alpha, int upd)
{
    if (upd) flash_body<true>(x, inMean, inSum, inMax, y, mean, sum, mx, em, loopCnt, alpha);
    else flash_body<false>(x, inMean, inSum, inMax, y, mean, sum, mx, em, loopCnt, alpha);
}
extern "C" void run(GM_ADDR x, GM_ADDR inMean, GM_ADDR inSum, GM_ADDR inMax, GM_ADDR y, GM_ADDR mean, GM_ADDR sum,
                    GM_ADDR mx, GM_ADDR em, uint32_t loopCnt, float alpha, int upd)
{
    flash_kernel<<<1, nullptr, nullptr>>>(x, inMean, inSum, inMax, y, mean, sum, mx, em, loopCnt, alpha, upd);
}
"""
)


def _flash_v3_ref(x, in_mean, in_sum, in_max, loop_cnt, alpha, update):
    """The documented pseudo-code: piece means with its block-reduce grouping, the PASA shift, then softmax."""
    x = x.astype(np.float64)
    m, n = x.shape
    base_k = n // 8
    # lane l of the 64 partial sums: the 8-sums of the first 512 elements, plus lane l of each further repeat
    part = x[:, :512].reshape(m, 64, 8).sum(-1) + x[:, 512:].reshape(m, -1, 64).sum(1)
    local = part.reshape(m, 8, 8).sum(-1) / base_k
    glob = local.mean(-1, keepdims=True)
    scalar = alpha / (1 - alpha)
    xs = x - np.repeat((glob - local) * scalar, base_k, axis=1)
    row_max = xs.max(-1, keepdims=True)
    if not update:
        dst = np.exp(xs - row_max)
        return dst, glob, dst.sum(-1, keepdims=True), row_max, None
    x_mean = (glob + in_mean * (loop_cnt - 1)) / loop_cnt
    shift_curr, shift_prev = (glob - x_mean) * scalar, (in_mean - x_mean) * scalar
    x_max = np.maximum(shift_curr + row_max, shift_prev + in_max)
    dst = np.exp(xs - (x_max - shift_curr))
    exp_max = np.exp(in_max - x_max + shift_prev)
    return dst, x_mean, exp_max * in_sum + dst.sum(-1, keepdims=True), x_max, exp_max


@pytest.mark.parametrize("update", [0, 1], ids=["first", "update"])
def test_softmax_flash_v3_matches_the_documented_formula(update):
    mod = asc.load(FLASH_V3, name="devkit_flashv3.cpp")
    rng = np.random.default_rng(3)
    m, k, loop_cnt, alpha = 8, 1024, 3, 0.9375
    x = rng.uniform(0, 4, (m, k)).astype(np.float16)
    # a row's statistics fill its 32-byte block
    in_mean = np.repeat(rng.uniform(1, 3, (m, 1)), 8, 1).astype(np.float32)
    in_sum = np.repeat(rng.uniform(1, 50, (m, 1)), 8, 1).astype(np.float32)
    in_max = np.repeat(rng.uniform(2, 6, (m, 1)), 8, 1).astype(np.float32)
    y = torch.zeros(m, k, dtype=torch.float16)
    mean, s, mx = torch.zeros(m, 8), torch.zeros(m, 8), torch.zeros(m, 8)
    em = torch.zeros(m, 16, dtype=torch.float16)
    t = torch.from_numpy
    mod.run(t(x), t(in_mean), t(in_sum), t(in_max), y, mean, s, mx, em, loop_cnt, alpha, update)
    dst, want_mean, want_sum, want_max, want_em = _flash_v3_ref(
        x, in_mean[:, :1], in_sum[:, :1], in_max[:, :1], loop_cnt, alpha, update
    )
    np.testing.assert_allclose(y.float().numpy(), dst, rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(mean.numpy(), np.repeat(want_mean, 8, 1), rtol=1e-5)
    np.testing.assert_allclose(mx.numpy(), np.repeat(want_max, 8, 1), rtol=1e-5)
    np.testing.assert_allclose(s.numpy(), np.repeat(want_sum, 8, 1), rtol=1e-4)
    if update:
        np.testing.assert_allclose(em.float().numpy(), np.repeat(want_em, 16, 1), rtol=2e-3)


# ---- ConfusionTranspose (TRANSPOSE_NZ2ND_0213) ------------------------------------------------------------------
CONF_T = (
    COMMON
    + r"""
constexpr uint32_t B = 2, N = 3, S = 32, HN = 16, TOTAL = B * N * S * HN;
template <typename T>
__global__ __aicore__ void conf_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR t, int newName, int type)
{
    ConfusionTransposeTiling tiling = *reinterpret_cast<__gm__ ConfusionTransposeTiling*>(t);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by;
    pipe.InitBuffer(bx, TOTAL * sizeof(T));
    pipe.InitBuffer(by, TOTAL * sizeof(T));
    LocalTensor<T> xl = bx.Get<T>(), yl = by.Get<T>();
    load(xl, x, TOTAL);
    PipeBarrier<PIPE_ALL>();
    if (newName) Transpose(yl, xl, TransposeType(type), tiling);
    else ConfusionTranspose(yl, xl, TransposeType(type), tiling);
    PipeBarrier<PIPE_ALL>();
    store(y, yl, TOTAL);
}
extern "C" void run(GM_ADDR x, GM_ADDR y, int isHalf, int newName, int type)
{
    ge::Shape shape({B, N, S, HN});
    uint32_t maxV = 0, minV = 0;
    AscendC::GetTransposeMaxMinTmpSize(shape, isHalf ? 2 : 4, 1, maxV, minV);
    ConfusionTransposeTiling* tiling = (ConfusionTransposeTiling*)malloc(sizeof(ConfusionTransposeTiling));
    AscendC::GetTransposeTilingInfo(shape, minV, isHalf ? 2 : 4, 1, *tiling);
    if (isHalf) conf_kernel<half><<<1, nullptr, nullptr>>>(x, y, (GM_ADDR)tiling, newName, type);
    else conf_kernel<float><<<1, nullptr, nullptr>>>(x, y, (GM_ADDR)tiling, newName, type);
    free(tiling);
}
"""
)


@pytest.mark.parametrize("new_name", [0, 1], ids=["ConfusionTranspose", "Transpose"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["fp32", "fp16"])
def test_confusion_transpose_nz2nd_0213(dtype, new_name):
    mod = asc.load(CONF_T, name="devkit_conf_transpose.cpp")
    b, n, s, hn = 2, 3, 32, 16
    c0 = 32 // (4 if dtype == torch.float32 else 2)
    nd = torch.randn(b, n, s, hn).to(dtype)
    # NZ: per (b, n), hn / c0 column blocks of s rows of c0 elements
    nz = nd.reshape(b, n, s, hn // c0, c0).permute(0, 1, 3, 2, 4).contiguous()
    y = torch.zeros(b, s, n, hn, dtype=dtype)
    mod.run(nz, y, int(dtype == torch.float16), new_name, 1)
    torch.testing.assert_close(y, nd.permute(0, 2, 1, 3), rtol=0, atol=0)


def test_confusion_transpose_other_types_are_refused():
    mod = asc.load(CONF_T, name="devkit_conf_transpose.cpp")
    x, y = torch.zeros(2, 3, 32, 16), torch.zeros(2, 32, 3, 16)
    with pytest.raises(asc.UnsupportedAPI, match="TRANSPOSE_NZ2ND_0213"):
        mod.run(x, y, 0, 0, 2)
