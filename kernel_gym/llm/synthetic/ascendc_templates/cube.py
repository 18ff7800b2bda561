"""Matrix products on the cube unit, with an optional vector epilogue (level2 matmul + tail).

The product C = A @ B runs in an ``__cube__`` kernel, one C tile of BM x BN at a time:
A and B tiles go GM -> L1 in the fractal (NZ) layout (``DataCopy`` with ``Nd2NzParams``), L1 ->
L0A / L0B (``LoadData``; row-major B is turned with ``LoadDataWithTranspose``), ``Mmad``
accumulates over K in L0C, and ``Fixpipe`` writes the tile back row-major. Every stage hands its
tile over through a ``TQue`` (A1/B1/A2/B2/CO1), which is also what orders the pipes. A level2
task writes C to an fp32 workspace and a second, vector kernel applies the epilogue row by row.

A missing cube skill makes the coder commit its fault (see ``docs/synthetic_coder.md``).
"""

from __future__ import annotations

import json
import textwrap

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, consts_fmt
from kernel_gym.llm.synthetic.ascendc_templates.common import _HEADER, _copy_helpers
from kernel_gym.llm.synthetic.faults import ADVANCED_API, Knobs

__all__ = ["render_cube"]

#: cube cores (AIC) of the simulated 910B: more blocks than this cannot run a __cube__ kernel at once
AIC_CORES = 20


def _tiles(knobs: Knobs) -> tuple[int, int, int]:
    """BM, BN, BK of the C tile and K step: L0A holds BM x BK, L0B BK x BN, L0C BM x BN floats."""
    if knobs.l0_huge:  # 256 x 128 fp32 A tile = 128 KB: twice L0A
        return 256, 128, 128
    if knobs.tile >= 8192:  # the large_tiles tactic: 128 x 128 C tiles (64 KB of L0C), 64-deep K
        return 128, 128, 64
    return 64, 64, 64


