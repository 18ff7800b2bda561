"""The cube unit's low-level API (kgsim/cube.h, src/rt_cube.cpp): DataCopy with Nd2NzParams, LoadData
(with the fractal transposes), Mmad and Fixpipe, compared with PyTorch for every documented Atlas A2
dtype combination, and one test per cube fault class."""

from __future__ import annotations

import pytest
import torch

import kernel_gym.ascendc as asc

# The way public low-level matmul kernels are written: GM -> A1/B1 with Nd2Nz, L1 -> A2/B2 with
# LoadData, Mmad into CO1, Fixpipe to GM; TQue on every position with EnQue/DeQue between the pipes.
# Runtime flags: transB (B given as [N, K]), bias (0 none, 1 bias tensor in C2, 2 cmatrixSource from
# the bias table), acc (a second Mmad accumulates: C = 2 A B), relu, quant (Fixpipe quantPre),
# scale (the scalar of DEQF16).
MATMUL = r'''
#include "kernel_operator.h"
using namespace AscendC;

__aicore__ inline uint32_t CeilAlign(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

template <class T, class C, class O>
class KernelMatmul {
public:
    static constexpr uint32_t C0 = 32 / sizeof(T);  // elements of a 32-byte column block
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                int transB, int biasMode, int acc, int relu, int quant, float scale)
    {
        m_ = m; n_ = n; k_ = k; transB_ = transB; biasMode_ = biasMode; acc_ = acc; relu_ = relu; quant_ = quant;
        scale_ = scale;
        aGM.SetGlobalBuffer((__gm__ T*)a, m * k);
        bGM.SetGlobalBuffer((__gm__ T*)b, k * n);
        biasGM.SetGlobalBuffer((__gm__ C*)bias, n);
        cGM.SetGlobalBuffer((__gm__ O*)c, m * n);
        m1 = CeilDiv(m, 16);
        k1 = CeilDiv(k, C0);
        n1 = CeilDiv(n, 16);
        // int8 B loaded with the 32 x 32 transpose: N in blocks of 32
        nMmad = (sizeof(T) == 1 && !transB) ? CeilAlign(n, 32) : n;
        uint32_t kAl = CeilAlign(k, 32), nAl = CeilAlign(n, 32);
        pipe.InitBuffer(inQueueA1, 1, CeilAlign(m, 16) * kAl * sizeof(T));
        pipe.InitBuffer(inQueueB1, 1, kAl * nAl * sizeof(T));
        pipe.InitBuffer(inQueueA2, 1, CeilAlign(m, 16) * kAl * sizeof(T));
        pipe.InitBuffer(inQueueB2, 1, kAl * nAl * sizeof(T));
        pipe.InitBuffer(outQueueCO1, 1, CeilAlign(m, 16) * nAl * sizeof(C));
        if (biasMode) {
            pipe.InitBuffer(inQueueC1, 1, CeilAlign(n * sizeof(C), 64));
            pipe.InitBuffer(inQueueC2, 1, CeilAlign(n * sizeof(C), 64));
        }
    }
    __aicore__ inline void Process()
    {
        CopyIn();
        SplitA();
        SplitB();
        if (biasMode_) SplitBias();
        Compute();
        CopyOut();
    }

private:
    __aicore__ inline void CopyIn()
    {
        LocalTensor<T> a1 = inQueueA1.AllocTensor<T>();
        LocalTensor<T> b1 = inQueueB1.AllocTensor<T>();
        Nd2NzParams pa;
        pa.ndNum = 1; pa.nValue = m_; pa.dValue = k_; pa.srcNdMatrixStride = 0; pa.srcDValue = k_;
        pa.dstNzC0Stride = m_ == 1 ? 1 : CeilAlign(m_, 16);  // m == 1: a plain row (GEMV)
        pa.dstNzNStride = 1; pa.dstNzMatrixStride = 0;
        DataCopy(a1, aGM, pa);
        Nd2NzParams pb;
        if (transB_) {
            pb.ndNum = 1; pb.nValue = n_; pb.dValue = k_; pb.srcNdMatrixStride = 0; pb.srcDValue = k_;
            pb.dstNzC0Stride = CeilAlign(n_, 16); pb.dstNzNStride = 1; pb.dstNzMatrixStride = 0;
        } else if (sizeof(T) == 4) {  // 16-row slabs side by side: two 16 x 8 fractals make a square
            pb.ndNum = k_ / 16; pb.nValue = 16; pb.dValue = n_; pb.srcNdMatrixStride = 16 * n_; pb.srcDValue = n_;
            pb.dstNzC0Stride = 16; pb.dstNzNStride = 1; pb.dstNzMatrixStride = 16 * CeilAlign(n_, 16);
        } else {
            pb.ndNum = 1; pb.nValue = k_; pb.dValue = n_; pb.srcNdMatrixStride = 0; pb.srcDValue = n_;
            pb.dstNzC0Stride = CeilAlign(k_, sizeof(T) == 1 ? 32 : 16); pb.dstNzNStride = 1; pb.dstNzMatrixStride = 0;
        }
        DataCopy(b1, bGM, pb);
        inQueueA1.EnQue(a1);
        inQueueB1.EnQue(b1);
    }
    __aicore__ inline void SplitA()
    {
        LocalTensor<T> a1 = inQueueA1.DeQue<T>();
        LocalTensor<T> a2 = inQueueA2.AllocTensor<T>();
        LoadData2DParams p;
        if (m_ == 1) {
            p.repeatTimes = CeilDiv(k_ * sizeof(T), 512);
            p.srcStride = 1;
            LoadData(a2, a1, p);
        } else {
            p.repeatTimes = k1;
            p.srcStride = m1;
            for (uint32_t i = 0; i < m1; ++i) LoadData(a2[i * k1 * 16 * C0], a1[i * 16 * C0], p);
        }
        inQueueA2.EnQue(a2);
        inQueueA1.FreeTensor(a1);
    }
    __aicore__ inline void SplitB()
    {
        LocalTensor<T> b1 = inQueueB1.DeQue<T>();
        LocalTensor<T> b2 = inQueueB2.AllocTensor<T>();
        if (transB_) {  // NZ of [N, K] is already the Zn layout
            LoadData2DParams p;
            p.repeatTimes = n1 * k1;
            p.srcStride = 1;
            LoadData(b2, b1, p);
        } else if (sizeof(T) == 2) {  // transpose each 16 x 16 fractal
            LoadData2DParams p;
            p.repeatTimes = n1;
            p.srcStride = CeilDiv(k_, 16);
            p.ifTranspose = true;
            for (uint32_t i = 0; i < k1; ++i) LoadData(b2[i * n1 * 256], b1[i * 256], p);
        } else if (sizeof(T) == 1) {  // 32 x 32 squares of two 16 x 32 fractals
            LoadData2dTransposeParams p;
            p.repeatTimes = CeilDiv(n_, 32);
            p.srcStride = CeilDiv(k_, 32);
            p.dstGap = 1;
            p.dstFracGap = 0;
            for (uint32_t i = 0; i < CeilDiv(k_, 32); ++i)
                LoadDataWithTranspose(b2[i * CeilDiv(n_, 32) * 1024], b1[i * 1024], p);
        } else {  // float: 16 x 16 squares of two 16 x 8 fractals
            LoadData2dTransposeParams p;
            p.repeatTimes = n1;
            p.srcStride = 1;
            p.dstGap = 0;
            p.dstFracGap = n1 - 1;
            for (uint32_t i = 0; i < k_ / 16; ++i)
                LoadDataWithTranspose(b2[2 * i * n1 * 128], b1[i * 16 * CeilAlign(n_, 16)], p);
        }
        inQueueB2.EnQue(b2);
        inQueueB1.FreeTensor(b1);
    }
    __aicore__ inline void SplitBias()
    {
        LocalTensor<C> c1 = inQueueC1.AllocTensor<C>();
        Nd2NzParams p = {1, 1, (uint16_t)n_, 0, (uint16_t)n_, 1, 1, 0};
        DataCopy(c1, biasGM, p);
        inQueueC1.EnQue(c1);
        c1 = inQueueC1.DeQue<C>();
        LocalTensor<C> c2 = inQueueC2.AllocTensor<C>();
        DataCopyParams cp = {1, (uint16_t)(CeilAlign(n_ * sizeof(C), 64) / 64), 0, 0};
        DataCopy(c2, c1, cp);
        inQueueC2.EnQue(c2);
        inQueueC1.FreeTensor(c1);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<T> a2 = inQueueA2.DeQue<T>();
        LocalTensor<T> b2 = inQueueB2.DeQue<T>();
        LocalTensor<C> co1 = outQueueCO1.AllocTensor<C>();
        MmadParams p;
        p.m = m_;
        p.n = nMmad;
        p.k = k_;
        if (biasMode_ == 1) {
            LocalTensor<C> c2 = inQueueC2.DeQue<C>();
            Mmad(co1, a2, b2, c2, p);
            inQueueC2.FreeTensor(c2);
        } else if (biasMode_ == 2) {
            LocalTensor<C> c2 = inQueueC2.DeQue<C>();
            p.cmatrixInitVal = false;
            p.cmatrixSource = true;
            Mmad(co1, a2, b2, p);
            inQueueC2.FreeTensor(c2);
        } else {
            Mmad(co1, a2, b2, p);
        }
        if (acc_) {
            p.cmatrixInitVal = false;
            p.cmatrixSource = false;
            Mmad(co1, a2, b2, p);
        }
        outQueueCO1.EnQue(co1);
        inQueueA2.FreeTensor(a2);
        inQueueB2.FreeTensor(b2);
    }
    __aicore__ inline void CopyOut()
    {
        LocalTensor<C> co1 = outQueueCO1.DeQue<C>();
        FixpipeParamsV220 p;
        p.nSize = n_;
        p.mSize = m_;
        p.srcStride = CeilAlign(m_, 16);
        p.dstStride = n_;
        p.reluEn = relu_;
        p.quantPre = (QuantMode_t)quant_;
        p.deqScalar = static_cast<uint64_t>(*reinterpret_cast<uint32_t*>(&scale_));
        Fixpipe(cGM, co1, p);
        outQueueCO1.FreeTensor(co1);
    }

    TPipe pipe;
    TQue<TPosition::A1, 1> inQueueA1;
    TQue<TPosition::B1, 1> inQueueB1;
    TQue<TPosition::A2, 1> inQueueA2;
    TQue<TPosition::B2, 1> inQueueB2;
    TQue<TPosition::CO1, 1> outQueueCO1;
    TQue<TPosition::C1, 1> inQueueC1;
    TQue<TPosition::C2, 1> inQueueC2;
    GlobalTensor<T> aGM, bGM;
    GlobalTensor<C> biasGM;
    GlobalTensor<O> cGM;
    uint32_t m_, n_, k_, m1, n1, k1, nMmad;
    int transB_, biasMode_, acc_, relu_, quant_;
    float scale_;
};

template <class T, class C, class O>
__global__ __cube__ void matmul_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, uint32_t m, uint32_t n,
                                       uint32_t k, int transB, int biasMode, int acc, int relu, int quant, float scale)
{
    KernelMatmul<T, C, O> op;
    op.Init(a, b, bias, c, m, n, k, transB, biasMode, acc, relu, quant, scale);
    op.Process();
}

'''
# one extern "C" entry per dtype combination (the loader reads their signatures from the source)
MATMUL += "".join(
    f'extern "C" void {name}(uint8_t* a, uint8_t* b, uint8_t* bias, uint8_t* c, uint32_t m, uint32_t n, uint32_t k, '
    f'int transB, int biasMode, int acc, int relu, int quant, float scale)\n'
    f'{{ matmul_kernel<{t}, {c}, {o}><<<1, nullptr, nullptr>>>(a, b, bias, c, m, n, k, transB, biasMode, acc, relu, '
    f'quant, scale); }}\n'
    for name, t, c, o in (("mm_f16_f32", "half", "float", "float"), ("mm_f16_f16", "half", "float", "half"),
                          ("mm_bf16_f32", "bfloat16_t", "float", "float"),
                          ("mm_bf16_bf16", "bfloat16_t", "float", "bfloat16_t"), ("mm_f32_f32", "float", "float", "float"),
                          ("mm_s8_s32", "int8_t", "int32_t", "int32_t"), ("mm_s8_f16", "int8_t", "int32_t", "half")))

