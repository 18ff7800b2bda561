"""Which shapes the env's reward is computed at: a task's published shapes or its own.

KernelBench's published shapes (hundreds of MB to GB per tensor) are far beyond what a CPU can
simulate in full, so a task loaded with ``shrink=true`` carries two sources: a shrunk one the
verifier checks and times in full (``TaskSpec.source``, "simulation scale") and the published
one (``TaskSpec.published_source``). On a backend that can run published shapes
(``Backend.published_shapes``: ascend_sim, under sampled simulation), the verifier also times a
correct answer there (``details["published"]`` of its result).

``reward_shapes="published"`` (the default) makes the reward's latency and speedup those of the
published-shape run; ``"simulated"`` keeps the simulation-scale ones. Where the published figure
is not there, the reward falls back to the simulation-scale figure and says why
(:func:`reward_basis`): a task without published shapes (its own shapes are the published ones),
a backend that cannot run them, an infeasible answer (no latency at either scale), or a
published-shape run that failed or ran past the time limit. One step's reward never mixes the
two: the env compares a latency only with the best latency at the same shapes.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "REWARD_SHAPES",
    "PUBLISHED_MEMORY_LIMIT_MB",
    "check_reward_shapes",
    "published_run_settings",
    "reward_basis",
]

#: the values of the env's ``reward_shapes`` argument (Hydra: ``env.reward_shapes``)
REWARD_SHAPES = ("published", "simulated")


def check_reward_shapes(value: Any) -> str:
    """``value`` if it is one of :data:`REWARD_SHAPES`; else a ValueError naming the fix."""
    if not isinstance(value, str) or value not in REWARD_SHAPES:
        raise ValueError(
            f"reward_shapes must be one of {', '.join(REWARD_SHAPES)} (env.reward_shapes=published: the "
            f"reward at a task's published shapes where the verifier ran them; simulated: at the shapes "
            f"verified in full), got {value!r}"
        )
    return value


#: the worker's address-space limit when published-shape runs are on and none was set: the lazy
#: tensors of KernelBench level 1 at its published shapes take up to 16 GiB of address space
#: (pages are touched only where the sampled blocks read or write, so little of it is resident)
PUBLISHED_MEMORY_LIMIT_MB = 20480


def published_run_settings(settings: dict[str, Any], requested: str, backend_can: bool) -> dict[str, Any]:
    """The verify settings of an env whose reward is at ``requested`` shapes.

    ``published`` on a backend that can run published shapes turns the verifier's published-shape
    run on (``published_shapes``, unless given explicitly: ``False`` then contradicts the request
    and is a ValueError naming the fix) and, where ``memory_limit_mb`` is not set, raises it to
    :data:`PUBLISHED_MEMORY_LIMIT_MB`. ``published_shapes: None`` (the Hydra default) means "as
    the reward needs". Anything else is returned as given.
    """
    out = dict(settings)
    if out.get("published_shapes", "unset") is None:
        out.pop("published_shapes")
    if check_reward_shapes(requested) != "published" or not backend_can:
        return out
    if out.get("published_shapes", True) is False:
        raise ValueError(
            "reward_shapes=published needs the verifier's published-shape run, but verify setting "
            "published_shapes is false: leave it unset (backend.verify.published_shapes=null) or set "
            "env.reward_shapes=simulated"
        )
    out["published_shapes"] = True
    out.setdefault("memory_limit_mb", PUBLISHED_MEMORY_LIMIT_MB)
    return out


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def reward_basis(result: dict[str, Any], requested: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The verifier result the reward sees, and the record of what it was computed from.

    :param result: ``VerifyResult.to_dict()`` of the step's kernel.
    :param requested: ``"published"`` or ``"simulated"`` (the env's ``reward_shapes``).
    :return: ``(view, basis)``. ``view`` is ``result`` with ``latency_s``, ``reference_latency_s``
        and ``speedup`` of the shapes used (``result`` itself when those are the simulation-scale
        ones). ``basis`` (``info["reward_basis"]``): ``requested``, ``shapes`` (the shapes used:
        ``"published"`` or ``"simulated"``), ``fallback`` (why the published figure was not used
        although requested, else None), ``latency_s``, ``reference_latency_s``, ``speedup``,
        ``latency_bracket_s`` ([lo, hi] the sampling leaves; [latency, latency] for a run in
        full) and ``sampled`` (whether the latency comes from sampled simulation).
    """
    check_reward_shapes(requested)
    published = (result.get("details") or {}).get("published")
    fallback: str | None = None
    if requested == "published":
        if not result.get("feasible"):
            fallback = "the answer is not feasible: no latency at either scale"
        elif published is None:
            fallback = (
                "the task carries no published shapes apart from its own, or the backend cannot run them: "
                "its verified shapes are used"
            )
        elif not isinstance(published, dict) or not published.get("ok"):
            error = published.get("error") if isinstance(published, dict) else None
            fallback = f"the published-shape run gave no latency ({error or 'no reason given'})"
        elif _positive(published.get("latency_s")) is None or _positive(published.get("reference_latency_s")) is None:
            fallback = "the published-shape run gave no positive latency"
    if requested == "published" and fallback is None:
        assert isinstance(published, dict)  # checked above
        latency = float(published["latency_s"])
        reference = float(published["reference_latency_s"])
        bracket = published.get("latency_bracket_s") or [None, None]
        lo, hi = (_positive(v) for v in (list(bracket) + [None, None])[:2])
        view = {**result, "latency_s": latency, "reference_latency_s": reference, "speedup": reference / latency}
        basis = {
            "requested": requested,
            "shapes": "published",
            "fallback": None,
            "latency_s": latency,
            "reference_latency_s": reference,
            "speedup": reference / latency,
            "latency_bracket_s": [lo if lo is not None else latency, hi if hi is not None else latency],
            # extrapolated from a share of the blocks (or of their iterations)
            "sampled": bool(published.get("blocks_skipped") or published.get("iterations_skipped"))
            or (lo is not None and hi is not None and lo != hi),
        }
        return view, basis
    latency_or_none = _positive(result.get("latency_s"))
    basis = {
        "requested": requested,
        "shapes": "simulated",
        "fallback": fallback,
        "latency_s": latency_or_none,
        "reference_latency_s": _positive(result.get("reference_latency_s")),
        "speedup": _positive(result.get("speedup")),
        "latency_bracket_s": [latency_or_none, latency_or_none] if latency_or_none is not None else None,
        "sampled": False,
    }
    return result, basis
