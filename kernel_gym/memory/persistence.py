"""The persistence seam of the memory: what a database backend does for :class:`MemoryStore`.

:class:`StorageBackend` is the protocol; :class:`~kernel_gym.memory.sqlite_backend.SQLiteBackend`
implements it on SQLite in WAL mode. Another database (e.g. PostgreSQL) is one more class written
against this protocol and checked by ``tests/memory/test_persistence.py``, which is parametrised
over backends.

A backend is the store of record. It owns:

* the schema (created on first open, refused when newer than :data:`SCHEMA_VERSION`; an older
  version is migrated by the backend when it opens);
* the items (insert with key deduplication and id / ``created_at`` allocation, read, filter,
  update, delete);
* the value columns (``q1``, ``q2``) and counters (``use_count``, ``count``), updated inside
  write transactions as read-modify-write expressions evaluated by the database, so that two
  processes updating the same item never lose an update;
* the provenance of the store (its uuid, the embedder it was built with, the insertion clock);
* what the vector index needs to stay in step: a ``generation`` counter bumped by every write
  transaction, a log of deletions and changes of indexed fields, and consistent snapshots of the
  indexed rows.

Every write method is one transaction and returns a :class:`WriteReceipt` that tells the caller
how to update its in-memory index when nothing else wrote in between.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from .types import MemoryItem

__all__ = [
    "COUNTER_COLUMNS",
    "FORMAT",
    "INDEXED_FIELDS",
    "SCHEMA_VERSION",
    "UPDATABLE_FIELDS",
    "VALUE_COLUMNS",
    "IndexDelta",
    "IndexOp",
    "IndexRows",
    "InsertResult",
    "ItemFilters",
    "ScanInterrupted",
    "StorageBackend",
    "StoreMeta",
    "WriteReceipt",
]

#: Version of the item schema; a backend refuses a store whose recorded version is newer.
SCHEMA_VERSION = 1
#: Marker recorded in every store, so that a database of something else is never taken for one.
FORMAT = "kernel_gym.memory"

#: Fields of :class:`MemoryItem` that :meth:`StorageBackend.update_fields` may change.
UPDATABLE_FIELDS = frozenset(
    {
        "kind",
        "title",
        "text",
        "task_id",
        "level",
        "category",
        "backend",
        "payload",
        "q1",
        "q2",
        "use_count",
        "count",
        "key",
        "embedding",
        "created_at",
    }
)
#: Fields the vector index holds (the vector and the filter attributes): changing one is logged.
INDEXED_FIELDS = frozenset({"kind", "level", "category", "task_id", "backend", "embedding"})
#: Value columns (Q-values) and counter columns.
VALUE_COLUMNS: tuple[str, ...] = ("q1", "q2")
COUNTER_COLUMNS: tuple[str, ...] = ("use_count", "count")


class ScanInterrupted(Exception):
    """:meth:`StorageBackend.scan_index_rows` lost its snapshot after passing some rows on (a
    server backend's connection dropped mid-scan): the consumer's partial rows are void, scan again."""


@dataclass(frozen=True)
class StoreMeta:
    """The store-wide record (provenance and counters) as of one read.

    Attributes:
        store_uuid: random hex id given to the store at creation (never changes).
        schema_version: version of the schema the store was written with.
        embedder_name: name of the embedder the store was built with.
        embedder_dim: dimension of its vectors (number of float32 entries).
        generation: number of write transactions ever committed (all processes).
        n_items: number of items.
        clock: insertion counter: ``created_at`` of the newest item.
        log_floor: index-log sequence number below which the log was trimmed.
        index_sha256: hex SHA-256 of the index file last saved, or None.
    """

    store_uuid: str
    schema_version: int
    embedder_name: str
    embedder_dim: int
    generation: int
    n_items: int
    clock: int
    log_floor: int
    index_sha256: str | None = None


@dataclass(frozen=True)
class ItemFilters:
    """Which items a read keeps. Each field is None (no filter), a value, or a sequence of values
    (None inside a sequence keeps items where the field is unset).

    Attributes:
        kinds: item kinds (strings of :data:`~kernel_gym.memory.types.ITEM_KINDS`).
        level: task levels (ints).
        category: operator families.
        task_id: task ids.
        backend: backend ids.
        exclude_task_id: leave out items of this one task (items without a task are kept).
    """

    kinds: Any = None
    level: Any = None
    category: Any = None
    task_id: Any = None
    backend: Any = None
    exclude_task_id: str | None = None


@dataclass
class IndexRows:
    """Rows as the vector index needs them, in ascending id order.

    Attributes:
        ids: int64 ``[n]`` item ids, strictly ascending.
        vectors: float32 ``[n, dim]`` stored (unit or zero) embeddings.
        attrs: ``n`` dicts of the filter attributes (kind, level, category, task_id, backend).
    """

    ids: np.ndarray
    vectors: np.ndarray
    attrs: list[dict[str, Any]]

    def __len__(self) -> int:
        return int(self.ids.shape[0])


@dataclass
class IndexOp:
    """One change a write made to the indexed rows, for updating an in-memory index after commit.

    ``op`` is ``"add"`` (new ids, all above the previous maximum unless ids were given
    explicitly), ``"del"`` (``ids`` removed; ``vectors`` None, ``attrs`` empty) or ``"upd"``
    (``attrs`` changed, and ``vectors`` when not None). ``ids``: int64 ``[n]``, ascending for
    add/upd; ``vectors``: float32 ``[n, dim]`` or None.
    """

    op: Literal["add", "del", "upd"]
    ids: np.ndarray
    vectors: np.ndarray | None = None
    attrs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class WriteReceipt:
    """What one committed write transaction did.

    Attributes:
        generation: the store's generation before the transaction (it is ``generation + 1`` after).
        log_seq: the last index-log sequence number the transaction wrote, or None if it wrote none.
        ops: changes to the indexed rows, in the order made.
    """

    generation: int
    log_seq: int | None = None
    ops: list[IndexOp] = field(default_factory=list)


@dataclass
class InsertResult:
    """Result of :meth:`StorageBackend.insert_items`.

    Attributes:
        ids: one id per input item: the new id, or the id of the item that already had its key.
        created_at: ``{position in the input: created_at}`` of the items actually inserted.
        receipt: the write receipt.
    """

    ids: list[int]
    created_at: dict[int, int]
    receipt: WriteReceipt


@dataclass
class IndexDelta:
    """What changed in the indexed rows since an index's log position, read in one snapshot.

    Attributes:
        meta: the store record of the snapshot.
        log_seq: the last index-log sequence number of the snapshot.
        changed_ids: ids at or below the index's max id that were logged as deleted or changed.
        changed: current rows of those of ``changed_ids`` that still exist.
        new: rows with ids above the index's max id.
    """

    meta: StoreMeta
    log_seq: int
    changed_ids: list[int]
    changed: IndexRows
    new: IndexRows


class StorageBackend(Protocol):
    """A database holding one memory store. Thread-safe; one object per process (a backend that
    holds connections reopens them after ``fork``).

    Opening (the constructor, not part of the protocol) validates the location, creates the
    schema and the store record for a new store (recording the embedder's name and dimension),
    migrates an older schema, and raises :class:`~kernel_gym.memory.types.MemoryStoreError`
    naming the location and a remedy for anything it cannot open.
    """

    #: Where the store lives, for messages (a path or a URL without credentials).
    location: str

    def meta(self) -> StoreMeta:
        """The store record now."""
        ...

    def close(self) -> None:
        """Release connections; further calls raise MemoryStoreError."""
        ...

    # ------------------------------------------------------------------ items

    def insert_items(
        self,
        items: Sequence[MemoryItem],
        vectors: np.ndarray,
        *,
        keep_ids: bool,
        keep_created: bool,
        on_conflict: Literal["ignore", "error"],
    ) -> InsertResult:
        """Insert ``items`` with their float32 ``[n, dim]`` ``vectors`` in one transaction.

        Ids are allocated above every id ever used (ids only grow) unless ``keep_ids`` (then each
        item's ``id`` is used); ``created_at`` is the next clock value unless ``keep_created`` and
        the item has one (the clock then moves to at least it). An item whose ``key`` exists, or
        repeats inside ``items``, is not inserted and maps to the first id with that key; with
        ``on_conflict="error"`` it raises MemoryStoreError and nothing is inserted.
        """
        ...

    def update_fields(self, item_id: int, fields: Mapping[str, Any]) -> WriteReceipt:
        """Set columns of one item (keys of :data:`UPDATABLE_FIELDS`; ``payload`` a dict,
        ``embedding`` a float32 ``[dim]`` vector). Raises KeyError when the id does not exist."""
        ...

    def delete_items(self, ids: Sequence[int]) -> tuple[int, WriteReceipt]:
        """Delete items; returns how many existed and the receipt."""
        ...

    def read_items(self, ids: Sequence[int]) -> list[MemoryItem]:
        """Items for ``ids`` in the order given (with embeddings); missing ids are left out."""
        ...

    def read_embeddings(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int64 [m], vectors float32 [m, dim])`` of those of ``ids`` that exist."""
        ...

    def scan_items(self, filters: ItemFilters, after_id: int, limit: int) -> list[MemoryItem]:
        """Up to ``limit`` items passing ``filters`` with id above ``after_id``, in id order."""
        ...

    def count_items(self, filters: ItemFilters) -> int:
        """Number of items passing ``filters``."""
        ...

    # ------------------------------------------------------------------ values and counters

    def set_values(self, ids: Sequence[int], values: Mapping[str, Sequence[float]]) -> WriteReceipt:
        """Set value columns (:data:`VALUE_COLUMNS`): ``values[col][j]`` for ``ids[j]``, one transaction."""
        ...

    def step_values(self, column: str, ids: Sequence[int], reward: float, alpha: float) -> WriteReceipt:
        """``column <- column + alpha * (reward - column)`` for every id, evaluated by the database
        inside one write transaction (a concurrent step on the same item is never lost)."""
        ...

    def add_to_counter(self, column: str, ids: Sequence[int], by: int) -> WriteReceipt:
        """``column <- column + by`` (:data:`COUNTER_COLUMNS`) for every id, atomically."""
        ...

    # ------------------------------------------------------------------ provenance

    def advance_clock(self, at_least: int) -> WriteReceipt:
        """Move the insertion clock to at least ``at_least`` (after an import keeping ``created_at``)."""
        ...

    def rewrite_payloads(self, payloads: Sequence[tuple[int, dict[str, Any]]]) -> WriteReceipt:
        """Replace the payloads of items (``(id, payload)`` pairs) in one transaction."""
        ...

    # ------------------------------------------------------------------ index support

    def scan_index_rows(self, consume: Callable[[IndexRows], None], chunk: int = 50_000) -> tuple[StoreMeta, int]:
        """Pass every item's index row to ``consume`` in id order (chunks of at most ``chunk``),
        all from one read snapshot; returns that snapshot's store record and last log sequence.
        Raises :class:`ScanInterrupted` when the snapshot was lost after rows were passed on."""
        ...

    def index_delta(self, since_log_seq: int, max_id: int) -> IndexDelta | None:
        """Changes since log position ``since_log_seq`` for an index holding ids up to ``max_id``;
        None when the log was trimmed past that position (the index must be rebuilt)."""
        ...

    def record_index_digest(self, write: Callable[[], str]) -> None:
        """Run ``write`` (which saves the index file and returns its hex SHA-256) under the write
        lock and record the digest, so the file and its recorded digest change together."""
        ...