# (entry, input dtype, L0C dtype, output dtype, quantPre)
COMBOS = {
    "f16_f32": ("mm_f16_f32", torch.float16, torch.float32, torch.float32, 0),
    "f16_f16": ("mm_f16_f16", torch.float16, torch.float32, torch.float16, 1),
    "bf16_f32": ("mm_bf16_f32", torch.bfloat16, torch.float32, torch.float32, 0),
    "bf16_bf16": ("mm_bf16_bf16", torch.bfloat16, torch.float32, torch.bfloat16, 2),
    "f32_f32": ("mm_f32_f32", torch.float32, torch.float32, torch.float32, 0),
    "s8_s32": ("mm_s8_s32", torch.int8, torch.int32, torch.int32, 0),
    "s8_f16": ("mm_s8_f16", torch.int8, torch.int32, torch.float16, 3),
}


@pytest.fixture(scope="module")
def mm():
    return asc.load(MATMUL, name="cube_matmul.cpp", sync_check="error")


def _inputs(dt, m, n, k, trans_b, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dt == torch.int8:
        a = torch.randint(-8, 8, (m, k), generator=g, dtype=torch.int8)
        b = torch.randint(-8, 8, (n, k) if trans_b else (k, n), generator=g, dtype=torch.int8)
    else:
        a = torch.randn(m, k, generator=g).to(dt)
        b = torch.randn((n, k) if trans_b else (k, n), generator=g).to(dt)
    return a, b


def run_mm(mod, combo, m, n, k, trans_b=False, bias_mode=0, acc=False, relu=False, scale=1.0):
    entry, dt, ct, ot, quant = COMBOS[combo]
    a, b = _inputs(dt, m, n, k, trans_b)
    bias = (torch.arange(n) % 7 - 3).to(ct) if bias_mode else torch.zeros(n, dtype=ct)
    c = torch.zeros(m, n, dtype=ot)
    getattr(mod, entry)(a, b, bias, c, m, n, k, int(trans_b), bias_mode, int(acc), int(relu), quant, scale)
    bm = b.t() if trans_b else b
    if dt == torch.int8:
        ref = a.to(torch.int64) @ bm.to(torch.int64)
    else:
        ref = a.to(torch.float64) @ bm.to(torch.float64)
    if acc:
        ref = 2 * ref
    if bias_mode:
        ref = ref + bias.to(ref.dtype)
    ref = ref.to(torch.float64) * (scale if quant == 3 else 1.0)
    if relu:
        ref = ref.clamp_min(0)
    return c, ref


TOL = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.int32: 0}


