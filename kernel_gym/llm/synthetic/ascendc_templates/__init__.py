"""Parameterised Ascend C templates of the synthetic coder, one module per op family.

Every template takes the :class:`~kernel_gym.llm.synthetic.analysis.Plan` and a
:class:`~kernel_gym.llm.synthetic.faults.Knobs` (tiling choices plus the faults to commit) and
returns an answer source: Python defining ``ModelNew`` that compiles the kernel with
``kernel_gym.ascendc.load``. Written for kernel-gym; not derived from the reference answers.
"""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan
from kernel_gym.llm.synthetic.ascendc_templates.cube import render_cube
from kernel_gym.llm.synthetic.ascendc_templates.elementwise import render_map
from kernel_gym.llm.synthetic.ascendc_templates.fallbacks import (
    render_cuda,
    render_unsupported,
)
from kernel_gym.llm.synthetic.ascendc_templates.matmul import render_matmul
from kernel_gym.llm.synthetic.ascendc_templates.norm import render_norm
from kernel_gym.llm.synthetic.ascendc_templates.pool import render_pool
from kernel_gym.llm.synthetic.ascendc_templates.rows import (
    render_midreduce,
    render_rows,
)
from kernel_gym.llm.synthetic.ascendc_templates.scan import render_scan
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_ascendc"]

_BY_KIND = {
    "map": render_map,
    "rows": render_rows,
    "midreduce": render_midreduce,
    "scan": render_scan,
    "pool": render_pool,
    "norm": render_norm,
    "matmul": render_matmul,
    "cube": render_cube,
}


def render_ascendc(plan: Plan, knobs: Knobs) -> str:
    """The answer source for ``plan`` with ``knobs`` (faults included)."""
    if plan.kind == "unsupported":
        return render_unsupported(plan, knobs)
    if knobs.cuda:
        out = {"map": "torch.empty_like(x0)", "reduceall": "torch.empty((), dtype=x0.dtype)"}.get(
            plan.kind, f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
        )
        return render_cuda(plan, knobs, out)
    if plan.kind == "reduceall":
        return render_map(plan, knobs, reduce_all=True)
    if plan.kind not in _BY_KIND:
        raise ValueError(f"unknown plan kind {plan.kind!r}")
    return _BY_KIND[plan.kind](plan, knobs)
