"""AdaExploreAgent: adapt (validity rules) + explore (a tree of kernels) (arXiv 2604.16625).

**Adapt.** After every infeasible step the rule writer (:mod:`agents.rules`; deterministic by
default, or an LLM that words the sentence) turns the failure into one "You cannot ..." rule.
Rules are ``validity_rule`` items of the shared store keyed ``rule/<backend>/<rule_key>``; a
failure whose key exists adds one to that rule's ``count``. Rules with ``count >= rule_threshold``
(3) are *active* and go into every context.

**Explore.** One :class:`~agents.tree.SearchTree` per task: UCB1 descent (weight 0.3) picks a node;
the step there is large at the root, at a node with >= 2 small-step children, or with probability
0.2, small otherwise. A small step refines the node (``mode=0``, parent = the node); a large step
regenerates (``mode=1``) with the node as parent (none at the root: a fresh draft) and the diverse
pool (best kernel of each small-step chain on the path, at most 5) as ``pool``. Tree rewards are
AdaExplore's shaping (0 / 0.05 / 0.4-1.6 linear in speedup clipped to [0.1, 10]), computed from
the verifier result; the env's own reward is not used by the tree.

**Through the env's action interface** (run with ``search_actions=True`` and a large
``max_parents``, e.g. 8):

- Context: the active rules that are among the K recalled candidates (highest count first, at most
  N), then the most similar remaining candidates up to N. *Limitation*: the action can only pick
  recalled slots, so an active rule that the env's similarity recall did not surface cannot be
  added (``last_decision["active_rules_missing"]`` counts them); see the report for the proposed
  env extension that pins active rules into the candidate pool.
- Parent: the env shows only the P best feasible kernels (``info["parents"]``). The selected node
  maps to its slot when shown; otherwise (*approximation*) to the nearest shown ancestor on its
  path, else to the shown kernel with the closest log-latency; ``last_decision["approximated"]``
  says so. The new kernel is attached in the tree under the parent the env actually used
  (``info["parent_id"]``), so the tree stays true. Pool members that are not shown are dropped.
- When the env accepts trace ids directly (``id_actions=True``, or auto when the env's info says
  ``info["id_actions"]``), the action also carries ``parent_id`` (trace id, -1 = none) and
  ``pool_ids`` (P trace ids, -1 padded); envs without that extension ignore the keys.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .base import Agent
from .rules import Rule, RuleBook, deterministic_writer, llm_rule_writer
from .selection import filled_item, filled_slots, n_select
from .tree import MAX_POOL, P_LARGE, ROOT, SMALL_CHILDREN_LARGE, UCB_WEIGHT, SearchTree, shaped_reward, verifier_reward

__all__ = ["AdaExploreAgent", "choose_context", "map_to_slot"]


def choose_context(cands: list[dict[str, Any] | None], n: int, forced: list[int] | None = None) -> list[int]:
    """Slots for the context: ``forced`` slots first (in the order given, at most ``n``), then the
    most similar remaining filled slots (ties: lower slot) up to ``n``."""
    out = [s for s in (forced or []) if 0 <= s < len(cands) and cands[s] is not None][: max(0, n)]
    rest = sorted(
        (s for s in filled_slots(cands) if s not in out),
        key=lambda s: (-float(filled_item(cands, s).get("similarity") or 0.0), s),
    )
    return out + rest[: max(0, n - len(out))]


def map_to_slot(
    node_id: int | None, parents: list[dict[str, Any] | None], tree: SearchTree | None = None
) -> tuple[int | None, bool]:
    """Parent slot of trace ``node_id`` in ``parents``: ``(slot, approximated)``. A node that is
    not shown maps to its nearest shown ancestor (when ``tree`` knows the path), else to the shown
    kernel with the closest log-latency; None (no parent) when nothing is shown or for the root."""
    if node_id is None or node_id == ROOT:
        return None, False
    slot_of = {int(p["id"]): i for i, p in enumerate(parents) if p is not None}
    if not slot_of:
        return None, True
    if int(node_id) in slot_of:
        return slot_of[int(node_id)], False
    if tree is not None and node_id in tree:
        for anc in reversed(tree.path(node_id)[:-1]):
            if anc in slot_of:
                return slot_of[anc], True
        lat = tree.nodes[node_id].latency_s
        if lat:

            def dist(s: int) -> tuple[float, int]:
                pl = filled_item(parents, s).get("latency_s")
                return (abs(math.log(pl) - math.log(lat)) if pl else math.inf, s)

            return min(slot_of.values(), key=dist), True
    return min(slot_of.values()), True


class AdaExploreAgent(Agent):
    """AdaExplore through the env's action interface.

    Args:
        rule_threshold: count from which a rule goes into every context (3).
        ucb_weight: UCB1 exploration weight (0.3).
        p_large: probability of a large step at a node that would otherwise take a small one (0.2).
        max_pool: most kernels in a large step's diverse pool (5).
        small_children_large: a node with this many small-step children takes a large step (2).
        rules_from_mismatch: also write rules for numerical mismatches (optional in the paper; off).
        rule_writer: "deterministic" (default), "litellm:<model>" (an LLM words the rule; the key
            stays deterministic), or a callable ``(verifier, code) -> Rule | None``.
        id_actions: put ``parent_id`` / ``pool_ids`` (trace ids) into the action: True, False, or
            None = when the env's info carries ``id_actions: True``.
        n_select: override of the env's N.
        seed: rng seed (the large-step coin).
    """

    name = "adaexplore"

    def __init__(
        self,
        rule_threshold: int = 3,
        ucb_weight: float = UCB_WEIGHT,
        p_large: float = P_LARGE,
        max_pool: int = MAX_POOL,
        small_children_large: int = SMALL_CHILDREN_LARGE,
        rules_from_mismatch: bool = False,
        rule_writer: str | Callable[[Mapping[str, Any], str], Rule | None] | None = "deterministic",
        id_actions: bool | None = None,
        n_select: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed)
        self.rule_threshold = int(rule_threshold)
        self.tree_kwargs: dict[str, Any] = dict(
            weight=float(ucb_weight),
            p_large=float(p_large),
            max_pool=int(max_pool),
            small_children_large=int(small_children_large),
        )
        self.rules_from_mismatch = bool(rules_from_mismatch)
        self.rule_writer = self._make_writer(rule_writer)
        self.id_actions = id_actions
        self.n_select = n_select
        self.trees: dict[str, SearchTree] = {}
        self.backend: str | None = None
        self.task_id: str | None = None
        self._pending: dict[str, Any] | None = None
        #: what the last act decided (node, mode, slots, approximations); for logging and tests
        self.last_decision: dict[str, Any] = {}
        #: the last update's rule (text, key, item id, created) or None
        self.last_rule: dict[str, Any] | None = None
        self.stats = {"steps": 0, "large": 0, "approximated": 0, "rules_written": 0, "rules_matched": 0}

    def _make_writer(self, spec: Any) -> Callable[[Mapping[str, Any], str], Rule | None]:
        if spec is None or spec == "deterministic":
            return deterministic_writer(self.rules_from_mismatch)
        if isinstance(spec, str) and spec.startswith("litellm:"):
            from kernel_gym.llm.registry import get_generator

            return llm_rule_writer(get_generator(spec), self.rules_from_mismatch)
        if callable(spec):
            return spec
        raise ValueError(f"rule_writer must be 'deterministic', 'litellm:<model>' or a callable, got {spec!r}")

    # -- helpers --------------------------------------------------------------------------------
    def tree(self, task_id: str) -> SearchTree:
        if task_id not in self.trees:
            self.trees[task_id] = SearchTree(**self.tree_kwargs)
        return self.trees[task_id]

    def _sync_parents(self, tree: SearchTree, parents: list[dict[str, Any] | None]) -> None:
        """Kernels the env shows that the tree lacks (from earlier episodes / runs) join under the root."""
        for p in parents:
            if p is not None and int(p["id"]) not in tree:
                tree.add(
                    int(p["id"]),
                    None,
                    "large",
                    shaped_reward(True, True, p.get("speedup")),
                    True,
                    p.get("latency_s"),
                    p.get("speedup"),
                )

    def rulebook(self) -> RuleBook | None:
        if self.memory is None:
            return None
        return RuleBook(self.memory, self.backend or "ascend_sim", self.rule_threshold)

    def active_rule_slots(self, cands: list[dict[str, Any] | None]) -> tuple[list[int], int]:
        """Slots holding rules with ``count >= rule_threshold`` (highest count first) and how many
        active rules of the store the recall did not surface."""
        if self.memory is None:
            return [], 0
        rule_slots = [s for s in filled_slots(cands) if filled_item(cands, s)["kind"] == "validity_rule"]
        counts = {it.id: it.count for it in self.memory.get_many([filled_item(cands, s)["id"] for s in rule_slots])}
        active = [s for s in rule_slots if counts.get(filled_item(cands, s)["id"], 0) >= self.rule_threshold]
        active.sort(key=lambda s: (-counts[filled_item(cands, s)["id"]], s))
        book = self.rulebook()
        shown = {filled_item(cands, s)["id"] for s in active}
        missing = sum(1 for it in book.active() if it.id not in shown) if book is not None else 0
        return active, missing

    # -- acting ---------------------------------------------------------------------------------
    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        self.task_id = str(info.get("task_id"))
        self._sync_parents(self.tree(self.task_id), info.get("parents") or [])
        self._pending = None

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        task_id = str(info.get("task_id", self.task_id))
        self.task_id = task_id
        tree = self.tree(task_id)
        parents = list(info.get("parents") or [])
        self._sync_parents(tree, parents)
        cands = list(info.get("candidates") or [])
        n = n_select(info, self.n_select)

        forced, missing = self.active_rule_slots(cands)
        selected = choose_context(cands, n, forced)

        use_ids = bool(info.get("id_actions")) if self.id_actions is None else bool(self.id_actions)
        shown = {int(p["id"]) for p in parents if p is not None}
        node = tree.select()
        # both always drawn: the agent's rng stream does not depend on the tree
        coin = float(self.rng.random())
        pool_rng = np.random.default_rng(int(self.rng.integers(2**32)))
        mode = tree.step_type(node, coin)
        slot, approx = map_to_slot(node, parents, tree)
        approx = approx and not use_ids  # with id actions the env gets the exact node
        pool_ids = tree.diverse_pool(node, pool_rng) if mode == "large" else []
        pool_mask = np.zeros(len(parents), dtype=np.int8)
        dropped = 0
        for pid in pool_ids:
            if pid in shown:
                pool_mask[[i for i, p in enumerate(parents) if p is not None and int(p["id"]) == pid][0]] = 1
            else:
                dropped += 1
        action = self.make_action(len(cands), selected, slot)
        action["mode"] = 1 if mode == "large" else 0
        action["pool"] = pool_mask
        if use_ids:
            action["parent_id"] = -1 if node == ROOT else int(node)
            action["pool_ids"] = np.array(pool_ids + [-1] * max(0, len(parents) - len(pool_ids)), dtype=np.int64)
        self.last_decision = {
            "task_id": task_id,
            "node": node,
            "mode": mode,
            "coin": coin,
            "slot": slot,
            "approximated": approx,
            "pool_ids": pool_ids,
            "pool_dropped": 0 if use_ids else dropped,
            "forced_rules": [filled_item(cands, s)["id"] for s in forced[:n]],
            "active_rules_missing": missing,
            "selected": selected,
        }
        self._pending = dict(self.last_decision)
        self.stats["steps"] += 1
        self.stats["large"] += mode == "large"
        self.stats["approximated"] += bool(approx)
        return action

    # -- learning -------------------------------------------------------------------------------
    def update(
        self, obs: dict[str, Any], action: dict[str, Any], reward: float, next_obs: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """Add the new kernel to the tree under the parent the env used; write a rule on failure."""
        task_id = str(info.get("task_id", self.task_id))
        tree = self.tree(task_id)
        verifier = info.get("verifier") or {}
        mode = info.get("mode") or (self._pending or {}).get("mode", "small")
        trace_id = info.get("trace_id")
        if self.memory is not None and trace_id is not None and self.backend is None:
            try:
                self.backend = self.memory.get(int(trace_id)).backend
            except KeyError:
                pass
        feasible = bool(info.get("feasible", verifier.get("feasible")))
        if trace_id is not None:
            tree.add(
                int(trace_id),
                info.get("parent_id"),
                str(mode),
                verifier_reward(verifier),
                feasible,
                verifier.get("latency_s") if feasible else None,
                verifier.get("speedup") if feasible else None,
            )
        self.last_rule = None
        if not feasible and self.memory is not None:
            rule = self.rule_writer(verifier, str(info.get("code") or ""))
            if rule is not None:
                book = self.rulebook()
                assert book is not None  # memory is attached
                rid, created = book.add(rule)
                self.last_rule = {"text": rule.text, "key": rule.key, "id": rid, "created": created}
                self.stats["rules_written" if created else "rules_matched"] += 1
        self._pending = None

    # -- persistence ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "trees": {t: tr.state_dict() for t, tr in self.trees.items()},
            "backend": self.backend,
            "stats": dict(self.stats),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.trees = {}
        for t, st in state.get("trees", {}).items():
            tr = SearchTree(**self.tree_kwargs)
            tr.load_state_dict(st)
            self.trees[t] = tr
        self.backend = state.get("backend")
        self.stats.update(state.get("stats", {}))
