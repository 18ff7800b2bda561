"""Ascend C kernel sources shared by the simulator tests."""

# Element-wise ops on one tile held in UB: OP selects the API call (count form), or the
# mask/repeat form when MODE == 1. One block; n elements (n * sizeof(T) a multiple of 32).
ELEMENTWISE = r'''
#include "kernel_operator.h"
using namespace AscendC;

template <typename T, int OP, int MODE>
__global__ __aicore__ void ew_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t n, float scalar)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> qa, qb;
    TQue<QuePosition::VECOUT, 1> qc;
    pipe.InitBuffer(qa, 1, n * sizeof(T));
    pipe.InitBuffer(qb, 1, n * sizeof(T));
    pipe.InitBuffer(qc, 1, n * sizeof(T));
    GlobalTensor<T> ga, gb, gc;
    ga.SetGlobalBuffer((__gm__ T*)a, n);
    gb.SetGlobalBuffer((__gm__ T*)b, n);
    gc.SetGlobalBuffer((__gm__ T*)c, n);
    LocalTensor<T> la = qa.AllocTensor<T>();
    LocalTensor<T> lb = qb.AllocTensor<T>();
    DataCopy(la, ga, n);
    DataCopy(lb, gb, n);
    qa.EnQue(la);
    qb.EnQue(lb);
    la = qa.DeQue<T>();
    lb = qb.DeQue<T>();
    LocalTensor<T> lc = qc.AllocTensor<T>();
    T s = (T)scalar;
    constexpr uint32_t PER_REPEAT = 256 / sizeof(T);
    uint8_t rep = n / PER_REPEAT;
    if constexpr (MODE == 0) {
        if constexpr (OP == 0) Add(lc, la, lb, n);
        else if constexpr (OP == 1) Sub(lc, la, lb, n);
        else if constexpr (OP == 2) Mul(lc, la, lb, n);
        else if constexpr (OP == 3) Div(lc, la, lb, n);
        else if constexpr (OP == 4) Max(lc, la, lb, n);
        else if constexpr (OP == 5) Min(lc, la, lb, n);
        else if constexpr (OP == 6) Adds(lc, la, s, n);
        else if constexpr (OP == 7) Muls(lc, la, s, n);
        else if constexpr (OP == 8) Maxs(lc, la, s, n);
        else if constexpr (OP == 9) Mins(lc, la, s, n);
        else if constexpr (OP == 10) Exp(lc, la, n);
        else if constexpr (OP == 11) Ln(lc, la, n);
        else if constexpr (OP == 12) Abs(lc, la, n);
        else if constexpr (OP == 13) Sqrt(lc, la, n);
        else if constexpr (OP == 14) Rsqrt(lc, la, n);
        else if constexpr (OP == 15) Reciprocal(lc, la, n);
        else if constexpr (OP == 16) Relu(lc, la, n);
        else if constexpr (OP == 17) LeakyRelu(lc, la, s, n);
        else if constexpr (OP == 18) Duplicate(lc, s, n);
    } else {
        BinaryRepeatParams bp;
        UnaryRepeatParams up;
        if constexpr (OP == 0) Add(lc, la, lb, PER_REPEAT, rep, bp);
        else if constexpr (OP == 1) Sub(lc, la, lb, PER_REPEAT, rep, bp);
        else if constexpr (OP == 2) Mul(lc, la, lb, PER_REPEAT, rep, bp);
        else if constexpr (OP == 3) Div(lc, la, lb, PER_REPEAT, rep, bp);
        else if constexpr (OP == 4) Max(lc, la, lb, PER_REPEAT, rep, bp);
        else if constexpr (OP == 5) Min(lc, la, lb, PER_REPEAT, rep, bp);
        else if constexpr (OP == 6) Adds(lc, la, s, PER_REPEAT, rep, up);
        else if constexpr (OP == 7) Muls(lc, la, s, PER_REPEAT, rep, up);
        else if constexpr (OP == 8) Maxs(lc, la, s, PER_REPEAT, rep, up);
        else if constexpr (OP == 9) Mins(lc, la, s, PER_REPEAT, rep, up);
        else if constexpr (OP == 10) Exp(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 11) Ln(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 12) Abs(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 13) Sqrt(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 14) Rsqrt(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 15) Reciprocal(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 16) Relu(lc, la, PER_REPEAT, rep, up);
        else if constexpr (OP == 17) LeakyRelu(lc, la, s, PER_REPEAT, rep, up);
        else if constexpr (OP == 18) Duplicate(lc, s, PER_REPEAT, rep, 1, 8);
    }
    qc.EnQue(lc);
    qa.FreeTensor(la);
    qb.FreeTensor(lb);
    lc = qc.DeQue<T>();
    DataCopy(gc, lc, n);
    qc.FreeTensor(lc);
}

template <typename T, int MODE>
void dispatch(int op, uint8_t* a, uint8_t* b, uint8_t* c, uint32_t n, float s)
{
    switch (op) {
#define CASE(K) case K: ew_kernel<T, K, MODE><<<1, nullptr, nullptr>>>(a, b, c, n, s); break;
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9)
        CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15) CASE(16) CASE(17) CASE(18)
#undef CASE
    }
}

extern "C" void ew_f32(int op, int mode, uint8_t* a, uint8_t* b, uint8_t* c, uint32_t n, float s)
{
    if (mode == 0) dispatch<float, 0>(op, a, b, c, n, s); else dispatch<float, 1>(op, a, b, c, n, s);
}
extern "C" void ew_f16(int op, int mode, uint8_t* a, uint8_t* b, uint8_t* c, uint32_t n, float s)
{
    if (mode == 0) dispatch<half, 0>(op, a, b, c, n, s); else dispatch<half, 1>(op, a, b, c, n, s);
}
'''

