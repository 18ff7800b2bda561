"""Kernel-Smith / OpenEvolve population archive: MAP-Elites cells per island, ring migration.

Features of a kernel: code size (characters) and speedup, each binned on a log scale into
``bins`` cells between ``size_range`` / ``speedup_range`` (values outside fall into the edge
cells). Fitness = speedup (1 / latency when the speedup is unknown). A cell keeps its elite: a
newcomer replaces it when its fitness is higher, or equal with shorter code. Each island has its
own grid; :meth:`Archive.migrate` copies the ``n_migrants`` fittest elites of island i into island
(i + 1) mod n through the same cell rule (a ring, as in OpenEvolve). Only feasible kernels enter
(the env can only refine feasible ones).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["Member", "Archive", "log_bin"]


def log_bin(x: float | None, lo: float, hi: float, bins: int) -> int:
    """Bin of ``x`` on a log scale: ``floor((ln x - ln lo) / (ln hi - ln lo) * bins)`` clipped to [0, bins - 1]."""
    if x is None or not math.isfinite(float(x)) or float(x) <= 0:
        return 0
    b = int(math.floor((math.log(float(x)) - math.log(lo)) / (math.log(hi) - math.log(lo)) * bins + 1e-9))
    return min(max(b, 0), bins - 1)


@dataclass
class Member:
    """One feasible kernel of the archive (``id`` = env trace id)."""

    id: int
    fitness: float
    code_size: int = 0
    speedup: float | None = None
    latency_s: float | None = None
    parent: int | None = None


class Archive:
    """Islands of MAP-Elites grids over (code size, speedup) for one task."""

    def __init__(
        self,
        n_islands: int = 3,
        bins: int = 8,
        size_range: tuple[float, float] = (500.0, 32000.0),
        speedup_range: tuple[float, float] = (1 / 16, 16.0),
    ) -> None:
        if n_islands < 1 or bins < 1:
            raise ValueError("n_islands and bins must be >= 1")
        self.n_islands, self.bins = int(n_islands), int(bins)
        self.size_range = (float(size_range[0]), float(size_range[1]))
        self.speedup_range = (float(speedup_range[0]), float(speedup_range[1]))
        self.members: dict[int, Member] = {}
        #: per island: "cx,cy" -> member id
        self.cells: list[dict[str, int]] = [{} for _ in range(self.n_islands)]

    def cell(self, m: Member) -> tuple[int, int]:
        return (log_bin(m.code_size, *self.size_range, self.bins), log_bin(m.speedup, *self.speedup_range, self.bins))

    @staticmethod
    def _key(c: tuple[int, int]) -> str:
        return f"{c[0]},{c[1]}"

    def insert(self, island: int, m: Member) -> bool:
        """Offer ``m`` to its cell of ``island``; True when it became (or already is) the elite."""
        self.members.setdefault(m.id, m)
        m = self.members[m.id]
        cells = self.cells[int(island) % self.n_islands]
        key = self._key(self.cell(m))
        cur = cells.get(key)
        if cur is None or cur == m.id:
            cells[key] = m.id
            return True
        e = self.members[cur]
        if m.fitness > e.fitness or (m.fitness == e.fitness and m.code_size < e.code_size):
            cells[key] = m.id
            return True
        return False

    def elites(self, island: int | None = None) -> list[int]:
        """Elite ids of one island (None: all islands, deduplicated), fittest first (ties by id)."""
        if island is None:
            ids = {i for c in self.cells for i in c.values()}
        else:
            ids = set(self.cells[int(island) % self.n_islands].values())
        return sorted(ids, key=lambda i: (-self.members[i].fitness, i))

    def island_of(self, member_id: int) -> list[int]:
        return [k for k, c in enumerate(self.cells) if member_id in c.values()]

    def migrate(self, n_migrants: int = 1) -> list[tuple[int, int, int]]:
        """Ring migration: the ``n_migrants`` fittest elites of island i are offered to island
        i + 1 (snapshot taken before any move). Returns ``[(member, from, to)]`` that were inserted."""
        if self.n_islands < 2:
            return []
        snap = [self.elites(k)[: max(0, int(n_migrants))] for k in range(self.n_islands)]
        moved = []
        for k, ids in enumerate(snap):
            dst = (k + 1) % self.n_islands
            for i in ids:
                if i in self.cells[dst].values():
                    continue
                if self.insert(dst, self.members[i]):
                    moved.append((i, k, dst))
        return moved

    def sample_parent(
        self, island: int, rng: np.random.Generator, exploit_ratio: float = 0.7, top_k: int = 3
    ) -> tuple[int | None, str]:
        """A parent from ``island`` (all islands when it is empty): with probability ``exploit_ratio``
        uniformly among its ``top_k`` fittest elites ("top"), else the elite of a uniformly random
        occupied cell ("diverse"). ``(None, "none")`` when the archive is empty. Two rng draws always."""
        coin, u = float(rng.random()), float(rng.random())
        pool = self.elites(island) or self.elites(None)
        if not pool:
            return None, "none"
        if coin < exploit_ratio:
            top = pool[: max(1, int(top_k))]
            return top[min(int(u * len(top)), len(top) - 1)], "top"
        cells = self.cells[int(island) % self.n_islands] or {k: v for c in self.cells for k, v in c.items()}
        keys = sorted(cells)
        return cells[keys[min(int(u * len(keys)), len(keys) - 1)]], "diverse"

    def state_dict(self) -> dict[str, Any]:
        return {"members": [asdict(m) for m in self.members.values()], "cells": [dict(c) for c in self.cells]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.members = {int(d["id"]): Member(**d) for d in state["members"]}
        self.cells = [{k: int(v) for k, v in c.items()} for c in state["cells"]]