@pytest.mark.parametrize("combo", list(COMBOS))
@pytest.mark.parametrize("trans_b", [False, True], ids=["B", "Bt"])
def test_matmul_against_torch(mm, combo, trans_b):
    m, n, k = 40, 48, 64  # a ragged M; K a multiple of every k0 and of 16 (the float transpose path)
    c, ref = run_mm(mm, combo, m, n, k, trans_b=trans_b)
    out_dt = COMBOS[combo][3]
    if out_dt == torch.int32:
        assert torch.equal(c.to(torch.int64), ref.to(torch.int64))
    else:
        scale = ref.abs().max().item()
        assert torch.allclose(c.to(torch.float64), ref.to(out_dt).to(torch.float64), rtol=TOL[out_dt],
                              atol=TOL[out_dt] * scale), (c, ref)
    assert mm.last_run.warnings == []
    busy = mm.last_run.per_pipe_busy
    assert busy["M"] > 0 and busy["MTE1"] > 0 and busy["MTE2"] > 0 and busy["FIX"] > 0


@pytest.mark.parametrize("combo", ["f16_f32", "bf16_f32", "s8_s32", "f32_f32"])
def test_accumulate_bias_and_relu(mm, combo):
    m, n, k = 33, 40, 32
    for bias_mode, acc, relu in ((1, False, False), (2, False, True), (0, True, False), (1, True, True)):
        c, ref = run_mm(mm, combo, m, n, k, bias_mode=bias_mode, acc=acc, relu=relu, trans_b=True)
        assert torch.allclose(c.to(torch.float64), ref, rtol=1e-3, atol=1e-3 * ref.abs().max().item()), \
            (bias_mode, acc, relu)


