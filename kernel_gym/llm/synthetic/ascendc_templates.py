"""Parameterised Ascend C templates of the synthetic coder (one per kernel shape of a Plan).

Every template takes the :class:`~kernel_gym.llm.synthetic.analysis.Plan` and a
:class:`~kernel_gym.llm.synthetic.faults.Knobs` (tiling choices plus the faults to commit) and
returns an answer source: Python defining ``ModelNew`` that compiles the kernel with
``kernel_gym.ascendc.load``. Written for kernel-gym; not derived from the stored answers.
"""

from __future__ import annotations

import json
import textwrap

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, consts_fmt
from kernel_gym.llm.synthetic.faults import ADVANCED_API, Knobs

__all__ = ["render_ascendc"]

_HEADER = """#include "kernel_operator.h"
using namespace AscendC;
"""


def _py(plan: Plan, knobs: Knobs, source: str, call: str, out_expr: str, extra_init: str = "") -> str:
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    sig = f", {plan.init_sig}" if plan.init_sig else ""
    body = textwrap.indent(textwrap.dedent(plan.init_src), " " * 8) if plan.init_src else ""
    note = json.dumps({"tile": knobs.tile, "blocks": knobs.blocks, "bufn": knobs.bufn}, sort_keys=True)
    return f'''"""Ascend C kernel for {plan.recipe} (written by the synthetic coder)."""
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
{extra_init}        self.mod = asc.load(SOURCE)

    def forward(self, {args}):
        y = {out_expr}
        {call}
        return y
'''


# --------------------------------------------------------------------------- shared pieces
def _types(plan: Plan, knobs: Knobs) -> tuple[str, bool]:
    """GM element type and whether the compute goes through float casts."""
    if plan.dtype == "half" and not knobs.half_as_float:
        return "half", True
    return "float", False


def _split(knobs: Knobs) -> str:
    """Init code that sets start/len of this block's slice of `total` elements."""
    if knobs.blocks == 1 and not knobs.use_block_idx:
        return "        uint32_t start = 0; len = total;\n"
    if knobs.unaligned:     # naive even split in elements
        return ("        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();\n"
                "        uint32_t per = (total + nb - 1) / nb;\n"
                "        uint32_t start = bi * per;\n"
                "        len = start >= total ? 0 : (total - start < per ? total - start : per);\n")
    if knobs.no_tail:       # assumes total divides evenly
        return ("        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();\n"
                "        uint32_t per = total / nb;\n"
                "        uint32_t start = bi * per; len = per;\n")
    return ("        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();\n"
            "        uint32_t units = (total + ALIGN - 1) / ALIGN, per = units / nb, rem = units % nb;\n"
            "        uint32_t su = bi * per + (bi < rem ? bi : rem), cu = per + (bi < rem ? 1 : 0);\n"
            "        uint32_t start = su * ALIGN, end = (su + cu) * ALIGN;\n"
            "        if (end > total) end = total;\n"
            "        len = end > start ? end - start : 0;\n")


def _copy_helpers(T: str, knobs: Knobs) -> str:
    """Load/Store helpers: DataCopy for 32 B multiples, DataCopyPad for tails (if known)."""
    if knobs.unaligned:
        return (f"template <class Tt> __aicore__ inline void Load(LocalTensor<Tt>& l, GlobalTensor<Tt>& g, uint64_t off, uint32_t n) {{ DataCopy(l, g[off], n); }}\n"
                f"template <class Tt> __aicore__ inline void Store(GlobalTensor<Tt>& g, uint64_t off, LocalTensor<Tt>& l, uint32_t n) {{ DataCopy(g[off], l, n); }}\n")
    if knobs.no_tail:       # knows the 32 B rule but not DataCopyPad: rounds the count up
        return ("template <class Tt> __aicore__ inline void Load(LocalTensor<Tt>& l, GlobalTensor<Tt>& g, uint64_t off, uint32_t n) {\n"
                "    uint32_t a = 32 / sizeof(Tt); DataCopy(l, g[off], (n + a - 1) / a * a); }\n"
                "template <class Tt> __aicore__ inline void Store(GlobalTensor<Tt>& g, uint64_t off, LocalTensor<Tt>& l, uint32_t n) {\n"
                "    uint32_t a = 32 / sizeof(Tt); DataCopy(g[off], l, (n + a - 1) / a * a); }\n")
    return ("template <class Tt> __aicore__ inline void Load(LocalTensor<Tt>& l, GlobalTensor<Tt>& g, uint64_t off, uint32_t n) {\n"
            "    if ((n * sizeof(Tt)) % 32 == 0) { DataCopy(l, g[off], n); return; }\n"
            "    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(Tt)), 0, 0, 0};\n"
            "    DataCopyPadExtParams<Tt> pad{false, 0, 0, 0};\n"
            "    DataCopyPad(l, g[off], p, pad);\n}\n"
            "template <class Tt> __aicore__ inline void Store(GlobalTensor<Tt>& g, uint64_t off, LocalTensor<Tt>& l, uint32_t n) {\n"
            "    if ((n * sizeof(Tt)) % 32 == 0) { DataCopy(g[off], l, n); return; }\n"
            "    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(Tt)), 0, 0, 0};\n"
            "    DataCopyPad(g[off], l, p);\n}\n")