# A multi-block, tiled, double-buffered elementwise kernel with a ragged tail per block
# handled by DataCopyPad: z = x * alpha + y (float). Blocks split the elements as evenly as
# possible; every block processes full tiles and one partial tile.
TILED_AXPY = r'''
#include "kernel_operator.h"
using namespace AscendC;

class KernelAxpy {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile, float alpha)
    {
        uint32_t nb = GetBlockNum(), b = GetBlockIdx();
        uint32_t base = total / nb, rem = total % nb;
        count = base + (b < rem ? 1 : 0);
        uint32_t start = b * base + (b < rem ? b : rem);
        xGm.SetGlobalBuffer((__gm__ float*)x + start, count);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, count);
        zGm.SetGlobalBuffer((__gm__ float*)z + start, count);
        this->tile = tile;
        this->alpha = alpha;
        pipe.InitBuffer(qx, 2, tile * sizeof(float));
        pipe.InitBuffer(qy, 2, tile * sizeof(float));
        pipe.InitBuffer(qz, 2, tile * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t done = 0;
        while (done < count) {
            uint32_t len = count - done < tile ? count - done : tile;
            CopyIn(done, len);
            Compute(len);
            CopyOut(done, len);
            done += len;
        }
    }
private:
    __aicore__ inline void CopyIn(uint32_t off, uint32_t len)
    {
        LocalTensor<float> xl = qx.AllocTensor<float>();
        LocalTensor<float> yl = qy.AllocTensor<float>();
        DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{true, 0, 0, 0.0f};
        DataCopyPad(xl, xGm[off], p, pad);
        DataCopyPad(yl, yGm[off], p, pad);
        qx.EnQue(xl);
        qy.EnQue(yl);
    }
    __aicore__ inline void Compute(uint32_t len)
    {
        LocalTensor<float> xl = qx.DeQue<float>();
        LocalTensor<float> yl = qy.DeQue<float>();
        LocalTensor<float> zl = qz.AllocTensor<float>();
        uint32_t padded = (len + 7) / 8 * 8;
        Muls(zl, xl, alpha, padded);
        Add(zl, zl, yl, padded);
        qz.EnQue(zl);
        qx.FreeTensor(xl);
        qy.FreeTensor(yl);
    }
    __aicore__ inline void CopyOut(uint32_t off, uint32_t len)
    {
        LocalTensor<float> zl = qz.DeQue<float>();
        DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPad(zGm[off], zl, p);
        qz.FreeTensor(zl);
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> qx, qy;
    TQue<QuePosition::VECOUT, 2> qz;
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t count, tile;
    float alpha;
};

extern "C" __global__ __aicore__ void axpy_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile,
                                                  float alpha)
{
    KernelAxpy op;
    op.Init(x, y, z, total, tile, alpha);
    op.Process();
}

extern "C" void axpy(uint32_t blockDim, aclrtStream stream, uint8_t* x, uint8_t* y, uint8_t* z, uint32_t total,
                     uint32_t tile, float alpha)
{
    axpy_kernel<<<blockDim, nullptr, stream>>>(x, y, z, total, tile, alpha);
}
'''

