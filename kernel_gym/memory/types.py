"""Plain data types of the memory: item kinds, :class:`MemoryItem`, :class:`MemoryStoreError`."""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np


class ItemKind(enum.StrEnum):
    """What a memory item is. Stored in SQLite as the string value."""

    API_TEMPLATE = "api_template"  # backend API usage / code skeletons (seed knowledge)
    BEST_PRACTICE = "best_practice"  # optimisation and correctness advice (seed or distilled)
    EXPERIENCE_SUCCESS = "experience_success"  # summarised experience that led to a feasible/faster kernel
    EXPERIENCE_FAILURE = "experience_failure"  # summarised experience of a failure and its cause
    TRACE = "trace"  # one generation step: code, verifier result, reward, context ids
    VALIDITY_RULE = "validity_rule"  # AdaExplore-style "You cannot ..." rule with an occurrence count


#: All item kinds as strings, in a fixed order (the order defines the integer code of a kind).
ITEM_KINDS: tuple[str, ...] = tuple(k.value for k in ItemKind)

#: Payload keys that hold ids of other memory items (an int or a list of ints). ``import_jsonl``
#: rewrites them when it remaps ids; use these names for cross-item references.
ID_REF_KEYS: tuple[str, ...] = ("parent_id", "context_ids", "trace_id")


class MemoryStoreError(RuntimeError):
    """A memory store cannot be opened or used as asked. The message names the path and a remedy."""


def normalize_kind(kind: str | ItemKind) -> str:
    """Return the string value of ``kind``; raise ``ValueError`` for an unknown kind."""
    value = kind.value if isinstance(kind, ItemKind) else str(kind)
    if value not in ITEM_KINDS:
        raise ValueError(f"unknown memory item kind {kind!r}; expected one of {', '.join(ITEM_KINDS)}")
    return value


@dataclass
class MemoryItem:
    """One record of the memory.

    Attributes:
        kind: one of :data:`ITEM_KINDS`.
        text: what goes into a prompt (also what is embedded, together with ``title``).
        title: a short human-readable name.
        id: assigned by SQLite on ``add`` (None before).
        task_id: the task the item came from (None for task-independent knowledge).
        level: task level (KernelBench 1/2/3) or None.
        category: operator family (e.g. ``"softmax"``, ``"elementwise"``, ``"general"``) or None.
        backend: target backend id (e.g. ``"ascend_sim"``) or None.
        payload: free JSON dict; for a trace e.g. ``code``, ``verifier`` (result dict), ``reward``,
            ``context_ids`` (ids of the items that were in context), ``stage``, ``parent_id``.
        q1: drafting Q-value (did this item help produce a feasible kernel), default 0.0.
        q2: refining Q-value (did it help make the kernel faster), default 0.0.
        use_count: how many times the item was put into a context.
        created_at: global insertion counter of the store at insert time (an "age" feature:
            ``store.clock - item.created_at`` is the number of items inserted since). Assigned on add.
        count: occurrence count (validity rules: how many failures matched the rule); default 1.
        key: optional unique key used to deduplicate (e.g. seed items); adding an item whose key
            already exists returns the existing id and changes nothing.
        embedding: float32 vector of shape ``[dim]``, L2-normalised; computed on add when None.
    """

    kind: str
    text: str
    title: str = ""
    id: int | None = None
    task_id: str | None = None
    level: int | None = None
    category: str | None = None
    backend: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    q1: float = 0.0
    q2: float = 0.0
    use_count: int = 0
    created_at: int | None = None
    count: int = 1
    key: str | None = None
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.kind = normalize_kind(self.kind)

    def embed_text(self) -> str:
        """Title (with payload tags) and text in one string."""
        head = self.embed_head()
        return f"{head}\n{self.text}" if head else self.text

    def embed_head(self) -> str:
        """The short part of the item that is embedded with extra weight: title plus payload ``tags``."""
        tags = self.payload.get("tags") if isinstance(self.payload, dict) else None
        if isinstance(tags, (list, tuple)) and tags:
            return f"{self.title} [{', '.join(str(t) for t in tags)}]".strip()
        return self.title

    def to_dict(self, with_embedding: bool = False) -> dict[str, Any]:
        """A JSON-able dict of the fields (embedding as a list of floats when asked)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "embedding"}
        if with_embedding and self.embedding is not None:
            d["embedding"] = np.asarray(self.embedding, dtype=np.float32).tolist()
        return d


def json_default(value: Any) -> Any:
    """JSON encoding of the non-JSON values a payload may hold (numpy scalars and arrays, sets, tuples, paths)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"payload value of type {type(value).__name__} is not JSON serialisable")


def payload_json(payload: dict[str, Any] | None) -> str:
    """A payload as the JSON text stored in the database (None is ``{}``)."""
    return json.dumps(payload or {}, default=json_default, ensure_ascii=False)