_SCALAR_OF = """__aicore__ inline float ScalarOf(LocalTensor<float>& r) {
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    float v = r.GetValue(0);
    SetFlag<HardEvent::S_V>(0);
    WaitFlag<HardEvent::S_V>(0);
    return v;
}
"""


def _body(plan: Plan, knobs: Knobs) -> list[str]:
    """Vector compute lines of a map recipe (or the fault version)."""
    lines, expr, _needs, _nt = MAP_RECIPES[plan.recipe]
    c = consts_fmt(plan)
    if knobs.ops_overload:
        return [f"y = {expr.format(**c)};   // elementwise on the tiles"]
    if knobs.ternary and plan.recipe == "where_gt0":
        return ["y = x0 > 0.0f ? x0 : x1;"]
    if knobs.advanced_api and plan.recipe in ADVANCED_API:
        api = ADVANCED_API[plan.recipe]
        extra = ", {a}".format(**c) if "{a}" in " ".join(lines) else ""
        return [f"{api}(y, x0{', x1' if plan.n_inputs > 1 and plan.kind == 'reduceall' else ''}{extra}, n);"]
    if not lines:
        return ["Adds(y, x0, 0.0f, n);"]
    return [ln.format(**c) for ln in lines]


def _cuda(plan: Plan, knobs: Knobs, out_expr: str) -> str:
    """What a coder without the Ascend C kernel structure writes: a CUDA kernel."""
    T = "half" if plan.dtype == "half" else "float"
    ins = ", ".join(f"const {T}* x{i}" for i in range(plan.n_inputs))
    _l, expr, _n, _t = MAP_RECIPES.get(plan.recipe, ([], "x0", (), 0))
    expr = expr.replace("x0", "x0[i]").replace("x1", "x1[i]").replace("x2", "x2[i]").format(**consts_fmt(plan))
    src = (f"#include \"kernel_operator.h\"\n"
           f"__global__ void kernel({ins}, {T}* y, int n) {{\n"
           f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           f"    if (i < n) y[i] = {expr};\n}}\n"
           f"extern \"C\" void k_do({', '.join(f'uint8_t* x{i}' for i in range(plan.n_inputs))}, uint8_t* y, uint32_t n) {{\n"
           f"    kernel<<<(n + 255) / 256, 256>>>({', '.join(f'({T}*)x{i}' for i in range(plan.n_inputs))}, ({T}*)y, n);\n}}")
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    return _py(plan, knobs, src, f"self.mod.k_do({args}, y, x0.numel())", out_expr)


