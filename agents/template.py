"""A retrieval policy to copy: read top to bottom, change what you want to test, run it.

Copy this file anywhere importable (your own package, or a directory on PYTHONPATH) and run it
without touching kernel-gym, by import path:

    PYTHONPATH=<dir> python -m experiments.run experiment=none agent.name=mine \\
        +agent._target_=mymodule:TemplateAgent

or give it a config of its own, <your conf dir>/agent/mine.yaml:

    name: mine
    _target_: mymodule:TemplateAgent
    kwargs: {epsilon: 0.2}

and compare it with built-in agents in one Hydra multirun:

    PYTHONPATH=<dir> python -m experiments.run -m agent=mine,similarity,random \\
        hydra.searchpath=[file://<your conf dir>]
    python -m experiments.report <the multirun dir>

What the policy sees at each step (``info``, see docs/environment.md):
  - ``info["candidates"]``: K slots, each None or a dict with ``id``, ``kind``, ``title``,
    ``similarity`` (to the task, in [-1, 1]), ``q1``/``q2`` (the store's value estimates),
    ``use_count``...; a policy picks up to ``info["n_select"]`` of them as the LLM's context;
  - ``info["parents"]``: slots of earlier kernels for this task (``latency_s``, ``feasible``...);
    picking one makes the step a refinement of it, picking none a fresh draft.
What it learns from: ``update`` gets the step's ``reward`` and ``info["context_ids"]`` (the ids of
the memories that were shown), so credit can go to what was in the context.

This example: epsilon-greedy over the memories' running mean reward, similarity breaking ties.
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent
from agents.selection import best_parent_slot, filled_slots, n_select


class TemplateAgent(Agent):
    """Epsilon-greedy retrieval on each memory's mean reward when it was in the context.

    Args:
        epsilon: probability, per step, of a uniformly random context instead of the greedy one.
        prior: mean reward assumed for a memory never tried (optimism explores).
        seed: seed of the agent's rng.
    """

    name = "template"

    def __init__(self, epsilon: float = 0.1, prior: float = 1.0, seed: int = 0) -> None:
        super().__init__(seed)
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        self.epsilon = float(epsilon)
        self.prior = float(prior)
        self.totals: dict[str, list[float]] = {}  # memory id -> [sum of rewards, count]

    # 1. score every candidate slot
    def score(self, cand: dict[str, Any]) -> float:
        total, count = self.totals.get(str(cand["id"]), (0.0, 0.0))
        mean = total / count if count else self.prior
        return mean + 1e-3 * float(cand["similarity"])  # similarity only breaks ties

    # 2. pick the context and the start point
    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        cands = info.get("candidates") or []
        slots = filled_slots(cands)
        n = min(n_select(info, None), len(slots))
        if self.rng.random() < self.epsilon:
            chosen = [slots[int(j)] for j in self.rng.choice(len(slots), size=n, replace=False)] if n else []
        else:
            chosen = sorted(slots, key=lambda s: -self.score(cands[s]))[:n]
        return self.make_action(len(cands), sorted(chosen), best_parent_slot(info.get("parents")))

    # 3. learn: every memory that was in the context shares the step's reward
    def update(
        self, obs: dict[str, Any], action: dict[str, Any], reward: float, next_obs: dict[str, Any], info: dict[str, Any]
    ) -> None:
        for item_id in info.get("context_ids") or []:
            entry = self.totals.setdefault(str(item_id), [0.0, 0.0])
            entry[0] += float(reward)
            entry[1] += 1.0

    # 4. what a resumed run restores
    def state_dict(self) -> dict[str, Any]:
        return {"totals": self.totals}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.totals = {k: [float(v[0]), float(v[1])] for k, v in state.get("totals", {}).items()}