def test_ragged_shapes_and_gemv(mm):
    for m, n, k in ((1, 48, 64), (17, 20, 48), (128, 96, 80)):
        c, ref = run_mm(mm, "f16_f32", m, n, k, trans_b=(n % 16 != 0))
        assert torch.allclose(c.double(), ref, rtol=1e-4, atol=1e-3), (m, n, k)


def test_int32_dequant_to_half(mm):
    c, ref = run_mm(mm, "s8_f16", 16, 32, 64, scale=0.125)
    assert torch.allclose(c.double(), ref.half().double(), rtol=1e-3, atol=1e-3)


def test_cube_kernel_runs_on_aic_cores(mm):
    run_mm(mm, "f16_f32", 16, 16, 16)
    assert mm.last_run.num_blocks == 1
    rep = mm.last_run
    assert rep.faults == [] and rep.latency_s > 0


# ---- faults ----------------------------------------------------------------------------------------
FAULTS = r'''
#include "kernel_operator.h"
using namespace AscendC;

template <int CASE>
__global__ __cube__ void cube_fault(GM_ADDR a, GM_ADDR c)
{
    TPipe pipe;
    GlobalTensor<half> aGM;
    GlobalTensor<float> cGM;
    aGM.SetGlobalBuffer((__gm__ half*)a, 1024);
    cGM.SetGlobalBuffer((__gm__ float*)c, 4096);
    if constexpr (CASE == 0) {
        TQue<TPosition::A2, 1> q;
        pipe.InitBuffer(q, 2, 40 * 1024);  // @l0a_overflow
    } else if constexpr (CASE == 1) {
        TQue<TPosition::B2, 1> q;
        pipe.InitBuffer(q, 1, 65 * 1024);  // @l0b_overflow
    } else if constexpr (CASE == 2) {
        TBuf<TPosition::CO1> t;
        pipe.InitBuffer(t, 129 * 1024);  // @l0c_overflow
    } else if constexpr (CASE == 3) {
        TQue<TPosition::A1, 2> q;
        pipe.InitBuffer(q, 2, 300 * 1024);  // @l1_overflow
    } else if constexpr (CASE == 4) {
        LocalTensor<half> a2(TPosition::A2, 0, 1024);
        LocalTensor<half> b2(TPosition::B2, 0, 512);
        LocalTensor<float> c1(TPosition::CO1, 0, 256);
        MmadParams p;
        p.m = 16; p.n = 16; p.k = 16;
        Mmad(c1, a2[16], b2, p);  // @unaligned_cube_tensor
    } else if constexpr (CASE == 5) {
        LocalTensor<half> a2(TPosition::A2, 0, 256);
        LocalTensor<half> b2(TPosition::B2, 0, 256);
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> cub = ub.Get<float>();
        MmadParams p;
        p.m = 16; p.n = 16; p.k = 16;
        Mmad(cub, a2, b2, p);  // @wrong_position
    } else if constexpr (CASE == 6) {
        LocalTensor<half> a2(TPosition::A2, 0, 4096);
        LocalTensor<half> b2(TPosition::B2, 0, 4096);
        LocalTensor<float> c1(TPosition::CO1, 0, 4096);
        MmadParams p;
        p.m = 64; p.n = 64; p.k = 64;
        Mmad(c1, a2, b2, p);
        FixpipeParamsV220 f;
        f.nSize = 64; f.mSize = 64; f.srcStride = 64; f.dstStride = 64;
        Fixpipe(cGM, c1, f);  // @missing_sync
    } else if constexpr (CASE == 7) {
        LocalTensor<half> a1(TPosition::A1, 0, 1024);
        Nd2NzParams p = {1, 32, 32, 0, 32, 16, 1, 0};  // dstNzC0Stride 16 < nValue 32: column blocks overlap
        DataCopy(a1, aGM, p);  // @fractal_layout
    } else if constexpr (CASE == 8) {
        LocalTensor<half> a2(TPosition::A2, 0, 4096);
        LocalTensor<half> b2(TPosition::B2, 0, 4096);
        LocalTensor<float> c1(TPosition::CO1, 0, 4096);
        MmadParams p;
        p.m = 64; p.n = 64; p.k = 64;
        Mmad(c1, a2, b2, p);
        SetFlag<HardEvent::M_FIX>(EVENT_ID0);
        WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        FixpipeParamsV220 f;
        f.nSize = 64; f.mSize = 64; f.srcStride = 64; f.dstStride = 64;
        Fixpipe(cGM, c1, f);  // synchronised: no fault
    } else if constexpr (CASE == 9) {
        LocalTensor<half> a2(TPosition::A2, 0, 256);
        LocalTensor<half> b2(TPosition::B2, 0, 256);
        LocalTensor<float> c1(TPosition::CO1, 0, 256);
        MmadParams p;
        p.m = 16; p.n = 16; p.k = 16;
        Mmad(c1, a2, b2, p);
        PipeBarrier<PIPE_ALL>();
        FixpipeParamsV220 f;
        f.nSize = 16; f.mSize = 16; f.srcStride = 16; f.dstStride = 16;
        f.quantPre = QuantMode_t::F322F16;
        Fixpipe(cGM, c1, f);  // @quant_mismatch
    }
}

extern "C" void run_cube_fault(int which, uint8_t* a, uint8_t* c)
{
    switch (which) {
        case 0: cube_fault<0><<<1, nullptr, nullptr>>>(a, c); break;
        case 1: cube_fault<1><<<1, nullptr, nullptr>>>(a, c); break;
        case 2: cube_fault<2><<<1, nullptr, nullptr>>>(a, c); break;
        case 3: cube_fault<3><<<1, nullptr, nullptr>>>(a, c); break;
        case 4: cube_fault<4><<<1, nullptr, nullptr>>>(a, c); break;
        case 5: cube_fault<5><<<1, nullptr, nullptr>>>(a, c); break;
        case 6: cube_fault<6><<<1, nullptr, nullptr>>>(a, c); break;
        case 7: cube_fault<7><<<1, nullptr, nullptr>>>(a, c); break;
        case 8: cube_fault<8><<<1, nullptr, nullptr>>>(a, c); break;
        case 9: cube_fault<9><<<1, nullptr, nullptr>>>(a, c); break;
    }
}
'''
FAULT_FILE = "cube_faults.cpp"