def _cube_kernel(plan: Plan, knobs: Knobs) -> str:
    e = plan.extra
    bm, bn, bk = _tiles(knobs)
    depth = 2 if knobs.bufn >= 2 else 1
    batch, M, K, N = e["batch"], e["M"], e["K"], e["N"]
    a_stride = M * K
    b_stride = K * N if e.get("sbatch") else 0
    head = f"""constexpr uint32_t BATCH = {batch}, M = {M}, K = {K}, N = {N};
constexpr uint32_t BM = {bm}, BN = {bn}, BK = {bk};   // C tile BM x BN, K step BK
constexpr uint32_t DEPTH = {depth};                    // L1 buffers per operand queue
constexpr uint32_t A_BATCH = {a_stride}, B_BATCH = {b_stride};
constexpr uint32_t CK = 8;     // floats in one 32-byte fractal row
constexpr uint32_t FRAC = 128; // floats in one 16 x 8 fractal (512 bytes)
__aicore__ inline uint32_t Up16(uint32_t v) {{ return (v + 15) / 16 * 16; }}
__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) {{ return (a + b - 1) / b; }}
__aicore__ inline uint32_t Smaller(uint32_t a, uint32_t b) {{ return a < b ? a : b; }}
"""
    # without the sync skill the L0 tiles are never handed over (no EnQue before the DeQue)
    a2_put = "" if knobs.cube_nosync else "a2Q.EnQue(a2);"
    b2_put = "" if knobs.cube_nosync else "b2Q.EnQue(b2);"
    if knobs.nd_layout:  # rows copied as they are: L1 holds row-major tiles, not fractals
        load_a = """        for (uint32_t r = 0; r < bm; ++r) DataCopy(a1[r * BK], aG[ab + (m0 + r) * K + k0], BK);"""
        load_b = """        for (uint32_t r = 0; r < bk; ++r) DataCopy(b1[r * BN], bG[bb + (k0 + r) * N + n0], BN);"""
        if e.get("tb"):
            load_b = (
                """        for (uint32_t r = 0; r < bn; ++r) DataCopy(b1[r * BK], bG[bb + (n0 + r) * K + k0], BK);"""
            )
    else:
        load_a = """        Nd2NzParams p;   // [bm, bk] row-major -> column blocks of CK floats, Up16(bm) rows each
        p.ndNum = 1; p.nValue = bm; p.dValue = bk; p.srcNdMatrixStride = 0; p.srcDValue = K;
        p.dstNzC0Stride = bm == 1 ? 1 : Up16(bm);   // one row: Mmad takes it as a GEMV, a plain row
        p.dstNzNStride = 1; p.dstNzMatrixStride = 0;
        DataCopy(a1, aG[ab + m0 * K + k0], p);"""
        if e.get("tb"):  # B given as [N, K]: its NZ tile already is the layout L0B takes
            load_b = """        Nd2NzParams p;
        p.ndNum = 1; p.nValue = bn; p.dValue = bk; p.srcNdMatrixStride = 0; p.srcDValue = K;
        p.dstNzC0Stride = Up16(bn); p.dstNzNStride = 1; p.dstNzMatrixStride = 0;
        DataCopy(b1, bG[bb + n0 * K + k0], p);"""
        else:  # row-major B [K, N]: 16-row slabs, each slab NZ, to be turned on the way to L0B
            load_b = """        uint32_t slabs = bk / 16, last = bk % 16, slab = 16 * Up16(bn);
        Nd2NzParams p;
        p.nValue = 16; p.dValue = bn; p.srcNdMatrixStride = 16 * N; p.srcDValue = N;
        p.dstNzC0Stride = 16; p.dstNzNStride = 1; p.dstNzMatrixStride = slab;
        if (slabs > 0) { p.ndNum = slabs; DataCopy(b1, bG[bb + k0 * N + n0], p); }
        if (last > 0) {   // a last, partial slab
            p.ndNum = 1; p.nValue = last;
            DataCopy(b1[slabs * slab], bG[bb + (k0 + slabs * 16) * N + n0], p);
        }"""
    split_a = """        uint32_t mb = CeilDiv(bm, 16), kb = CeilDiv(bk, CK);
        LoadData2DParams p;   // per 16-row block: its kb fractals, mb apart in L1, side by side in L0A
        if (bm == 1) {   // the GEMV row goes over as it is, 512 bytes a repeat
            p.repeatTimes = CeilDiv(bk * 4, 512); p.srcStride = 1;
            LoadData(a2, a1, p);
        } else {
            p.repeatTimes = kb; p.srcStride = mb;
            for (uint32_t i = 0; i < mb; ++i) LoadData(a2[i * kb * FRAC], a1[i * FRAC], p);
        }"""
    if e.get("tb"):
        split_b = """        LoadData2DParams p;   // the whole NZ tile, fractal after fractal
        p.repeatTimes = CeilDiv(bk, CK) * CeilDiv(bn, 16); p.srcStride = 1;
        LoadData(b2, b1, p);"""
    else:
        split_b = """        uint32_t nb = CeilDiv(bn, 16), slab = 16 * Up16(bn);
        LoadData2dTransposeParams p;   // a 16 x 16 square of a slab -> two transposed fractals, nb apart
        p.repeatTimes = nb; p.srcStride = 1; p.dstGap = 0; p.dstFracGap = nb - 1;
        for (uint32_t s = 0; s < CeilDiv(bk, 16); ++s) LoadDataWithTranspose(b2[2 * s * nb * FRAC], b1[s * slab], p);"""
    if knobs.no_fixpipe:
        write_c = "        DataCopy(cG[cOff], co, bm * bn);   // L0C straight out"
    else:
        write_c = """        FixpipeParamsV220 f;   // L0C (NZ, fp32) -> row-major C
        f.nSize = bn; f.mSize = bm; f.srcStride = Up16(bm); f.dstStride = N;
        Fixpipe(cG[cOff], co, f);"""
    in_l0c = ""
    if knobs.epilogue_in_l0c:  # the epilogue applied where the product sits
        in_l0c = "        " + _epilogue_in_l0c(plan) + "\n"
    return (
        head
        + f"""
class CubeKernel {{
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c) {{
        aG.SetGlobalBuffer((__gm__ float*)a);
        bG.SetGlobalBuffer((__gm__ float*)b);
        cG.SetGlobalBuffer((__gm__ float*)c);
        pipe.InitBuffer(a1Q, DEPTH, BM * BK * sizeof(float));
        pipe.InitBuffer(b1Q, DEPTH, BK * BN * sizeof(float));
        pipe.InitBuffer(a2Q, 1, BM * BK * sizeof(float));
        pipe.InitBuffer(b2Q, 1, BK * BN * sizeof(float));
        pipe.InitBuffer(coQ, 1, BM * BN * sizeof(float));
    }}
    __aicore__ inline void Process() {{
        uint32_t tm = CeilDiv(M, BM), tn = CeilDiv(N, BN), tiles = BATCH * tm * tn;
        for (uint32_t t = GetBlockIdx(); t < tiles; t += GetBlockNum()) {{
            uint32_t bi = t / (tm * tn), m0 = (t / tn) % tm * BM, n0 = t % tn * BN;
            Tile(bi, m0, n0, Smaller(BM, M - m0), Smaller(BN, N - n0));
        }}
    }}
private:
    __aicore__ inline void Tile(uint32_t bi, uint32_t m0, uint32_t n0, uint32_t bm, uint32_t bn) {{
        LocalTensor<float> co = coQ.AllocTensor<float>();
        for (uint32_t k0 = 0; k0 < K; k0 += BK) {{
            uint32_t bk = Smaller(BK, K - k0);
            LoadA(bi * A_BATCH, m0, k0, bm, bk);
            LoadB(bi * B_BATCH, k0, n0, bk, bn);
            SplitA(bm, bk);
            SplitB(bk, bn);
            LocalTensor<float> a2 = a2Q.DeQue<float>();
            LocalTensor<float> b2 = b2Q.DeQue<float>();
            MmadParams mp;
            mp.m = bm; mp.n = bn; mp.k = bk;
            mp.cmatrixInitVal = k0 == 0;   // the first K step starts the sum, the rest accumulate
            Mmad(co, a2, b2, mp);
            a2Q.FreeTensor(a2);
            b2Q.FreeTensor(b2);
        }}
        coQ.EnQue(co);
        co = coQ.DeQue<float>();
        uint64_t cOff = uint64_t(bi) * M * N + uint64_t(m0) * N + n0;
{in_l0c}{write_c}
        coQ.FreeTensor(co);
    }}
    __aicore__ inline void LoadA(uint32_t ab, uint32_t m0, uint32_t k0, uint32_t bm, uint32_t bk) {{
        LocalTensor<float> a1 = a1Q.AllocTensor<float>();
{load_a}
        a1Q.EnQue(a1);
    }}
    __aicore__ inline void LoadB(uint32_t bb, uint32_t k0, uint32_t n0, uint32_t bk, uint32_t bn) {{
        LocalTensor<float> b1 = b1Q.AllocTensor<float>();
{load_b}
        b1Q.EnQue(b1);
    }}
    __aicore__ inline void SplitA(uint32_t bm, uint32_t bk) {{
        LocalTensor<float> a1 = a1Q.DeQue<float>();
        LocalTensor<float> a2 = a2Q.AllocTensor<float>();
{split_a}
        {a2_put}
        a1Q.FreeTensor(a1);
    }}
    __aicore__ inline void SplitB(uint32_t bk, uint32_t bn) {{
        LocalTensor<float> b1 = b1Q.DeQue<float>();
        LocalTensor<float> b2 = b2Q.AllocTensor<float>();
{split_b}
        {b2_put}
        b1Q.FreeTensor(b1);
    }}
    TPipe pipe;
    TQue<TPosition::A1, DEPTH> a1Q;
    TQue<TPosition::B1, DEPTH> b1Q;
    TQue<TPosition::A2, 1> a2Q;
    TQue<TPosition::B2, 1> b2Q;
    TQue<TPosition::CO1, 1> coQ;
    GlobalTensor<float> aG, bG, cG;
}};

extern "C" __global__ __cube__ void cube_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c) {{
    CubeKernel op;
    op.Init(a, b, c);
    op.Process();
}}
"""
    )


