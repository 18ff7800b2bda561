"""Builders of env-contract dicts (docs/environment.md) and a scripted environment for agent tests."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from kernel_gym.memory import MemoryItem, MemoryStore


def cand(id: int, similarity: float = 0.5, kind: str = "experience_success", q1: float = 0.0,
         q2: float = 0.0, task_id: str | None = None, outcome: int = 0, age: int = 0,
         **extra: Any) -> dict[str, Any]:
    """One candidate slot dict with every key of the contract."""
    d = dict(id=id, kind=kind, title=f"item {id}", similarity=similarity, q1=q1, q2=q2, use_count=0,
             task_id=task_id, category="general", level=1, outcome=outcome, speedup=None, age=age)
    d.update(extra)
    return d


def parent(id: int, latency_s: float | None = 1e-3, speedup: float | None = 1.0, q2: float = 0.0,
           depth: int = 0) -> dict[str, Any]:
    return dict(id=id, latency_s=latency_s, speedup=speedup, depth=depth, q2=q2, code_hash=f"h{id}")


def info(candidates: Sequence[dict[str, Any] | None], parents: Sequence[dict[str, Any] | None] = (),
         stage: str = "drafting", n_select: int = 2, task_id: str = "level1/t0", **extra: Any) -> dict[str, Any]:
    d = dict(task_id=task_id, stage=stage, step=0, budget=30, n_select=n_select,
             candidates=list(candidates), parents=list(parents), best_latency_s=None, best_speedup=None)
    d.update(extra)
    return d


def obs(stage: str = "drafting") -> dict[str, Any]:
    return {"stage": 0 if stage == "drafting" else 1}


def step_info(context_ids: Sequence[int], reward: float, step_stage: str = "drafting",
              parent_id: int | None = None, **extra: Any) -> dict[str, Any]:
    d = info([], stage=step_stage, step_stage=step_stage, context_ids=list(context_ids), parent_id=parent_id,
             feasible=reward > -1, reward=reward, first_feasible=False, trace_id=None)
    d.update(extra)
    return d


def make_store(path: Any, n: int, kind: str = "experience_success") -> tuple[MemoryStore, list[int]]:
    store = MemoryStore(path)
    ids = store.add([MemoryItem(kind=kind, text=f"memory item number {i}", title=f"item {i}",
                                category="general") for i in range(n)])
    return store, [int(i) for i in ids]


class ScriptedEnv:
    """A stand-in for KernelSynthesisEnv whose outcome depends only on which items are in context.

    Each step shows a random ``k``-subset of ``helpful + hurtful`` ids with random (uninformative)
    similarities; the Q-values in the slot dicts are read from the store when the info is built (so
    they are one update old, as in the real env). Drafting: a step succeeds (+1, else -1) with
    probability ``0.5 + 0.2 * (#helpful - #hurtful in context)`` clipped to [0.05, 0.95]. Refining: always feasible, reward
    ``tanh(0.15 * (#helpful - #hurtful) + bonus[parent] + noise)``; the parents are ``parent_ids``
    with bonuses ``parent_bonus``.
    """

    def __init__(self, store: MemoryStore, helpful: list[int], hurtful: list[int], k: int = 8, n: int = 4,
                 stage: str = "drafting", parent_ids: Sequence[int] = (), parent_bonus: Sequence[float] = (),
                 budget: int = 30, seed: int = 0) -> None:
        self.store, self.helpful, self.hurtful = store, set(helpful), set(hurtful)
        self.pool = list(helpful) + list(hurtful)
        self.k, self.n, self.stage, self.budget = k, n, stage, budget
        self.parent_ids, self.parent_bonus = list(parent_ids), list(parent_bonus)
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def _info(self) -> dict[str, Any]:
        shown = [int(i) for i in self.rng.choice(self.pool, size=self.k, replace=False)]
        items = {it.id: it for it in self.store.get_many(shown + self.parent_ids)}
        cands = [cand(i, similarity=float(self.rng.uniform(0.3, 0.9)), q1=items[i].q1, q2=items[i].q2)
                 for i in shown]
        parents = [parent(p, latency_s=1e-3 * (j + 1), q2=items[p].q2) for j, p in enumerate(self.parent_ids)]
        return info(cands, parents, stage=self.stage, n_select=self.n)

    def reset(self) -> tuple[dict[str, Any], dict[str, Any]]:
        self.t = 0
        self.last = self._info()
        return obs(self.stage), self.last

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        cands = self.last["candidates"]
        chosen = [i for i in np.flatnonzero(action["select"]) if cands[i] is not None]
        chosen = sorted(chosen, key=lambda i: -cands[i]["similarity"])[:self.n]   # env keeps the N most similar
        ctx = [int(cands[i]["id"]) for i in chosen]
        score = sum(i in self.helpful for i in ctx) - sum(i in self.hurtful for i in ctx)
        parent_id = None
        if self.stage == "drafting":
            reward = 1.0 if self.rng.random() < min(0.95, max(0.05, 0.5 + 0.2 * score)) else -1.0
        else:
            slot = int(action["parent"]) - 1
            bonus = 0.0
            if 0 <= slot < len(self.parent_ids):
                parent_id, bonus = self.parent_ids[slot], self.parent_bonus[slot]
            reward = math.tanh(0.15 * score + bonus + float(self.rng.normal(0, 0.1)))
        self.t += 1
        nxt = self._info()
        nxt.update(step_stage=self.stage, context_ids=ctx, parent_id=parent_id, feasible=reward > -1,
                   reward=reward, first_feasible=False, trace_id=None)
        self.last = nxt
        return obs(self.stage), reward, False, self.t >= self.budget, nxt


def run(agent: Any, env: ScriptedEnv, steps: int) -> None:
    """Drive ``agent`` on ``env`` for ``steps`` steps (episodes of ``env.budget`` steps)."""
    ob, inf = env.reset()
    agent.reset(ob, inf)
    for _ in range(steps):
        action = agent.act(ob, inf)
        nob, r, term, trunc, ninf = env.step(action)
        agent.update(ob, action, r, nob, ninf)
        ob, inf = nob, ninf
        if term or trunc:
            ob, inf = env.reset()
            agent.reset(ob, inf)
