"""Seed knowledge M0: Ascend C (vector unit) API templates, best practices and validity rules.

Written for kernel-gym in our own words and code. Every entry is a dict with
``slug`` (stable key, never rename: it makes loading idempotent), ``kind`` (api_template,
best_practice or validity_rule), ``title``, ``category`` (a task category such as
``"softmax"``, or ``"general"`` for knowledge that applies to every task), ``tags`` and
``text`` (what goes into a prompt). Code targets the Atlas A2 (910B) vector core.
"""

from __future__ import annotations

SEED_ITEMS: list[dict] = [
    # ------------------------------------------------------------------ kernel structure
    {
        "slug": "kernel-skeleton-elementwise",
        "kind": "api_template",
        "title": "Vector kernel skeleton: TPipe, TQue, InitBuffer and the CopyIn/Compute/CopyOut stages",
        "category": "elementwise",
        "tags": ["skeleton", "pipeline", "tque", "tpipe", "initbuffer", "elementwise"],
        "text": r"""
A vector kernel is a class with Init() and Process(); Process loops over tiles and runs three
stages that talk through queues: CopyIn (GM -> UB, MTE2 pipe), Compute (vector pipe), CopyOut
(UB -> GM, MTE3 pipe). Template for z = x + y (float), total elements split evenly over blocks:

```cpp
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;          // two buffers per queue: double buffering

class VecAddKernel {
public:
    __aicore__ inline VecAddKernel() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock, uint32_t tileLen)
    {
        blockLen_ = perBlock;
        tileLen_ = tileLen;                                   // elements per tile, 32 B multiple
        uint64_t base = static_cast<uint64_t>(perBlock) * GetBlockIdx();
        xGm_.SetGlobalBuffer((__gm__ float *)x + base, perBlock);
        yGm_.SetGlobalBuffer((__gm__ float *)y + base, perBlock);
        zGm_.SetGlobalBuffer((__gm__ float *)z + base, perBlock);
        pipe_.InitBuffer(qx_, BUFFER_NUM, tileLen * sizeof(float));
        pipe_.InitBuffer(qy_, BUFFER_NUM, tileLen * sizeof(float));
        pipe_.InitBuffer(qz_, BUFFER_NUM, tileLen * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        uint32_t tiles = blockLen_ / tileLen_;                // assume divisible here; see tail items
        for (uint32_t t = 0; t < tiles; ++t) {
            CopyIn(t);
            Compute();
            CopyOut(t);
        }
    }
private:
    __aicore__ inline void CopyIn(uint32_t t)
    {
        LocalTensor<float> xl = qx_.AllocTensor<float>();
        LocalTensor<float> yl = qy_.AllocTensor<float>();
        DataCopy(xl, xGm_[t * tileLen_], tileLen_);
        DataCopy(yl, yGm_[t * tileLen_], tileLen_);
        qx_.EnQue(xl);
        qy_.EnQue(yl);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<float> xl = qx_.DeQue<float>();
        LocalTensor<float> yl = qy_.DeQue<float>();
        LocalTensor<float> zl = qz_.AllocTensor<float>();
        Add(zl, xl, yl, tileLen_);
        qz_.EnQue<float>(zl);
        qx_.FreeTensor(xl);
        qy_.FreeTensor(yl);
    }
    __aicore__ inline void CopyOut(uint32_t t)
    {
        LocalTensor<float> zl = qz_.DeQue<float>();
        DataCopy(zGm_[t * tileLen_], zl, tileLen_);
        qz_.FreeTensor(zl);
    }
    TPipe pipe_;
    TQue<QuePosition::VECIN, BUFFER_NUM> qx_, qy_;
    TQue<QuePosition::VECOUT, BUFFER_NUM> qz_;
    GlobalTensor<float> xGm_, yGm_, zGm_;
    uint32_t blockLen_ = 0, tileLen_ = 0;
};

extern "C" __global__ __aicore__ void vec_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock, uint32_t tileLen)
{
    VecAddKernel op;
    op.Init(x, y, z, perBlock, tileLen);
    op.Process();
}
```
Swap the Add call for any other elementwise op; add inputs by adding queues.
""",
    },
    {
        "slug": "kernel-entry-gm-addr",
        "kind": "api_template",
        "title": 'Kernel entry point: extern "C" __global__ __aicore__ with GM_ADDR arguments',
        "category": "general",
        "tags": ["entry", "gm_addr", "__gm__", "signature"],
        "text": r"""
The device entry is a free function `extern "C" __global__ __aicore__ void name(...)`.
Tensor arguments arrive as `GM_ADDR` (a `__gm__ uint8_t *`, i.e. a byte address in global
memory); cast to the element type before use: `(__gm__ half *)x`. Scalars (lengths, tile
sizes, a float alpha) may be passed by value after the pointers. Operator-project kernels
end with `GM_ADDR workspace, GM_ADDR tiling` and read their tiling struct with
`GET_TILING_DATA(td, tiling);`.
```cpp
extern "C" __global__ __aicore__ void scale_kernel(GM_ADDR x, GM_ADDR y, uint32_t n, float alpha)
{
    KernelScale op;              // a class like the skeleton, holding TPipe and queues
    op.Init(x, y, n, alpha);
    op.Process();
}
```
Keep the TPipe object inside the kernel (stack of the entry function or a member of the
kernel class); never make it a global.
""",
    },
    {
        "slug": "host-launcher-chevron",
        "kind": "api_template",
        "title": 'Host side: extern "C" launcher with the chevron launch kernel<<<blockDim, nullptr, stream>>>',
        "category": "general",
        "tags": ["host", "launch", "blockdim", "stream", "chevron"],
        "text": r"""
Direct kernel launch from host code uses the chevron syntax with three parameters:
number of blocks, l2ctrl (always nullptr), and the stream. Wrap it in an extern "C" function so
it can be called from Python (ctypes / torch extension):
```cpp
extern "C" void launch_vec_add(uint32_t blockDim, void *stream,
                               uint8_t *x, uint8_t *y, uint8_t *z, uint32_t totalLen)
{
    uint32_t perBlock = totalLen / blockDim;      // host-side tiling: pick sizes here
    uint32_t tileLen = 2048;                      // multiple of 8 floats (32 B)
    vec_add<<<blockDim, nullptr, stream>>>(x, y, z, perBlock, tileLen);
}
```
Host code does all shape arithmetic (block split, tile length, tail sizes) and passes the
results as scalar arguments or a tiling struct; the kernel should not recompute them per element.
blockDim must be between 1 and 65535; more blocks than vector cores run in waves.
""",
    },
    {
        "slug": "globaltensor-block-offset",
        "kind": "api_template",
        "title": "GlobalTensor SetGlobalBuffer with per-block offsets from GetBlockIdx",
        "category": "general",
        "tags": ["globaltensor", "setglobalbuffer", "getblockidx", "multicore", "offset"],
        "text": r"""
Every block (core) runs the same kernel; it finds its slice from GetBlockIdx() (0 ..
GetBlockNum()-1). Bind a GlobalTensor to the slice once in Init, then index it relative to the
slice start:
```cpp
uint32_t idx = GetBlockIdx();
uint64_t start = static_cast<uint64_t>(idx) * perBlock;     // element offset of this block
xGm.SetGlobalBuffer((__gm__ float *)x + start, perBlock);   // pointer arithmetic in elements
...
DataCopy(xLocal, xGm[tileIdx * tileLen], tileLen);          // xGm[i] is a sub-view from element i
```
The second argument of SetGlobalBuffer is the number of elements of the view. Use 64-bit
offsets when the tensor may exceed 2^31 elements. Each block must only write its own slice
unless it uses atomic accumulation.
""",
    },
    {
        "slug": "multicore-split-remainder",
        "kind": "api_template",
        "title": "Multi-core split over GetBlockNum with remainder handling (big and small blocks)",
        "category": "general",
        "tags": ["multicore", "getblocknum", "remainder", "tiling", "split"],
        "text": r"""
When total length N is not divisible by the block count, give the first `rem` blocks one
extra unit. Split in units of 32 B (8 floats / 16 halves) so every block start stays aligned:
```cpp
// host or kernel Init: unit = 32 / sizeof(T) elements
uint32_t unit = 32 / sizeof(float);
uint32_t units = (N + unit - 1) / unit;            // last unit may be partial
uint32_t blocks = GetBlockNum();
uint32_t base = units / blocks, rem = units % blocks;
uint32_t idx = GetBlockIdx();
uint32_t myUnits = base + (idx < rem ? 1 : 0);
uint32_t startUnit = idx * base + (idx < rem ? idx : rem);
uint64_t start = static_cast<uint64_t>(startUnit) * unit;
uint32_t myLen = myUnits * unit;
if (start + myLen > N) myLen = (start < N) ? static_cast<uint32_t>(N - start) : 0;  // last block
if (myLen == 0) return;                             // more blocks than work
```
Choose blockDim = min(vector core count, units) on the host so no block is idle; the last block
may have a tail that is not a multiple of 32 B: copy it with DataCopyPad.
""",
    },
    {
        "slug": "tiling-loop-tail",
        "kind": "api_template",
        "title": "Tiling loop with a tail tile: full tiles plus one partial tile",
        "category": "general",
        "tags": ["tiling", "tail", "loop", "datacopypad", "alignment"],
        "text": r"""
Process a block's `len` elements as `full = len / tileLen` full tiles and one tail of
`tail = len % tileLen` elements. Allocate the buffers for tileLen (the largest tile) and pass the
actual element count to every copy and vector call:
```cpp
uint32_t full = len / tileLen, tail = len % tileLen;
for (uint32_t t = 0; t < full; ++t) { CopyIn(t * tileLen, tileLen); Compute(tileLen); CopyOut(t * tileLen, tileLen); }
if (tail > 0) { CopyIn(full * tileLen, tail); Compute(tail); CopyOut(full * tileLen, tail); }
```
Inside CopyIn/CopyOut use DataCopy when `count * sizeof(T)` is a multiple of 32 B and DataCopyPad
otherwise. Vector ops accept any count, but you may round the compute count up to a multiple of
32 B / sizeof(T) when the padding lanes are harmless (they are not written back).
""",
    },
    # ------------------------------------------------------------------ data movement
    {
        "slug": "datacopy-alignment",
        "kind": "api_template",
        "title": "DataCopy between GM and UB: count form and the 32-byte alignment rule",
        "category": "general",
        "tags": ["datacopy", "alignment", "32b", "gm", "ub", "mte2", "mte3"],
        "text": r"""
`DataCopy(dstLocal, srcGlobal, count)` (GM -> UB) and `DataCopy(dstGlobal, srcLocal, count)`
(UB -> GM) move `count` elements. The byte length `count * sizeof(T)` must be a multiple of 32
(8 float, 16 half, 32 int8); the hardware moves whole 32-byte blocks, so an unaligned count is
rounded down on the NPU (lost tail) and rejected by the simulator in strict mode. UB addresses
(LocalTensor start and any `local[offset]` view) must also be 32 B aligned.
Block form for strided rows: `DataCopyParams p{blockCount, blockLen, srcStride, dstStride};`
with blockLen and strides counted in 32-byte blocks: copies blockCount rows of blockLen blocks,
skipping stride blocks between rows.
```cpp
DataCopy(xLocal, xGm[off], 1024);          // 4 KB of float: aligned
DataCopyParams rows{8, 4, 12, 0};          // 8 rows of 128 B, GM row pitch 512 B, packed in UB
DataCopy(tLocal, mGm[off], rows);
```
""",
    },
    {
        "slug": "datacopypad-tail",
        "kind": "api_template",
        "title": "DataCopyPad with DataCopyExtParams and DataCopyPadExtParams for unaligned tails",
        "category": "general",
        "tags": ["datacopypad", "datacopyextparams", "tail", "padding", "unaligned"],
        "text": r"""
For lengths that are not a multiple of 32 B, DataCopyPad moves an exact byte count.
DataCopyExtParams fields: {blockCount, blockLen (BYTES), srcStride, dstStride, rsv}.
GM -> UB takes DataCopyPadExtParams<T>{isPad, leftPadding, rightPadding, paddingValue}; the UB
side of each row is padded up to a 32 B boundary (fill with paddingValue when isPad is true).
```cpp
uint32_t bytes = tail * sizeof(float);
DataCopyExtParams cp{1, bytes, 0, 0, 0};                 // one row of `bytes` bytes
DataCopyPadExtParams<float> pad{true, 0, 0, 0.0f};        // pad the rest of the 32 B block with 0
DataCopyPad(xLocal, xGm[off], cp, pad);                  // GM -> UB
...
DataCopyPad(yGm[off], yLocal, cp);                       // UB -> GM writes exactly `bytes`
```
Multi-row form: blockCount rows of blockLen bytes; on the GM side strides are in bytes, on the UB
side in 32-byte blocks. Pad with a neutral value for what follows: 0 for sums, -inf (or the
lowest finite value) for max, 1 for products.
""",
    },
    {
        "slug": "queue-discipline",
        "kind": "api_template",
        "title": "Queue discipline: AllocTensor / EnQue / DeQue / FreeTensor pairing",
        "category": "general",
        "tags": ["tque", "alloctensor", "enque", "deque", "freetensor", "sync"],
        "text": r"""
A TQue both owns buffers and synchronises pipes. Rules:
1. `AllocTensor<T>()` takes one of the `num` buffers given to InitBuffer(queue, num, bytes);
   never hold more than `num` at once (with num = 2 you can be one tile ahead).
2. The producer stage writes the tensor then `EnQue(tensor)`; the consumer `DeQue<T>()`s it.
   EnQue/DeQue insert the MTE2->V or V->MTE3 wait, so no manual flags are needed.
3. The consumer `FreeTensor(tensor)` on the same queue it came from once done.
4. Every tensor allocated in an iteration is freed in that iteration (or the next); at kernel
   end all tensors must be freed.
VECIN queues feed compute from GM, VECOUT queues feed GM from compute. For scratch space that is
never passed between stages use TBuf (no queue semantics).
""",
    },
    {
        "slug": "tbuf-scratch",
        "kind": "api_template",
        "title": "TBuf<VECCALC> for temporary buffers (reduction work space, intermediate results)",
        "category": "general",
        "tags": ["tbuf", "veccalc", "scratch", "temporary", "get"],
        "text": r"""
Temporary UB space that does not move between pipes lives in a TBuf:
```cpp
TBuf<QuePosition::VECCALC> tmpBuf;
pipe.InitBuffer(tmpBuf, tileLen * sizeof(float));   // one buffer, size in bytes
...
LocalTensor<float> tmp = tmpBuf.Get<float>();          // whole buffer
LocalTensor<float> part = tmpBuf.Get<float>(256);      // or the first 256 elements
```
TBuf tensors are not allocated/freed per tile and carry no synchronisation: successive vector
instructions on the same pipe are ordered, but if scalar code (GetValue/SetValue) or a copy
touches a TBuf written by vector code, add the matching SetFlag/WaitFlag or PipeBarrier.
Several logical scratch tensors can share one TBuf by taking sub-views at 32 B-aligned offsets:
`tmp[0]`, `tmp[1024]`.
""",
    },
    # ------------------------------------------------------------------ vector ops
    {
        "slug": "vector-binary-ops",
        "kind": "api_template",
        "title": "Binary vector ops Add/Sub/Mul/Div/Max/Min with a count argument",
        "category": "elementwise",
        "tags": ["add", "sub", "mul", "div", "max", "min", "count", "vector"],
        "text": r"""
Count form: `Op(dst, src0, src1, count)`, all LocalTensor of the same dtype, count = number of
elements (any value; the unit processes 256 B per repeat internally).
```cpp
Add(z, x, y, n);       // z = x + y
Sub(z, x, y, n);       // z = x - y
Mul(z, x, y, n);       // z = x * y
Div(z, x, y, n);       // z = x / y   (slower than Mul; prefer Mul by a Reciprocal you reuse)
Max(z, x, y, n);       // elementwise maximum
Min(z, x, y, n);
```
On 910B these take half and float (Add/Sub/Mul/Max/Min also int16/int32); bfloat16_t is not
accepted: Cast to float first. dst may be the same tensor as a source (full overlap); partial
overlap of operands is not allowed.
""",
    },
    {
        "slug": "vector-scalar-ops",
        "kind": "api_template",
        "title": "Vector-scalar ops Adds/Muls/Maxs/Mins and LeakyRelu with a scalar argument",
        "category": "activation",
        "tags": ["adds", "muls", "maxs", "mins", "leakyrelu", "scalar", "clamp"],
        "text": r"""
`Adds(dst, src, scalar, count)`: dst = src + scalar; `Muls`: dst = src * scalar;
`Maxs`: max(src, scalar); `Mins`: min(src, scalar). The scalar has the tensor's dtype
(`(half)0.5` for half tensors).
```cpp
Muls(y, x, alpha, n);               // scale
Adds(y, y, beta, n);                // shift (in place is fine)
Maxs(y, x, 0.0f, n);                // ReLU via Maxs
Maxs(y, x, lo, n); Mins(y, y, hi, n);   // clamp(x, lo, hi) / hardtanh
LeakyRelu(y, x, negSlope, n);       // x if x >= 0 else negSlope * x
Relu(y, x, n);                      // max(x, 0)
```
ReLU6 = Maxs 0 then Mins 6. Hardsigmoid = Muls 1/6, Adds 0.5, Maxs 0, Mins 1.
""",
    },
    {
        "slug": "vector-unary-ops",
        "kind": "api_template",
        "title": "Unary vector ops Exp/Ln/Abs/Sqrt/Rsqrt/Reciprocal/Relu (dst, src, count)",
        "category": "elementwise",
        "tags": ["exp", "ln", "abs", "sqrt", "rsqrt", "reciprocal", "relu", "unary"],
        "text": r"""
Count form `Op(dst, src, count)`:
```cpp
Exp(y, x, n);          // e^x
Ln(y, x, n);           // natural log (x > 0)
Abs(y, x, n);
Sqrt(y, x, n);
Rsqrt(y, x, n);        // 1 / sqrt(x)
Reciprocal(y, x, n);   // 1 / x
Relu(y, x, n);
```
Exp, Ln, Sqrt (and Div) run at a quarter of the rate of Add/Mul, so avoid recomputing them:
compute e^x once and reuse. Negation is `Muls(y, x, -1.0f, n)`; square is `Mul(y, x, x, n)`;
power with an integer exponent is repeated Mul; general x^p = Exp(p * Ln(x)) for x > 0.
For half inputs of Exp/Ln in accuracy-sensitive code, Cast to float first.
""",
    },
    {
        "slug": "duplicate-fill",
        "kind": "api_template",
        "title": "Duplicate: fill a LocalTensor with a scalar (init accumulators, constants)",
        "category": "general",
        "tags": ["duplicate", "fill", "constant", "zero", "init"],
        "text": r"""
`Duplicate(dst, scalar, count)` writes `scalar` to the first count elements:
```cpp
Duplicate(acc, 0.0f, tileLen);                 // zero an accumulator in a TBuf
Duplicate(ones, static_cast<half>(1.0), n);    // half constant tensor
```
Use it to build constant operands for Max/Min/Select or to initialise sums before a loop of
Add calls; a tensor from AllocTensor/Get holds garbage until written.
""",
    },
    {
        "slug": "compare-select",
        "kind": "api_template",
        "title": "Compare + Select for where / masking / piecewise functions",
        "category": "elementwise",
        "tags": ["compare", "select", "where", "mask", "cmpmode", "selmode"],
        "text": r"""
Compare writes one bit per element into a uint8 mask tensor; Select picks per element:
```cpp
// mask must hold n/8 bytes, rounded up to 32 B; n * sizeof(T) should be a multiple of 256 B
LocalTensor<uint8_t> m = maskBuf.Get<uint8_t>();
Compare(m, a, b, CMPMODE::GT, n);          // bit i = a[i] > b[i]  (LT, GE, LE, EQ, NE too)
Select(out, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);     // out = bit ? a : b
Select(out, m, a, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);  // out = bit ? a : 0
```
Compares(m, a, scalar, CMPMODE::LT, n) compares with a scalar. Because the compare count must
cover whole 256-byte repeats, size the tile so `n * sizeof(T)` is a multiple of 256 (64 float,
128 half) and handle a short tail by padding the tile. Typical uses: where(cond, x, y), masked
fill, ELU/SELU (different formulas for x < 0 and x >= 0), hinge/huber losses.
""",
    },
    {
        "slug": "cast-round-modes",
        "kind": "api_template",
        "title": "Cast between half, float, bfloat16 and int with RoundMode",
        "category": "general",
        "tags": ["cast", "roundmode", "half", "float", "bf16", "int32", "dtype"],
        "text": r"""
`Cast(dst, src, RoundMode mode, count)` converts dtypes elementwise:
```cpp
Cast(xf, xh, RoundMode::CAST_NONE, n);     // half -> float (exact, no rounding needed)
Cast(yh, yf, RoundMode::CAST_ROUND, n);    // float -> half, round half away from zero
Cast(yh, yf, RoundMode::CAST_RINT, n);     // float -> half, round to nearest even
Cast(xf, xb, RoundMode::CAST_NONE, n);     // bfloat16_t -> float
Cast(yb, yf, RoundMode::CAST_RINT, n);     // float -> bfloat16_t
Cast(yi, yf, RoundMode::CAST_FLOOR, n);    // float -> int32 (CAST_CEIL, CAST_TRUNC, CAST_ROUND too)
```
Widening conversions use CAST_NONE; narrowing conversions need an explicit rounding mode. The
float buffer is twice the bytes of the half buffer: size InitBuffer for the float copy.
""",
    },
    {
        "slug": "scalar-getvalue-setvalue",
        "kind": "api_template",
        "title": "Scalar access GetValue/SetValue on LocalTensor and GlobalTensor",
        "category": "general",
        "tags": ["getvalue", "setvalue", "scalar", "sync", "v_s"],
        "text": r"""
`t.GetValue(i)` / `t.SetValue(i, v)` read and write one element on the scalar unit. Use them
for a handful of values (a reduction result, a per-row statistic), never in a loop over a tile.
A value produced by a vector instruction must be synchronised before the scalar unit reads it:
```cpp
ReduceMax(mx, row, work, cols);                        // vector pipe writes mx[0]
event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
SetFlag<HardEvent::V_S>(e);
WaitFlag<HardEvent::V_S>(e);
float rowMax = mx.GetValue(0);                          // scalar read is now safe
Adds(row, row, -rowMax, cols);                          // back to vector code
```
Conversely, scalar writes consumed by vector code need an S_V flag pair.
""",
    },
    {
        "slug": "setflag-waitflag-barrier",
        "kind": "api_template",
        "title": "PipeBarrier and SetFlag/WaitFlag when mixing pipes without queues",
        "category": "general",
        "tags": ["pipebarrier", "setflag", "waitflag", "hardevent", "sync", "pipes"],
        "text": r"""
The pipes (MTE2 copy-in, V vector, MTE3 copy-out, S scalar) run concurrently. Queues
(EnQue/DeQue) synchronise them for you. When you move data through TBuf or reuse a buffer
without queues, synchronise explicitly:
```cpp
DataCopy(buf, xGm[off], n);                            // MTE2 writes buf
event_t e1 = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::MTE2_V));
SetFlag<HardEvent::MTE2_V>(e1); WaitFlag<HardEvent::MTE2_V>(e1);
Exp(buf, buf, n);                                      // V reads and writes buf
event_t e2 = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
SetFlag<HardEvent::V_MTE3>(e2); WaitFlag<HardEvent::V_MTE3>(e2);
DataCopy(yGm[off], buf, n);                            // MTE3 reads buf
```
Before reusing buf for the next load add MTE3_MTE2 the same way. `PipeBarrier<PIPE_V>()` orders
vector instructions among themselves (needed e.g. between a reduction and an op reading its
result when they overlap in UB); `PipeBarrier<PIPE_ALL>()` is a full, slow barrier.
""",
    },
    # ------------------------------------------------------------------ reductions
    {
        "slug": "reducesum-reducemax-work",
        "kind": "api_template",
        "title": "ReduceSum / ReduceMax / ReduceMin over a tensor with a work buffer",
        "category": "reduction",
        "tags": ["reducesum", "reducemax", "reducemin", "work", "reduction"],
        "text": r"""
Count form: `ReduceSum(dst, src, work, count)`; result in dst[0]. ReduceMax / ReduceMin have
the same shape plus an optional calIndex flag (then dst[1] holds the index as raw bits).
```cpp
LocalTensor<float> work = workBuf.Get<float>();   // size: at least count elements is always safe
LocalTensor<float> res  = resBuf.Get<float>();    // 32 B (8 floats) is enough
ReduceSum(res, x, work, n);                       // res[0] = sum(x[0..n))
ReduceMax(res, x, work, n);                       // res[0] = max
ReduceMax(res, x, work, n, true);                 // res[0] = max, res[1] = index bits
```
The work buffer may be smaller (about one element per 256 B repeat, rounded up to 32 B) but
sizing it like the source is simplest. Sum half data in float: Cast to float, then ReduceSum.
For a reduction over a whole block, reduce each tile into a running accumulator (Add the tile
result, or keep per-tile partials and reduce them at the end).
""",
    },
    {
        "slug": "wholereduce-rows",
        "kind": "api_template",
        "title": "WholeReduceSum / WholeReduceMax: one result per 256-byte repeat (many short rows)",
        "category": "reduction",
        "tags": ["wholereducesum", "wholereducemax", "repeat", "rows", "mask"],
        "text": r"""
Repeat-wise reductions reduce each repeat (up to 64 float / 128 half elements) to one value:
`WholeReduceSum(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride, srcRepStride)`.
mask = elements per repeat that take part (<= 64 for float), repeatTimes <= 255,
dstRepStride = 1 writes results contiguously, srcBlkStride = 1, srcRepStride = 32 B blocks
between repeats (8 = packed 256 B rows).
```cpp
// 64 rows of 64 floats, packed: one sum per row
WholeReduceSum(rowSums, tile, 64, 64, 1, 1, 8);
// 32 rows of 48 floats stored with a 64-float pitch
WholeReduceSum(rowSums, tile, 48, 32, 1, 1, 8);
// row max, values only (the default order writes value and index pairs)
WholeReduceMax(rowMax, tile, 64, 64, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
```
Rows longer than one repeat: first Add/Max the row's 64-element chunks together (or use
ReduceSum per row), then WholeReduce the folded chunk.
""",
    },
    {
        "slug": "multiblock-reduction-atomic",
        "kind": "api_template",
        "title": "Multi-block reduction: SetAtomicAdd partial results or a second pass",
        "category": "reduction",
        "tags": ["atomic", "setatomicadd", "multicore", "reduction", "workspace", "loss"],
        "text": r"""
To reduce a whole tensor with many blocks, each block reduces its slice to one value, then the
partials are combined:
A) Atomic accumulation into the output (float/half/int32):
```cpp
// output must be zero before the launch (host: memset / zeros), never zeroed by a block
ReduceSum(res, acc, work, n);            // this block's partial in res[0]
SetAtomicAdd<float>();
DataCopyPad(outGm, res, DataCopyExtParams{1, sizeof(float), 0, 0, 0});   // out += partial
SetAtomicNone();
```
B) Two passes: every block writes its partial to a workspace slot `ws[GetBlockIdx()]`; a second
launch (or one block after a cross-core sync) reduces the blockDim partials.
For a mean, scale by 1/N before the atomic add (Muls on the partial) so no extra pass is needed.
Atomic float addition order varies between runs: tiny nondeterminism is expected.
""",
    },
    {
        "slug": "reduce-last-dim-rows",
        "kind": "api_template",
        "title": "Row-wise reduction over the last dimension (sum/mean/max per row)",
        "category": "reduction",
        "tags": ["rows", "last-dim", "sum", "mean", "max", "per-row", "reduction"],
        "text": r"""
For an input [M, N] reduced over N: split rows over blocks (rows per block = ceil(M / blocks)),
then per row (or per group of rows that fit in UB):
```cpp
for (uint32_t r = 0; r < myRows; ++r) {
    LocalTensor<float> row = inQ.AllocTensor<float>();
    DataCopyPad(row, xGm[(rowStart + r) * N], DataCopyExtParams{1, N * 4, 0, 0, 0},
                DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    inQ.EnQue(row);
    row = inQ.DeQue<float>();
    LocalTensor<float> o = outQ.AllocTensor<float>();
    ReduceSum(o, row, work, N);               // o[0] = row sum
    Muls(o, o, 1.0f / N, 1);                  // mean, if needed
    outQ.EnQue(o);
    inQ.FreeTensor(row);
    o = outQ.DeQue<float>();
    DataCopyPad(yGm[rowStart + r], o, DataCopyExtParams{1, 4, 0, 0, 0});
    outQ.FreeTensor(o);
}
```
Batch several short rows per copy (blockCount = rows) to amortise copy start-up; write all row
results of a tile with one DataCopyPad instead of one 4-byte copy per row.
""",
    },
    {
        "slug": "reduce-middle-dim",
        "kind": "api_template",
        "title": "Reduction over a middle or leading dimension: accumulate rows with Add",
        "category": "reduction",
        "tags": ["middle-dim", "dim0", "accumulate", "add", "reduction", "strided"],
        "text": r"""
For x of shape [B, R, C] reduced over R (keep B and C), the reduced axis is not contiguous; do
not gather it. Instead load contiguous rows of length C and accumulate them elementwise:
```cpp
Duplicate(acc, 0.0f, C);
for (uint32_t r = 0; r < R; ++r) {
    LocalTensor<float> row = inQ.DeQue<float>();    // row r of batch b, C elements (copied in)
    Add(acc, acc, row, C);
    inQ.FreeTensor(row);
}
// acc now holds sum over R for batch b; Muls by 1/R for a mean, Max instead of Add for max
```
Split the work over blocks by (b, column chunk) pairs so every block owns whole output slices;
column chunks of a few KB keep the per-row copies efficient.
""",
    },
    # ------------------------------------------------------------------ recipes
    {
        "slug": "softmax-row-recipe",
        "kind": "api_template",
        "title": "Softmax over the last dimension in Ascend C: max-subtract, exp, sum, divide",
        "category": "softmax",
        "tags": ["softmax", "rows", "reducemax", "exp", "reducesum", "stable"],
        "text": r"""
Numerically stable softmax of one row (N elements, fits in UB), float compute:
```cpp
// row: LocalTensor<float> with the row; work/stat: TBuf scratch
ReduceMax(stat, row, work, N);                      // stat[0] = max
event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
SetFlag<HardEvent::V_S>(e); WaitFlag<HardEvent::V_S>(e);
float mx = stat.GetValue(0);
Adds(row, row, -mx, N);                             // x - max  (no overflow in exp)
Exp(row, row, N);
ReduceSum(stat, row, work, N);
SetFlag<HardEvent::V_S>(e); WaitFlag<HardEvent::V_S>(e);
float inv = 1.0f / stat.GetValue(0);
Muls(out, row, inv, N);                              // multiply by 1/sum instead of Div
```
If the input is half, Cast the row to float first and Cast the result back with CAST_ROUND.
Rows longer than UB: two passes (running max and rescaled running sum, then normalise).
log_softmax = x - max - ln(sum): Adds(row, x, -(mx + logf(sum)), N).
""",
    },
    {
        "slug": "layernorm-recipe",
        "kind": "api_template",
        "title": "LayerNorm over the last dimension: mean, variance, rsqrt, scale and shift",
        "category": "normalization",
        "tags": ["layernorm", "mean", "variance", "rsqrt", "gamma", "beta", "eps"],
        "text": r"""
y = (x - mean) / sqrt(var + eps) * gamma + beta over N features of a row, in float:
```cpp
ReduceSum(stat, x, work, N);                      // sum
SetFlag<HardEvent::V_S>(e); WaitFlag<HardEvent::V_S>(e);
float mean = stat.GetValue(0) / N;
Adds(xc, x, -mean, N);                            // centred
Mul(sq, xc, xc, N);
ReduceSum(stat, sq, work, N);
SetFlag<HardEvent::V_S>(e); WaitFlag<HardEvent::V_S>(e);
float rstd = 1.0f / sqrtf(stat.GetValue(0) / N + eps);   // scalar math on one value is fine
Muls(y, xc, rstd, N);
Mul(y, y, gamma, N);                              // gamma, beta loaded once per block (VECIN)
Add(y, y, beta, N);
```
Use the two-pass variance (centre first) rather than E[x^2] - E[x]^2, which loses precision.
Load gamma/beta once in Init-time CopyIn and keep them for all rows of the block.
""",
    },
    {
        "slug": "rmsnorm-recipe",
        "kind": "api_template",
        "title": "RMSNorm over the last dimension: mean of squares, rsqrt, scale by weight",
        "category": "normalization",
        "tags": ["rmsnorm", "rsqrt", "mean-square", "weight", "eps"],
        "text": r"""
y = x / sqrt(mean(x^2) + eps) * w for each row of N features:
```cpp
Mul(sq, x, x, N);
ReduceSum(stat, sq, work, N);
SetFlag<HardEvent::V_S>(e); WaitFlag<HardEvent::V_S>(e);
float inv = 1.0f / sqrtf(stat.GetValue(0) / N + eps);
Muls(y, x, inv, N);
Mul(y, y, w, N);          // w: weight row, loaded once
```
Half inputs: Cast x to float, compute, Cast y back. For many short rows, compute squares for a
whole tile of rows at once and use WholeReduceSum to get one sum per row, then Rsqrt on the
vector of (sum/N + eps) values and scale each row by its value.
""",
    },
    {
        "slug": "l2-normalize-recipe",
        "kind": "api_template",
        "title": "L1 / L2 / Frobenius normalisation: reduce norms, then scale",
        "category": "normalization",
        "tags": ["l2norm", "l1norm", "frobenius", "normalize", "reducesum"],
        "text": r"""
Row L2 normalisation: s = sum(x^2) via Mul + ReduceSum, inv = 1 / max(sqrt(s), eps), Muls by inv.
L1: Abs then ReduceSum. Frobenius (whole tensor): every block computes its partial sum of
squares, the partials are combined across blocks (atomic add into a workspace scalar or a second
pass), and only then can any block scale its slice: this needs two launches or a cross-block
synchronisation, so prefer a two-kernel design (norm kernel, then scale kernel).
""",
    },
    {
        "slug": "activation-compositions",
        "kind": "api_template",
        "title": "Activations from primitives: sigmoid, SiLU, tanh, GELU, softplus, ELU, mish",
        "category": "activation",
        "tags": ["sigmoid", "silu", "swish", "tanh", "gelu", "softplus", "elu", "mish", "softsign"],
        "text": r"""
Compose from Muls/Adds/Exp/Ln/Reciprocal (float compute, t = temp buffer):
```cpp
// sigmoid(x) = 1 / (1 + e^-x)
Muls(t, x, -1.0f, n); Exp(t, t, n); Adds(t, t, 1.0f, n); Reciprocal(y, t, n);
// silu(x) = x * sigmoid(x)
Mul(y, x, y, n);
// tanh(x) = 2 * sigmoid(2x) - 1
Muls(t, x, -2.0f, n); Exp(t, t, n); Adds(t, t, 1.0f, n); Reciprocal(t, t, n);
Muls(t, t, 2.0f, n); Adds(y, t, -1.0f, n);
// gelu tanh form: 0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3)))
//   = x * sigmoid(1.5957691 * (x + 0.044715 x^3))
Mul(t, x, x, n); Muls(t, t, 0.044715f, n); Adds(t, t, 1.0f, n); Mul(t, t, x, n);
Muls(t, t, -1.5957691f, n); Exp(t, t, n); Adds(t, t, 1.0f, n); Div(y, x, t, n);
// softplus(x) = max(x, 0) + ln(1 + e^-|x|)   (stable for large |x|)
Abs(t, x, n); Muls(t, t, -1.0f, n); Exp(t, t, n); Adds(t, t, 1.0f, n); Ln(t, t, n);
Maxs(y, x, 0.0f, n); Add(y, y, t, n);
// softsign(x) = x / (1 + |x|)
Abs(t, x, n); Adds(t, t, 1.0f, n); Div(y, x, t, n);
```
ELU/SELU need two branches: compute both and merge with Compare + Select (x > 0).
Exact GELU needs erf: use a polynomial/rational approximation of erf with Mul/Add chains.
""",
    },
    {
        "slug": "half-compute-in-float",
        "kind": "api_template",
        "title": "fp16 kernel that computes in float: Cast in, compute, Cast out",
        "category": "general",
        "tags": ["half", "fp16", "cast", "float", "accuracy", "mixed-precision"],
        "text": r"""
For half tensors, copy in half (half the GM traffic), Cast to float in UB, compute, Cast back:
```cpp
LocalTensor<half> xh = inQ.DeQue<half>();
LocalTensor<float> xf = fbuf.Get<float>();           // TBuf of tileLen * 4 bytes
Cast(xf, xh, RoundMode::CAST_NONE, n);
inQ.FreeTensor(xh);
Exp(xf, xf, n);                                      // or any chain of float ops
LocalTensor<half> yh = outQ.AllocTensor<half>();
Cast(yh, xf, RoundMode::CAST_ROUND, n);
outQ.EnQue(yh);
```
Size the tile from the float buffers (they dominate UB). Simple ops (Add, Mul, Relu, Abs) are
accurate enough directly in half; reductions, exp/log chains, norms and softmax should go
through float.
""",
    },
    {
        "slug": "scan-cumsum",
        "kind": "api_template",
        "title": "Cumulative sum / product along the last dimension",
        "category": "scan",
        "tags": ["cumsum", "cumprod", "scan", "prefix", "rows"],
        "text": r"""
A prefix sum along a row is sequential. Practical vector formulation for rows of length N:
process the row in chunks of C elements; for each row keep a running carry; within a chunk a
log-step scan (Hillis-Steele) uses shifted views: for d = 1, 2, 4, ... < C:
`Add(t[d], s[d], s[0], C - d)` then copy back, where s[d] is the view starting at element d.
Views must start 32 B aligned, so small shifts (d < 8 for float) need a copy through a scalar
loop or a staged buffer; a simpler correct baseline is the scalar loop:
```cpp
float carry = 0.0f;
for (uint32_t i = 0; i < N; ++i) { carry += x.GetValue(i); y.SetValue(i, carry); }
```
(correct but slow). Better: parallelise over rows across blocks and vectorise ACROSS rows: load a
tile of R rows transposed so that step i of the scan is one vector Add over R values.
Reverse cumsum = scan of the flipped row; exclusive cumsum = inclusive minus x.
""",
    },
    {
        "slug": "pooling-1d-2d",
        "kind": "api_template",
        "title": "Max / average pooling with the vector unit: combine shifted windows",
        "category": "pooling",
        "tags": ["maxpool", "avgpool", "window", "stride", "pooling"],
        "text": r"""
For pooling with kernel K and stride S along the last axis, load a row (plus K-1 halo
elements), build the K shifted inputs with strided DataCopy/DataCopyPad (srcStride skipping S-1
elements is impossible below 32 B granularity, so for small strides gather on the host side
layout or copy each window column with a scalar loop), then reduce elementwise:
```cpp
Duplicate(acc, -INFINITY, outLen);                  // max pooling identity (0 for sum)
for (uint32_t k = 0; k < K; ++k) Max(acc, acc, shifted[k], outLen);   // Add for avg
Muls(acc, acc, 1.0f / K, outLen);                   // avg pooling only
```
For 2-D pooling over H x W with NCHW layout, vectorise across W (or across channels in NHWC) and
loop over the window rows; padding positions contribute the identity (-inf for max, and for
average divide by the count that matches the reference's count_include_pad setting).
""",
    },
    {
        "slug": "matmul-on-vector-unit",
        "kind": "api_template",
        "title": "Small matmul / matrix-vector on the vector unit with Axpy-style accumulation",
        "category": "matmul",
        "tags": ["matmul", "gemv", "axpy", "muls", "vector", "outer-product"],
        "text": r"""
Without the cube unit, C[M, N] = A[M, K] B[K, N] can be done row by row: for row m of C,
accumulate the K rows of B scaled by A[m, k]:
```cpp
Duplicate(cRow, 0.0f, N);
for (uint32_t k = 0; k < K; ++k) {
    float a = aRow.GetValue(k);                 // aRow loaded once; sync V/MTE2 -> S before reading
    Axpy(cRow, bRows[k * N], a, N);             // cRow += a * B[k, :]   (or Muls + Add)
}
```
Keep a tile of B in UB and reuse it for many rows of A (B traffic dominates otherwise). Split
rows of C over blocks. The cube unit (Matmul API) is far faster for large shapes; this vector form
suits small K or matrix-vector products. Accumulate in float even for half inputs.
""",
    },
    {
        "slug": "loss-mse-recipe",
        "kind": "api_template",
        "title": "Loss kernels (MSE, L1, Huber): elementwise term, block partial, global mean",
        "category": "loss",
        "tags": ["mse", "l1", "huber", "smooth_l1", "loss", "mean", "atomic"],
        "text": r"""
Per block: d = pred - target (Sub), term = d*d (Mul) for MSE, |d| (Abs) for L1, Huber via
Compare/Select between 0.5 d^2 and delta (|d| - 0.5 delta). Accumulate terms over tiles into a
float accumulator tensor with Add, ReduceSum it once at the end, multiply by 1/N_total, and add
the partial to the scalar output with SetAtomicAdd<float>() + DataCopyPad of 4 bytes
(the output must be zero-initialised by the host). Tail tiles: pad inputs so padded lanes give a
zero term (same padding value for pred and target), or pass the exact count to Sub/Mul/ReduceSum.
""",
    },
    # ------------------------------------------------------------------ best practices
    {
        "slug": "bp-double-buffering",
        "kind": "best_practice",
        "title": "Double buffering: BUFFER_NUM = 2 in InitBuffer overlaps copy-in, compute and copy-out",
        "category": "general",
        "tags": ["double-buffer", "pipeline", "tque", "initbuffer", "overlap", "performance"],
        "text": r"""
With one buffer per queue the three stages run serially (copy, then compute, then copy): the
vector unit idles about two thirds of the time. Give every TQue depth 2 — `TQue<QuePosition::VECIN, 2>`
and `pipe.InitBuffer(q, 2, tileBytes)` — and loop CopyIn/Compute/CopyOut per tile: while tile i
is computed, tile i+1 is being loaded and tile i-1 stored. The cost is twice the UB per queue, so
halve the tile length if UB is tight. Double buffering only helps when there are at least ~4
tiles per block; for tiny blocks it changes nothing.
""",
    },
    {
        "slug": "bp-ub-budget",
        "kind": "best_practice",
        "title": "UB capacity budget: 192 KB on 910B shared by all InitBuffer calls",
        "category": "general",
        "tags": ["ub", "capacity", "192kb", "tile-size", "budget", "910b"],
        "text": r"""
The Unified Buffer of a 910B vector core is 192 KB (a little is reserved; plan for ~180 KB).
Sum over queues of num * bytes plus all TBuf sizes (each rounded up to 32 B) must fit.
Choose the tile length from the budget: tileLen = floor(budget / (sum of bytes per element over
all buffers)) rounded down to a multiple of 256 B / sizeof(T). Example, float z = x + y with
double buffering: 3 queues x 2 buffers x 4 B = 24 B per element -> 180 KB / 24 B ≈ 7680 elements;
use 4096 or 6144. Large tiles amortise per-instruction and per-copy start-up; tiles of a few
hundred elements waste most of the time in overheads.
""",
    },
    {
        "slug": "bp-tile-alignment",
        "kind": "best_practice",
        "title": "Tile length: a multiple of 32 B (8 float / 16 half), ideally of 256 B",
        "category": "general",
        "tags": ["tile", "alignment", "32b", "256b", "repeat", "tiling"],
        "text": r"""
Make every tile length a multiple of 32 B so DataCopy is legal and every `local[offset]` view
stays aligned; prefer multiples of 256 B (64 float, 128 half), the vector repeat size, so no
repeat is partial and Compare/Select counts are legal. Put the unaligned remainder into one tail
tile handled with DataCopyPad. Per-block slices should also start on 32 B boundaries (split the
work in 32 B units, see the multi-core split template).
""",
    },
    {
        "slug": "bp-use-all-cores",
        "kind": "best_practice",
        "title": "Use all vector cores: blockDim close to the AIV count, balanced work",
        "category": "general",
        "tags": ["blockdim", "cores", "aiv", "parallelism", "multicore", "performance"],
        "text": r"""
A 910B has 20-24 AI Cores with two vector cores each (40-48 AIV). A kernel launched with
blockDim = 1 uses one of them. Launch blockDim = min(AIV count, work units) (query the count on
the host with platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreNumAiv() when
available) and split the work evenly; the slowest block sets the kernel time, so give the
remainder to several blocks rather than piling it on the last one. For small tensors (a few KB)
fewer blocks can be faster: every block pays a fixed start-up cost.
""",
    },
    {
        "slug": "bp-avoid-scalar-loops",
        "kind": "best_practice",
        "title": "Avoid per-element scalar loops (GetValue/SetValue); express work as vector instructions",
        "category": "general",
        "tags": ["scalar", "getvalue", "setvalue", "vectorize", "performance"],
        "text": r"""
Scalar GetValue/SetValue costs tens of cycles per element, while one vector instruction handles
64 floats per cycle. A loop over a tile with GetValue/SetValue is often 100x slower than the
vector version and may be flagged as a non-kernel. Replace: per-element branches by
Compare+Select, per-element math by the vector ops, per-row scalars by WholeReduce + vector
broadcast (Duplicate the scalar, or Muls/Adds with a scalar read once per row).
""",
    },
    {
        "slug": "bp-fuse-elementwise-chains",
        "kind": "best_practice",
        "title": "Fuse elementwise chains in UB: one copy-in, many vector ops, one copy-out",
        "category": "elementwise_chain",
        "tags": ["fusion", "elementwise", "chain", "bandwidth", "level2"],
        "text": r"""
Most elementwise operators are memory bound. For a chain like y = relu(x * s + b) * g, load each
tile once, apply all ops in UB (Muls, Adds, Relu, Mul ...) using one or two temporary buffers,
and store once. The reference framework runs one kernel per op and re-reads HBM each time; a
fused kernel beats it by roughly the number of ops in the chain. Reuse buffers in place
(`Muls(t, t, s, n)`) to keep UB use low, and keep tiles large.
""",
    },
    {
        "slug": "bp-accuracy-half",
        "kind": "best_practice",
        "title": "Accuracy: accumulate and transcendentals in float, not half",
        "category": "general",
        "tags": ["accuracy", "half", "fp16", "float", "tolerance", "reduction"],
        "text": r"""
half has 11 bits of mantissa and saturates at 65504. Sums of more than a few hundred half
values, exp of values above ~11, variance computations and softmax denominators lose accuracy
or overflow. Cast to float for the computation and back to half only for the store. Correctness
is judged with atol = rtol around 1e-2 for half and tighter for float, against PyTorch's results
(which also accumulate in float).
""",
    },
    {
        "slug": "bp-bf16-support",
        "kind": "best_practice",
        "title": "bfloat16 on 910B: vector arithmetic does not take bfloat16_t; Cast to float",
        "category": "general",
        "tags": ["bf16", "bfloat16", "cast", "dtype", "910b", "unsupported"],
        "text": r"""
On the 910B vector unit bfloat16_t is a storage type: DataCopy and Cast accept it, but Add,
Mul, Exp, ReduceSum and friends do not (compile error). Load bf16, `Cast(xf, xb,
RoundMode::CAST_NONE, n)`, compute in float, `Cast(yb, yf, RoundMode::CAST_RINT, n)`, store.
""",
    },
    {
        "slug": "bp-numerical-stability",
        "kind": "best_practice",
        "title": "Numerically stable formulas: softmax max-shift, log-sum-exp, softplus, log-sigmoid",
        "category": "softmax",
        "tags": ["stability", "overflow", "logsumexp", "softmax", "log_softmax", "log_sigmoid"],
        "text": r"""
exp overflows float above ~88 and half above ~11. Always shift by the row max before Exp in
softmax / log_softmax / cross entropy: lse = max + ln(sum(exp(x - max))). log_sigmoid(x) =
min(x, 0) - ln(1 + e^-|x|); softplus(x) = max(x, 0) + ln(1 + e^-|x|). Cross entropy of a row =
lse - x[target]. Division: multiply by a Reciprocal computed once instead of dividing
elementwise by the same value.
""",
    },
    {
        "slug": "bp-batch-rows-per-tile",
        "kind": "best_practice",
        "title": "Many short rows: pack several rows per tile and per copy",
        "category": "normalization",
        "tags": ["rows", "batch", "short-rows", "datacopy", "wholereduce", "tiling"],
        "text": r"""
When the reduced dimension is small (e.g. 64 or 128 elements), one copy and one reduction per row
is dominated by start-up costs. Copy R rows at once (one DataCopy of R * N elements, or
DataCopyPad with blockCount = R), reduce all rows with one WholeReduceSum/Max (one result per
256 B repeat), then apply per-row scalars by looping rows with Muls/Adds on row views
(`tile[r * N]`, 32 B-aligned when N * sizeof(T) is a multiple of 32). Choose R so the tile fits
the UB budget.
""",
    },
    {
        "slug": "bp-host-precompute-tiling",
        "kind": "best_practice",
        "title": "Compute tiling on the host and pass it to the kernel",
        "category": "general",
        "tags": ["tiling", "host", "scalars", "tiling-struct", "divisions"],
        "text": r"""
Integer division, modulo and branching on the scalar unit are slow. Compute block split, tile
length, tile count and tail length on the host (or once in Init), pass them as kernel arguments
(or a tiling struct read with GET_TILING_DATA), and keep the inner loop free of divisions.
Make shapes runtime arguments rather than compile-time constants so one kernel handles every
input size of the task.
""",
    },
    # ------------------------------------------------------------------ validity rules
    {
        "slug": "rule-datacopy-32b",
        "kind": "validity_rule",
        "title": "You cannot DataCopy a byte length that is not a multiple of 32",
        "category": "general",
        "tags": ["datacopy", "alignment", "32b", "tail", "rule"],
        "text": "You cannot DataCopy between GM and UB with count * sizeof(T) not a multiple of 32 bytes "
        "(the tail is silently dropped on the NPU); use DataCopyPad with DataCopyExtParams for "
        "the unaligned part.",
    },
    {
        "slug": "rule-queue-depth",
        "kind": "validity_rule",
        "title": "You cannot hold more tensors from a TQue than the num given to InitBuffer",
        "category": "general",
        "tags": ["tque", "alloctensor", "initbuffer", "deadlock", "rule"],
        "text": "You cannot AllocTensor from a TQue more times than the buffer count passed to "
        "InitBuffer without FreeTensor in between, and you cannot DeQue an empty queue; every "
        "AllocTensor needs a FreeTensor and every EnQue a DeQue, or the kernel hangs.",
    },
    {
        "slug": "rule-ub-capacity",
        "kind": "validity_rule",
        "title": "You cannot allocate more than the UB capacity across all InitBuffer calls",
        "category": "general",
        "tags": ["ub", "capacity", "initbuffer", "192kb", "rule"],
        "text": "You cannot request more Unified Buffer than the core has (192 KB on 910B, minus "
        "reserved space) summed over every InitBuffer (num * bytes, each rounded up to 32 B); "
        "shrink the tile length instead.",
    },
    {
        "slug": "rule-bf16-vector",
        "kind": "validity_rule",
        "title": "You cannot use bfloat16_t operands in vector arithmetic on 910B",
        "category": "general",
        "tags": ["bf16", "bfloat16", "vector", "dtype", "rule"],
        "text": "You cannot pass bfloat16_t tensors to Add/Mul/Exp/ReduceSum or other vector math on "
        "910B; Cast to float with RoundMode::CAST_NONE, compute, and Cast back with CAST_RINT.",
    },
    {
        "slug": "rule-scalar-read-sync",
        "kind": "validity_rule",
        "title": "You cannot read a vector result with GetValue without a V->S synchronisation",
        "category": "general",
        "tags": ["getvalue", "sync", "setflag", "waitflag", "v_s", "rule"],
        "text": "You cannot call GetValue on a LocalTensor just written by a vector instruction (e.g. "
        "ReduceSum's result) without SetFlag<HardEvent::V_S>/WaitFlag<HardEvent::V_S> first; the "
        "scalar unit may read stale data.",
    },
    {
        "slug": "rule-local-alignment",
        "kind": "validity_rule",
        "title": "You cannot use a LocalTensor view whose start is not 32-byte aligned",
        "category": "general",
        "tags": ["alignment", "localtensor", "offset", "view", "rule"],
        "text": "You cannot pass local[offset] to DataCopy or vector instructions unless offset * "
        "sizeof(T) is a multiple of 32 bytes; choose row pitches and tile offsets in 32 B units.",
    },
    {
        "slug": "rule-no-torch-compute",
        "kind": "validity_rule",
        "title": "You cannot compute the result with torch operations inside ModelNew",
        "category": "general",
        "tags": ["hack", "torch", "modelnew", "verifier", "rule"],
        "text": "You cannot compute the operator with PyTorch calls in ModelNew.forward (or fall back to "
        "torch in an except branch); the kernel must produce the output, torch may only allocate "
        "tensors and launch it.",
    },
    {
        "slug": "rule-gm-bounds",
        "kind": "validity_rule",
        "title": "You cannot read or write GM outside the tensors passed to the kernel",
        "category": "general",
        "tags": ["gm", "bounds", "out-of-range", "tail", "rule"],
        "text": "You cannot let the last block or the tail tile copy past the end of a GM tensor; clamp "
        "each block's length to the remaining elements and copy the tail with DataCopyPad of the "
        "exact byte count.",
    },
    {
        "slug": "rule-atomic-init",
        "kind": "validity_rule",
        "title": "You cannot accumulate with SetAtomicAdd into an output that was not zeroed",
        "category": "reduction",
        "tags": ["atomic", "setatomicadd", "zero", "output", "rule"],
        "text": "You cannot SetAtomicAdd partial results into an output buffer that is not zero before "
        "the launch (torch.empty holds garbage); zero it on the host and call SetAtomicNone after "
        "the atomic copies.",
    },
    {
        "slug": "rule-compare-256b",
        "kind": "validity_rule",
        "title": "You cannot call Compare with a count that is not a whole number of 256-byte repeats",
        "category": "elementwise",
        "tags": ["compare", "select", "256b", "count", "rule"],
        "text": "You cannot call Compare in count form with count * sizeof(T) not a multiple of 256 bytes "
        "(64 float, 128 half); round the compared length up within a padded tile.",
    },
]

# the cube-unit items (matrix products) are kept in their own module and served with these
from .ascendc_cube import CUBE_SEED_ITEMS  # noqa: E402

SEED_ITEMS.extend(CUBE_SEED_ITEMS)
