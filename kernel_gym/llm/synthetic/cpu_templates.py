"""C++ templates of the synthetic coder for the ``cpu`` backend (``load_cpp`` answers).

Simpler than the Ascend C ones: two faults apply. Without ``kernel_structure`` the entry point
lacks ``extern "C"`` (the loader finds nothing to bind: init_error); without ``tail_handling``
loops are unrolled by 8 with no remainder loop (tail-shape tasks: numerical_mismatch). Half
tensors are widened to float per element (``_Float16``).
"""

from __future__ import annotations

import textwrap

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, _fmt, consts_fmt
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_cpu"]


def _wrap(plan: Plan, cpp: str, call: str, out_expr: str) -> str:
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    sig = f", {plan.init_sig}" if plan.init_sig else ""
    body = textwrap.indent(textwrap.dedent(plan.init_src), " " * 8) if plan.init_src else ""
    return f'''"""C++ kernel for {plan.recipe} (written by the synthetic coder)."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
{cpp}
"""


class ModelNew(nn.Module):
    def __init__(self{sig}):
        super().__init__()
{body}
        self.lib = load_cpp(CPP)

    def forward(self, {args}):
        y = {out_expr}
        {call}
        return y
'''


def _loop(knobs: Knobs, n: str, body: str, indent: str = "    ") -> str:
    if knobs.no_tail:  # unrolled by 8, no remainder loop
        return (
            f"{indent}for (int64_t i0 = 0; i0 < {n} / 8 * 8; i0 += 8)\n"
            f"{indent}    for (int64_t i = i0; i < i0 + 8; ++i) {body}\n"
        )
    return f"{indent}for (int64_t i = 0; i < {n}; ++i) {body}\n"


