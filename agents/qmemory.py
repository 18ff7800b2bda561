"""QMemoryAgent: EvoKernel's value-driven retrieval (arXiv 2603.10846; docs/methods.md).

The env recalls a pool of K = lambda * N candidates by similarity (``recall_multiplier`` lambda and
``n_select`` N are env arguments); similarity only builds the pool. The agent then picks N of the K
slots epsilon-greedily over the stage's Q (Q1 drafting, Q2 refining) and, when refining, a start
point epsilon-greedily over the parents' Q2. After the step every item that was in the context
(and, when refining, the start point) gets the Monte-Carlo update ``Q <- Q + alpha (r - Q)``; the
refining reward is first normalised with running statistics (PopArt-style, :class:`PopArtStats`).

Q-values live in the attached :class:`~kernel_gym.memory.MemoryStore`, keyed by item id, so they
persist and are shared with every process using the store; without a store a local table is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernel_gym.memory import MemoryStore

from .base import Agent
from .selection import (
    Q_COLUMN,
    PopArtStats,
    QTable,
    decision_stage,
    epsilon_greedy_top_n,
    filled_slots,
    n_select,
    stage_name,
)

__all__ = ["QMemoryAgent"]


class QMemoryAgent(Agent):
    """Epsilon-greedy top-N over the stage's Q, Monte-Carlo Q updates, PopArt-normalised refining.

    Args:
        epsilon: probability of a uniformly random N-subset of the filled slots instead of the
            top-N by Q (one coin per step); also used for the start point unless ``parent_epsilon``.
        alpha: Monte-Carlo step size. 0.3 (MemRL's public default; the EvoKernel paper gives none for
            EvoKernel): an item's Q mostly reflects its last ~3 uses, which suits a memory whose
            usefulness changes as the store grows; smaller values average more noise away.
        parent_epsilon: exploration rate of the start point (default: ``epsilon``).
        popart_beta: None = exact running mean/std of refining rewards; a float = exponential
            moving statistics with that step size (see :class:`PopArtStats`).
        popart_min_std: floor of the std in the normalisation (rewards are in [-1, 1]).
        n_select: override of the env's N (None: ``info["n_select"]``).
        seed: seed of the agent's rng (exploration coins and random subsets).

    Tie-breaking: equal Q -> higher similarity -> lower slot; equal parent Q2 -> lower latency
    (so with untrained Q2 the start point is the best kernel so far) -> lower slot.
    """

    name = "qmemory"

    def __init__(
        self,
        epsilon: float = 0.1,
        alpha: float = 0.3,
        parent_epsilon: float | None = None,
        popart_beta: float | None = None,
        popart_min_std: float = 1e-2,
        n_select: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed)
        self.epsilon = float(epsilon)
        self.alpha = float(alpha)
        self.parent_epsilon = self.epsilon if parent_epsilon is None else float(parent_epsilon)
        self.n_select = n_select
        self.popart = PopArtStats(beta=popart_beta, min_std=popart_min_std)
        self.q = QTable()
        #: the last update's (stage, reward used in the Q update); for logging
        self.last_update: dict[str, Any] | None = None

    def attach(self, memory: MemoryStore | None) -> None:
        super().attach(memory)
        self.q.memory = memory

    # -- acting ---------------------------------------------------------------------------------
    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        stage = decision_stage(obs, info)
        cands = info.get("candidates") or []
        slots = filled_slots(cands)
        q = self.q.values(cands, Q_COLUMN[stage])
        sim = [float(c["similarity"]) if c is not None else -np.inf for c in cands]
        selected = epsilon_greedy_top_n(slots, n_select(info, self.n_select), q, self.epsilon, self.rng, sim)
        parent = self.choose_parent(info) if stage == "refining" else None
        return self.make_action(len(cands), selected, parent)

    def choose_parent(self, info: dict[str, Any]) -> int | None:
        """Start point (refining): epsilon-greedy argmax of the parents' Q2; None if no parent."""
        parents = info.get("parents") or []
        slots = filled_slots(parents)
        if not slots:
            return None
        q2 = self.q.values(parents, "q2")
        # tie-break by lower latency: negate so that "higher is better" like the scores
        neg_lat = [-_latency(p) for p in parents]
        pick = epsilon_greedy_top_n(slots, 1, q2, self.parent_epsilon, self.rng, neg_lat)
        return pick[0] if pick else None

    # -- learning -------------------------------------------------------------------------------
    def update(
        self, obs: dict[str, Any], action: dict[str, Any], reward: float, next_obs: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """Monte-Carlo update of every context item (and the start point when refining) with the
        stage's reward: raw +-1 for drafting (Q1), PopArt-normalised for refining (Q2)."""
        stage = stage_name(info["step_stage"]) if info.get("step_stage") is not None else decision_stage(obs, {})
        ids = [int(i) for i in info.get("context_ids") or []]
        if stage == "drafting":
            target = float(reward)
        else:
            target = self.popart.normalize(float(reward))
            if info.get("parent_id") is not None:
                ids.append(int(info["parent_id"]))
        self.q.mc_update(ids, target, self.alpha, stage)
        self.last_update = {"stage": stage, "reward": float(reward), "target": target, "ids": ids}

    # -- persistence ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"popart": self.popart.state_dict(), "q_local": self.q.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "popart" in state:
            self.popart.load_state_dict(state["popart"])
        self.q.load_state_dict(state.get("q_local", {}))


def _latency(parent: dict[str, Any] | None) -> float:
    """A parent slot's latency in seconds (inf when empty or unknown)."""
    lat = None if parent is None else parent.get("latency_s")
    return float(lat) if lat is not None else float("inf")