def _epilogue_in_l0c(plan: Plan) -> str:
    steps = plan.extra.get("steps") or []
    if "relu" in steps:
        return "Relu(co, co, bm * bn);"
    if "scale" in steps:
        return f"Muls(co, co, {consts_fmt(plan).get('s', '1.0f')}, bm * bn);"
    return "Adds(co, co, 0.0f, bm * bn);"


def _step_lines(plan: Plan, knobs: Knobs, step: str, src: str) -> list[str]:
    """Vector lines of one epilogue step: read ``src`` (x0 or o), write o (count n)."""
    c = consts_fmt(plan)
    if step == "bias":
        return [f"o = {src} + bv;" if knobs.ops_overload else f"Add(o, {src}, bv, n);"]
    if step == "pbias":
        return [f"o = {src} + bv;" if knobs.ops_overload else f"Add(o, {src}, bv, n);"]
    if step == "scale":
        s = c.get("s", "1.0f")
        return [f"o = {src} * {s};" if knobs.ops_overload else f"Muls(o, {src}, {s}, n);"]
    if step == "residual":
        return [f"o = {src} + xr;" if knobs.ops_overload else f"Add(o, {src}, xr, n);"]
    if step == "clamp":
        return [f"Maxs(o, {src}, {c['a']}, n);", f"Mins(o, o, {c['b']}, n);"]
    if step == "rowsum":
        return []
    if knobs.advanced_api and step in ADVANCED_API and step != "relu":
        return [f"{ADVANCED_API[step]}(o, {src}, n);"]
    lines = MAP_RECIPES[step][0]
    return [ln.replace("x0", src).replace("y,", "o,").replace("y)", "o)") for ln in lines]


