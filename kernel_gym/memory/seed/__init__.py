"""Seed knowledge M0 (written for kernel-gym) and its loader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..types import MemoryItem
from .ascendc_vector import SEED_ITEMS

if TYPE_CHECKING:
    from ..store import MemoryStore

__all__ = ["SEED_ITEMS", "load_seed_knowledge", "seed_items"]


def seed_items(backend: str = "ascend_sim") -> list[MemoryItem]:
    """The seed items as MemoryItem objects for ``backend`` (keys ``seed/<backend>/<slug>``)."""
    out = []
    for d in SEED_ITEMS:
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


def load_seed_knowledge(store: MemoryStore, backend: str = "ascend_sim") -> list[int]:
    """Load M0 into ``store`` in one transaction; returns the ids of all seed items, in seed order.

    Idempotent: items are keyed ``seed/<backend>/<slug>``, so a second call (from any process)
    adds nothing and returns the same ids.
    """
    ids = store.add(seed_items(backend), on_conflict="ignore")
    assert isinstance(ids, list)
    return ids
