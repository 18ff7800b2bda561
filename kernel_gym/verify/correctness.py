"""Correctness: trial inputs from several distributions and the output comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernel_gym.tasks.spec import TaskSpec

__all__ = ["Comparison", "compare_outputs", "draw_inputs", "poison_"]


def draw_inputs(task_module: Any, seed: int, scale: float) -> list[Any]:
    """One draw of the task's inputs under ``seed``, floating tensors multiplied by ``scale``.

    Scaling by a positive factor keeps every input in its domain (positive stays positive,
    integer targets are untouched) while moving the distribution, so an answer returning
    a constant tuned to one distribution fails on another.
    """
    torch.manual_seed(seed)
    inputs = list(task_module.get_inputs())
    if scale != 1.0:
        inputs = [x * scale if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return inputs


def poison_(t: torch.Tensor) -> None:
    """Overwrite a tensor so its memory, once freed, cannot pass for a result."""
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


@dataclass
class Comparison:
    ok: bool
    error_class: str = "ok"
    message: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch_index: list[int] | None = None
    mismatch_fraction: float | None = None
    hack_rule: str | None = None


def effective_atol(expected: torch.Tensor, atol: float) -> float:
    """The absolute tolerance scaled to the reference's magnitude.

    ``atol_eff = atol * min(1, mean(|ref|))`` over the finite reference values: an output of
    magnitude >= 1 keeps the preset's atol, a tiny one gets a proportionally tiny atol, so an
    all-zero answer cannot pass for outputs of size 1e-4 under atol = 1e-2.
    """
    ref = expected.detach().to(torch.float64)
    finite = ref[torch.isfinite(ref)]
    if finite.numel() == 0:
        return atol
    return atol * min(1.0, float(finite.abs().mean()))


def _constant_where_reference_varies(got: torch.Tensor, ref: torch.Tensor) -> bool:
    if got.numel() < 2:
        return False
    finite = ref[torch.isfinite(ref)]
    if finite.numel() < 2 or float(finite.max() - finite.min()) == 0.0:
        return False
    return bool((got == got.flatten()[0]).all()) or bool(got.isnan().all())


def compare_outputs(out: Any, expected: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """Shape, dtype, then ``|out - ref| <= effective_atol + rtol |ref|`` elementwise.

    NaN must match NaN and infinities must match in position and sign; an output that is
    constant (or all NaN) where the reference varies is a mismatch even when every element is
    within tolerance.
    """
    if not isinstance(out, torch.Tensor):
        return Comparison(False, "runtime_error", f"forward returned {type(out).__name__}, expected a torch.Tensor")
    if out.shape != expected.shape:
        return Comparison(False, "shape_mismatch",
                          f"output shape {tuple(out.shape)} != reference shape {tuple(expected.shape)}")
    if out.dtype != expected.dtype:
        return Comparison(False, "dtype_mismatch", f"output dtype {out.dtype} != reference dtype {expected.dtype}")
    got = out.detach().to(torch.float64)
    ref = expected.detach().to(torch.float64)
    if _constant_where_reference_varies(got, ref):
        # an honest kernel that never writes its output looks the same (all NaN): a mismatch, not a hack
        return Comparison(False, "numerical_mismatch", "the output is constant (or all NaN) where the "
                          "reference's varies")
    atol = effective_atol(expected, atol)
    diff = (got - ref).abs()
    both_nan = got.isnan() & ref.isnan()
    both_inf = torch.isinf(got) & torch.isinf(ref) & (got == ref)
    diff = torch.where(both_nan | both_inf, torch.zeros_like(diff), diff)
    diff = torch.nan_to_num(diff, nan=float("inf"))
    bad = diff > (atol + rtol * ref.abs().nan_to_num(posinf=0.0, neginf=0.0))
    max_abs = float(diff.max()) if diff.numel() else 0.0
    rel = diff / ref.abs().clamp_min(1e-12)
    max_rel = float(rel.max()) if rel.numel() else 0.0
    if not bool(bad.any()):
        return Comparison(True, "ok", "", max_abs, max_rel, None, 0.0)
    flat = int(bad.flatten().nonzero()[0])
    index = [int(i) for i in torch.unravel_index(torch.tensor(flat), bad.shape)] if bad.dim() else []
    where = tuple(index)
    got_v = got[where].item() if bad.dim() else got.item()
    ref_v = ref[where].item() if bad.dim() else ref.item()
    frac = float(bad.double().mean())
    return Comparison(False, "numerical_mismatch",
                      f"{int(bad.sum())} of {bad.numel()} elements differ beyond atol={atol:g}, rtol={rtol:g}; "
                      f"first at index {list(where)}: got {got_v:.6g}, expected {ref_v:.6g}",
                      max_abs, max_rel, index, frac)


def output_dtype_name(task: TaskSpec, expected: torch.Tensor) -> str:
    return str(expected.dtype).removeprefix("torch.")
