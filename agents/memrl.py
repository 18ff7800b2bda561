"""MemRLAgent: MemRL's value-aware retrieval (arXiv 2601.03192; defaults from its public code,
see docs/methods.md) on kernel-gym's recall pool.

Two phases over the K recalled candidates: (A) a similarity filter (``sim >= sim_threshold``,
relaxed to the whole pool when it would leave nothing) and an optional Q floor; (B) a composite
score ``w_sim * z(sim) + w_q * z(Q)``, each z-normalised over the filled candidates and clipped
to +-``z_clip``, from which the top ``topk`` are taken epsilon-greedily. The chosen items' Q (the
stage's column: Q1 drafting, Q2 refining) gets ``Q <- Q + alpha (r - Q)`` with the raw reward
(MemRL has no reward normalisation). New items start at Q = 0 (the store's default).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernel_gym.memory import MemoryStore

from .base import Agent
from .selection import (
    Q_COLUMN,
    QTable,
    best_parent_slot,
    decision_stage,
    epsilon_greedy_top_n,
    filled_item,
    filled_slots,
    n_select,
    stage_name,
    zscore,
)

__all__ = ["MemRLAgent"]


class MemRLAgent(Agent):
    """Composite similarity + utility ranking with epsilon-greedy top-k and Monte-Carlo Q updates.

    Args:
        w_sim: weight of the z-scored similarity.
        w_q: weight of the z-scored Q.
        z_clip: clip of each z-score (MemRL: 3).
        sim_threshold: phase-A cosine threshold (MemRL: 0.5); dropped only if it would empty the pool.
        q_floor: drop candidates whose Q is below it (None: no floor). Unlike the similarity
            threshold this may leave an empty context: an item known to hurt is worse than none.
        epsilon: probability of a random topk-subset of the eligible candidates (MemRL: 0.1).
        alpha: Monte-Carlo step size (MemRL: 0.3).
        topk: items per context (None: the env's N).
        seed: seed of the agent's rng.

    The start point is the best kernel so far (lowest latency), like similarity-only retrieval.
    """

    name = "memrl"

    def __init__(
        self,
        w_sim: float = 0.5,
        w_q: float = 0.5,
        z_clip: float = 3.0,
        sim_threshold: float | None = 0.5,
        q_floor: float | None = None,
        epsilon: float = 0.1,
        alpha: float = 0.3,
        topk: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed)
        self.w_sim, self.w_q, self.z_clip = float(w_sim), float(w_q), float(z_clip)
        self.sim_threshold, self.q_floor = sim_threshold, q_floor
        self.epsilon, self.alpha, self.topk = float(epsilon), float(alpha), topk
        self.q = QTable()

    def attach(self, memory: MemoryStore | None) -> None:
        super().attach(memory)
        self.q.memory = memory

    def scores(self, cands: list[dict[str, Any] | None], stage: str) -> tuple[list[int], np.ndarray]:
        """(eligible slots after the similarity threshold and Q floor, composite score per slot
        shape ``[K]``, NaN in empty slots). The z-scores are taken over all filled candidates."""
        slots = filled_slots(cands)
        score = np.full(len(cands), np.nan)
        if not slots:
            return [], score
        sim = np.array([float(filled_item(cands, i)["similarity"]) for i in slots])
        q = self.q.values(cands, Q_COLUMN[stage])[slots]
        score[slots] = self.w_sim * zscore(sim, self.z_clip) + self.w_q * zscore(q, self.z_clip)
        keep = slots
        if self.sim_threshold is not None:
            above = [s for s, v in zip(slots, sim, strict=True) if v >= self.sim_threshold]
            keep = above or slots
        if self.q_floor is not None:
            qmap = dict(zip(slots, q, strict=True))
            keep = [s for s in keep if qmap[s] >= self.q_floor]
        return keep, score

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        stage = decision_stage(obs, info)
        cands = info.get("candidates") or []
        keep, score = self.scores(cands, stage)
        sim = [float(c["similarity"]) if c is not None else -np.inf for c in cands]
        selected = epsilon_greedy_top_n(keep, n_select(info, self.topk), score, self.epsilon, self.rng, sim)
        return self.make_action(len(cands), selected, best_parent_slot(info.get("parents")))

    def update(
        self, obs: dict[str, Any], action: dict[str, Any], reward: float, next_obs: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """``Q <- Q + alpha (r - Q)`` on the stage's column of every item that was in the context."""
        stage = stage_name(info["step_stage"]) if info.get("step_stage") is not None else decision_stage(obs, {})
        self.q.mc_update([int(i) for i in info.get("context_ids") or []], float(reward), self.alpha, stage)

    def state_dict(self) -> dict[str, Any]:
        return {"q_local": self.q.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.q.load_state_dict(state.get("q_local", {}))