# --------------------------------------------------------------------------- map
def render_map(plan: Plan, knobs: Knobs, reduce_all: bool = False) -> str:
    T, cast = _types(plan, knobs)
    ni = plan.n_inputs
    _l, _e, needs, ntemps = MAP_RECIPES[plan.recipe]
    select = "select" in needs and not knobs.ternary
    args = ", ".join(f"x{i}" for i in range(ni))
    gm_args = ", ".join(f"GM_ADDR x{i}" for i in range(ni))
    nf = ntemps + ((ni + 1) if cast else 0) + (1 if reduce_all else 0)   # float TBuf slots
    lines = [_HEADER, f"using T = {T};",
             f"constexpr uint32_t TILE = {knobs.tile};", f"constexpr uint32_t BUFN = {knobs.bufn};",
             "constexpr uint32_t ALIGN = 32 / sizeof(T);", _copy_helpers(T, knobs)]
    if reduce_all:
        lines.append(_SCALAR_OF)
    cls = ["class KernelMap {", "public:"]
    out_arg = "GM_ADDR y"
    cls.append(f"    __aicore__ inline void Init({gm_args}, {out_arg}, uint32_t total) {{")
    cls.append(_split(knobs).rstrip("\n"))
    for i in range(ni):
        cls.append(f"        x{i}Gm.SetGlobalBuffer((__gm__ T*)x{i} + start, len);")
        cls.append(f"        pipe.InitBuffer(inQ{i}, BUFN, TILE * sizeof(T));")
    if reduce_all:
        cls.append("        yGm.SetGlobalBuffer((__gm__ float*)y, 1);")
        cls.append("        pipe.InitBuffer(outQ, 1, 8 * sizeof(float));")
        cls.append("        pipe.InitBuffer(workBuf, 64 * sizeof(float));")
    else:
        cls.append("        yGm.SetGlobalBuffer((__gm__ T*)y + start, len);")
        cls.append("        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));")
    if nf:
        cls.append(f"        pipe.InitBuffer(tmpBuf, {nf} * TILE * sizeof(float));")
    if select:
        cls.append("        pipe.InitBuffer(maskBuf, TILE / 8 < 32 ? 32 : TILE / 8);")
    cls.append("    }")
    # Process
    cls.append("    __aicore__ inline void Process() {")
    if reduce_all:
        cls.append("        acc = 0.0f;")
    if knobs.no_tail:
        cls.append("        uint32_t tile = len < TILE ? len : TILE;")
        cls.append("        for (uint32_t t = 0; tile > 0 && t < len / tile; ++t) {")
        cls.append("            CopyIn(t * tile, tile); Compute(tile); " + ("" if reduce_all else "CopyOut(t * tile, tile); ") + "}")
    else:
        cls.append("        for (uint32_t off = 0; off < len; off += TILE) {")
        cls.append("            uint32_t n = len - off < TILE ? len - off : TILE;")
        cls.append("            CopyIn(off, n); Compute(n); " + ("" if reduce_all else "CopyOut(off, n); ") + "}")
    if reduce_all:
        cls.append("        Finish();")
    cls.append("    }")
    cls.append("private:")
    cls.append("    __aicore__ inline void CopyIn(uint32_t off, uint32_t n) {")
    for i in range(ni):
        cls.append(f"        LocalTensor<T> l{i} = inQ{i}.AllocTensor<T>();")
        cls.append(f"        Load(l{i}, x{i}Gm, off, n);")
        if not knobs.skip_enque:
            cls.append(f"        inQ{i}.EnQue(l{i});")
    cls.append("    }")
    cls.append("    __aicore__ inline void Compute(uint32_t n) {")
    cls.append("        uint32_t nc = (n + 63) / 64 * 64;")
    cls.append("        (void)nc;")
    for i in range(ni):
        cls.append(f"        LocalTensor<T> h{i} = inQ{i}.DeQue<T>();")
    if cast:
        cls.append("        LocalTensor<float> tmp = tmpBuf.Get<float>();")
        for i in range(ni):
            cls.append(f"        LocalTensor<float> x{i} = tmp[{i} * TILE];")
            cls.append(f"        Cast(x{i}, h{i}, RoundMode::CAST_NONE, n);")
        cls.append(f"        LocalTensor<float> y = tmp[{ni} * TILE];")
        base = ni + 1
    else:
        for i in range(ni):
            cls.append(f"        LocalTensor<T> x{i} = h{i};")
        if nf:
            cls.append("        LocalTensor<float> tmp = tmpBuf.Get<float>();")
        if reduce_all:
            cls.append("        LocalTensor<float> y = tmp[0];")
            base = 1
        else:
            cls.append("        LocalTensor<T> y = outQ.AllocTensor<T>();")
            base = 0
    for k in range(ntemps):
        cls.append(f"        LocalTensor<float> t{k} = tmp[{base + k} * TILE];")
    if select:
        cls.append("        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();")
    cls += ["        " + ln for ln in _body(plan, knobs)]
    if reduce_all:
        cls += _reduce_tile(knobs)
    elif cast:
        cls.append("        LocalTensor<T> yo = outQ.AllocTensor<T>();")
        cls.append("        Cast(yo, y, RoundMode::CAST_ROUND, n);")
        cls.append("        outQ.EnQue(yo);")
    else:
        cls.append("        outQ.EnQue(y);")
    if not knobs.leak:
        for i in range(ni):
            cls.append(f"        inQ{i}.FreeTensor(h{i});")
    cls.append("    }")
    if not reduce_all:
        cls.append("    __aicore__ inline void CopyOut(uint32_t off, uint32_t n) {")
        cls.append("        LocalTensor<T> o = outQ.DeQue<T>();")
        cls.append("        Store(yGm, off, o, n);")
        cls.append("        outQ.FreeTensor(o);")
        cls.append("    }")
    else:
        cls += _finish(plan, knobs)
    cls.append("    TPipe pipe;")
    for i in range(ni):
        cls.append(f"    TQue<QuePosition::VECIN, BUFN> inQ{i};")
    cls.append(f"    TQue<QuePosition::VECOUT, {1 if reduce_all else 'BUFN'}> outQ;")
    cls.append("    TBuf<QuePosition::VECCALC> tmpBuf, maskBuf, workBuf;")
    cls.append("    GlobalTensor<T> " + ", ".join(f"x{i}Gm" for i in range(ni)) + ";")
    cls.append(f"    GlobalTensor<{'float' if reduce_all else 'T'}> yGm;")
    cls.append("    uint32_t len;")
    if reduce_all:
        cls.append("    float acc;")
    cls.append("};")
    lines.append("\n".join(cls))
    lines.append(f"extern \"C\" __global__ __aicore__ void map_kernel({gm_args}, GM_ADDR y, uint32_t total) {{\n"
                 f"    KernelMap op;\n    op.Init({args}, y, total);\n    op.Process();\n}}")
    host_args = ", ".join(f"uint8_t* x{i}" for i in range(ni))
    launch = ""
    if reduce_all and knobs.blocks > 1 and knobs.atomic:
        lines.append(_ZERO_KERNEL)
        launch = "    zero_kernel<<<1, nullptr, nullptr>>>(y);\n"
    lines.append(f"extern \"C\" void map_do({host_args}, uint8_t* y, uint32_t total) {{\n"
                 f"    uint32_t blocks = {knobs.blocks};\n{launch}"
                 f"    map_kernel<<<blocks, nullptr, nullptr>>>({args}, y, total);\n}}")
    src = "\n".join(lines)
    out = "torch.empty((), dtype=x0.dtype)" if reduce_all else "torch.empty_like(x0)"
    return _py(plan, knobs, src, f"self.mod.map_do({args}, y, x0.numel())", out)