def render_cpu(plan: Plan, knobs: Knobs) -> str:
    T = "_Float16" if plan.dtype == "half" else "float"
    ext = "" if knobs.cuda else 'extern "C" '
    inc = "#include <cmath>\n#include <cstdint>\n"
    c = consts_fmt(plan)
    ptrs = ", ".join(f"const {T}* __restrict x{i}p" for i in range(plan.n_inputs))
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    loads = " ".join(f"float x{i} = (float)x{i}p[i];" for i in range(plan.n_inputs))
    if plan.kind == "map":
        expr = MAP_RECIPES[plan.recipe][1].format(**c)
        cpp = (
            inc + f"{ext}void map_kernel({ptrs}, {T}* __restrict y, int64_t n) {{\n"
            "    #pragma omp parallel for schedule(static)\n"
            + _loop(knobs, "n", f"{{ {loads} y[i] = ({T})({expr}); }}")
            + "}"
        )
        return _wrap(plan, cpp, f"self.lib.map_kernel({args}, y, x0.numel())", "torch.empty_like(x0)")
    if plan.kind == "reduceall":
        expr = MAP_RECIPES[plan.recipe][1].format(**c)
        cpp = (
            inc + f"{ext}void red_kernel({ptrs}, {T}* __restrict y, int64_t n) {{\n"
            "    double acc = 0.0;\n    #pragma omp parallel for reduction(+:acc) schedule(static)\n"
            + _loop(knobs, "n", f"{{ {loads} acc += ({expr}); }}")
            + f"    y[0] = ({T})(acc * {plan.scale!r});\n}}"
        )
        return _wrap(plan, cpp, f"self.lib.red_kernel({args}, y, x0.numel())", "torch.empty((), dtype=x0.dtype)")
    if plan.kind == "rows":
        rec = plan.recipe
        red = {
            "rsum": "s += v;",
            "rmean": "s += v;",
            "rmax": "s = v > s ? v : s;",
            "rmin": "s = v < s ? v : s;",
            "rprod": "s *= v;",
            "softmax": "s = v > s ? v : s;",
            "log_softmax": "s = v > s ? v : s;",
            "rmsnorm": "s += v * v;",
            "l1norm": "s += fabsf(v);",
            "l2norm": "s += v * v;",
        }[rec]
        init = {
            "rmax": "-INFINITY",
            "rmin": "INFINITY",
            "rprod": "1.0",
            "softmax": "-INFINITY",
            "log_softmax": "-INFINITY",
        }.get(rec, "0.0")
        lp = _loop(knobs, "cols", f"{{ float v = (float)row[i]; {red} }}", "        ")
        post = {
            "rsum": "y[r] = (T)s;",
            "rmean": "y[r] = (T)(s / cols);",
            "rmax": "y[r] = (T)s;",
            "rmin": "y[r] = (T)s;",
            "rprod": "y[r] = (T)s;",
        }
        if rec in post:
            tail = f"        {post[rec]}\n"
        elif rec in ("softmax", "log_softmax"):
            tail = (
                "        double z = 0.0;\n"
                "        for (int64_t i = 0; i < cols; ++i) z += expf((float)row[i] - s);\n"
                + (
                    "        for (int64_t i = 0; i < cols; ++i) out[i] = (T)(expf((float)row[i] - s) / z);\n"
                    if rec == "softmax"
                    else "        for (int64_t i = 0; i < cols; ++i) out[i] = (T)((float)row[i] - s - "
                    "logf((float)z));\n"
                )
            )
        else:
            scale = {
                "rmsnorm": f"1.0f / sqrtf(s / cols + {c['a']})",
                "l1norm": "1.0f / s",
                "l2norm": "1.0f / sqrtf(s)",
            }[rec]
            wmul = " * w[i]" if plan.weight_attr else ""
            tail = (
                f"        float k = {scale};\n"
                f"        for (int64_t i = 0; i < cols; ++i) out[i] = (T)((float)row[i] * k{wmul});\n"
            )
        cpp = (
            inc + f"using T = {T};\n{ext}void rows_kernel(const T* __restrict x, const float* __restrict w, "
            "T* __restrict y, int64_t rows, int64_t cols) {\n"
            "    (void)w;\n    #pragma omp parallel for schedule(static)\n"
            "    for (int64_t r = 0; r < rows; ++r) {\n"
            "        const T* row = x + r * cols; T* out = y + r * cols; (void)out;\n"
            f"        double s = {init};\n" + lp + tail + "    }\n}"
        )
        row_out = rec in ("softmax", "log_softmax", "rmsnorm", "l1norm", "l2norm")
        out = "torch.empty_like(x0)" if row_out else f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
        w = f"self.{plan.weight_attr}.detach()" if plan.weight_attr else "torch.empty(1)"
        if plan.weight_attr:
            call = f"self.lib.rows_kernel(x0, self._w, y, {plan.rows}, {plan.cols})"
            wrapped = _wrap(plan, cpp, call, out)
            return wrapped.replace(
                "        self.lib = load_cpp(CPP)",
                f"        self._w = {w}.contiguous()\n        self.lib = load_cpp(CPP)",
            )
        return _wrap(plan, cpp, f"self.lib.rows_kernel(x0, self._w, y, {plan.rows}, {plan.cols})", out).replace(
            "        self.lib = load_cpp(CPP)", f"        self._w = {w}\n        self.lib = load_cpp(CPP)"
        )
    if plan.kind == "midreduce":
        op = {"sum": "a + v", "mean": "a + v", "max": "v > a ? v : a", "min": "v < a ? v : a", "prod": "a * v"}[
            plan.recipe
        ]
        scale = f" * {plan.scale!r}" if plan.recipe == "mean" else ""
        cpp = (
            inc + f"using T = {T};\n{ext}void mid_kernel(const T* __restrict x, T* __restrict y, int64_t outer, "
            "int64_t red, int64_t inner) {\n    #pragma omp parallel for schedule(static)\n"
            "    for (int64_t o = 0; o < outer; ++o)\n"
            "        for (int64_t i = 0; i < inner; ++i) {\n"
            "            float a = (float)x[o * red * inner + i];\n"
            "            for (int64_t r = 1; r < red; ++r) { float v = (float)x[(o * red + r) * inner + i]; a = "
            + op
            + "; }\n"
            f"            y[o * inner + i] = (T)(a{scale});\n        }}\n}}"
        )
        out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
        return _wrap(plan, cpp, f"self.lib.mid_kernel(x0, y, {plan.rows}, {plan.red}, {plan.cols})", out)
    if plan.kind in ("scan", "pool", "norm", "matmul"):
        return _render_structured(plan, knobs)
    # unsupported: reaches for a library the sandbox does not have
    cpp = (
        inc
        + "#include <mkl.h>\n"
        + f"{ext}void op_kernel(const float* x, float* y, int64_t n) {{ cblas_scopy(n, x, 1, y, 1); }}"
    )
    return _wrap(
        plan, cpp, "self.lib.op_kernel(x0, y, x0.numel())", f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    )


# Structured families: scans, pooling, statistics normalisations and matmuls.
_INC = "#include <cmath>\n#include <cstdint>\n"