# Streaming elementwise kernel z = x + y with BUFFER_NUM buffers per queue (1 or 2), fixed tile.
STREAM_ADD = r'''
#include "kernel_operator.h"
using namespace AscendC;

template <int BUFFER_NUM>
class KernelAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile)
    {
        uint32_t per = total / GetBlockNum();
        xGm.SetGlobalBuffer((__gm__ float*)x + per * GetBlockIdx(), per);
        yGm.SetGlobalBuffer((__gm__ float*)y + per * GetBlockIdx(), per);
        zGm.SetGlobalBuffer((__gm__ float*)z + per * GetBlockIdx(), per);
        this->tile = tile;
        tiles = per / tile;
        pipe.InitBuffer(qx, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(qy, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(qz, BUFFER_NUM, tile * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tiles; ++i) {
            LocalTensor<float> xl = qx.template AllocTensor<float>();
            LocalTensor<float> yl = qy.template AllocTensor<float>();
            DataCopy(xl, xGm[i * tile], tile);
            DataCopy(yl, yGm[i * tile], tile);
            qx.EnQue(xl);
            qy.EnQue(yl);
            xl = qx.template DeQue<float>();
            yl = qy.template DeQue<float>();
            LocalTensor<float> zl = qz.template AllocTensor<float>();
            Add(zl, xl, yl, tile);
            qz.EnQue(zl);
            qx.FreeTensor(xl);
            qy.FreeTensor(yl);
            zl = qz.template DeQue<float>();
            DataCopy(zGm[i * tile], zl, tile);
            qz.FreeTensor(zl);
        }
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> qx, qy;
    TQue<QuePosition::VECOUT, BUFFER_NUM> qz;
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t tile, tiles;
};

template <int BUFFER_NUM>
__global__ __aicore__ void stream_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile)
{
    KernelAdd<BUFFER_NUM> op;
    op.Init(x, y, z, total, tile);
    op.Process();
}

extern "C" void add_single(uint32_t blockDim, uint8_t* x, uint8_t* y, uint8_t* z, uint32_t total, uint32_t tile)
{
    stream_add<1><<<blockDim, nullptr, nullptr>>>(x, y, z, total, tile);
}
extern "C" void add_double(uint32_t blockDim, uint8_t* x, uint8_t* y, uint8_t* z, uint32_t total, uint32_t tile)
{
    stream_add<2><<<blockDim, nullptr, nullptr>>>(x, y, z, total, tile);
}
'''