def _epilogue(plan: Plan, knobs: Knobs) -> tuple[str, list[str]]:
    """The vector kernel applying the epilogue to the workspace, and its GM parameters."""
    e = plan.extra
    steps: list[str] = e["steps"]
    N = e["N"]
    npad = (N + 7) // 8 * 8
    rows = e["batch"] * e["M"]
    bufn = 2 if knobs.bufn >= 2 else 1
    has_bias = "bias" in steps or "pbias" in steps
    has_res = "residual" in steps
    rowsum = "rowsum" in steps
    params = ["ws"] + (["bias"] if has_bias else []) + (["xres"] if has_res else []) + ["y"]
    body: list[str] = []
    src = "x0"
    for st in steps:
        body += _step_lines(plan, knobs, st, src)
        if st != "rowsum":
            src = "o"
    if src == "x0":
        body.append("Adds(o, x0, 0.0f, n);")
    free_in = [] if knobs.leak else ["        inQ.FreeTensor(x0);"]
    lines = [
        f"constexpr uint32_t EN = {N}, ENP = {npad}, EROWS = {rows}, EBUF = {bufn};",
        _copy_helpers("float", knobs),
        "class Epilogue {",
        "public:",
        "    __aicore__ inline void Init(" + ", ".join(f"GM_ADDR {p}" for p in params) + ") {",
        "        uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = EROWS / nb, rem = EROWS % nb;",
        "        r0 = bi * per + (bi < rem ? bi : rem); nr = per + (bi < rem ? 1 : 0);",
        "        wsG.SetGlobalBuffer((__gm__ float*)ws);",
        "        yG.SetGlobalBuffer((__gm__ float*)y);",
        "        pipe.InitBuffer(inQ, EBUF, ENP * sizeof(float));",
        "        pipe.InitBuffer(outQ, EBUF, ENP * sizeof(float));",
        "        pipe.InitBuffer(tmp, 2 * ENP * sizeof(float));",
    ]
    if has_bias:
        lines += [
            "        bG.SetGlobalBuffer((__gm__ float*)bias);",
            "        pipe.InitBuffer(biasQ, 1, ENP * sizeof(float));",
        ]
    if has_res:
        lines += [
            "        xG.SetGlobalBuffer((__gm__ float*)xres);",
            "        pipe.InitBuffer(resQ, EBUF, ENP * sizeof(float));",
        ]
    if rowsum:
        lines += ["        pipe.InitBuffer(sumQ, 1, 8 * sizeof(float));"]
    lines += ["    }", "    __aicore__ inline void Process() {", "        uint32_t n = EN;"]
    if has_bias:
        lines += [
            "        LocalTensor<float> bl = biasQ.AllocTensor<float>();",
            "        Load(bl, bG, 0, EN);",
            "        biasQ.EnQue(bl);",
            "        LocalTensor<float> bv = biasQ.DeQue<float>();   // the bias row, kept to the end",
        ]
    lines += [
        "        LocalTensor<float> t0 = tmp.Get<float>();",
        "        LocalTensor<float> t1 = t0[ENP];",
        "        for (uint32_t i = r0; i < r0 + nr; ++i) {",
        "            LocalTensor<float> li = inQ.AllocTensor<float>();",
        "            Load(li, wsG, uint64_t(i) * EN, EN);",
        "            inQ.EnQue(li);",
    ]
    if has_res:
        lines += [
            "            LocalTensor<float> lr = resQ.AllocTensor<float>();",
            "            Load(lr, xG, uint64_t(i) * EN, EN);",
            "            resQ.EnQue(lr);",
            "            LocalTensor<float> xr = resQ.DeQue<float>();",
        ]
    lines += [
        "            LocalTensor<float> x0 = inQ.DeQue<float>();",
        "            LocalTensor<float> o = outQ.AllocTensor<float>();",
    ]
    lines += ["            " + ln for ln in body]
    if rowsum:
        lines += [
            "            LocalTensor<float> s = sumQ.AllocTensor<float>();",
            "            ReduceSum(s, o, t0, n);   // the row's sum, t0 as the work buffer",
            "            sumQ.EnQue(s);",
            "            outQ.FreeTensor(o);",
            "            s = sumQ.DeQue<float>();",
            "            Store(yG, i, s, 1);",
            "            sumQ.FreeTensor(s);",
        ]
    else:
        lines += [
            "            outQ.EnQue(o);",
            "            o = outQ.DeQue<float>();",
            "            Store(yG, uint64_t(i) * EN, o, EN);",
            "            outQ.FreeTensor(o);",
        ]
    if has_res:
        lines += ["            resQ.FreeTensor(xr);"]
    lines += ["    " + ln for ln in free_in]
    lines += ["        }"]
    if has_bias:
        lines += ["        biasQ.FreeTensor(bv);"]
    lines += [
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<TPosition::VECIN, EBUF> inQ;",
        "    TQue<TPosition::VECOUT, EBUF> outQ;",
        "    TBuf<TPosition::VECCALC> tmp;",
    ]
    if has_bias:
        lines += ["    TQue<TPosition::VECIN, 1> biasQ;", "    GlobalTensor<float> bG;"]
    if has_res:
        lines += ["    TQue<TPosition::VECIN, EBUF> resQ;", "    GlobalTensor<float> xG;"]
    if rowsum:
        lines += ["    TQue<TPosition::VECOUT, 1> sumQ;"]
    lines += [
        "    GlobalTensor<float> wsG, yG;",
        "    uint32_t r0, nr;",
        "};",
        "",
        'extern "C" __global__ __aicore__ void epilogue_kernel(' + ", ".join(f"GM_ADDR {p}" for p in params) + ") {",
        "    Epilogue op;",
        "    op.Init(" + ", ".join(params) + ");",
        "    op.Process();",
        "}",
    ]
    return "\n".join(lines), params