def _line(marker):
    for i, text in enumerate(FAULTS.split("\n"), start=1):
        if f"// @{marker}" in text:
            return i
    raise KeyError(marker)


@pytest.fixture(scope="module")
def faults():
    return asc.load(FAULTS, name=FAULT_FILE, sync_check="error")


FAULT_CASES = [  # (case, exception, marker, message fragment)
    (0, asc.CubeMemoryOverflow, "l0a_overflow", "L0A over-allocation"),
    (1, asc.CubeMemoryOverflow, "l0b_overflow", "L0B over-allocation"),
    (2, asc.CubeMemoryOverflow, "l0c_overflow", "L0C over-allocation"),
    (3, asc.CubeMemoryOverflow, "l1_overflow", "L1 over-allocation"),
    (4, asc.UnalignedCubeTensor, "unaligned_cube_tensor", "not 512-byte aligned"),
    (5, asc.WrongPosition, "wrong_position", "CO1 (L0C)"),
    (6, asc.PipeRace, "missing_sync", "L0C"),
    (7, asc.FractalLayoutError, "fractal_layout", "written twice"),
    (9, asc.InvalidArgument, "quant_mismatch", "quantPre"),
]


@pytest.mark.parametrize("case,exc,marker,fragment", FAULT_CASES, ids=[c[2] for c in FAULT_CASES])
def test_cube_fault(faults, case, exc, marker, fragment):
    with pytest.raises(exc) as info:
        faults.run_cube_fault(case, torch.zeros(1024, dtype=torch.float16), torch.zeros(4096))
    err = info.value
    assert err.error_class == exc.error_class
    assert fragment in str(err), str(err)
    assert (err.file, err.line) == (FAULT_FILE, _line(marker)), str(err)