def _scan(plan: Plan, knobs: Knobs, T: str, ext: str) -> str:
    rec = plan.recipe
    init = "1.0" if rec == "cumprod" else "0.0"
    v = "(double)x[b + i] * (double)m[b + i]" if rec == "masked" else "(double)x[b + i]"
    if rec == "exclusive":
        body = f"{{ double v = {v}; y[b + i] = (T)c; c += v; }}"
    elif rec == "cumprod":
        body = f"{{ c *= {v}; y[b + i] = (T)c; }}"
    else:
        body = f"{{ c += {v}; y[b + i] = (T)c; }}"
    if rec == "revcumsum":
        loop = f"        for (int64_t i = cols - 1; i >= 0; --i) {body}\n"
    else:
        loop = _loop(knobs, "cols", body, "        ")
    mp = "const bool* __restrict m, " if rec == "masked" else ""
    cpp = (
        _INC + f"using T = {T};\n{ext}void scan_kernel(const T* __restrict x, {mp}T* __restrict y, "
        "int64_t rows, int64_t cols) {\n    #pragma omp parallel for schedule(static)\n"
        "    for (int64_t r = 0; r < rows; ++r) {\n        int64_t b = r * cols;\n"
        f"        double c = {init};\n" + loop + "    }\n}"
    )
    mask = "x1, " if rec == "masked" else ""
    return _wrap(plan, cpp, f"self.lib.scan_kernel(x0, {mask}y, {plan.rows}, {plan.cols})", "torch.empty_like(x0)")


def _pool(plan: Plan, knobs: Knobs, T: str, ext: str) -> str:
    e = plan.extra
    consts = "".join(
        f"constexpr int {k} = {e[k]};\n" for k in ("H", "W", "Ho", "Wo", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")
    )
    mx = e["op"] == "max"
    upd = "m = v > m ? v : m;" if mx else "m += v;"
    fin = "m" if mx else f"m * {_fmt(1.0 / e['div'])}"
    jloop = (
        "            for (int j0 = 0; j0 < Wo / 8 * 8; j0 += 8) for (int j = j0; j < j0 + 8; ++j) {\n"
        if knobs.no_tail
        else "            for (int j = 0; j < Wo; ++j) {\n"
    )
    cpp = (
        _INC
        + f"using T = {T};\n{consts}{ext}void pool_kernel(const T* __restrict x, T* __restrict y, int64_t planes) {{\n"
        "    #pragma omp parallel for schedule(static)\n"
        "    for (int64_t p = 0; p < planes; ++p) {\n        const T* xp = x + p * H * W; T* yp = y + p * Ho * Wo;\n"
        "        for (int i = 0; i < Ho; ++i)\n"
        + jloop
        + f"                float m = {'-INFINITY' if mx else '0.0f'};\n"
        "                for (int a = 0; a < KH; ++a) { int ih = i * SH - PH + a * DH; if (ih < 0 || ih >= H) "
        "continue;\n"
        "                    for (int b = 0; b < KW; ++b) { int iw = j * SW - PW + b * DW; if (iw < 0 || iw >= W) "
        "continue;\n"
        f"                        float v = (float)xp[ih * W + iw]; {upd} }} }}\n"
        f"                yp[i * Wo + j] = (T)({fin});\n            }}\n    }}\n}}"
    )
    return _wrap(
        plan,
        cpp,
        f"self.lib.pool_kernel(x0, y, {e['planes']})",
        f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)",
    )


def _norm(plan: Plan, knobs: Knobs, T: str, ext: str) -> str:
    e = plan.extra
    L, S, C, aff = e["L"], e["S"], e["C"], e["affine"]
    eps = _fmt(e["eps"])
    pre = ""
    if e["stats"]:
        G = plan.total // L
        fin = (
            "st[2 * g] = 1.0 / sqrt(s2); st[2 * g + 1] = 0.0;"
            if e["mode"] == "frobenius"
            else f"double mean = s1 / GL, var = s2 / GL - mean * mean; st[2 * g] = 1.0 / sqrt(var + {eps}); st[2 * "
            "g + 1] = -mean * st[2 * g];"
        )
        pre = (
            f"    static double st[{2 * G}];\n    #pragma omp parallel for schedule(static)\n    for (int64_t g = "
            f"0; g < {G}; ++g) {{\n"
            "        const T* xg = x + g * GL; double s1 = 0.0, s2 = 0.0;\n"
            + _loop(knobs, "GL", "{ double v = (double)xg[i]; s1 += v; s2 += v * v; }", "        ")
            + f"        {fin}\n    }}\n"
        )
        stats = "        int64_t g = s * SL / GL; double sc = st[2 * g], sh = st[2 * g + 1];\n"
    else:
        stats = "        double sc = 1.0, sh = 0.0;\n"
    if aff == "chan":
        stats += "        int64_t ch = s % CH; sh = sh * w[ch] + b[ch]; sc = sc * w[ch];\n"
    elif aff == "bn":
        stats += f"        int64_t ch = s % CH; sc = w[ch] / sqrt((double)rv[ch] + {eps}); sh = b[ch] - rm[ch] * sc;\n"
    body = (
        "{ y[s * SL + i] = (T)(((double)x[s * SL + i] * sc + sh) * w[i] + b[i]); }"
        if aff == "elem"
        else "{ y[s * SL + i] = (T)((double)x[s * SL + i] * sc + sh); }"
    )
    cpp = (
        _INC + f"using T = {T};\nconstexpr int64_t GL = {L}, SL = {S}, CH = {C};\n"
        f"{ext}void norm_kernel(const T* __restrict x, const float* w, const float* b, const float* rm, const "
        "float* rv, "
        "T* __restrict y, int64_t segs) {\n    (void)w; (void)b; (void)rm; (void)rv;\n"
        + pre
        + "    #pragma omp parallel for schedule(static)\n    for (int64_t s = 0; s < segs; ++s) {\n"
        + stats
        + _loop(knobs, "SL", body, "        ")
        + "    }\n}"
    )
    a = e["attr"]
    if aff == "bn":
        args = f"self.{a}.weight, self.{a}.bias, self.{a}.running_mean, self.{a}.running_var"
    elif aff in ("elem", "chan"):
        args = f"self.{a}.weight, self.{a}.bias, x0, x0"
    else:
        args = "x0, x0, x0, x0"
    return _wrap(plan, cpp, f"self.lib.norm_kernel(x0, {args}, y, {plan.rows})", "torch.empty_like(x0)")