# One kernel per fault class, selected by CASE; the offending line of each carries a
# "// @<error_class>" marker so that tests can check the reported line.
FAULTS = r'''
#include "kernel_operator.h"
using namespace AscendC;

template <int CASE>
__global__ __aicore__ void fault_kernel(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    TPipe pipe;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    if constexpr (CASE == 0) {  // ub_overflow
        TQue<QuePosition::VECIN, 2> q1, q2;
        pipe.InitBuffer(q1, 2, 65536);
        pipe.InitBuffer(q2, 2, 40000);  // past the UB: accepted, as on the NPU, until a tensor is taken there
        LocalTensor<float> t0 = q2.AllocTensor<float>();  // its first buffer ends inside the UB
        LocalTensor<float> t1 = q2.AllocTensor<float>();  // @ub_overflow
        q2.FreeTensor(t0);
        q2.FreeTensor(t1);
    } else if constexpr (CASE == 1) {  // misaligned_copy: 10 floats = 40 B (copied through UB)
        TQueBind<QuePosition::VECIN, QuePosition::VECOUT, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, xg, 10);  // @misaligned_copy
        q.EnQue(t);
        t = q.DeQue<float>();
        DataCopy(yg, t, 16);
        q.FreeTensor(t);
    } else if constexpr (CASE == 2) {  // unaligned_local_tensor
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 1.0f, 128);
        Add(t[1], t, t, 64);  // @unaligned_local_tensor
    } else if constexpr (CASE == 3) {  // repeat_out_of_range
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 128 * 1024);
        LocalTensor<float> t = b.Get<float>();
        BinaryRepeatParams p;
        Add(t, t, t, 64, 300, p);  // @repeat_out_of_range
    } else if constexpr (CASE == 4) {  // mask_out_of_range: a float repeat has 64 elements
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> t = b.Get<float>();
        BinaryRepeatParams p;
        Add(t, t, t, 100, 1, p);  // @mask_out_of_range
    } else if constexpr (CASE == 5) {  // gm_out_of_bounds: read 64 floats starting at x[n - 8]
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, xg[n - 8], 64);  // @gm_out_of_bounds
        q.FreeTensor(t);
    } else if constexpr (CASE == 6) {  // queue_full
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> a = q.AllocTensor<float>();
        LocalTensor<float> b = q.AllocTensor<float>();  // @queue_full
    } else if constexpr (CASE == 7) {  // queue_empty
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> a = q.DeQue<float>();  // @queue_empty
    } else if constexpr (CASE == 8) {  // foreign_free
        TQue<QuePosition::VECIN, 1> q1;
        TQue<QuePosition::VECOUT, 1> q2;
        pipe.InitBuffer(q1, 1, 256);
        pipe.InitBuffer(q2, 1, 256);
        LocalTensor<float> a = q1.AllocTensor<float>();
        q2.FreeTensor(a);  // @foreign_free
    } else if constexpr (CASE == 9) {  // tensor_leak
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> a = q.AllocTensor<float>();  // @tensor_leak
        DataCopy(a, xg, 64);
    } else if constexpr (CASE == 10) {  // too_many_tensors: a 9th live tensor at VECIN
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 9, 256);
        LocalTensor<float> t[9];
        for (int i = 0; i < 8; ++i) t[i] = q.AllocTensor<float>();
        t[8] = q.AllocTensor<float>();  // @too_many_tensors
    } else if constexpr (CASE == 11) {  // uninitialized_read (with check_uninit)
        TQue<QuePosition::VECOUT, 1> q;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(q, 1, 256);
        pipe.InitBuffer(b, 256);
        LocalTensor<float> src = b.Get<float>();
        LocalTensor<float> dst = q.AllocTensor<float>();
        Adds(dst, src, 1.0f, 64);  // @uninitialized_read
        q.EnQue(dst);
        dst = q.DeQue<float>();
        DataCopy(yg, dst, 64);
        q.FreeTensor(dst);
    } else if constexpr (CASE == 12) {  // gm_race: every block writes its own values to y[0:64]
        TQue<QuePosition::VECOUT, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>();
        Duplicate(t, 1.0f + float(GetBlockIdx()), 64);  // identical bytes from every block would not race
        q.EnQue(t);
        t = q.DeQue<float>();
        DataCopy(yg, t, 64);  // @gm_race
        q.FreeTensor(t);
    } else if constexpr (CASE == 13) {  // the same with atomic accumulation: legal
        TQue<QuePosition::VECOUT, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>();
        Duplicate(t, 1.0f, 64);
        q.EnQue(t);
        t = q.DeQue<float>();
        SetAtomicAdd<float>();
        DataCopy(yg, t, 64);
        SetAtomicNone();
        q.FreeTensor(t);
    } else if constexpr (CASE == 14) {  // watchdog: an endless loop that calls the API
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 256);
        LocalTensor<float> t = b.Get<float>();
        while (true) {
            Duplicate(t, 1.0f, 64);  // @watchdog
        }
    } else if constexpr (CASE == 15) {  // deadlock: WaitFlag without SetFlag
        WaitFlag<HardEvent::MTE2_V>(0);  // @deadlock
    } else if constexpr (CASE == 16) {  // local_out_of_bounds: count larger than the tensor
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 256);
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 1.0f, 128);  // @local_out_of_bounds
    } else if constexpr (CASE == 17) {  // pipe_race: GM->TBuf copy read by the vector unit without a flag
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 512);
        LocalTensor<float> t = b.Get<float>();
        DataCopy(t, xg, 64);
        Adds(t[64], t, 1.0f, 64);  // @pipe_race
    } else if constexpr (CASE == 18) {  // the same, synchronised: no race
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 512);
        LocalTensor<float> t = b.Get<float>();
        DataCopy(t, xg, 64);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Adds(t[64], t, 1.0f, 64);
    } else if constexpr (CASE == 19) {  // too_many_tensors: more than 64 buffers
        TBuf<TPosition::VECCALC> b[65];
        for (int i = 0; i < 64; ++i) pipe.InitBuffer(b[i], 32);
        pipe.InitBuffer(b[64], 32);  // @too_many_buffers
    } else if constexpr (CASE == 20) {  // read of another block's output in the same launch
        TQue<QuePosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<float> t = q.AllocTensor<float>();
        if (GetBlockIdx() == 0) {
            Duplicate(t, 2.0f, 64);
            PipeBarrier<PIPE_ALL>();
            DataCopy(yg, t, 64);
        } else {
            DataCopy(t, yg, 64);  // @gm_race_read
        }
        q.FreeTensor(t);
    }
}

extern "C" void run_fault(int which, uint32_t blocks, uint8_t* x, uint8_t* y, uint32_t n)
{
    switch (which) {
#define CASE(K) case K: fault_kernel<K><<<blocks, nullptr, nullptr>>>(x, y, n); break;
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10)
        CASE(11) CASE(12) CASE(13) CASE(14) CASE(15) CASE(16) CASE(17) CASE(18) CASE(19) CASE(20)
#undef CASE
    }
}
'''

