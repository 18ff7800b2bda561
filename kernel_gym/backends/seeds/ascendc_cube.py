"""Seed knowledge M0, cube unit: matrix products on the AI Core's cube (matrix) engine.

Written for kernel-gym in our own words and code, in the same format as
:mod:`.ascendc_vector` (``slug``, ``kind``, ``title``, ``category``, ``tags``, ``text``). Each item
teaches one piece: the cube data path and its queues, the fractal (NZ) layout, Fixpipe, the L0
capacities, and the split of a fused matmul into a cube kernel and a vector epilogue.
Targets the Atlas A2 (910B) AI Core, fp32 operands.
"""

from __future__ import annotations

CUBE_SEED_ITEMS: list[dict] = [
    {
        "slug": "cube-data-path-skeleton",
        "kind": "api_template",
        "title": "Cube kernel skeleton: GM -> L1 -> L0A/L0B -> Mmad -> L0C, one queue per stage",
        "category": "matmul",
        "tags": ["cube", "mmad", "loaddata", "tque", "a1", "b1", "a2", "b2", "co1", "matmul"],
        "text": r"""
The cube unit multiplies tiles that sit in its own memories, never in the UB. A tile of A travels
GM -> L1 (queue at TPosition::A1) -> L0A (TPosition::A2); a tile of B GM -> L1 (B1) -> L0B (B2);
Mmad multiplies L0A by L0B into L0C (TPosition::CO1), accumulating over the K steps. Every hop
runs on a different pipe (MTE2, MTE1, M, FIX), so hand each tile to the next stage with
EnQue/DeQue: that is what orders the pipes (a DeQue of a tile that was never EnQue'd waits
forever). The kernel is declared `__cube__`.

```cpp
TQue<TPosition::A1, 1> qa1;  TQue<TPosition::B1, 1> qb1;   // L1 tiles
TQue<TPosition::A2, 1> qa2;  TQue<TPosition::B2, 1> qb2;   // L0A / L0B tiles
TQue<TPosition::CO1, 1> qc;                                // the L0C accumulator

LocalTensor<float> acc = qc.AllocTensor<float>();
for (uint32_t k0 = 0; k0 < K; k0 += TK) {
    CopyInA(k0);  CopyInB(k0);          // GM -> L1 (fractal layout), then qa1.EnQue / qb1.EnQue
    LocalTensor<float> l1a = qa1.DeQue<float>();
    LocalTensor<float> l0a = qa2.AllocTensor<float>();
    LoadData(l0a, l1a, loadParams);     // L1 -> L0A (LoadData2DParams: repeatTimes, srcStride)
    qa2.EnQue(l0a);  qa1.FreeTensor(l1a);
    // ... the same for B into L0B ...
    LocalTensor<float> a = qa2.DeQue<float>();
    LocalTensor<float> b = qb2.DeQue<float>();
    MmadParams mp;  mp.m = tm;  mp.n = tn;  mp.k = tk;
    mp.cmatrixInitVal = (k0 == 0);      // first K step overwrites L0C, later ones add
    Mmad(acc, a, b, mp);
    qa2.FreeTensor(a);  qb2.FreeTensor(b);
}
qc.EnQue(acc);  acc = qc.DeQue<float>();
// write acc out with Fixpipe (see the Fixpipe item), then qc.FreeTensor(acc)

extern "C" __global__ __cube__ void mm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c);
```
Split the C tiles over the cube cores with GetBlockIdx()/GetBlockNum() (20 cube cores on a 910B).
""",
    },
    {
        "slug": "cube-nz-fractal-layout",
        "kind": "api_template",
        "title": "NZ fractal layout: DataCopy with Nd2NzParams turns a row-major tile into fractals",
        "category": "matmul",
        "tags": ["cube", "nz", "fractal", "nd2nz", "layout", "matmul"],
        "text": r"""
Mmad does not read row-major matrices. In L1 a tile must be in the fractal "NZ" layout: the
columns are cut into blocks of 32 bytes (8 floats), and each column block stores all the tile's
rows (rounded up to 16) one after another; a 16-row x 8-float piece (512 B) is one fractal.
A plain row-by-row DataCopy into L1 gives the cube a wrong layout and a wrong answer (no error).
Copy from GM with the Nd2Nz form of DataCopy:

```cpp
Nd2NzParams nz;
nz.ndNum = 1;                    // one matrix
nz.nValue = rows;                // tile rows (M side for A)
nz.dValue = cols;                // tile columns (K side for A)
nz.srcDValue = ldA;              // row length of the whole matrix in GM (elements)
nz.srcNdMatrixStride = 0;
nz.dstNzC0Stride = (rows + 15) / 16 * 16;   // rows per column block, a multiple of 16
nz.dstNzNStride = 1;
nz.dstNzMatrixStride = 0;
DataCopy(l1Tile, aGm[row0 * ldA + col0], nz);
```
From L1 to L0A, LoadData (LoadData2DParams) moves whole fractals: L0A wants, for each 16-row
block, its K fractals side by side (repeatTimes = K blocks, srcStride = number of 16-row blocks).
L0B wants B column-wise: a B given as [N, K] (a Linear weight, or B.T) is already right after
Nd2Nz and one LoadData; a row-major B [K, N] is turned on the way with LoadDataWithTranspose
(LoadData2dTransposeParams), 16 rows of B at a time.
A tile of a single row is a GEMV for Mmad: copy it as a plain row (dstNzC0Stride = 1).
""",
    },
    {
        "slug": "cube-fixpipe-out",
        "kind": "api_template",
        "title": "Fixpipe: the only way out of L0C, converting NZ back to row-major",
        "category": "matmul",
        "tags": ["cube", "fixpipe", "l0c", "co1", "output", "matmul"],
        "text": r"""
The accumulator in L0C (CO1) cannot be copied with DataCopy (DataCopy to GM reads the UB only);
it leaves through the fixpipe, which also turns the NZ result back into row-major rows:

```cpp
FixpipeParamsV220 fp;
fp.mSize = tm;                   // rows of this C tile
fp.nSize = tn;                   // columns of this C tile
fp.srcStride = (tm + 15) / 16 * 16;   // rows per column block in L0C
fp.dstStride = N;                // row length of C in GM (elements)
Fixpipe(cGm[m0 * N + n0], acc, fp);   // fp32 out, as accumulated
```
Fixpipe can also apply a ReLU or a cast on the way, but a general epilogue (bias, GELU,
scaling, residuals) belongs to a vector kernel.
""",
    },
    {
        "slug": "cube-l0-capacity",
        "kind": "validity_rule",
        "title": "Cube memory budget: L0A and L0B 64 KB each, L0C 128 KB, L1 512 KB",
        "category": "matmul",
        "tags": ["cube", "l0a", "l0b", "l0c", "capacity", "tiling", "matmul"],
        "text": r"""
The cube's buffers are small and every InitBuffer counts against them (over-allocation is
a cube_memory_overflow):
- L0A (TPosition::A2): 64 KB -> an fp32 A tile TM x TK must satisfy TM * TK * 4 <= 64 KB
  (64 x 64 = 16 KB; 128 x 128 = 64 KB fills it; 256 x 128 does not fit);
- L0B (TPosition::B2): 64 KB, the same for TK x TN;
- L0C (TPosition::CO1): 128 KB of fp32 accumulators, TM * TN * 4 <= 128 KB;
- L1 (A1/B1): 512 KB for all L1 tiles (a queue of depth 2 counts twice).
A 64 x 64 C tile with a 64-deep K step is a safe default; 128 x 128 with K step 64 uses the
L0C well and still leaves L0A/L0B room.
""",
    },
    {
        "slug": "cube-workspace-epilogue",
        "kind": "best_practice",
        "title": "Matmul + epilogue: a __cube__ kernel into an fp32 workspace, then a vector kernel",
        "category": "matmul",
        "tags": ["cube", "workspace", "epilogue", "fusion", "linear", "bias", "activation", "matmul"],
        "text": r"""
The vector instructions (Add, Muls, Exp, ReduceSum, ...) read and write the UB, never L0C, so a
fused op such as y = act(x @ W^T + b) * s is written as two kernels launched one after the other:

1. a `__cube__` kernel computes C = x @ W^T tile by tile and writes it, fp32, to a workspace
   tensor in GM (allocate it on the host: torch.empty(M * N, dtype=torch.float32));
2. a vector (`__aicore__`) kernel reads the workspace row by row into the UB (DataCopyPad for
   row lengths that are not a multiple of 32 bytes), adds the bias row, applies the activation
   and scaling, and writes y.

```cpp
extern "C" void linear_act_do(uint8_t* x, uint8_t* w, uint8_t* ws, uint8_t* bias, uint8_t* y) {
    mm_kernel<<<cubeBlocks, nullptr, nullptr>>>(x, w, ws);        // product into the workspace
    epilogue_kernel<<<vecBlocks, nullptr, nullptr>>>(ws, bias, y); // the epilogue on the UB
}
```
A Linear layer keeps its weight as [out, in] = [N, K]: that is B given transposed, which the
cube takes directly (Nd2Nz of W rows, one LoadData into L0B).
""",
    },
]
