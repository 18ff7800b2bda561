"""EvolutionaryAgent: Kernel-Smith / OpenEvolve-style evolution through the env (arXiv 2603.28342).

Per task, a population :class:`~agents.archive.Archive`: islands of MAP-Elites grids over (code
size, speedup); fitness = speedup. Each step works on one island (round robin); the parent is
sampled from the island's top performers (probability ``exploit_ratio``) or from a random
occupied cell (diversity); every ``migration_interval`` steps of a task the fittest
``n_migrants`` elites of each island migrate to the next island (ring). The child (a small step,
``mode=0``: the generator edits the parent) joins the parent's island if feasible.

Structured feedback: the env hands the generator the parent kernel together with its verifier
result (compile, correctness, speedup, latency, error log), which the prompt renders in the
parent section, and the previous step's verifier result as feedback. On top, when the parent's
``experience_*`` summary is among the recalled candidates it is put into the context first; the
rest of the context is the most similar candidates up to N.

Env interface and its limit: only the P best feasible kernels are addressable by slot
(``info["parents"]``). A sampled member that is not shown maps to the shown kernel with the
closest log-latency (``last_decision["approximated"]``); with an env that accepts trace ids
(``id_actions``) the action also carries ``parent_id``. Run with ``max_parents`` >= 8 and
``search_actions=True`` (the ``mode`` key is then set to 0 explicitly). While the task has no
feasible kernel the agent drafts from scratch (parent 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .adaexplore import choose_context, map_to_slot
from .archive import Archive, Member
from .base import Agent
from .selection import filled_item, filled_slots, n_select

__all__ = ["EvolutionaryAgent"]


class EvolutionaryAgent(Agent):
    """Islands + MAP-Elites parent sampling.

    Args:
        n_islands: islands per task (3).
        bins: cells per feature dimension (8).
        size_range: code-size range in characters binned on a log scale ((500, 32000)).
        speedup_range: speedup range binned on a log scale ((1/16, 16)).
        exploit_ratio: probability of a parent among the island's top ``top_k`` (0.7; else a random cell).
        top_k: size of the top-performer pool (3).
        migration_interval: steps of a task between migrations (5).
        n_migrants: elites each island sends per migration (1).
        feedback_context: put the parent's experience item into the context when it was recalled (True).
        id_actions: add ``parent_id`` (trace id) to actions: True / False / None = from ``info["id_actions"]``.
        n_select: override of the env's N.
        seed: rng seed.
    """

    name = "evolutionary"

    def __init__(
        self,
        n_islands: int = 3,
        bins: int = 8,
        size_range: tuple[float, float] = (500.0, 32000.0),
        speedup_range: tuple[float, float] = (1 / 16, 16.0),
        exploit_ratio: float = 0.7,
        top_k: int = 3,
        migration_interval: int = 5,
        n_migrants: int = 1,
        feedback_context: bool = True,
        id_actions: bool | None = None,
        n_select: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed)
        self.archive_kwargs: dict[str, Any] = dict(
            n_islands=int(n_islands), bins=int(bins), size_range=tuple(size_range), speedup_range=tuple(speedup_range)
        )
        self.exploit_ratio = float(exploit_ratio)
        self.top_k = int(top_k)
        self.migration_interval = int(migration_interval)
        self.n_migrants = int(n_migrants)
        self.feedback_context = bool(feedback_context)
        self.id_actions = id_actions
        self.n_select = n_select
        self.archives: dict[str, Archive] = {}
        self.steps: dict[str, int] = {}
        self.task_id: str | None = None
        self._pending: dict[str, Any] | None = None
        self.last_decision: dict[str, Any] = {}
        self.last_migration: list[tuple[int, int, int]] = []
        self.stats = {"steps": 0, "approximated": 0, "migrations": 0, "inserted": 0}

    def archive(self, task_id: str) -> Archive:
        if task_id not in self.archives:
            self.archives[task_id] = Archive(**self.archive_kwargs)
        return self.archives[task_id]

    def _code_size(self, trace_id: int, code: str | None = None) -> int:
        if code is not None:
            return len(code)
        if self.memory is not None:
            try:
                return len(self.memory.get(int(trace_id)).payload.get("code") or "")
            except KeyError:
                return 0
        return 0

    def _sync_parents(self, arch: Archive, parents: list[dict[str, Any] | None]) -> None:
        """Shown kernels the archive lacks (earlier episodes / runs) join the islands round robin."""
        for p in parents:
            if p is not None and int(p["id"]) not in arch.members:
                m = Member(
                    int(p["id"]),
                    _fitness(p.get("speedup"), p.get("latency_s")),
                    self._code_size(int(p["id"])),
                    p.get("speedup"),
                    p.get("latency_s"),
                )
                arch.insert(len(arch.members) % arch.n_islands, m)

    def _feedback_slots(self, cands: list[dict[str, Any] | None], parent_id: int | None) -> list[int]:
        """Slots of the parent's experience summary (payload ``trace_id`` = parent), if recalled."""
        if parent_id is None or self.memory is None or not self.feedback_context:
            return []
        slots = [s for s in filled_slots(cands) if str(filled_item(cands, s)["kind"]).startswith("experience")]
        items = {it.id: it for it in self.memory.get_many([filled_item(cands, s)["id"] for s in slots])}
        return [
            s
            for s in slots
            if items.get(filled_item(cands, s)["id"]) is not None
            and items[filled_item(cands, s)["id"]].payload.get("trace_id") == parent_id
        ]

    # -- acting ---------------------------------------------------------------------------------
    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        self.task_id = str(info.get("task_id"))
        self._sync_parents(self.archive(self.task_id), info.get("parents") or [])

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        task_id = str(info.get("task_id", self.task_id))
        self.task_id = task_id
        arch = self.archive(task_id)
        parents = list(info.get("parents") or [])
        self._sync_parents(arch, parents)
        cands = list(info.get("candidates") or [])
        n = n_select(info, self.n_select)
        step = self.steps.get(task_id, 0)
        island = step % arch.n_islands
        pid, how = arch.sample_parent(island, self.rng, self.exploit_ratio, self.top_k)
        slot, approx = (None, False)
        if pid is not None:
            lat = arch.members[pid].latency_s
            slot, approx = map_to_slot(pid, parents)
            if approx and lat:  # closest log-latency among the shown kernels
                shown = [i for i, p in enumerate(parents) if p is not None and p.get("latency_s")]
                if shown:
                    slot = min(shown, key=lambda i: (abs(math.log(parents[i]["latency_s"]) - math.log(lat)), i))
        use_ids = bool(info.get("id_actions")) if self.id_actions is None else bool(self.id_actions)
        used_parent = pid if use_ids else (int(filled_item(parents, slot)["id"]) if slot is not None else None)
        selected = choose_context(cands, n, self._feedback_slots(cands, used_parent))
        action = self.make_action(len(cands), selected, slot)
        action["mode"] = 0
        action["pool"] = np.zeros(len(parents), dtype=np.int8)
        if use_ids:
            action["parent_id"] = -1 if pid is None else int(pid)
            action["pool_ids"] = np.full(len(parents), -1, dtype=np.int64)
        self.last_decision = {
            "task_id": task_id,
            "island": island,
            "sampled": pid,
            "how": how,
            "slot": slot,
            "approximated": bool(approx) and not use_ids,
            "selected": selected,
        }
        self._pending = {"island": island}
        self.stats["steps"] += 1
        self.stats["approximated"] += bool(approx) and not use_ids
        return action

    # -- learning -------------------------------------------------------------------------------
    def update(
        self, obs: dict[str, Any], action: dict[str, Any], reward: float, next_obs: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """Insert a feasible child into its island; migrate every ``migration_interval`` steps."""
        task_id = str(info.get("task_id", self.task_id))
        arch = self.archive(task_id)
        island = (self._pending or {}).get("island", 0)
        verifier = info.get("verifier") or {}
        if info.get("feasible") and info.get("trace_id") is not None:
            code = info.get("code")
            m = Member(
                int(info["trace_id"]),
                _fitness(verifier.get("speedup"), verifier.get("latency_s")),
                self._code_size(int(info["trace_id"]), code if isinstance(code, str) else None),
                verifier.get("speedup"),
                verifier.get("latency_s"),
                info.get("parent_id"),
            )
            self.stats["inserted"] += arch.insert(island, m)
        step = self.steps.get(task_id, 0) + 1
        self.steps[task_id] = step
        self.last_migration = []
        if self.migration_interval > 0 and step % self.migration_interval == 0:
            self.last_migration = arch.migrate(self.n_migrants)
            self.stats["migrations"] += 1
        self._pending = None

    # -- persistence ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "archives": {t: a.state_dict() for t, a in self.archives.items()},
            "steps": dict(self.steps),
            "stats": dict(self.stats),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.archives = {}
        for t, st in state.get("archives", {}).items():
            a = Archive(**self.archive_kwargs)
            a.load_state_dict(st)
            self.archives[t] = a
        self.steps = {t: int(v) for t, v in state.get("steps", {}).items()}
        self.stats.update(state.get("stats", {}))


def _fitness(speedup: Any, latency_s: Any) -> float:
    """Speedup, else 1 / latency, else 0."""
    if isinstance(speedup, (int, float)) and speedup > 0:
        return float(speedup)
    if isinstance(latency_s, (int, float)) and latency_s > 0:
        return 1.0 / float(latency_s)
    return 0.0