def test_cube_fault_classes_share_categories():
    assert issubclass(asc.CubeMemoryOverflow, asc.LocalMemoryOverflow)
    assert issubclass(asc.UnalignedCubeTensor, asc.UnalignedLocalTensor)


def test_missing_sync_is_a_warning_by_default_and_sync_clears_it(faults):
    faults.run_cube_fault(8, torch.zeros(1024, dtype=torch.float16), torch.zeros(4096))
    assert faults.last_run.warnings == []
    warn = asc.load(FAULTS, name=FAULT_FILE)
    warn.run_cube_fault(6, torch.zeros(1024, dtype=torch.float16), torch.zeros(4096))
    assert [w["error_class"] for w in warn.last_run.warnings] == ["pipe_race"]
    assert warn.last_run.warnings[0]["line"] == _line("missing_sync")


MIXED_AIV = r'''
#include "kernel_operator.h"
using namespace AscendC;
__global__ __aicore__ void mixed(GM_ADDR c)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    LocalTensor<half> a2(TPosition::A2, 0, 256);
    LocalTensor<half> b2(TPosition::B2, 0, 256);
    LocalTensor<float> c1(TPosition::CO1, 0, 256);
    MmadParams p;
    p.m = 16; p.n = 16; p.k = 16;
    if (ASCEND_IS_AIV) Mmad(c1, a2, b2, p);  // @aiv_mmad
}
extern "C" void run(uint8_t* c) { mixed<<<1, nullptr, nullptr>>>(c); }
'''


