"""Non-learning baselines of EvoKernel's protocol (docs/methods.md).

- :class:`SimilarityAgent`: similarity-only retrieval, start point = best so far.
- :class:`RandomAgent`: random context and random start point (a floor for every other agent).
- :class:`NoMemoryAgent`: pass@k, independent samples with one fixed demonstration, never a parent.
- :class:`RefinementAgent`: per-task refinement, repair then hill-climb, no cross-task memory.

None of them learns: ``update`` is the base class's no-op and the Q-values are never read.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .base import Agent
from .selection import best_parent_slot, decision_stage, filled_item, filled_slots, n_select, top_n

__all__ = ["SimilarityAgent", "RandomAgent", "NoMemoryAgent", "RefinementAgent"]


def _similarities(cands: list[dict[str, Any] | None]) -> list[float]:
    return [float(c["similarity"]) if c is not None else -math.inf for c in cands]


class SimilarityAgent(Agent):
    """Top-N candidates by similarity (ties by lower slot); start point = the best kernel so far
    (lowest latency among the parent slots), whenever there is one.

    Args:
        n_select: override of the env's N (None: ``info["n_select"]``).
        seed: unused (deterministic), kept for the common constructor.
    """

    name = "similarity"

    def __init__(self, n_select: int | None = None, seed: int = 0) -> None:
        super().__init__(seed)
        self.n_select = n_select

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        cands = info.get("candidates") or []
        sim = _similarities(cands)
        selected = top_n(filled_slots(cands), n_select(info, self.n_select), sim)
        return self.make_action(len(cands), selected, best_parent_slot(info.get("parents")))


class RandomAgent(Agent):
    """A uniformly random ``min(N, filled)``-subset of the filled candidate slots; start point
    uniform over {none} + the filled parent slots.

    Args:
        n_select: override of the env's N (None: ``info["n_select"]``).
        seed: seed of the agent's rng.
    """

    name = "random"

    def __init__(self, n_select: int | None = None, seed: int = 0) -> None:
        super().__init__(seed)
        self.n_select = n_select

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        cands = info.get("candidates") or []
        slots = filled_slots(cands)
        n = min(n_select(info, self.n_select), len(slots))
        selected = sorted(slots[int(j)] for j in self.rng.choice(len(slots), size=n, replace=False)) if n else []
        options: list[int | None] = [None, *filled_slots(info.get("parents"))]
        parent = options[int(self.rng.integers(len(options)))]
        return self.make_action(len(cands), selected, parent)


class NoMemoryAgent(Agent):
    """pass@k: every step of an episode is an independent sample from scratch (never a parent)
    with the same single demonstration in context.

    The demonstration is fixed at the episode's first decision: the most similar ``api_template``
    candidate (ties by lower slot), or the first filled slot when the pool has no template. Later
    steps re-find it by item id. The pool can change as the store grows (new traces of this task
    may push it out); then the step uses the most similar api_template of that pool (else its
    first filled slot) without changing the episode's demonstration, which is used again as soon
    as it reappears.

    Args:
        kind: the item kind preferred as the demonstration.
        seed: unused (deterministic), kept for the common constructor.
    """

    name = "no_memory"

    def __init__(self, kind: str = "api_template", seed: int = 0) -> None:
        super().__init__(seed)
        self.kind = kind
        self.demo_id: int | None = None

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        self.demo_id = None
        slot = self._fallback_slot(info.get("candidates") or [])
        if slot is not None:
            self.demo_id = int(info["candidates"][slot]["id"])

    def _fallback_slot(self, cands: list[dict[str, Any] | None]) -> int | None:
        slots = filled_slots(cands)
        templates = [i for i in slots if filled_item(cands, i).get("kind") == self.kind]
        if templates:
            return top_n(templates, 1, _similarities(cands))[0]
        return slots[0] if slots else None

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        cands = info.get("candidates") or []
        slot = None
        if self.demo_id is not None:
            slot = next((i for i, c in enumerate(cands) if c is not None and int(c["id"]) == self.demo_id), None)
        if slot is None:
            slot = self._fallback_slot(cands)
            if slot is not None and self.demo_id is None:  # first decision of the episode
                self.demo_id = int(filled_item(cands, slot)["id"])
        return self.make_action(len(cands), [] if slot is None else [slot], None)

    def state_dict(self) -> dict[str, Any]:
        return {"demo_id": self.demo_id}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.demo_id = None if state.get("demo_id") is None else int(state["demo_id"])


class RefinementAgent(Agent):
    """Per-task refinement, "repair then hill-climb", with memory of the current task only: only
    candidates whose ``task_id`` equals ``info["task_id"]`` (earlier traces and experiences of this
    task) are ever selected; task-independent knowledge and other tasks' items never are.

    - Drafting (no feasible kernel yet; the parent slots hold only feasible kernels, so there is
      nothing to refine): repair. The context is this task's failures (``outcome < 0``: failed
      traces, which carry the code, and failure experiences, which carry the error), most recent
      first (lowest ``age``), then the task's other items, most recent first. No parent.
    - Refining: hill-climb. Start point = the best kernel so far (lowest latency); the context is
      this task's most recent items (the latest attempts and their verifier feedback), leaving out
      the start point itself, which the generator already gets as the parent.

    The agent can only pick from the env's recall pool; whether the task's own recent items are in
    it depends on the env's recall (K = lambda * N by similarity).

    Args:
        n_select: override of the env's N (None: ``info["n_select"]``).
        seed: unused (deterministic), kept for the common constructor.
    """

    name = "refinement"

    def __init__(self, n_select: int | None = None, seed: int = 0) -> None:
        super().__init__(seed)
        self.n_select = n_select

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        cands = info.get("candidates") or []
        task = info.get("task_id")
        same = [i for i in filled_slots(cands) if task is not None and filled_item(cands, i).get("task_id") == task]
        n = n_select(info, self.n_select)
        recency = [-_age(c) for c in cands]  # higher = more recent
        if decision_stage(obs, info) == "drafting":
            failed = [i for i in same if (filled_item(cands, i).get("outcome") or 0) < 0]
            rest = [i for i in same if i not in failed]
            selected = (top_n(failed, n, recency) + top_n(rest, n, recency))[:n]
            return self.make_action(len(cands), selected, None)
        parents = info.get("parents") or []
        parent = best_parent_slot(parents)
        parent_id = None if parent is None else filled_item(parents, parent).get("id")
        pool = [i for i in same if parent_id is None or filled_item(cands, i).get("id") != parent_id]
        return self.make_action(len(cands), top_n(pool, n, recency), parent)


def _age(c: dict[str, Any] | None) -> float:
    """Slot age (items inserted since; inf when empty or unknown)."""
    age = None if c is None else c.get("age")
    return float(age) if age is not None and np.isfinite(float(age)) else math.inf