_ZERO_KERNEL = """extern "C" __global__ __aicore__ void zero_kernel(GM_ADDR y) {
    TPipe pipe;
    TBuf<QuePosition::VECCALC> b;
    pipe.InitBuffer(b, 32);
    LocalTensor<float> z = b.Get<float>();
    Duplicate(z, 0.0f, 8);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)y, 1);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopyExtParams p{1, 4, 0, 0, 0};
    DataCopyPad(g, z, p);
}"""


def _reduce_tile(knobs: Knobs) -> list[str]:
    """Sum the tile's y into the block accumulator."""
    if knobs.bad_workspace:     # folds into an accumulator it never initialised
        return ["        LocalTensor<float> w = workBuf.Get<float>();",
                "        for (uint32_t k = 0; k < n; k += 64) Add(w, w, y[k], n - k < 64 ? n - k : 64);",
                "        SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
                "        for (uint32_t k = 0; k < 64; ++k) acc += w.GetValue(k);",
                "        for (uint32_t k = 0; k < 64; ++k) w.SetValue(k, 0.0f);",
                "        SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);"]
    return ["        LocalTensor<float> w = workBuf.Get<float>();",
            "        ReduceSum(w, y, w[8], n);",
            "        acc += ScalarOf(w);"]


def _finish(plan: Plan, knobs: Knobs) -> list[str]:
    scale = f"{plan.scale!r}f" if "e" not in repr(plan.scale) else f"{plan.scale:.9e}f"
    out = ["    __aicore__ inline void Finish() {",
           "        LocalTensor<float> r = outQ.AllocTensor<float>();",
           f"        r.SetValue(0, acc * {scale});",
           "        for (uint32_t k = 1; k < 8; ++k) r.SetValue(k, 0.0f);",
           "        outQ.EnQue(r);",
           "        LocalTensor<float> o = outQ.DeQue<float>();"]
    atomic = knobs.blocks > 1 and knobs.atomic
    if atomic:
        out.append("        SetAtomicAdd<float>();")
    if knobs.unaligned:
        out.append("        DataCopy(yGm, o, 1);")
    else:
        out.append("        DataCopyExtParams p{1, 4, 0, 0, 0};")
        out.append("        DataCopyPad(yGm, o, p);")
    if atomic:
        out.append("        SetAtomicNone();")
    out += ["        outQ.FreeTensor(o);", "    }"]
    return out


