"""AdaExplore's search tree of kernels for one task (arXiv 2604.16625; docs/methods.md).

Nodes are kernels (env trace ids) under a virtual root ("write from scratch"). An edge is a
*small* step (a refinement of the parent) or a *large* step (a regeneration from a diverse pool);
drafts written from scratch hang under the root as large steps. Every node keeps its shaped
reward (:func:`shaped_reward`) and, MCTS-style, the visit count and reward sum of its subtree.

Selection (:meth:`SearchTree.select`) descends from the root as AdaExplore's published code does
(the KB-l2/l3 configs of its repository: ``exploration_weight`` 0.3, ``reward_alpha`` 0 so a node's
value is its subtree mean). At node ``n`` the arms are its expandable (feasible) children, scored by
UCB1 ``mean + c * sqrt(ln N(n) / N(child))``, and an *expand* arm "add a child to n", scored
``max_child mean + c * sqrt(ln N(n) / k^2)`` over n's ``k`` children (all of them, feasible or not;
``+inf`` when n has none, so a leaf is always expanded). The descent stops at n when the expand arm
scores strictly higher than the best child (ties go to the child) or n has no expandable child.
``c`` = 0.3; ``ln N`` uses ``max(N, 1)``.

Step type at the selected node (:meth:`SearchTree.step_type`): large at the root, when the node
already has >= 2 small-step children, or with probability 0.2; small otherwise.

Diverse pool (:meth:`SearchTree.diverse_pool`): every large-step node on the path root -> n heads a
component (itself and its descendants through small steps, branches included); the pool holds
the best feasible kernel (lowest latency) of each component in path order; when there are more
than 5, a uniform random sample of 5 (the published configs add no kernels from outside the path:
``pool_size_extra_max`` 0).

Differences from the published code, forced by the environment: only feasible kernels are
expandable (the env's parent slots hold feasible kernels only, so an infeasible node is a leaf
whose reward is still backed up; the published tree may refine a kernel that failed), and a small
step's context is the env's parent plus its recalled memories rather than the last 5 kernels of
the small-step chain.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from kernel_gym.envs.rewards import AdaExploreReward
from kernel_gym.envs.rewards import adaexplore_shaping as shaped_reward

__all__ = ["ROOT", "Node", "SearchTree", "shaped_reward", "UCB_WEIGHT", "P_LARGE", "MAX_POOL", "SMALL_CHILDREN_LARGE"]

#: id of the virtual root
ROOT = -1
UCB_WEIGHT = 0.3
P_LARGE = 0.2
MAX_POOL = 5
SMALL_CHILDREN_LARGE = 2


def verifier_reward(verifier: dict[str, Any] | None) -> float:
    """:func:`shaped_reward` of a verifier result dict."""
    return AdaExploreReward()(verifier or {}, "refining", None)


@dataclass
class Node:
    """One kernel of the tree (``id`` = env trace id; the root has id ``ROOT``)."""

    id: int
    parent: int | None = None
    mode: str = "large"  # how it was made: "small" (refinement) or "large" (draft / regeneration)
    feasible: bool = False
    latency_s: float | None = None
    speedup: float | None = None
    reward: float = 0.0  # own shaped reward
    visits: int = 0  # subtree visits (own creation included)
    value_sum: float = 0.0  # subtree shaped-reward sum
    children: list[int] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return self.value_sum / self.visits if self.visits else 0.0


class SearchTree:
    """The tree of one task. ``nodes`` maps id -> :class:`Node`; ``nodes[ROOT]`` is the root."""

    def __init__(
        self,
        weight: float = UCB_WEIGHT,
        p_large: float = P_LARGE,
        max_pool: int = MAX_POOL,
        small_children_large: int = SMALL_CHILDREN_LARGE,
    ) -> None:
        self.weight = float(weight)
        self.p_large = float(p_large)
        self.max_pool = int(max_pool)
        self.small_children_large = int(small_children_large)
        self.nodes: dict[int, Node] = {ROOT: Node(ROOT, None, "root")}

    @property
    def root(self) -> Node:
        return self.nodes[ROOT]

    def __contains__(self, node_id: int) -> bool:
        return int(node_id) in self.nodes

    def __len__(self) -> int:
        return len(self.nodes) - 1

    # -- building -----------------------------------------------------------------------------
    def add(
        self,
        node_id: int,
        parent: int | None,
        mode: str,
        reward: float,
        feasible: bool,
        latency_s: float | None = None,
        speedup: float | None = None,
    ) -> Node:
        """Add a kernel under ``parent`` (None or unknown -> the root) and back its reward up the path.
        Adding an id twice returns the existing node unchanged."""
        node_id = int(node_id)
        if node_id in self.nodes:
            return self.nodes[node_id]
        pid = ROOT if parent is None or int(parent) not in self.nodes else int(parent)
        node = Node(
            node_id,
            pid,
            "small" if mode == "small" and pid != ROOT else "large",
            bool(feasible),
            latency_s,
            speedup,
            float(reward),
            1,
            float(reward),
        )
        self.nodes[node_id] = node
        self.nodes[pid].children.append(node_id)
        a: int | None = pid
        while a is not None:
            an = self.nodes[a]
            an.visits += 1
            an.value_sum += float(reward)
            a = an.parent
        return node

    # -- queries ------------------------------------------------------------------------------
    def path(self, node_id: int) -> list[int]:
        """Ids from the root's child down to ``node_id`` (empty for the root)."""
        out: list[int] = []
        n: int | None = int(node_id)
        while n is not None and n != ROOT:
            out.append(n)
            n = self.nodes[n].parent
        return out[::-1]

    def small_children(self, node_id: int) -> int:
        return sum(1 for c in self.nodes[node_id].children if self.nodes[c].mode == "small")

    def expandable_children(self, node_id: int) -> list[int]:
        return [c for c in self.nodes[node_id].children if self.nodes[c].feasible]

    def expand_value(self, node_id: int) -> float:
        """UCB score of the expand arm at ``node_id``: the best child mean plus
        ``c * sqrt(ln N / k^2)`` over its ``k`` children; ``+inf`` without children."""
        n = self.nodes[node_id]
        if not n.children:
            return math.inf
        best = max(self.nodes[c].mean for c in n.children)
        return best + self.weight * math.sqrt(math.log(max(n.visits, 1)) / len(n.children) ** 2)

    def ucb_arms(self, node_id: int) -> list[tuple[int, float]]:
        """``[(arm, ucb)]`` at ``node_id``: the expand arm first (arm = node_id), then expandable children."""
        n = self.nodes[node_id]
        ln = math.log(max(n.visits, 1))
        arms = [(node_id, self.expand_value(node_id))]
        for c in self.expandable_children(node_id):
            cn = self.nodes[c]
            u = math.inf if cn.visits == 0 else cn.mean + self.weight * math.sqrt(ln / cn.visits)
            arms.append((c, u))
        return arms

    def select(self, allowed: Iterable[int] | None = None) -> int:
        """The node to expand (UCB1 descent with an expand arm, see the module doc). ``allowed``: ids
        that may be chosen as children (e.g. those the env can address); None = all."""
        ok = None if allowed is None else {int(i) for i in allowed}
        cur = ROOT
        while True:
            arms = self.ucb_arms(cur)
            expand_u = arms[0][1]
            children = [(a, u) for a, u in arms[1:] if ok is None or a in ok]
            if not children:
                return cur
            best_child, best_u = children[0]
            for a, u in children[1:]:
                if u > best_u:
                    best_child, best_u = a, u
            if expand_u > best_u:
                return cur
            cur = best_child

    def step_type(self, node_id: int, coin: float) -> str:
        """ "large" at the root, at a node with >= 2 small-step children, or when ``coin < p_large``."""
        if node_id == ROOT or self.small_children(node_id) >= self.small_children_large or coin < self.p_large:
            return "large"
        return "small"

    def chain_members(self, head: int) -> list[int]:
        """``head`` and its descendants reachable through small steps only."""
        out, todo = [], [head]
        while todo:
            n = todo.pop()
            out.append(n)
            todo.extend(c for c in self.nodes[n].children if self.nodes[c].mode == "small")
        return out

    def diverse_pool(self, node_id: int, rng: np.random.Generator | None = None) -> list[int]:
        """Best feasible kernel of each small-step component headed on the path to ``node_id``, in
        path order; more than ``max_pool`` are cut to a uniform sample of ``max_pool`` drawn with
        ``rng`` (kept in path order), or to the first ``max_pool`` without one."""
        heads = [n for n in self.path(node_id) if self.nodes[n].mode != "small"]
        best: list[int] = []
        for h in heads:
            feas = [m for m in self.chain_members(h) if self.nodes[m].feasible and self.nodes[m].latency_s]
            if feas:
                best.append(min(feas, key=lambda m: (self.nodes[m].latency_s, m)))
        best = list(dict.fromkeys(best))
        if len(best) > self.max_pool:
            picked = (
                rng.choice(len(best), size=self.max_pool, replace=False) if rng is not None else range(self.max_pool)
            )
            keep = {best[int(i)] for i in picked}
            best = [m for m in best if m in keep]
        return best

    # -- persistence --------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"nodes": [asdict(n) for n in self.nodes.values()]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.nodes = {int(d["id"]): Node(**d) for d in state["nodes"]}
