"""C++ templates of the synthetic coder for the ``cpu`` backend (``load_cpp`` answers).

Simpler than the Ascend C ones: two faults apply. Without ``kernel_structure`` the entry point
lacks ``extern "C"`` (the loader finds nothing to bind: init_error); without ``tail_handling``
loops are unrolled by 8 with no remainder loop (tail-shape tasks: numerical_mismatch). Half
tensors are widened to float per element (``_Float16``).
"""

from __future__ import annotations

import textwrap

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, consts_fmt
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
    if knobs.no_tail:   # unrolled by 8, no remainder loop
        return (f"{indent}for (int64_t i0 = 0; i0 < {n} / 8 * 8; i0 += 8)\n"
                f"{indent}    for (int64_t i = i0; i < i0 + 8; ++i) {body}\n")
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
        cpp = (inc + f"{ext}void map_kernel({ptrs}, {T}* __restrict y, int64_t n) {{\n"
               "    #pragma omp parallel for schedule(static)\n"
               + _loop(knobs, "n", f"{{ {loads} y[i] = ({T})({expr}); }}") + "}")
        return _wrap(plan, cpp, f"self.lib.map_kernel({args}, y, x0.numel())", "torch.empty_like(x0)")
    if plan.kind == "reduceall":
        expr = MAP_RECIPES[plan.recipe][1].format(**c)
        cpp = (inc + f"{ext}void red_kernel({ptrs}, {T}* __restrict y, int64_t n) {{\n"
               "    double acc = 0.0;\n    #pragma omp parallel for reduction(+:acc) schedule(static)\n"
               + _loop(knobs, "n", f"{{ {loads} acc += ({expr}); }}")
               + f"    y[0] = ({T})(acc * {plan.scale!r});\n}}")
        return _wrap(plan, cpp, f"self.lib.red_kernel({args}, y, x0.numel())", "torch.empty((), dtype=x0.dtype)")
    if plan.kind == "rows":
        rec = plan.recipe
        red = {"rsum": "s += v;", "rmean": "s += v;", "rmax": "s = v > s ? v : s;", "rmin": "s = v < s ? v : s;",
               "rprod": "s *= v;", "softmax": "s = v > s ? v : s;", "log_softmax": "s = v > s ? v : s;",
               "rmsnorm": "s += v * v;", "l1norm": "s += fabsf(v);", "l2norm": "s += v * v;"}[rec]
        init = {"rmax": "-INFINITY", "rmin": "INFINITY", "rprod": "1.0", "softmax": "-INFINITY",
                "log_softmax": "-INFINITY"}.get(rec, "0.0")
        lp = _loop(knobs, "cols", f"{{ float v = (float)row[i]; {red} }}", "        ")
        post = {"rsum": "y[r] = (T)s;", "rmean": "y[r] = (T)(s / cols);", "rmax": "y[r] = (T)s;",
                "rmin": "y[r] = (T)s;", "rprod": "y[r] = (T)s;"}
        if rec in post:
            tail = f"        {post[rec]}\n"
        elif rec in ("softmax", "log_softmax"):
            tail = ("        double z = 0.0;\n"
                    "        for (int64_t i = 0; i < cols; ++i) z += expf((float)row[i] - s);\n"
                    + ("        for (int64_t i = 0; i < cols; ++i) out[i] = (T)(expf((float)row[i] - s) / z);\n"
                       if rec == "softmax" else
                       "        for (int64_t i = 0; i < cols; ++i) out[i] = (T)((float)row[i] - s - logf((float)z));\n"))
        else:
            scale = {"rmsnorm": f"1.0f / sqrtf(s / cols + {c['a']})", "l1norm": "1.0f / s",
                     "l2norm": "1.0f / sqrtf(s)"}[rec]
            wmul = " * w[i]" if plan.weight_attr else ""
            tail = (f"        float k = {scale};\n"
                    f"        for (int64_t i = 0; i < cols; ++i) out[i] = (T)((float)row[i] * k{wmul});\n")
        cpp = (inc + f"using T = {T};\n{ext}void rows_kernel(const T* __restrict x, const float* __restrict w, "
               "T* __restrict y, int64_t rows, int64_t cols) {\n"
               "    (void)w;\n    #pragma omp parallel for schedule(static)\n"
               "    for (int64_t r = 0; r < rows; ++r) {\n"
               "        const T* row = x + r * cols; T* out = y + r * cols; (void)out;\n"
               f"        double s = {init};\n" + lp + tail + "    }\n}")
        row_out = rec in ("softmax", "log_softmax", "rmsnorm", "l1norm", "l2norm")
        out = "torch.empty_like(x0)" if row_out else f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
        w = f"self.{plan.weight_attr}.detach()" if plan.weight_attr else "torch.empty(1)"
        if plan.weight_attr:
            call = f"self.lib.rows_kernel(x0, self._w, y, {plan.rows}, {plan.cols})"
            wrapped = _wrap(plan, cpp, call, out)
            return wrapped.replace("        self.lib = load_cpp(CPP)",
                                   f"        self._w = {w}.contiguous()\n        self.lib = load_cpp(CPP)")
        return _wrap(plan, cpp, f"self.lib.rows_kernel(x0, self._w, y, {plan.rows}, {plan.cols})", out).replace(
            "        self.lib = load_cpp(CPP)", f"        self._w = {w}\n        self.lib = load_cpp(CPP)")
    if plan.kind == "midreduce":
        op = {"sum": "a + v", "mean": "a + v", "max": "v > a ? v : a", "min": "v < a ? v : a", "prod": "a * v"}[plan.recipe]
        scale = f" * {plan.scale!r}" if plan.recipe == "mean" else ""
        cpp = (inc + f"using T = {T};\n{ext}void mid_kernel(const T* __restrict x, T* __restrict y, int64_t outer, "
               "int64_t red, int64_t inner) {\n    #pragma omp parallel for schedule(static)\n"
               "    for (int64_t o = 0; o < outer; ++o)\n"
               "        for (int64_t i = 0; i < inner; ++i) {\n"
               "            float a = (float)x[o * red * inner + i];\n"
               "            for (int64_t r = 1; r < red; ++r) { float v = (float)x[(o * red + r) * inner + i]; a = " + op + "; }\n"
               f"            y[o * inner + i] = (T)(a{scale});\n        }}\n}}")
        out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
        return _wrap(plan, cpp, f"self.lib.mid_kernel(x0, y, {plan.rows}, {plan.red}, {plan.cols})", out)
    if plan.kind in ("scan", "pool", "norm", "matmul"):
        from kernel_gym.llm.synthetic.cpu_templates_extra import render_cpu_extra
        return render_cpu_extra(plan, knobs)
    # unsupported: reaches for a library the sandbox does not have
    cpp = inc + "#include <mkl.h>\n" + f"{ext}void op_kernel(const float* x, float* y, int64_t n) {{ cblas_scopy(n, x, 1, y, 1); }}"
    return _wrap(plan, cpp, "self.lib.op_kernel(x0, y, x0.numel())",
                 f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)")
