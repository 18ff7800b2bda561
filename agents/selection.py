"""Shared pieces of the retrieval agents: slot bookkeeping, epsilon-greedy top-N, z-scores,
PopArt-style reward statistics and the Q-value table (store-backed or local).

Everything here works on the env's ``info`` slot lists (docs/environment.md): ``candidates`` is
a list of K dicts or None (empty slot), ``parents`` a list of P dicts or None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from kernel_gym.memory import MemoryStore

__all__ = [
    "STAGES",
    "Q_COLUMN",
    "stage_name",
    "decision_stage",
    "n_select",
    "filled_slots",
    "filled_item",
    "epsilon_greedy_top_n",
    "top_n",
    "best_parent_slot",
    "zscore",
    "PopArtStats",
    "QTable",
]

#: Stage names in the order of the observation's ``stage`` code (0 drafting, 1 refining).
STAGES: tuple[str, str] = ("drafting", "refining")
#: The Q column each stage reads and updates.
Q_COLUMN: dict[str, str] = {"drafting": "q1", "refining": "q2"}


def stage_name(stage: Any) -> str:
    """``"drafting"`` or ``"refining"`` from a stage code (0/1, numpy scalar or array of one) or name."""
    if isinstance(stage, str):
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; expected one of {STAGES}")
        return stage
    code = int(np.asarray(stage).reshape(-1)[0])
    if code not in (0, 1):
        raise ValueError(f"unknown stage code {code}; expected 0 (drafting) or 1 (refining)")
    return STAGES[code]


def decision_stage(obs: dict[str, Any] | None, info: dict[str, Any]) -> str:
    """Stage of the decision about to be taken: ``info["stage"]``, else ``obs["stage"]``."""
    if info.get("stage") is not None:
        return stage_name(info["stage"])
    if obs is not None and "stage" in obs:
        return stage_name(obs["stage"])
    raise KeyError("neither info nor obs carries 'stage'")


def n_select(info: dict[str, Any], override: int | None = None) -> int:
    """N, the most items in one context: ``override`` if given, else ``info["n_select"]``."""
    if override is not None:
        return int(override)
    if "n_select" not in info:
        raise KeyError("info has no 'n_select' (pass n_select to the agent to override)")
    return int(info["n_select"])


def filled_slots(slots: Sequence[dict[str, Any] | None] | None) -> list[int]:
    """Indices of the slots that hold an item (not None), ascending."""
    return [i for i, s in enumerate(slots or []) if s is not None]


def filled_item(slots: Sequence[dict[str, Any] | None], i: int) -> dict[str, Any]:
    """The item in slot ``i``, which must be filled (one of :func:`filled_slots`)."""
    item = slots[i]
    if item is None:
        raise ValueError(f"slot {i} is empty")
    return item


def top_n(
    slots: Sequence[int], n: int, scores: Sequence[float] | np.ndarray, tie_break: Sequence[float] | None = None
) -> list[int]:
    """The ``n`` slots with the highest ``scores`` (indexed by slot), ties by higher ``tie_break``
    (indexed by slot), then by lower slot index, so the result is deterministic."""

    def key(i: int) -> tuple[float, float, int]:
        return (-float(scores[i]), -float(tie_break[i]) if tie_break is not None else 0.0, i)

    return sorted(slots, key=key)[: max(0, int(n))]


def epsilon_greedy_top_n(
    slots: Sequence[int],
    n: int,
    scores: Sequence[float] | np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    tie_break: Sequence[float] | None = None,
) -> list[int]:
    """With probability ``epsilon`` a uniformly random ``min(n, len(slots))``-subset of ``slots``,
    else :func:`top_n`. One coin per call (the whole subset explores, as in EvoKernel), and the coin
    is always drawn so the rng stream does not depend on the pool size."""
    slots = list(slots)
    explore = rng.random() < epsilon
    if not slots or n <= 0:
        return []
    if explore:
        pick = rng.choice(len(slots), size=min(int(n), len(slots)), replace=False)
        return sorted(slots[int(j)] for j in pick)
    return top_n(slots, n, scores, tie_break)


def best_parent_slot(parents: Sequence[dict[str, Any] | None] | None) -> int | None:
    """Slot of the best kernel so far: lowest ``latency_s`` (seconds) among filled parent slots,
    else highest ``speedup``, else the first filled slot; None when no slot is filled."""
    filled = filled_slots(parents)
    if not filled:
        return None

    def finite(x: Any) -> bool:
        return isinstance(x, (int, float, np.number)) and math.isfinite(float(x))

    assert parents is not None  # some slot is filled
    timed = [i for i in filled if finite(filled_item(parents, i).get("latency_s"))]
    if timed:
        return min(timed, key=lambda i: (float(filled_item(parents, i)["latency_s"]), i))
    fast = [i for i in filled if finite(filled_item(parents, i).get("speedup"))]
    if fast:
        return min(fast, key=lambda i: (-float(filled_item(parents, i)["speedup"]), i))
    return filled[0]


def zscore(x: Sequence[float] | np.ndarray, clip: float | None = 3.0) -> np.ndarray:
    """``(x - mean) / std`` with the population std (ddof 0), clipped to ``[-clip, clip]``.
    A constant vector (std 0) gives zeros: no information, so no preference."""
    a = np.asarray(x, dtype=np.float64)
    if a.size == 0:
        return a
    sd = float(a.std())
    z = np.zeros_like(a) if sd <= 1e-12 else (a - a.mean()) / sd
    return np.clip(z, -clip, clip) if clip is not None else z


class PopArtStats:
    """Running mean / std of a scalar reward, used to normalise refining rewards (the adaptive
    target normalisation of PopArt, van Hasselt et al. 2016).

    ``beta=None`` (default): exact running statistics over every reward seen (Welford), the right
    choice for the few hundred refining rewards of a run. ``beta`` in (0, 1]: exponential moving
    first and second moments with step size ``beta``, debiased like Adam so the first reward is
    not pulled toward the (0, 1) prior; use it when the reward distribution drifts over a long run.

    :meth:`normalize` follows PopArt's order: the statistics are updated with ``r`` first, then
    ``r`` is normalised with the updated ones, ``(r - mean) / max(std, min_std)``. So the first
    reward ever normalises to 0 (it carries no information about the scale yet) and a reward
    equal to the running mean gives 0. The std is the population std (ddof 0).

    Only the "ART" half of PopArt: stored Q2 values are not rescaled when the statistics move
    (that would rewrite every Q2 of the shared store each step, racing other processes); Q2 only
    ranks items, and the statistics settle after a few dozen rewards.
    """

    def __init__(self, beta: float | None = None, min_std: float = 1e-2) -> None:
        if beta is not None and not 0.0 < beta <= 1.0:
            raise ValueError("beta must be in (0, 1] or None")
        self.beta = beta
        self.min_std = float(min_std)
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0  # Welford: sum of squared deviations; EMA: raw (biased) second moment
        self.m1 = 0.0  # EMA only: raw (biased) first moment

    def update(self, r: float) -> None:
        """Add one reward to the statistics."""
        r = float(r)
        self.count += 1
        if self.beta is None:
            delta = r - self.mean
            self.mean += delta / self.count
            self.m2 += delta * (r - self.mean)
        else:
            self.m1 += self.beta * (r - self.m1)
            self.m2 += self.beta * (r * r - self.m2)
            self.mean = self.m1 / self._debias()

    def _debias(self) -> float:
        assert self.beta is not None  # only the EMA mode debiases
        return 1.0 - (1.0 - float(self.beta)) ** self.count

    @property
    def var(self) -> float:
        """Population variance of the rewards seen (0 before two rewards)."""
        if self.count == 0:
            return 0.0
        if self.beta is None:
            return self.m2 / self.count
        return max(0.0, self.m2 / self._debias() - self.mean**2)

    @property
    def std(self) -> float:
        return math.sqrt(self.var)

    def normalize(self, r: float, update: bool = True) -> float:
        """``(r - mean) / max(std, min_std)``, with ``r`` added to the statistics first when ``update``."""
        if update:
            self.update(r)
        return (float(r) - self.mean) / max(self.std, self.min_std)

    def state_dict(self) -> dict[str, Any]:
        return {
            "beta": self.beta,
            "min_std": self.min_std,
            "count": self.count,
            "mean": self.mean,
            "m1": self.m1,
            "m2": self.m2,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.beta = state.get("beta", self.beta)
        self.min_std = float(state.get("min_std", self.min_std))
        self.count = int(state["count"])
        self.mean, self.m1, self.m2 = float(state["mean"]), float(state.get("m1", 0.0)), float(state["m2"])


class QTable:
    """Per-item Q-values (``q1`` drafting, ``q2`` refining): read from and written to the attached
    :class:`MemoryStore`, where they persist with the item ids and are shared between processes;
    without a store, a local dict keyed by item id (unit tests, store-less runs) whose first
    value for an item is the one the env showed in its slot dict (0 if never shown).

    Reads go to the store rather than trusting the info dicts: the env builds the next decision's
    ``info`` before the agent's ``update`` runs, so the Q shown there is one update old.
    """

    def __init__(self, memory: MemoryStore | None = None) -> None:
        self.memory = memory
        self.local: dict[str, dict[int, float]] = {"q1": {}, "q2": {}}

    def values(self, slots: Sequence[dict[str, Any] | None], col: str) -> np.ndarray:
        """Q in column ``col`` for every slot, shape ``[len(slots)]`` (NaN for empty slots)."""
        out = np.full(len(slots), np.nan)
        ids = [int(s["id"]) for s in slots if s is not None]
        if self.memory is not None:
            fresh = {it.id: float(getattr(it, col)) for it in self.memory.get_many(ids) if it.id is not None}
        else:
            table = self.local[col]
            for s in slots:
                if s is not None:
                    table.setdefault(int(s["id"]), float(s.get(col) or 0.0))
            fresh = table
        for i, s in enumerate(slots):
            if s is not None:
                # an id the store no longer has (deleted) keeps the value the env showed
                out[i] = fresh.get(int(s["id"]), float(s.get(col) or 0.0))
        return out

    def mc_update(self, ids: Sequence[int], reward: float, alpha: float, stage: str) -> None:
        """``Q <- Q + alpha (reward - Q)`` on the stage's column for every distinct id (a repeated
        id is updated once: one step is one sample of its return)."""
        uniq = list(dict.fromkeys(int(i) for i in ids))
        if not uniq:
            return
        if self.memory is not None:
            self.memory.mc_update(uniq, float(reward), float(alpha), stage)
            return
        table = self.local[Q_COLUMN[stage_name(stage)]]
        for i in uniq:
            q = table.get(i, 0.0)
            table[i] = q + alpha * (float(reward) - q)

    def get(self, item_id: int, col: str) -> float:
        """One Q-value (store or local table; 0 for an unknown id)."""
        if self.memory is not None:
            items = self.memory.get_many([int(item_id)])
            return float(getattr(items[0], col)) if items else 0.0
        return self.local[col].get(int(item_id), 0.0)

    def state_dict(self) -> dict[str, Any]:
        """The local table (JSON keys are strings); empty when the store holds the values."""
        return {col: {str(k): v for k, v in t.items()} for col, t in self.local.items() if t}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.local = {"q1": {}, "q2": {}}
        for col, t in state.items():
            self.local[col] = {int(k): float(v) for k, v in t.items()}
