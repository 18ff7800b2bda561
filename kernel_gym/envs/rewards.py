"""Step rewards of KernelSynthesisEnv, one class per published scheme, chosen by name.

A reward sees what the step produced (the verifier's result dict), the stage the step was taken
in and the best latency of the task before the step; it returns a float. The env passes
``reward="evokernel"`` (the default), ``"adaexplore"``, ``"speedup"`` or any object with the
:class:`Reward` call signature.

| name | infeasible | feasible | source |
|---|---|---|---|
| evokernel | -1 | drafting: +1; refining: tanh(log b - log latency) | EvoKernel's MDP (docs/methods.md) |
| adaexplore | 0 (no compile, hack); 0.05 (wrong) | 0.4 + 1.2 (clip(s, 0.1, 10) - 0.1) / 9.9 | AdaExplore's shaping |
| speedup | 0 | s = reference latency / latency | KernelBench's speedup |

``b`` is the best latency of the task before the step (the new kernel's own latency when there is
none yet, which gives tanh(0) = 0), ``s`` the speedup over the eager PyTorch reference.

A ``:lower`` suffix (``reward="speedup:lower"``, any scheme) scores the low end of the speedup's
95 % interval instead (``speedup_ci[0]`` of the result, the latency raised to match): a kernel is
not rewarded for a lucky measurement. Results without an interval score as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Reward",
    "EvoKernelReward",
    "AdaExploreReward",
    "SpeedupReward",
    "REWARDS",
    "get_reward",
    "adaexplore_shaping",
    "LowerBoundReward",
]


@runtime_checkable
class Reward(Protocol):
    """A step reward.

    :param result: the verifier's result dict (``VerifyResult.to_dict()``; keys ``feasible``,
        ``compiled``, ``correct``, ``hacked``, ``latency_s`` (seconds), ``speedup`` (reference
        latency / latency, dimensionless) ...). A step whose generation failed or whose reply held
        no code gets a result with ``feasible=False`` and ``compiled=False``.
    :param stage: ``"drafting"`` (no feasible kernel of the task yet) or ``"refining"``.
    :param best_latency_s: the best latency of the task before this step, seconds; None when
        there is no feasible kernel yet.
    :return: the reward, a finite float.
    """

    def __call__(self, result: dict[str, Any], stage: str, best_latency_s: float | None) -> float: ...


def _latency(result: dict[str, Any]) -> float | None:
    lat = result.get("latency_s")
    if not result.get("feasible") or not isinstance(lat, (int, float)) or not math.isfinite(lat) or lat <= 0:
        return None
    return float(lat)


class EvoKernelReward:
    """EvoKernel's reward: drafting +1 feasible / -1 not; refining -1 infeasible, else
    ``tanh(log b - log latency)`` (positive when faster than the best so far, in (-1, 1))."""

    name = "evokernel"

    def __call__(self, result: dict[str, Any], stage: str, best_latency_s: float | None) -> float:
        latency = _latency(result)
        if latency is None:
            return -1.0
        if stage == "drafting":
            return 1.0
        best = best_latency_s if best_latency_s and best_latency_s > 0 else latency
        return float(math.tanh(math.log(best) - math.log(latency)))


def adaexplore_shaping(
    compiled: bool,
    correct: bool,
    speedup: float | None,
    hacked: bool = False,
    lo: float = 0.1,
    hi: float = 10.0,
    r_lo: float = 0.4,
    r_hi: float = 1.6,
) -> float:
    """AdaExplore's shaping: 0 for a kernel that does not compile (or a hack), 0.05 for one that
    compiles but is wrong, and for a correct one ``r_lo + (r_hi - r_lo) * (clip(s, lo, hi) - lo) /
    (hi - lo)``: 0.4 at a speedup of 0.1x or less, 1.6 at 10x or more."""
    if hacked or not compiled:
        return 0.0
    if not correct:
        return 0.05
    s = float(speedup) if speedup is not None and math.isfinite(float(speedup)) else lo
    s = min(max(s, lo), hi)
    return r_lo + (r_hi - r_lo) * (s - lo) / (hi - lo)


class AdaExploreReward:
    """AdaExplore's shaping as the env reward (stage-independent, in [0, 1.6])."""

    name = "adaexplore"

    def __call__(self, result: dict[str, Any], stage: str, best_latency_s: float | None) -> float:
        correct = bool(result.get("correct")) and bool(result.get("feasible", True))
        return adaexplore_shaping(
            bool(result.get("compiled")), correct, result.get("speedup"), bool(result.get("hacked"))
        )


class SpeedupReward:
    """The speedup over the eager PyTorch reference (KernelBench's measure); 0 when infeasible or
    when the verifier gave no speedup."""

    name = "speedup"

    def __call__(self, result: dict[str, Any], stage: str, best_latency_s: float | None) -> float:
        s = result.get("speedup")
        if _latency(result) is None or not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
            return 0.0
        return float(s)


REWARDS: dict[str, Callable[[], Reward]] = {
    "evokernel": EvoKernelReward,
    "adaexplore": AdaExploreReward,
    "speedup": SpeedupReward,
}


class LowerBoundReward:
    """Another reward, scored on the low end of the speedup's 95 % interval (``name:lower``)."""

    def __init__(self, inner: Reward) -> None:
        self.inner = inner
        self.name = f"{getattr(inner, 'name', type(inner).__name__)}:lower"

    def __call__(self, result: dict[str, Any], stage: str, best_latency_s: float | None) -> float:
        ci, ref = result.get("speedup_ci"), result.get("reference_latency_s")
        if isinstance(ci, (list, tuple)) and len(ci) == 2 and isinstance(ref, (int, float)):
            low = float(ci[0])
            if math.isfinite(low) and low > 0 and low < float(result.get("speedup") or math.inf):
                result = {**result, "speedup": low, "latency_s": float(ref) / low}
        return self.inner(result, stage, best_latency_s)


def get_reward(reward: str | Reward) -> Reward:
    """The reward named ``reward`` (see :data:`REWARDS`; a ``:lower`` suffix scores the low end of
    the speedup's interval), or ``reward`` itself when it is callable."""
    if isinstance(reward, str) and reward.endswith(":lower"):
        return LowerBoundReward(get_reward(reward.removesuffix(":lower")))
    if isinstance(reward, str):
        if reward not in REWARDS:
            raise ValueError(
                f"unknown reward {reward!r}; use env.reward={' | '.join(REWARDS)} "
                "or pass a callable (result, stage, best_latency_s) -> float"
            )
        return REWARDS[reward]()
    if not callable(reward):
        raise TypeError(f"reward must be a name ({', '.join(REWARDS)}) or a callable, got {type(reward).__name__}")
    return reward