# A single kernel running one of many small UB programs (CASE chosen at run time): inputs a, b
# are copied into UB, one API sequence runs, `out` is copied back. Byte counts are multiples
# of 32. Used for Cast / Compare / Select / reductions / masks / DataCopy(Pad) semantics.
MISC = r'''
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t REGION = 48 * 1024;

extern "C" __global__ __aicore__ void misc_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t which, uint32_t n,
                                                  float s, int32_t p0, int32_t p1, uint32_t abytes,
                                                  uint32_t bbytes, uint32_t obytes)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * REGION + 1024);
    LocalTensor<uint8_t> A8 = buf.GetWithOffset<uint8_t>(REGION, 0);
    LocalTensor<uint8_t> B8 = buf.GetWithOffset<uint8_t>(REGION, REGION);
    LocalTensor<uint8_t> O8 = buf.GetWithOffset<uint8_t>(REGION, 2 * REGION);
    LocalTensor<uint8_t> W8 = buf.GetWithOffset<uint8_t>(1024, 3 * REGION);
    GlobalTensor<uint8_t> ga, gb, go;
    ga.SetGlobalBuffer((__gm__ uint8_t*)a, abytes);
    gb.SetGlobalBuffer((__gm__ uint8_t*)b, bbytes);
    go.SetGlobalBuffer((__gm__ uint8_t*)out, obytes);
    Duplicate(O8.ReinterpretCast<int32_t>(), (int32_t)-1, REGION / 4);  // fill the output with 0xFF
    PipeBarrier<PIPE_ALL>();
    if (which < 19) {
        DataCopy(A8, ga, abytes);
        DataCopy(B8, gb, bbytes);
    }
    PipeBarrier<PIPE_ALL>();
    LocalTensor<float> af = A8.ReinterpretCast<float>(), bf = B8.ReinterpretCast<float>(), of = O8.ReinterpretCast<float>();
    LocalTensor<half> ah = A8.ReinterpretCast<half>(), bh = B8.ReinterpretCast<half>(), oh = O8.ReinterpretCast<half>();
    LocalTensor<float> wf = W8.ReinterpretCast<float>();
    LocalTensor<half> wh = W8.ReinterpretCast<half>();
    RoundMode rm = static_cast<RoundMode>(p0);
    switch (which) {
        case 0: Cast(oh, af, rm, n); break;
        case 1: Cast(of, ah, RoundMode::CAST_NONE, n); break;
        case 2: Cast(O8.ReinterpretCast<int32_t>(), af, rm, n); break;
        case 3: Cast(of, A8.ReinterpretCast<int32_t>(), rm, n); break;
        case 4: Cast(O8.ReinterpretCast<bfloat16_t>(), af, rm, n); break;
        case 5: {  // Compare + Select (tensor, tensor)
            Compare(W8, af, bf, static_cast<CMPMODE>(p0), n);
            Select(of, W8, af, bf, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
            break;
        }
        case 6: Compares(O8, af, s, static_cast<CMPMODE>(p0), n); break;
        case 7: {  // Compares + Select (tensor, scalar)
            Compares(W8, af, 0.0f, CMPMODE::GT, n);
            Select(of, W8, af, s, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
            break;
        }
        case 8: ReduceSum(of, af, wf, n); break;
        case 9: ReduceMax(of, af, wf, n, true); break;
        case 10: ReduceMin(of, af, wf, n, true); break;
        case 11: WholeReduceSum(of, af, 64, n / 64, 1, 1, 8); break;
        case 12: WholeReduceMax(of, af, 64, n / 64, 1, 1, 8, ReduceOrder::ORDER_VALUE_INDEX); break;
        case 13: BlockReduceSum(of, af, n / 64, 64, 1, 1, 8); break;
        case 14: ReduceSum(oh, ah, wh, n); break;
        case 15: WholeReduceSum(oh, ah, 128, n / 128, 1, 1, 8); break;
        case 16: {  // bit mask: every other element
            uint64_t mask[2] = {0x5555555555555555ull, 0};
            BinaryRepeatParams p;
            Add(of, af, bf, mask, n / 64, p);
            break;
        }
        case 17: {  // strided repeats: dst repeat stride 8 blocks, src repeat stride 16 blocks (every other repeat)
            UnaryRepeatParams p(1, 1, 8, 16);
            Muls(of, af, s, 64, n / 128, p);
            break;
        }
        case 18: {  // counter mode: the first n - p1 elements
            SetMaskCount();
            SetVectorMask<float, MaskMode::COUNTER>(0, n - p1);
            BinaryRepeatParams p;
            Add<float, false>(of, af, bf, MASK_PLACEHOLDER, 1, p);
            SetMaskNorm();
            ResetMask();
            break;
        }
        case 19: {  // DataCopy with DataCopyParams: p0 blocks of 32 B, 32 B gap in GM
            DataCopyParams cp(p0, 1, 1, 0);
            DataCopy(of, ga.ReinterpretCast<float>(), cp);
            break;
        }
        case 20: {  // DataCopyPad GM -> UB, 3 blocks of 5 floats, 4 B GM gap, pad 1 left 2 right with s
            DataCopyExtParams cp{3, 20, 4, 0, 0};
            DataCopyPadExtParams<float> pp{true, 1, 2, s};
            DataCopyPad(of, ga.ReinterpretCast<float>(), cp, pp);
            break;
        }
        case 21: {  // the same without padding values: the hardware repeats each block's first element
            DataCopyExtParams cp{3, 20, 4, 0, 0};
            DataCopyPadExtParams<float> pp{false, 0, 0, 0.0f};
            DataCopyPad(of, ga.ReinterpretCast<float>(), cp, pp);
            break;
        }
        case 22: {  // DataCopyPad UB -> GM: 3 UB blocks (32 B each), 5 floats each, 12 B gaps in GM
            DataCopy(af, ga.ReinterpretCast<float>(), 24);
            PipeBarrier<PIPE_ALL>();
            DataCopyExtParams cp{3, 20, 0, 12, 0};
            DataCopyPad(go.ReinterpretCast<float>(), af, cp);
            return;
        }
        case 23: {  // UB -> UB copy
            DataCopy(af, ga.ReinterpretCast<float>(), n);
            PipeBarrier<PIPE_ALL>();
            DataCopy(of, af, n);
            break;
        }
    }
    PipeBarrier<PIPE_ALL>();
    DataCopy(go, O8, obytes);
}

extern "C" void misc(uint32_t which, uint8_t* a, uint8_t* b, uint8_t* out, uint32_t n, float s, int32_t p0, int32_t p1,
                     uint32_t abytes, uint32_t bbytes, uint32_t obytes)
{
    misc_kernel<<<1, nullptr, nullptr>>>(a, b, out, which, n, s, p0, p1, abytes, bbytes, obytes);
}
'''

