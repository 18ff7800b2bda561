"""What the coder writes for a task it lacks the skill for: CUDA where Ascend C was asked for, or a
high-level API the simulator does not provide (both fail, as a weak model's answer would).
"""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, consts_fmt
from kernel_gym.llm.synthetic.ascendc_templates.common import _HEADER, _py
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_cuda", "render_unsupported"]


def render_cuda(plan: Plan, knobs: Knobs, out_expr: str) -> str:
    """What a coder without the Ascend C kernel structure writes: a CUDA kernel."""
    T = "half" if plan.dtype == "half" else "float"
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    ins = ", ".join(f"const {T}* x{i}" for i in range(plan.n_inputs))
    _l, expr, _n, _t = MAP_RECIPES.get(plan.recipe, ([], "x0", (), 0))
    expr = expr.replace("x0", "x0[i]").replace("x1", "x1[i]").replace("x2", "x2[i]").format(**consts_fmt(plan))
    src = (
        f'#include "kernel_operator.h"\n'
        f"__global__ void kernel({ins}, {T}* y, int n) {{\n"
        f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) y[i] = {expr};\n}}\n"
        f'extern "C" void k_do({", ".join(f"uint8_t* x{i}" for i in range(plan.n_inputs))}, uint8_t* y, uint32_t n) '
        "{\n"
        f"    kernel<<<(n + 255) / 256, 256>>>({', '.join(f'({T}*)x{i}' for i in range(plan.n_inputs))}, ({T}*)y, "
        "n);\n}"
    )
    return _py(plan, knobs, src, f"self.mod.k_do({args}, y, x0.numel())", out_expr)


def render_unsupported(plan: Plan, knobs: Knobs) -> str:
    """Plausible code for a task the coder has no template for: it reaches for a high-level
    API the vector-only simulator does not provide (fails as compile_error)."""
    api = {"matmul": "Matmul", "pooling": "MaxPool", "scan": "CumSum"}.get(
        plan.note.split()[-1] if plan.note else "", "Compute" + plan.recipe.split("+")[0].title().replace("_", "")
    )
    src = (
        _HEADER + 'extern "C" __global__ __aicore__ void op_kernel(GM_ADDR x0, GM_ADDR y, uint32_t total) {\n'
        "    TPipe pipe;\n"
        "    GlobalTensor<float> xGm, yGm;\n"
        "    xGm.SetGlobalBuffer((__gm__ float*)x0, total);\n"
        "    yGm.SetGlobalBuffer((__gm__ float*)y, total);\n"
        f"    {api}(yGm, xGm, total);   // high-level operator\n"
        "}\n"
        'extern "C" void op_do(uint8_t* x0, uint8_t* y, uint32_t total) {\n'
        "    op_kernel<<<8, nullptr, nullptr>>>(x0, y, total);\n}"
    )
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, src, "self.mod.op_do(x0, y, x0.numel())", out)
