"""Row-wise kernels (softmax, log-softmax, row norms, last-axis reductions) and reductions over a
middle axis.
"""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan, consts_fmt
from kernel_gym.llm.synthetic.ascendc_templates.common import (
    _HEADER,
    _SCALAR_OF,
    _copy_helpers,
    _py,
    _types,
)
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_rows", "render_midreduce"]


_ROW_OUT = {"softmax", "log_softmax", "rmsnorm", "l1norm", "l2norm"}


def render_rows(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    rec = plan.recipe
    row_out = rec in _ROW_OUT
    c8 = (plan.cols + 7) // 8 * 8 if T == "float" else (plan.cols + 15) // 16 * 16
    work_elems = max(16, ((plan.cols + 63) // 64 + 15) // 8 * 8)
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t BUFN = {knobs.bufn};", _copy_helpers(T, knobs), _SCALAR_OF]
    c = [
        "class KernelRows {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t rows, uint32_t cols) {",
    ]
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
    c += [
        "        this->cols = cols;",
        "        xGm.SetGlobalBuffer((__gm__ T*)x);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        f"        pipe.InitBuffer(inQ, BUFN, {row_bytes});",
    ]
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
        c += [
            "        LocalTensor<float> wt = wBuf.Get<float>();",
            "        Load(wt, wGm, 0, cols);",
            "        SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);",
        ]
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
        c += [
            "            LocalTensor<float> fb = fBuf.Get<float>();",
            "            LocalTensor<float> x = fb;",
            f"            LocalTensor<float> y = fb[{c8}];",
            "            Cast(x, h, RoundMode::CAST_NONE, cols);",
        ]
    else:
        c.append("            LocalTensor<T> x = h;")
        c.append("            LocalTensor<T> y = " + ("outQ.AllocTensor<T>();" if row_out else "h;"))
    c += ["            " + ln for ln in _row_recipe(plan, knobs)]
    if row_out:
        if cast:
            c += [
                "            LocalTensor<T> yo = outQ.AllocTensor<T>();",
                "            Cast(yo, y, RoundMode::CAST_ROUND, cols);",
                "            outQ.EnQue(yo);",
            ]
        else:
            c.append("            outQ.EnQue(y);")
        if not knobs.leak:
            c.append("            inQ.FreeTensor(h);")
        c += [
            "            LocalTensor<T> o = outQ.DeQue<T>();",
            "            Store(yGm, off, o, cols);",
            "            outQ.FreeTensor(o);",
        ]
    else:
        val = "(T)v" if T == "half" else "v"
        c.append(f"            res.SetValue(i, {val});")
        if not knobs.leak:
            c.append("            inQ.FreeTensor(h);")
    c.append("        }")
    if not row_out:
        c += [
            "        outQ.EnQue(res);",
            "        LocalTensor<T> o = outQ.DeQue<T>();",
            "        if (nr > 0) Store(yGm, r0, o, nr);",
            "        outQ.FreeTensor(o);",
        ]
    c.append("    }")
    c += [
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, BUFN> inQ;",
        f"    TQue<QuePosition::VECOUT, {'BUFN' if row_out else 1}> outQ;",
        "    TBuf<QuePosition::VECCALC> workBuf, fBuf, wBuf;",
        "    GlobalTensor<T> xGm, yGm;",
        "    GlobalTensor<float> wGm;",
        "    uint32_t r0, nr, cols;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(
        'extern "C" __global__ __aicore__ void rows_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t rows, uint32_t '
        "cols) {\n"
        "    KernelRows op;\n    op.Init(x, w, y, rows, cols);\n    op.Process();\n}"
    )
    src.append(
        f'extern "C" void rows_do(uint8_t* x, uint8_t* w, uint8_t* y, uint32_t rows, uint32_t cols) {{\n'
        f"    uint32_t blocks = rows < {knobs.blocks} ? rows : {knobs.blocks};\n"
        f"    rows_kernel<<<blocks, nullptr, nullptr>>>(x, w, y, rows, cols);\n}}"
    )
    out = "torch.empty_like(x0)" if row_out else f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    wexpr = f"self.{plan.weight_attr}" if plan.weight_attr else "x0"
    call = f"self.mod.rows_do(x0, {wexpr}, y, {plan.rows}, {plan.cols})"
    return _py(plan, knobs, "\n".join(src), call, out)


def _reduce_lines(kind: str, src: str, knobs: Knobs) -> list[str]:
    """Reduce `src` (cols elements) to the float `v`."""
    if knobs.bad_workspace:  # an accumulator that was never initialised
        op = {"sum": "Add", "max": "Max", "min": "Min"}[kind]
        return [
            "LocalTensor<float> acc = red;",
            f"for (uint32_t k = 0; k < cols; k += 64) {op}(acc, acc, {src}[k], cols - k < 64 ? cols - k : 64);",
            "SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
            "float v = acc.GetValue(0);",
            "for (uint32_t k = 1; k < 64 && k < cols; ++k) { float u = acc.GetValue(k); v = "
            + {"sum": "v + u", "max": "u > v ? u : v", "min": "u < v ? u : v"}[kind]
            + "; }",
            "SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);",
        ]
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
        out += (
            [
                ln.replace("float v", "float v2").replace("(v", "(v2").replace("v = ", "v2 = ").replace("v +", "v2 +")
                for ln in _reduce_lines("sum", "y", knobs)
            ]
            if knobs.bad_workspace
            else ["ReduceSum(red, y, red[16], cols);", "float v2 = ScalarOf(red);"]
        )
        if rec == "softmax":
            out.append("Muls(y, y, 1.0f / v2, cols);")
        else:
            out += [
                "Duplicate(red, v2, 8);",
                "Ln(red, red, 8);",
                "float ls = ScalarOf(red);",
                "Adds(y, x, -(m + ls), cols);",
            ]
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
        out += [
            f"float ms = v * {1.0 / plan.cols!r}f + {c['a']};",
            "Duplicate(red, ms, 8);",
            "Rsqrt(red, red, 8);",
            "float rs = ScalarOf(red);",
            "Muls(y, x, rs, cols);",
        ]
        if plan.weight_attr:
            out.append("Mul(y, y, wt, cols);")
        return out
    if rec == "l1norm":
        return ["Abs(y, x, cols);"] + _reduce_lines("sum", "y", knobs) + ["Muls(y, x, 1.0f / v, cols);"]
    if rec == "l2norm":
        return (
            ["Mul(y, x, x, cols);"]
            + _reduce_lines("sum", "y", knobs)
            + ["Duplicate(red, v, 8);", "Rsqrt(red, red, 8);", "float rs = ScalarOf(red);", "Muls(y, x, rs, cols);"]
        )
    return ["float v = 0.0f;"]


def render_midreduce(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    op = {"sum": "Add", "mean": "Add", "max": "Max", "min": "Min", "prod": "Mul"}[plan.recipe]
    inner = plan.cols
    it = min(inner, knobs.tile)
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t BUFN = {knobs.bufn};", _copy_helpers(T, knobs)]
    c = [
        "class KernelMid {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t outer, uint32_t red, uint32_t inner) {",
    ]
    if knobs.blocks == 1 and not knobs.use_block_idx:
        c.append("        o0 = 0; no = outer;")
    else:
        c.append("        uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = outer / nb, rem = outer % nb;")
        c.append(
            "        o0 = bi * per + (bi < rem ? bi : rem); no = per + (bi < rem ? 1 : 0);"
            if not knobs.no_tail
            else "        o0 = bi * per; no = per;"
        )
    ib = it * 4 * (8 if knobs.ub_huge else 1)
    c += [
        "        this->red = red; this->inner = inner;",
        "        xGm.SetGlobalBuffer((__gm__ T*)x);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        f"        pipe.InitBuffer(inQ, BUFN, {ib});",
        f"        pipe.InitBuffer(outQ, 1, {ib});",
        f"        pipe.InitBuffer(accBuf, {ib});",
        "    }",
        "    __aicore__ inline void Process() {",
        "        LocalTensor<T> acc = accBuf.Get<T>();",
        "        for (uint32_t o = o0; o < o0 + no; ++o) {",
        f"            for (uint32_t i0 = 0; i0 < inner; i0 += {it}) {{",
        f"                uint32_t n = inner - i0 < {it} ? inner - i0 : {it};",
    ]
    if knobs.bad_workspace:
        c.append("                for (uint32_t r = 0; r < red; ++r) {")
    else:
        c.append("                for (uint32_t r = 0; r < red; ++r) {")
    c += [
        "                    LocalTensor<T> l = inQ.AllocTensor<T>();",
        "                    Load(l, xGm, (uint64_t(o) * red + r) * inner + i0, n);",
    ]
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
    c += [
        "                outQ.EnQue(ob);",
        "                LocalTensor<T> q = outQ.DeQue<T>();",
        "                Store(yGm, uint64_t(o) * inner + i0, q, n);",
        "                outQ.FreeTensor(q);",
        "            }",
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, BUFN> inQ;",
        "    TQue<QuePosition::VECOUT, 1> outQ;",
        "    TBuf<QuePosition::VECCALC> accBuf;",
        "    GlobalTensor<T> xGm, yGm;",
        "    uint32_t o0, no, red, inner;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(
        'extern "C" __global__ __aicore__ void mid_kernel(GM_ADDR x, GM_ADDR y, uint32_t outer, uint32_t red, '
        "uint32_t inner) {\n"
        "    KernelMid op;\n    op.Init(x, y, outer, red, inner);\n    op.Process();\n}"
    )
    src.append(
        f'extern "C" void mid_do(uint8_t* x, uint8_t* y, uint32_t outer, uint32_t red, uint32_t inner) {{\n'
        f"    uint32_t blocks = outer < {knobs.blocks} ? outer : {knobs.blocks};\n"
        f"    mid_kernel<<<blocks, nullptr, nullptr>>>(x, y, outer, red, inner);\n}}"
    )
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.mid_do(x0, y, {plan.rows}, {plan.red}, {plan.cols})", out)