# Vector throughput probe: ITERS back-to-back instructions of one op class on one UB tile.
THROUGHPUT = r'''
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void tp_kernel(uint32_t op, uint32_t n, uint32_t iters)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 160 * 1024);
    LocalTensor<float> f = b.Get<float>();
    LocalTensor<half> h = b.Get<half>();
    LocalTensor<float> f2 = f[n];
    LocalTensor<half> h2 = h[n];
    Duplicate(f, 1.0f, 32640);
    for (uint32_t i = 0; i < iters; ++i) {
        switch (op) {
            case 0: Add(f2, f, f, n); break;
            case 1: Add(h2, h, h, n); break;
            case 2: Exp(f2, f, n); break;
            case 3: Exp(h2, h, n); break;
            case 4: Div(f2, f, f, n); break;
            case 5: Cast(h2, f, RoundMode::CAST_NONE, n); break;
            case 6: WholeReduceSum(f2, f, 64, n / 64, 1, 1, 8); break;
            case 7: WholeReduceSum(h2, h, 128, n / 128, 1, 1, 8); break;
            case 8: Muls(f2, f, 2.0f, n); break;
            case 9: Sqrt(h2, h, n); break;
        }
    }
}

extern "C" void tp(uint32_t op, uint32_t n, uint32_t iters)
{
    tp_kernel<<<1, nullptr, nullptr>>>(op, n, iters);
}
'''

# EnQue beyond the TQue depth (depth 1, two buffers).
DEPTH = r'''
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void depth_kernel(GM_ADDR x)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 256);
    LocalTensor<float> a = q.AllocTensor<float>();
    LocalTensor<float> b = q.AllocTensor<float>();
    q.EnQue(a);
    q.EnQue(b);  // @depth
}
extern "C" void run(uint8_t* x) { depth_kernel<<<1, nullptr, nullptr>>>(x); }
'''