# --------------------------------------------------------------------------- rows
_ROW_OUT = {"softmax", "log_softmax", "rmsnorm", "l1norm", "l2norm"}


def render_rows(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    rec = plan.recipe
    row_out = rec in _ROW_OUT
    c8 = (plan.cols + 7) // 8 * 8 if T == "float" else (plan.cols + 15) // 16 * 16
    work_elems = max(16, ((plan.cols + 63) // 64 + 15) // 8 * 8)
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t BUFN = {knobs.bufn};", _copy_helpers(T, knobs), _SCALAR_OF]
    c = ["class KernelRows {", "public:",
         "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t rows, uint32_t cols) {"]
    if knobs.blocks == 1 and not knobs.use_block_idx:
        c.append("        r0 = 0; nr = rows;")
    else:
        c.append("        uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = rows / nb, rem = rows % nb;")
        if knobs.no_tail:
            c.append("        r0 = bi * per; nr = per;")
        else:
            c.append("        r0 = bi * per + (bi < rem ? bi : rem); nr = per + (bi < rem ? 1 : 0);")
    row_bytes = c8 * (2 if T == "half" else 4)
    if knobs.ub_huge:
        row_bytes *= 8
    c += ["        this->cols = cols;",
          "        xGm.SetGlobalBuffer((__gm__ T*)x);",
          "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          f"        pipe.InitBuffer(inQ, BUFN, {row_bytes});"]
    if row_out:
        c.append(f"        pipe.InitBuffer(outQ, BUFN, {row_bytes});")
    else:
        c.append(f"        pipe.InitBuffer(outQ, 1, {((plan.rows + 7) // 8 * 8 + 16) * 4});")
    if cast:
        c.append(f"        pipe.InitBuffer(fBuf, {2 * c8 * 4});")
    c.append(f"        pipe.InitBuffer(workBuf, {work_elems * 4 + 64});")
    if plan.weight_attr:
        c.append("        wGm.SetGlobalBuffer((__gm__ float*)w, cols);")
        c.append(f"        pipe.InitBuffer(wBuf, {c8 * 4});")
    c.append("    }")
    c.append("    __aicore__ inline void Process() {")
    c.append("        LocalTensor<float> red = workBuf.Get<float>();")
    if plan.weight_attr:
        c += ["        LocalTensor<float> wt = wBuf.Get<float>();", "        Load(wt, wGm, 0, cols);",
              "        SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);"]
    if not row_out:
        c.append("        LocalTensor<T> res = outQ.AllocTensor<T>();")
    c.append("        for (uint32_t i = 0; i < nr; ++i) {")
    c.append("            uint64_t off = uint64_t(r0 + i) * cols;")
    c.append("            LocalTensor<T> l = inQ.AllocTensor<T>();")
    c.append("            Load(l, xGm, off, cols);")
    if not knobs.skip_enque:
        c.append("            inQ.EnQue(l);")
    c.append("            LocalTensor<T> h = inQ.DeQue<T>();")
    if cast:
        c += ["            LocalTensor<float> fb = fBuf.Get<float>();",
              "            LocalTensor<float> x = fb;", f"            LocalTensor<float> y = fb[{c8}];",
              "            Cast(x, h, RoundMode::CAST_NONE, cols);"]
    else:
        c.append("            LocalTensor<T> x = h;")
        c.append("            LocalTensor<T> y = " + ("outQ.AllocTensor<T>();" if row_out else "h;"))
    c += ["            " + ln for ln in _row_recipe(plan, knobs)]
    if row_out:
        if cast:
            c += ["            LocalTensor<T> yo = outQ.AllocTensor<T>();",
                  "            Cast(yo, y, RoundMode::CAST_ROUND, cols);", "            outQ.EnQue(yo);"]
        else:
            c.append("            outQ.EnQue(y);")
        if not knobs.leak:
            c.append("            inQ.FreeTensor(h);")
        c += ["            LocalTensor<T> o = outQ.DeQue<T>();", "            Store(yGm, off, o, cols);",
              "            outQ.FreeTensor(o);"]
    else:
        val = "(T)v" if T == "half" else "v"
        c.append(f"            res.SetValue(i, {val});")
        if not knobs.leak:
            c.append("            inQ.FreeTensor(h);")
    c.append("        }")
    if not row_out:
        c += ["        outQ.EnQue(res);", "        LocalTensor<T> o = outQ.DeQue<T>();",
              "        if (nr > 0) Store(yGm, r0, o, nr);", "        outQ.FreeTensor(o);"]
    c.append("    }")
    c += ["private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, BUFN> inQ;",
          f"    TQue<QuePosition::VECOUT, {'BUFN' if row_out else 1}> outQ;",
          "    TBuf<QuePosition::VECCALC> workBuf, fBuf, wBuf;",
          "    GlobalTensor<T> xGm, yGm;", "    GlobalTensor<float> wGm;", "    uint32_t r0, nr, cols;", "};"]
    src.append("\n".join(c))
    src.append("extern \"C\" __global__ __aicore__ void rows_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t rows, uint32_t cols) {\n"
               "    KernelRows op;\n    op.Init(x, w, y, rows, cols);\n    op.Process();\n}")
    src.append(f"extern \"C\" void rows_do(uint8_t* x, uint8_t* w, uint8_t* y, uint32_t rows, uint32_t cols) {{\n"
               f"    uint32_t blocks = rows < {knobs.blocks} ? rows : {knobs.blocks};\n"
               f"    rows_kernel<<<blocks, nullptr, nullptr>>>(x, w, y, rows, cols);\n}}")
    out = "torch.empty_like(x0)" if row_out else f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    wexpr = f"self.{plan.weight_attr}" if plan.weight_attr else "x0"
    call = f"self.mod.rows_do(x0, {wexpr}, y, {plan.rows}, {plan.cols})"
    return _py(plan, knobs, "\n".join(src), call, out)


def _reduce_lines(kind: str, src: str, knobs: Knobs) -> list[str]:
    """Reduce `src` (cols elements) to the float `v`."""
    if knobs.bad_workspace:   # an accumulator that was never initialised
        op = {"sum": "Add", "max": "Max", "min": "Min"}[kind]
        return ["LocalTensor<float> acc = red;",
                f"for (uint32_t k = 0; k < cols; k += 64) {op}(acc, acc, {src}[k], cols - k < 64 ? cols - k : 64);",
                "SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
                "float v = acc.GetValue(0);",
                f"for (uint32_t k = 1; k < 64 && k < cols; ++k) {{ float u = acc.GetValue(k); v = "
                + {"sum": "v + u", "max": "u > v ? u : v", "min": "u < v ? u : v"}[kind] + "; }",
                "SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);"]
    api = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin"}[kind]
    return [f"{api}(red, {src}, red[16], cols);", "float v = ScalarOf(red);"]


def _row_recipe(plan: Plan, knobs: Knobs) -> list[str]:
    rec = plan.recipe
    c = consts_fmt(plan)
    if knobs.ops_overload:
        return ["float v = 0.0f;", "y = x / x.sum();   // normalise the row"]
    if rec in ("softmax", "log_softmax"):
        out = _reduce_lines("max", "x", knobs)
        out += ["float m = v;", "Adds(y, x, -m, cols);", "Exp(y, y, cols);"]
        out += [ln.replace("float v", "float v2").replace("(v", "(v2").replace("v = ", "v2 = ").replace("v +", "v2 +")
                for ln in _reduce_lines("sum", "y", knobs)] if knobs.bad_workspace else \
            ["ReduceSum(red, y, red[16], cols);", "float v2 = ScalarOf(red);"]
        if rec == "softmax":
            out.append("Muls(y, y, 1.0f / v2, cols);")
        else:
            out += ["Duplicate(red, v2, 8);", "Ln(red, red, 8);", "float ls = ScalarOf(red);",
                    "Adds(y, x, -(m + ls), cols);"]
        return out
    if rec in ("rsum", "rmean", "rmax", "rmin", "rprod"):
        kind = rec[1:]
        k = {"mean": "sum"}.get(kind, kind)
        if k not in ("sum", "max", "min"):
            return ["float v = 1.0f;", "for (uint32_t k = 0; k < cols; ++k) v *= x.GetValue(k);"]
        out = _reduce_lines(k, "x", knobs)
        if kind == "mean":
            out.append(f"v = v * {1.0 / plan.cols!r}f;")
        return out
    if rec == "rmsnorm":
        out = ["Mul(y, x, x, cols);"] + _reduce_lines("sum", "y", knobs)
        out += [f"float ms = v * {1.0 / plan.cols!r}f + {c['a']};",
                "Duplicate(red, ms, 8);", "Rsqrt(red, red, 8);", "float rs = ScalarOf(red);",
                "Muls(y, x, rs, cols);"]
        if plan.weight_attr:
            out.append("Mul(y, y, wt, cols);")
        return out
    if rec == "l1norm":
        return ["Abs(y, x, cols);"] + _reduce_lines("sum", "y", knobs) + ["Muls(y, x, 1.0f / v, cols);"]
    if rec == "l2norm":
        return ["Mul(y, x, x, cols);"] + _reduce_lines("sum", "y", knobs) + [
            "Duplicate(red, v, 8);", "Rsqrt(red, red, 8);", "float rs = ScalarOf(red);", "Muls(y, x, rs, cols);"]
    return ["float v = 0.0f;"]


# --------------------------------------------------------------------------- middle-dim reduction
def render_midreduce(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    op = {"sum": "Add", "mean": "Add", "max": "Max", "min": "Min", "prod": "Mul"}[plan.recipe]
    inner = plan.cols
    it = min(inner, knobs.tile)
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t BUFN = {knobs.bufn};", _copy_helpers(T, knobs)]
    c = ["class KernelMid {", "public:",
         "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t outer, uint32_t red, uint32_t inner) {"]
    if knobs.blocks == 1 and not knobs.use_block_idx:
        c.append("        o0 = 0; no = outer;")
    else:
        c.append("        uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = outer / nb, rem = outer % nb;")
        c.append("        o0 = bi * per + (bi < rem ? bi : rem); no = per + (bi < rem ? 1 : 0);" if not knobs.no_tail
                 else "        o0 = bi * per; no = per;")
    ib = it * 4 * (8 if knobs.ub_huge else 1)
    c += ["        this->red = red; this->inner = inner;",
          "        xGm.SetGlobalBuffer((__gm__ T*)x);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          f"        pipe.InitBuffer(inQ, BUFN, {ib});", f"        pipe.InitBuffer(outQ, 1, {ib});",
          f"        pipe.InitBuffer(accBuf, {ib});", "    }",
          "    __aicore__ inline void Process() {",
          "        LocalTensor<T> acc = accBuf.Get<T>();",
          "        for (uint32_t o = o0; o < o0 + no; ++o) {",
          f"            for (uint32_t i0 = 0; i0 < inner; i0 += {it}) {{",
          f"                uint32_t n = inner - i0 < {it} ? inner - i0 : {it};"]
    if knobs.bad_workspace:
        c.append("                for (uint32_t r = 0; r < red; ++r) {")
    else:
        c.append("                for (uint32_t r = 0; r < red; ++r) {")
    c += ["                    LocalTensor<T> l = inQ.AllocTensor<T>();",
          "                    Load(l, xGm, (uint64_t(o) * red + r) * inner + i0, n);"]
    if not knobs.skip_enque:
        c.append("                    inQ.EnQue(l);")
    c.append("                    LocalTensor<T> h = inQ.DeQue<T>();")
    if knobs.bad_workspace:
        c.append(f"                    {op}(acc, acc, h, n);")
    else:
        c.append(f"                    if (r == 0) Adds(acc, h, (T)0, n); else {op}(acc, acc, h, n);")
    if not knobs.leak:
        c.append("                    inQ.FreeTensor(h);")
    c.append("                }")
    c.append("                LocalTensor<T> ob = outQ.AllocTensor<T>();")
    if plan.recipe == "mean":
        c.append(f"                Muls(ob, acc, (T){plan.scale!r}, n);")
    else:
        c.append("                Adds(ob, acc, (T)0, n);")
    c += ["                outQ.EnQue(ob);", "                LocalTensor<T> q = outQ.DeQue<T>();",
          "                Store(yGm, uint64_t(o) * inner + i0, q, n);", "                outQ.FreeTensor(q);",
          "            }", "        }", "    }",
          "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, BUFN> inQ;", "    TQue<QuePosition::VECOUT, 1> outQ;",
          "    TBuf<QuePosition::VECCALC> accBuf;", "    GlobalTensor<T> xGm, yGm;", "    uint32_t o0, no, red, inner;", "};"]
    src.append("\n".join(c))
    src.append("extern \"C\" __global__ __aicore__ void mid_kernel(GM_ADDR x, GM_ADDR y, uint32_t outer, uint32_t red, uint32_t inner) {\n"
               "    KernelMid op;\n    op.Init(x, y, outer, red, inner);\n    op.Process();\n}")
    src.append(f"extern \"C\" void mid_do(uint8_t* x, uint8_t* y, uint32_t outer, uint32_t red, uint32_t inner) {{\n"
               f"    uint32_t blocks = outer < {knobs.blocks} ? outer : {knobs.blocks};\n"
               f"    mid_kernel<<<blocks, nullptr, nullptr>>>(x, y, outer, red, inner);\n}}")
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.mid_do(x0, y, {plan.rows}, {plan.red}, {plan.cols})", out)


# --------------------------------------------------------------------------- unsupported
def render_unsupported(plan: Plan, knobs: Knobs) -> str:
    """Plausible code for a task the coder has no template for: it reaches for a high-level
    API the vector-only simulator does not provide (fails as compile_error)."""
    api = {"matmul": "Matmul", "pooling": "MaxPool", "scan": "CumSum"}.get(plan.note.split()[-1] if plan.note else "",
                                                                          "Compute" + plan.recipe.split("+")[0].title().replace("_", ""))
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    src = (_HEADER +
           "extern \"C\" __global__ __aicore__ void op_kernel(GM_ADDR x0, GM_ADDR y, uint32_t total) {\n"
           "    TPipe pipe;\n"
           "    GlobalTensor<float> xGm, yGm;\n"
           "    xGm.SetGlobalBuffer((__gm__ float*)x0, total);\n"
           "    yGm.SetGlobalBuffer((__gm__ float*)y, total);\n"
           f"    {api}(yGm, xGm, total);   // high-level operator\n"
           "}\n"
           "extern \"C\" void op_do(uint8_t* x0, uint8_t* y, uint32_t total) {\n"
           "    op_kernel<<<8, nullptr, nullptr>>>(x0, y, total);\n}")
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, src, "self.mod.op_do(x0, y, x0.numel())", out)


def render_ascendc(plan: Plan, knobs: Knobs) -> str:
    """The answer source for ``plan`` with ``knobs`` (faults included)."""
    if plan.kind == "unsupported":
        return render_unsupported(plan, knobs)
    if knobs.cuda:
        out = {"map": "torch.empty_like(x0)", "reduceall": "torch.empty((), dtype=x0.dtype)"}.get(
            plan.kind, f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)")
        return _cuda(plan, knobs, out)
    if plan.kind == "map":
        return render_map(plan, knobs)
    if plan.kind == "reduceall":
        return render_map(plan, knobs, reduce_all=True)
    if plan.kind == "rows":
        return render_rows(plan, knobs)
    if plan.kind == "midreduce":
        return render_midreduce(plan, knobs)
    from kernel_gym.llm.synthetic import ascendc_templates_extra as ax
    if plan.kind in ("scan", "pool", "norm", "matmul"):
        return {"scan": ax.render_scan, "pool": ax.render_pool, "norm": ax.render_norm, "matmul": ax.render_matmul}[plan.kind](plan, knobs)
    raise ValueError(f"unknown plan kind {plan.kind}")