def test_cube_instruction_on_an_aiv_core_of_a_mixed_kernel():
    mod = asc.load(MIXED_AIV, name="mixed.cpp")
    with pytest.raises(asc.WrongPosition, match="AIV core"):
        mod.run(torch.zeros(256))


# An A1 tile EnQue'd, then the next MTE2 copy fills the B1 tile right behind it in L1, then the A1 tile
# is DeQue'd and loaded to L0A. The EnQue/DeQue orders the A1 bytes; the later B1 copy must not make
# them look unfinished (the sync check once merged the two MTE2 writes into one record).
ADJACENT_COPIES = r'''
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __cube__ void adjacent(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    TPipe pipe;
    TQue<TPosition::A1, 1> qA1;
    TQue<TPosition::B1, 1> qB1;
    TQue<TPosition::A2, 1> qA2;
    TQue<TPosition::B2, 1> qB2;
    TQue<TPosition::CO1, 1> qC;
    pipe.InitBuffer(qA1, 1, 32 * 32 * 2);
    pipe.InitBuffer(qB1, 1, 32 * 32 * 2);
    pipe.InitBuffer(qA2, 1, 32 * 32 * 2);
    pipe.InitBuffer(qB2, 1, 32 * 32 * 2);
    pipe.InitBuffer(qC, 1, 32 * 32 * 4);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half*)a, 32 * 32);
    bGm.SetGlobalBuffer((__gm__ half*)b, 32 * 32);
    cGm.SetGlobalBuffer((__gm__ float*)c, 32 * 32);
    Nd2NzParams p = {1, 32, 32, 0, 32, 32, 1, 0};
    LocalTensor<half> a1 = qA1.AllocTensor<half>();
    DataCopy(a1, aGm, p);
    qA1.EnQue(a1);
    LocalTensor<half> b1 = qB1.AllocTensor<half>();
    DataCopy(b1, bGm, p);  // B is given as Bt [N, K]: its NZ is the Zn layout
    qB1.EnQue(b1);
    a1 = qA1.DeQue<half>();
    LocalTensor<half> a2 = qA2.AllocTensor<half>();
    LoadData2DParams la;
    la.repeatTimes = 2;
    la.srcStride = 2;
    for (int i = 0; i < 2; ++i) LoadData(a2[i * 512], a1[i * 256], la);  // @load_a
    qA2.EnQue(a2);
    qA1.FreeTensor(a1);
    b1 = qB1.DeQue<half>();
    LocalTensor<half> b2 = qB2.AllocTensor<half>();
    LoadData2DParams lb;
    lb.repeatTimes = 4;
    lb.srcStride = 1;
    LoadData(b2, b1, lb);
    qB2.EnQue(b2);
    qB1.FreeTensor(b1);
    a2 = qA2.DeQue<half>();
    b2 = qB2.DeQue<half>();
    LocalTensor<float> co1 = qC.AllocTensor<float>();
    MmadParams mp;
    mp.m = 32; mp.n = 32; mp.k = 32;
    Mmad(co1, a2, b2, mp);
    qA2.FreeTensor(a2);
    qB2.FreeTensor(b2);
    qC.EnQue(co1);
    co1 = qC.DeQue<float>();
    FixpipeParamsV220 f;
    f.nSize = 32; f.mSize = 32; f.srcStride = 32; f.dstStride = 32;
    Fixpipe(cGm, co1, f);
    qC.FreeTensor(co1);
}
extern "C" void run(uint8_t* a, uint8_t* b, uint8_t* c) { adjacent<<<1, nullptr, nullptr>>>(a, b, c); }
'''


def test_queue_ordered_tile_is_not_raced_by_the_next_copy_of_the_same_pipe():
    mod = asc.load(ADJACENT_COPIES, name="adjacent.cpp", sync_check="error")
    g = torch.Generator().manual_seed(3)
    a = torch.randn(32, 32, generator=g).half()
    bt = torch.randn(32, 32, generator=g).half()
    c = torch.zeros(32, 32)
    mod.run(a, bt, c)  # raised PipeRace at @load_a before the fix
    assert torch.allclose(c, a.float() @ bt.float().t(), rtol=1e-3, atol=1e-3)
    assert mod.last_run.warnings == []
