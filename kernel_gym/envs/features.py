"""Numeric features of the observation: task embedding projection, candidate and parent rows.

Kept separate from the env so that policies (and the flat wrapper) share one definition.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from kernel_gym.memory import ITEM_KINDS, MemoryItem

__all__ = [
    "CANDIDATE_FEATURES",
    "PARENT_FEATURES",
    "FEATURE_CLIP",
    "TaskProjection",
    "item_outcome",
    "candidate_row",
    "parent_row",
    "clean_text",
]

#: Column names of ``obs["candidates"]`` (one row per candidate slot).
CANDIDATE_FEATURES: tuple[str, ...] = (
    ("similarity",)
    + tuple(f"kind_{k}" for k in ITEM_KINDS)
    + ("level_match", "category_match", "outcome", "log2_speedup", "age", "use_count", "q1", "q2")
)
#: Column names of ``obs["parents"]`` (one row per parent slot).
PARENT_FEATURES: tuple[str, ...] = ("log10_latency_s", "log2_speedup", "depth", "q2")
#: Every numeric feature is clipped to [-FEATURE_CLIP, FEATURE_CLIP].
FEATURE_CLIP = 10.0

_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e\n\t]")


def clean_text(text: str, limit: int) -> str:
    """Printable ASCII only (the Text spaces' charset: other characters become "?"), cut to
    ``limit`` characters."""
    return _NOT_PRINTABLE_ASCII.sub("?", text[:limit])


def _clip(x: float) -> float:
    if x is None or not math.isfinite(x):
        return 0.0
    return float(min(FEATURE_CLIP, max(-FEATURE_CLIP, x)))


def _log2(x: Any) -> float:
    return math.log2(x) if isinstance(x, (int, float)) and x > 0 else 0.0


def item_outcome(item: MemoryItem) -> float:
    """+1 a feasible trace / success, -1 a failure or validity rule, 0 knowledge."""
    if item.kind == "experience_success":
        return 1.0
    if item.kind in ("experience_failure", "validity_rule"):
        return -1.0
    if item.kind == "trace":
        return 1.0 if item.payload.get("feasible") else -1.0
    return 0.0


def candidate_row(item: MemoryItem, similarity: float, task_level: int, task_category: str, clock: int) -> np.ndarray:
    """One row of ``obs["candidates"]``: see :data:`CANDIDATE_FEATURES`."""
    kind = [1.0 if item.kind == k else 0.0 for k in ITEM_KINDS]
    age = max(0, clock - (item.created_at or 0))
    row = [
        similarity,
        *kind,
        float(item.level == task_level),
        float(item.category == task_category),
        item_outcome(item),
        _log2(item.payload.get("speedup")),
        math.log1p(age) / 10.0,
        math.log1p(item.use_count) / 5.0,
        item.q1,
        item.q2,
    ]
    return np.array([_clip(v) for v in row], dtype=np.float32)


def parent_row(latency_s: float | None, speedup: float | None, depth: int, q2: float) -> np.ndarray:
    """One row of ``obs["parents"]``: see :data:`PARENT_FEATURES`."""
    lat = math.log10(latency_s) if latency_s and latency_s > 0 else 0.0
    return np.array([_clip(lat), _clip(_log2(speedup)), _clip(float(depth)), _clip(q2)], dtype=np.float32)


class TaskProjection:
    """A fixed Gaussian random projection of task embeddings to ``out_dim`` (unit length), so the
    observation stays small whatever the embedder's dimension. Seeded: identical in every process."""

    def __init__(self, in_dim: int, out_dim: int = 64, seed: int = 20260) -> None:
        rng = np.random.default_rng(seed)
        self.matrix = (rng.standard_normal((in_dim, out_dim)) / math.sqrt(out_dim)).astype(np.float32)

    def __call__(self, vec: np.ndarray) -> np.ndarray:
        out = np.asarray(vec, dtype=np.float32) @ self.matrix
        n = float(np.linalg.norm(out))
        return (out / n if n > 0 else out).astype(np.float32)
