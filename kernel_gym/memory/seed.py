"""Loading a backend's seed knowledge M0 into a store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .types import MemoryItem

if TYPE_CHECKING:
    from .store import MemoryStore

__all__ = ["load_seed_knowledge", "seed_items"]


def seed_items(backend: str = "ascend_sim", entries: Sequence[Mapping[str, Any]] | None = None) -> list[MemoryItem]:
    """Seed entries as MemoryItem objects for ``backend``, keyed ``seed/<backend>/<slug>``.

    ``entries`` are dicts with ``slug``, ``kind``, ``title``, ``text``, ``category`` and optional
    ``tags``; None takes the backend's own (``get_backend(backend).seed_items()``)."""
    if entries is None:
        from kernel_gym.backends import get_backend

        entries = get_backend(backend).seed_items()
    out = []
    for d in entries:
        payload = {"seed_key": d["slug"], "tags": list(d.get("tags", ())), "source": "kernel-gym seed M0"}
        out.append(
            MemoryItem(
                kind=d["kind"],
                title=d["title"],
                text=d["text"].strip("\n"),
                category=d["category"],
                backend=backend,
                payload=payload,
                key=f"seed/{backend}/{d['slug']}",
            )
        )
    return out


def load_seed_knowledge(
    store: MemoryStore, backend: str = "ascend_sim", entries: Sequence[Mapping[str, Any]] | None = None
) -> list[int]:
    """Load a backend's M0 into ``store`` in one transaction; returns the ids of all seed items, in
    seed order (empty when the backend has no seed knowledge).

    Idempotent: items are keyed ``seed/<backend>/<slug>``, so a second call (from any process)
    adds nothing and returns the same ids. ``entries`` as for :func:`seed_items`.
    """
    items = seed_items(backend, entries)
    if not items:
        return []
    ids = store.add(items, on_conflict="ignore")
    assert isinstance(ids, list)
    return ids