def _matmul_api(plan: Plan) -> str:
    """What a coder without the cube skills reaches for: the high-level Matmul API objects."""
    return """#include "lib/matmul_intf.h"
using A_T = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using C_T = MatmulType<TPosition::GM, CubeFormat::ND, float>;
extern "C" __global__ __aicore__ void cube_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
    TPipe pipe;
    Matmul<A_T, A_T, C_T, C_T> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm);
    mm.SetTensorA(a);
    mm.SetTensorB(b);
    mm.IterateAll(c);
}
"""


def render_cube(plan: Plan, knobs: Knobs) -> str:
    e = plan.extra
    epilogue = e.get("mode") == "epilogue" and not knobs.epilogue_in_l0c
    if knobs.matmul_api:
        cube_src = _matmul_api(plan)
    else:
        cube_src = _cube_kernel(plan, knobs)
    tiles_bm, tiles_bn, _ = _tiles(knobs)
    n_tiles = e["batch"] * -(-e["M"] // tiles_bm) * -(-e["N"] // tiles_bn)
    cube_blocks = max(1, min(knobs.blocks, AIC_CORES, n_tiles))
    src = [_HEADER, cube_src]
    b_arg = "x1" if plan.n_inputs > 1 else e.get("b_expr", "x1")
    if epilogue:
        ep_src, params = _epilogue(plan, knobs)
        src.append(ep_src)
        rows = e["batch"] * e["M"]
        ep_blocks = 1 if "rowsum" in e["steps"] else max(1, min(knobs.blocks, 40, rows))
        host_params = ["a", "b", "ws"] + params[1:]
        src.append(
            'extern "C" void mm_do(' + ", ".join(f"uint8_t* {p}" for p in host_params) + ") {\n"
            "    // the product into the fp32 workspace on the cube unit, then the epilogue on the vector unit\n"
            f"    cube_kernel<<<{cube_blocks}, nullptr, nullptr>>>(a, b, ws);\n"
            f"    epilogue_kernel<<<{ep_blocks}, nullptr, nullptr>>>(" + ", ".join(params) + ");\n}"
        )
        extra_args = []
        if "bias" in e["steps"]:
            extra_args.append(e["b_expr"].rsplit(".", 1)[0] + ".bias")
        if "pbias" in e["steps"]:
            extra_args.append("self.bias")
        if "residual" in e["steps"]:
            extra_args.append("x0")
        call = f"self.mod.mm_do(x0, {b_arg}, ws, " + "".join(f"{a}, " for a in extra_args) + "y)"
        ws_line = f"ws = torch.empty({rows * e['N']}, dtype=torch.float32)  # the product, fp32 workspace\n        "
    else:
        src.append(
            'extern "C" void mm_do(uint8_t* a, uint8_t* b, uint8_t* c) {\n'
            f"    cube_kernel<<<{cube_blocks}, nullptr, nullptr>>>(a, b, c);\n}}"
        )
        call = f"self.mod.mm_do(x0, {b_arg}, y)"
        ws_line = ""
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    sig = f", {plan.init_sig}" if plan.init_sig else ""
    body = textwrap.indent(textwrap.dedent(plan.init_src), " " * 8) if plan.init_src else ""
    note = json.dumps({"tile": knobs.tile, "blocks": knobs.blocks, "bufn": knobs.bufn}, sort_keys=True)
    source = "\n".join(src)
    return f'''"""Ascend C kernel for {plan.recipe} on the cube unit (written by the synthetic coder)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

# synthetic-coder knobs: {note}
SOURCE = r"""
{source}
"""


class ModelNew(nn.Module):
    def __init__(self{sig}):
        super().__init__()
{body}
        self.mod = asc.load(SOURCE)

    def forward(self, {args}):
        {ws_line}y = torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)
        {call}
        return y
'''
