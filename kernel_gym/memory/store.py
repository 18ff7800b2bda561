"""MemoryStore: the persistent memory of kernel-gym, a small facade over four parts.

* persistence (:mod:`~kernel_gym.memory.persistence` is the protocol,
  :mod:`~kernel_gym.memory.sqlite_backend` the SQLite/WAL implementation): the store of record,
  its schema, items, value updates inside transactions and provenance;
* index sync (:mod:`~kernel_gym.memory.index_sync`): the faiss index
  (:mod:`~kernel_gym.memory.index`) kept in step with the database by item id, rebuilt when stale;
* values (:mod:`~kernel_gym.memory.values`): the Monte-Carlo Q rule and the counters;
* export (:mod:`~kernel_gym.memory.export`): the JSON-lines dump format.

The facade embeds items (it owns the embedder), routes every write through the backend and the
receipt of that write to the index, and answers recalls: candidates from the index, reranked with
the exact float32 embeddings from the database.

Concurrency: any number of processes (and threads: one lock per store object) may open the same
store; writes are serialised by the database and none is lost; a store object re-opens its
connection after ``fork``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from . import values
from .embedders import Embedder, LiteLLMEmbedder, get_embedder, l2_normalize
from .export import read_jsonl, rewrite_references, write_jsonl
from .index_sync import IndexSync
from .persistence import SCHEMA_VERSION, UPDATABLE_FIELDS, ItemFilters, StorageBackend, StoreMeta, WriteReceipt
from .postgres_backend import PostgresBackend, is_postgres_dsn
from .sqlite_backend import SQLiteBackend
from .types import MemoryItem, MemoryStoreError, normalize_kind

__all__ = ["SCHEMA_VERSION", "TITLE_WEIGHT", "MemoryStore"]

log = logging.getLogger(__name__)

#: Item vector = normalise(unit(E(text)) + TITLE_WEIGHT * unit(E(title + tags))).
TITLE_WEIGHT = 1.0
_RERANK_FULL_ROWS = 256  # fetch full rows directly when at most this many candidates


def _kinds(want: Any) -> list[str] | None:
    """Kinds filter as a list of kind strings (None = no filter)."""
    if want is None:
        return None
    vals = [want] if isinstance(want, str) else list(want)
    return [normalize_kind(v) for v in vals]


class MemoryStore:
    """Persistent, process-safe memory of items with exact filtered top-K cosine recall.

    Args:
        path: the SQLite file (created with its directory when missing and ``create``); the vector
            index is saved beside it as ``<path>.faiss``. A string starting with ``postgresql://``
            is a PostgreSQL DSN instead: the store lives in that database
            (:class:`~kernel_gym.memory.postgres_backend.PostgresBackend`, needs
            ``pip install kernel-gym[postgres]``) and this process's index is saved in the cache
            directory (``$KERNEL_GYM_CACHE/memory-index/<store uuid>.faiss``).
        embedder: an :class:`~kernel_gym.memory.embedders.Embedder`. None: the one recorded in the
            store (new stores: ``HashingEmbedder(512)``). One of another name or dimension than the
            store's is refused with :class:`MemoryStoreError`.
        create: create the store when ``path`` does not exist (else MemoryStoreError).
        n_shards: index shards searched in parallel threads (None: min(4, cores), or a saved
            index's count).
        save_index_on_close: write ``<path>.faiss`` on :meth:`close` when the index changed.
        timeout: database busy timeout in seconds (a writer waiting for another retries for up to
            4 times this long).
        backend: an already opened :class:`~kernel_gym.memory.persistence.StorageBackend` to use
            instead of opening SQLite at ``path`` (``path`` then only names the index file, or is
            the backend's DSN).
        schema: PostgreSQL only: the schema holding the store (created when missing; None: the
            connection's default, ``public``), so one database can hold many stores.
        reconnect_timeout: PostgreSQL only: seconds an operation waits for a lost connection to
            the server to come back before it raises MemoryStoreError.

    Attributes:
        path: the database path (a DSN: the index path without ``.faiss``); ``index_path``:
            ``<path>.faiss``.
        location: where the store lives, for messages (a path, or a DSN without password);
            ``dsn``: the DSN it was opened with, or None for SQLite.
        uuid: the store's id (hex), fixed at creation.
        embedder: the embedder; ``dim``: its vector dimension.
        backend: the store of record; ``index_sync``: the vector index kept in step with it.

    A store is also a context manager (``with MemoryStore(p) as m: ...``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        embedder: Embedder | None = None,
        create: bool = True,
        *,
        n_shards: int | None = None,
        save_index_on_close: bool = True,
        timeout: float = 30.0,
        backend: StorageBackend | None = None,
        schema: str | None = None,
        reconnect_timeout: float = 60.0,
    ) -> None:
        self.timeout = float(timeout)
        self.save_index_on_close = save_index_on_close
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._closed = False
        self.dsn: str | None = str(path) if is_postgres_dsn(path) else None
        if backend is not None:
            self.backend: StorageBackend = backend
        elif self.dsn is not None:
            self.backend = PostgresBackend(
                self.dsn,
                create=create,
                new_store_embedder=embedder,
                timeout=self.timeout,
                schema=schema,
                reconnect_timeout=reconnect_timeout,
            )
        else:
            self.backend = SQLiteBackend(path, create=create, new_store_embedder=embedder, timeout=self.timeout)
        self.location: str = self.backend.location
        meta = self.backend.meta()
        self.uuid: str = meta.store_uuid
        if self.dsn is not None:
            # a database server has no directory beside it: each machine keeps its index in its cache
            from kernel_gym.native.compile import cache_root

            self.path = cache_root() / "memory-index" / self.uuid
            self.path.parent.mkdir(parents=True, exist_ok=True)
        else:
            self.path = Path(path)
        self.index_path = Path(str(self.path) + ".faiss")
        self.embedder: Embedder = self._resolve_embedder(meta, embedder)
        self.dim: int = meta.embedder_dim
        self.index_sync = IndexSync(
            self.backend,
            self.index_path,
            store_uuid=self.uuid,
            embedder_name=self.embedder.name,
            dim=self.dim,
            n_shards=n_shards,
        )

    def _resolve_embedder(self, meta: StoreMeta, embedder: Embedder | None) -> Embedder:
        name, dim = meta.embedder_name, meta.embedder_dim
        if embedder is None:
            try:
                return get_embedder(name, dim=dim) if name.startswith("litellm") else get_embedder(name)
            except Exception as e:
                raise MemoryStoreError(
                    f"memory store {self.location}: was built with embedder {name!r} (dim {dim}) "
                    f"which cannot be rebuilt from its name ({e}); pass that embedder"
                ) from e
        if embedder.name != name:
            raise MemoryStoreError(
                f"memory store {self.location}: embedder mismatch: the store was built with {name!r} (dim {dim}), "
                f"you passed {embedder.name!r}. Open it with the same embedder (or embedder=None), or export_jsonl "
                "it and import_jsonl into a new store, which re-embeds the texts"
            )
        if isinstance(embedder, LiteLLMEmbedder) and embedder._dim is None:
            embedder._dim = dim  # learnt from the store, so no API call is made just to learn it
        if int(embedder.dim) != dim:
            raise MemoryStoreError(
                f"memory store {self.location}: embedder dimension mismatch: the store has {name!r} with dim {dim}, "
                f"you passed {embedder.name!r} with dim {embedder.dim}. Use an embedder of dim {dim}"
            )
        return embedder

    def _commit(self, receipt: WriteReceipt) -> None:
        """Apply a committed write of this store to its index (caller holds the lock)."""
        self.index_sync.apply(receipt)

    # ================================================================== embeddings

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)
        if vecs.shape != (len(texts), self.dim):
            raise MemoryStoreError(
                f"memory store {self.location}: embedder {self.embedder.name!r} returned shape "
                f"{vecs.shape}, expected {(len(texts), self.dim)}"
            )
        return vecs

    def _item_vectors(self, items: Sequence[MemoryItem]) -> np.ndarray:
        """Vectors of items: the text's and the head's (title + tags) embeddings, the head weighted
        by ``TITLE_WEIGHT``, so short titles are not drowned by long code texts. float32 ``[n, dim]``."""
        vecs = self._embed([it.text for it in items])
        heads = [(i, it.embed_head()) for i, it in enumerate(items) if it.embed_head().strip()]
        if heads and TITLE_WEIGHT:
            vecs[[i for i, _ in heads]] += TITLE_WEIGHT * self._embed([h for _, h in heads])
        return l2_normalize(vecs)

    def _check_vectors(self, vecs: Any, n: int) -> np.ndarray:
        """``vecs`` as float32 ``[n, dim]``; rows not of unit length (and not zero) are normalised."""
        arr = np.asarray(vecs, dtype=np.float32)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.shape != (n, self.dim):
            raise ValueError(f"embeddings must have shape {(n, self.dim)}, got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("embeddings contain NaN or inf")
        norms = np.linalg.norm(arr, axis=1)
        off = (norms > 0) & (np.abs(norms - 1.0) > 1e-5)  # unit rows are kept bit-exact (round trips)
        if off.any():
            arr = arr.copy()
            arr[off] /= norms[off, None]
        return arr

    # ================================================================== writing

    def add(
        self,
        items: MemoryItem | Sequence[MemoryItem],
        embeddings: np.ndarray | None = None,
        on_conflict: Literal["ignore", "error"] = "ignore",
    ) -> int | list[int]:
        """Insert items in one transaction; returns the new id (one item) or ids (a sequence).

        Args:
            items: a MemoryItem or a sequence of ``n`` of them. Their ``id`` and ``created_at`` are
                ignored and assigned by the store (ids ascending in input order, ``created_at`` =
                the store's insertion clock); the passed objects are updated with them and with
                their stored ``embedding``.
            embeddings: optional float32 ``[n, dim]`` (or ``[dim]`` for one item) precomputed
                vectors, normalised to unit length here. Without it, items whose ``embedding`` is
                None are embedded from ``title + tags`` and ``text`` (outside the transaction).
            on_conflict: for an item whose ``key`` already exists: ``"ignore"`` returns the
                existing id and changes nothing; ``"error"`` raises MemoryStoreError and adds nothing.
        Returns:
            the id, or a list of ``n`` ids.
        """
        if isinstance(items, MemoryItem):
            return self._add([items], embeddings, on_conflict, keep_ids=False, keep_created=False)[0]
        return self._add(list(items), embeddings, on_conflict, keep_ids=False, keep_created=False)

    def _add(
        self,
        batch: list[MemoryItem],
        embeddings: np.ndarray | None,
        on_conflict: str,
        keep_ids: bool,
        keep_created: bool,
    ) -> list[int]:
        if on_conflict not in ("ignore", "error"):
            raise ValueError("on_conflict must be 'ignore' or 'error'")
        if not batch:
            return []
        for it in batch:
            if not isinstance(it, MemoryItem):
                raise TypeError(f"add() takes MemoryItem objects, got {type(it).__name__}")
            it.kind = normalize_kind(it.kind)
        if embeddings is not None:
            vecs = self._check_vectors(embeddings, len(batch))
        else:
            vecs = np.zeros((len(batch), self.dim), dtype=np.float32)
            todo = [i for i, it in enumerate(batch) if it.embedding is None]
            have = [i for i, it in enumerate(batch) if it.embedding is not None]
            if have:
                vecs[have] = self._check_vectors(np.stack([np.asarray(batch[i].embedding) for i in have]), len(have))
            if todo:
                vecs[todo] = self._item_vectors([batch[i] for i in todo])
        with self._lock:
            result = self.backend.insert_items(
                batch,
                vecs,
                keep_ids=keep_ids,
                keep_created=keep_created,
                on_conflict="error" if on_conflict == "error" else "ignore",
            )
            self._commit(result.receipt)
        for i, created in result.created_at.items():
            batch[i].id = result.ids[i]
            batch[i].created_at = created
            batch[i].embedding = vecs[i]
        return result.ids

    def update(self, item_id: int, **fields: Any) -> MemoryItem:
        """Change fields of one item; returns the updated item.

        Args:
            item_id: the item.
            fields: new values of :class:`MemoryItem` fields except ``id`` (e.g. ``q1=0.4,
                payload={...}``; ``embedding``: float32 ``[dim]``). Changing ``text`` or ``title``
                re-embeds the item unless ``embedding`` is given too.
        Raises:
            KeyError: the id does not exist. ValueError: a field that cannot be updated.
        """
        bad = set(fields) - UPDATABLE_FIELDS
        if bad:
            raise ValueError(f"cannot update field(s) {sorted(bad)}; updatable: {sorted(UPDATABLE_FIELDS)}")
        if "kind" in fields:
            fields["kind"] = normalize_kind(fields["kind"])
        if ("text" in fields or "title" in fields) and "embedding" not in fields:
            cur = self.get(item_id)
            probe = MemoryItem(
                kind=cur.kind,
                text=fields.get("text", cur.text),
                title=fields.get("title", cur.title),
                payload=fields.get("payload", cur.payload),
            )
            fields["embedding"] = self._item_vectors([probe])[0]
        if "embedding" in fields:
            fields["embedding"] = self._check_vectors(fields["embedding"], 1)[0]
        if not fields:
            return self.get(item_id)
        with self._lock:
            self._commit(self.backend.update_fields(int(item_id), fields))
        return self.get(item_id)

    def update_q(
        self,
        ids: Sequence[int],
        q1: float | Sequence[float] | None = None,
        q2: float | Sequence[float] | None = None,
    ) -> None:
        """Set Q-values of many items in one transaction.

        Args:
            ids: ``n`` item ids (ids that do not exist are skipped).
            q1: drafting value: a scalar for every id, ``n`` values, or None to leave it.
            q2: refining value, likewise.
        """
        id_list = [int(i) for i in ids]
        if not id_list or (q1 is None and q2 is None):
            return
        new = {
            name: values.per_id_values(name, v, len(id_list)) for name, v in (("q1", q1), ("q2", q2)) if v is not None
        }
        with self._lock:
            self._commit(self.backend.set_values(id_list, new))

    def mc_update(
        self, ids: Sequence[int], reward: float, alpha: float = values.DEFAULT_ALPHA, stage: str = "drafting"
    ) -> None:
        """Monte-Carlo step ``Q <- Q + alpha (reward - Q)`` (:func:`~kernel_gym.memory.values.mc_step`)
        on every id, evaluated by the database in one write transaction (no update is lost between
        processes). An id listed twice is stepped twice.

        Args:
            ids: item ids (ids that do not exist are skipped).
            reward: the step's reward (the scale of Q).
            alpha: learning rate, usually in ``(0, 1]``.
            stage: ``"drafting"`` updates ``q1``, ``"refining"`` updates ``q2``.
        """
        col = values.q_column(stage)
        id_list = [int(i) for i in ids]
        if not id_list:
            return
        with self._lock:
            self._commit(self.backend.step_values(col, id_list, float(reward), float(alpha)))

    def increment(self, ids: Sequence[int], field: str = "use_count", by: int = 1) -> None:
        """Atomically add ``by`` (an integer count) to ``use_count`` or ``count`` of every id."""
        col = values.counter_column(field)
        id_list = [int(i) for i in ids]
        if not id_list:
            return
        with self._lock:
            self._commit(self.backend.add_to_counter(col, id_list, int(by)))

    def delete(self, ids: int | Sequence[int]) -> int:
        """Delete one id or many; returns how many existed."""
        id_list = [int(ids)] if isinstance(ids, (int, np.integer)) else [int(i) for i in ids]
        if not id_list:
            return 0
        with self._lock:
            n, receipt = self.backend.delete_items(id_list)
            self._commit(receipt)
        return n

    # ================================================================== reading

    def get(self, item_id: int) -> MemoryItem:
        """The item with this id, with its float32 ``[dim]`` embedding (KeyError if absent)."""
        found = self.backend.read_items([int(item_id)])
        if not found:
            raise KeyError(f"memory item {item_id} does not exist")
        return found[0]

    def get_many(self, ids: Sequence[int]) -> list[MemoryItem]:
        """Items for ``ids`` in the order given; ids that do not exist are left out."""
        return self.backend.read_items([int(i) for i in ids])

    @staticmethod
    def _filters(kind: Any, filters: dict[str, Any]) -> ItemFilters:
        kinds = filters.pop("kinds", kind)
        return ItemFilters(kinds=kinds, **filters)

    def count(self, kind: Any = None, **filters: Any) -> int:
        """Number of items, optionally filtered.

        Args:
            kind: a kind or a sequence of kinds (``kinds=`` is the same).
            filters: ``level``, ``category``, ``task_id``, ``backend`` (a value or a sequence; None
                inside a sequence matches an unset field) and ``exclude_task_id``, as in :meth:`recall`.
        """
        return self.backend.count_items(self._filters(kind, filters))

    def __len__(self) -> int:
        return self.count()

    def iterate(self, kind: Any = None, batch_size: int = 1000, **filters: Any) -> Iterator[MemoryItem]:
        """Yield items passing the filters (as in :meth:`count`) in id order, reading ``batch_size``
        rows at a time (keyset pagination: no long-lived read transaction)."""
        f = self._filters(kind, filters)
        last = 0
        while True:
            batch = self.backend.scan_items(f, last, batch_size)
            if not batch:
                return
            yield from batch
            last = int(batch[-1].id or 0)

    def all(self, kind: Any = None, **filters: Any) -> list[MemoryItem]:
        """All items passing the filters (as in :meth:`count`) in id order."""
        return list(self.iterate(kind, **filters))

    @property
    def clock(self) -> int:
        """The insertion counter: ``created_at`` of the newest item (age of an item = clock - created_at)."""
        return self.backend.meta().clock

    @property
    def generation(self) -> int:
        """Number of write transactions ever committed to this store (all processes)."""
        return self.backend.meta().generation

    # ================================================================== index

    def sync_index(self, rebuild: bool = False) -> None:
        """Bring the in-memory index up to date now (recall does this by itself); ``rebuild``
        builds it from the database even when it is current."""
        with self._lock:
            if rebuild:
                self.index_sync.drop()
                self.index_sync.index = self.index_sync.rebuild()
            self.index_sync.current()

    def save_index(self, force: bool = False) -> bool:
        """Write ``<path>.faiss`` if the index changed since it was loaded or saved (and no other
        process saved a state at least as new); ``force`` writes it anyway. True if written."""
        with self._lock:
            return self.index_sync.save(force)

    # ================================================================== recall

    def _query_vector(self, query: str | np.ndarray) -> np.ndarray:
        if isinstance(query, str):
            return self._embed([query])[0]
        return self._check_vectors(query, 1)[0]

    def recall(
        self,
        query: str | np.ndarray,
        k: int = 10,
        kinds: Any = None,
        level: Any = None,
        category: Any = None,
        task_id: Any = None,
        exclude_task_id: str | None = None,
        backend: Any = None,
    ) -> list[tuple[MemoryItem, float]]:
        """Top-``k`` items by cosine similarity to ``query`` among those passing the filters.

        Args:
            query: text (embedded with the store's embedder) or a float vector ``[dim]``
                (normalised here).
            k: number of results (fewer if fewer items pass the filters).
            kinds, level, category, task_id, backend: a value or a sequence of values to keep
                (None inside a sequence keeps items where the field is unset).
            exclude_task_id: leave out items of this task (cross-task retrieval).
        Returns:
            ``[(item, similarity)]``, similarity = exact float32 cosine in [-1, 1], best first
            (ties by ascending id). Exact: the same as a brute-force scan of the filtered set.
        """
        q = self._query_vector(query)
        filters = {
            "kind": _kinds(kinds),
            "level": level,
            "category": category,
            "task_id": task_id,
            "exclude_task_id": exclude_task_id,
            "backend": backend,
        }
        with self._lock:
            cand, _ = self.index_sync.current().candidates(q, int(k), filters)
            if cand.size == 0:
                return []
            cand_list = sorted(cand.tolist())
            if len(cand_list) > _RERANK_FULL_ROWS:  # many candidates: score on embeddings, fetch the top k
                ids_found, vecs = self.backend.read_embeddings(cand_list)
                scores = vecs @ q
                order = sorted(range(len(ids_found)), key=lambda j: (-scores[j], ids_found[j]))[:k]
                top = [(int(ids_found[j]), float(scores[j])) for j in order]
                items = {it.id: it for it in self.get_many([i for i, _ in top])}
                return [(items[i], s) for i, s in top if i in items]
            rows = self.backend.read_items(cand_list)
        if not rows:
            return []
        scores = np.stack([np.asarray(it.embedding) for it in rows]) @ q
        order = sorted(range(len(rows)), key=lambda j: (-scores[j], rows[j].id or 0))[:k]
        return [(rows[j], float(scores[j])) for j in order]

    # ================================================================== export / import

    def export_jsonl(self, path: str | os.PathLike[str], include_embeddings: bool = True, **filters: Any) -> int:
        """Write a header line and one JSON line per item passing ``filters`` (as in :meth:`count`),
        in id order; returns the number of items. Embeddings are kept bit-exact as base64 of
        little-endian float32 (``embedding_f32``); the format is in :mod:`kernel_gym.memory.export`."""
        return write_jsonl(path, self.backend.meta(), self.iterate(**filters), include_embeddings)

    def import_jsonl(self, path: str | os.PathLike[str], batch_size: int = 5000) -> dict[int, int]:
        """Add the items of a file written by :meth:`export_jsonl`; returns ``{old id: new id}``.

        Into an empty store ids and ``created_at`` are kept (an exact round trip). Into a non-empty
        store items get new ids; payload references (:data:`~kernel_gym.memory.types.ID_REF_KEYS`)
        to items of the same file are rewritten. Items whose ``key`` already exists map to the
        existing item (not re-added). Embeddings are kept when the file's embedder is the store's,
        recomputed otherwise. Items are inserted ``batch_size`` per transaction.
        """
        header, items = read_jsonl(path, self.embedder.name, self.dim)
        keep_ids = self.count() == 0
        old_ids = [it.id for it in items]
        mapping: dict[int, int] = {}

        def insert(start: int) -> None:
            chunk = items[start : start + batch_size]
            new = self._add(chunk, None, "ignore", keep_ids=keep_ids, keep_created=keep_ids)
            for old, new_id in zip(old_ids[start : start + batch_size], new, strict=True):
                if old is not None:
                    mapping[old] = new_id

        if keep_ids:
            for start in range(0, len(items), batch_size):
                insert(start)
            with self._lock:  # the clock continues after the imported items
                self._commit(self.backend.advance_clock(int(header.get("clock", 0))))
            return mapping
        for it in items:
            it.id = None
        for start in range(0, len(items), batch_size):
            insert(start)
        fixes = rewrite_references(items, old_ids, mapping)
        if fixes:
            with self._lock:
                self._commit(self.backend.rewrite_payloads(fixes))
        return mapping

    # ================================================================== lifecycle

    def close(self) -> None:
        """Save the index (if it changed and ``save_index_on_close``) and close the database."""
        with self._lock:
            if self._closed:
                return
            try:
                if self.save_index_on_close and self.index_sync.index is not None and self._pid == os.getpid():
                    try:
                        self.save_index()
                    except Exception:  # saving a cache must never lose the caller's work
                        log.exception("could not save memory index %s", self.index_path)
            finally:
                self.backend.close()
                self.index_sync.close()
                self._closed = True

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a vector env's worker, an RLlib-style copy) without its lock; the backend drops
        its connection and the index sync its in-memory index, so the copy reopens the same
        store on first use and sees what every copy wrote, as a forked store does."""
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.count()} items"
        return f"MemoryStore({self.location!r}, embedder={self.embedder.name!r}, {state})"