def _matmul(plan: Plan, knobs: Knobs, T: str, ext: str) -> str:
    e = plan.extra
    M, K, N = e["M"], e["K"], e["N"]
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    if e["mode"] == "diag":
        cpp = (
            _INC
            + f"{ext}void mm_kernel(const float* __restrict a, const float* __restrict b, float* __restrict y) {{\n"
            f"    const int64_t N = {N};\n    #pragma omp parallel for schedule(static)\n    for (int64_t r = 0; r "
            f"< {M}; ++r) {{\n"
            "        float s = a[r];\n" + _loop(knobs, "N", "y[r * N + i] = s * b[r * N + i];", "        ") + "    }\n}"
        )
        return _wrap(plan, cpp, "self.lib.mm_kernel(x0, x1, y)", "torch.empty_like(x1)")
    if e["mode"] == "dot":  # B given as N rows of K
        cpp = (
            _INC
            + f"{ext}void mm_kernel(const float* __restrict a, const float* __restrict b, float* __restrict y) {{\n"
            f"    const int64_t M = {e['batch'] * M}, K = {K}, N = {N};\n    #pragma omp parallel for "
            "schedule(static)\n"
            "    for (int64_t r = 0; r < M; ++r)\n        for (int64_t j = 0; j < N; ++j) {\n"
            "            const float* ar = a + r * K; const float* br = b + j * K; float s = 0.0f;\n"
            + _loop(knobs, "K", "s += ar[i] * br[i];", "            ")
            + "            y[r * N + j] = s;\n        }\n}"
        )
        return _wrap(plan, cpp, "self.lib.mm_kernel(x0, x1, y)", out)
    aidx = "a[(k) * M + i]" if e["ta"] else "a[(bt * M + i) * K + k]"
    boff = "bt * K * N" if e["sbatch"] else "0"
    tril = "        for (int64_t j = i + 1; j < N; ++j) yr[j] = 0.0f;\n" if e["tril"] else ""
    cpp = (
        _INC + f"{ext}void mm_kernel(const float* __restrict a, const float* __restrict b, float* __restrict y) {{\n"
        f"    const int64_t B = {e['batch']}, M = {M}, K = {K}, N = {N};\n    #pragma omp parallel for "
        "schedule(static)\n"
        "    for (int64_t r = 0; r < B * M; ++r) {\n        int64_t bt = r / M, i = r % M; (void)bt;\n"
        "        float* yr = y + r * N;\n        for (int64_t j = 0; j < N; ++j) yr[j] = 0.0f;\n"
        "        for (int64_t k = 0; k < K; ++k) {\n"
        f"            float s = {aidx}; const float* br = b + {boff} + k * N;\n"
        + _loop(knobs, "N", "yr[i] += s * br[i];", "            ")
        + "        }\n"
        + tril
        + "    }\n}"
    )
    return _wrap(plan, cpp, "self.lib.mm_kernel(x0, x1, y)", out)


def _render_structured(plan: Plan, knobs: Knobs) -> str:
    T = "_Float16" if plan.dtype == "half" else "float"
    ext = "" if knobs.cuda else 'extern "C" '
    fn = {"scan": _scan, "pool": _pool, "norm": _norm, "matmul": _matmul}[plan.kind]
    return fn(plan, knobs, T, ext)
