"""MemoryStore: the persistent memory of kernel-gym (SQLite in WAL mode + a faiss vector index).

SQLite is the source of truth; the vector index (:mod:`kernel_gym.memory.index`) is a cache
saved beside the database as ``<db>.faiss`` together with a stamp of the SQLite state it reflects
(store uuid, generation, index-log sequence, item count). Every write transaction increments the
``generation`` counter in the meta table; deletions and changes of an item's vector or filter
attributes are also appended to ``kg_index_log``. Before a recall the store compares the
generation with its index's stamp and catches up incrementally (new ids are those above the
index's max id, since ids only grow; changed / deleted ids come from the log), or rebuilds from
SQLite when the file is missing, foreign to this database, or too old for the log.

Concurrency: any number of processes (and threads: one lock per store object) may open the same
file. Writers take ``BEGIN IMMEDIATE`` with a 30 s busy timeout plus retries, so concurrent writes
are serialised and none is lost; readers never block writers (WAL). A store object re-opens its
connection after ``fork``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import quote

import numpy as np

from .embedders import Embedder, HashingEmbedder, LiteLLMEmbedder, get_embedder, l2_normalize
from .index import VectorIndex
from .types import ID_REF_KEYS, ItemKind, MemoryItem, MemoryStoreError, normalize_kind

__all__ = ["MemoryStore", "SCHEMA_VERSION"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
FORMAT = "kernel_gym.memory"
JSONL_FORMAT = "kernel_gym.memory/jsonl"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_MAX_LOG_ROWS = 200_000           # the index log is trimmed to half of this when it grows beyond
_RERANK_FULL_ROWS = 256           # fetch full rows directly when at most this many candidates
TITLE_WEIGHT = 1.0                # item vector = normalise(unit(E(text)) + TITLE_WEIGHT * unit(E(title + tags)))

_SCHEMA = """
CREATE TABLE kg_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE kg_items (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL,
    task_id    TEXT,
    level      INTEGER,
    category   TEXT,
    backend    TEXT,
    payload    TEXT NOT NULL DEFAULT '{}',
    q1         REAL NOT NULL DEFAULT 0,
    q2         REAL NOT NULL DEFAULT 0,
    use_count  INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    count      INTEGER NOT NULL DEFAULT 1,
    key        TEXT UNIQUE,
    embedding  BLOB NOT NULL
);
CREATE INDEX kg_items_kind ON kg_items(kind);
CREATE INDEX kg_items_task ON kg_items(task_id);
CREATE TABLE kg_index_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, item_id INTEGER NOT NULL, op TEXT NOT NULL);
"""

_COLUMNS = ("id", "kind", "title", "text", "task_id", "level", "category", "backend", "payload",
            "q1", "q2", "use_count", "created_at", "count", "key", "embedding")
_SELECT = "SELECT " + ", ".join(_COLUMNS) + " FROM kg_items"
_ATTR_SELECT = "SELECT id, kind, level, category, task_id, backend, embedding FROM kg_items"
_INDEXED_FIELDS = frozenset({"kind", "level", "category", "task_id", "backend", "embedding"})
_UPDATABLE = frozenset({"kind", "title", "text", "task_id", "level", "category", "backend", "payload",
                        "q1", "q2", "use_count", "count", "key", "embedding", "created_at"})


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"payload value of type {type(o).__name__} is not JSON serialisable")


def _dumps(payload: dict[str, Any] | None) -> str:
    return json.dumps(payload or {}, default=_json_default, ensure_ascii=False)


def _values(want: Any) -> list[Any]:
    if isinstance(want, (str, int, ItemKind)) or want is None:
        return [want]
    return list(want)


class _WriteCtx:
    """What one write transaction did, for updating this process's index after COMMIT."""

    def __init__(self, conn: sqlite3.Connection, generation: int) -> None:
        self.conn = conn
        self.generation = generation
        self.ops: list[tuple[Any, ...]] = []
        self.log_seq: int | None = None
        self.n_logged = 0
        self.n_delta = 0

    def log(self, item_ids: Iterable[int], op: str) -> None:
        rows = [(int(i), op) for i in item_ids]
        if rows:
            self.conn.executemany("INSERT INTO kg_index_log (item_id, op) VALUES (?, ?)", rows)
            self.log_seq = int(self.conn.execute("SELECT MAX(seq) FROM kg_index_log").fetchone()[0])
            self.n_logged += len(rows)


class MemoryStore:
    """Persistent, process-safe memory of items with filtered top-K cosine recall.

    Args:
        path: SQLite file (created if missing and ``create``); the index goes to ``<path>.faiss``.
        embedder: an :class:`~kernel_gym.memory.embedders.Embedder`. None: the one recorded in the
            store (new stores: ``HashingEmbedder(512)``). One of another name or dimension than
            the store's is refused with :class:`MemoryStoreError`.
        create: create the file when it does not exist.
        n_shards: index shards searched in parallel threads (default min(4, cores)).
        save_index_on_close: write ``<path>.faiss`` on :meth:`close` when it changed.
        timeout: SQLite busy timeout in seconds.

    A store is also a context manager (``with MemoryStore(p) as m: ...``).
    """

    def __init__(self, path: str | os.PathLike[str], embedder: Embedder | None = None, create: bool = True, *,
                 n_shards: int | None = None, save_index_on_close: bool = True, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.index_path = Path(str(self.path) + ".faiss")
        self.timeout = float(timeout)
        self.save_index_on_close = save_index_on_close
        self._n_shards = n_shards
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._index: VectorIndex | None = None
        self._saved_generation: int | None = None
        self._closed = False
        meta = self._open(create, embedder)
        self.uuid: str = meta["store_uuid"]
        self.embedder: Embedder = self._resolve_embedder(meta, embedder)
        self.dim: int = int(meta["embedder_dim"])

    # ================================================================== opening / validation

    def _error(self, what: str, remedy: str) -> MemoryStoreError:
        return MemoryStoreError(f"memory store {self.path}: {what}. {remedy} (the file was not modified)")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        return conn

    def _inspect_existing(self) -> None:
        """Refuse corrupt or foreign files before opening them for writing (reads only)."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(len(_SQLITE_MAGIC))
        except OSError as e:
            raise MemoryStoreError(f"memory store {self.path}: cannot read the file ({e})") from e
        if head != _SQLITE_MAGIC:
            raise self._error("the file is not a SQLite database (corrupt, or another kind of file)",
                              "Move it away or pass another path")
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if tables and "kg_meta" in tables:
                    fmt = conn.execute("SELECT value FROM kg_meta WHERE key = 'format'").fetchone()
                    if not fmt or fmt[0] != FORMAT:
                        tables.discard("kg_meta")
                        tables.add("<kg_meta without the kernel-gym format marker>")
            finally:
                conn.close()
        except sqlite3.DatabaseError as e:
            raise self._error(f"the SQLite database cannot be read ({e}); it is corrupt",
                              "Restore it from a backup or an export_jsonl dump, or pass another path") from e
        if tables and "kg_meta" not in tables:
            raise self._error(f"this is a SQLite database of something else (tables: {', '.join(sorted(tables)[:8])}), "
                              "not a kernel-gym memory store", "Pass the path of a memory store or of a new file")

    def _open(self, create: bool, embedder: Embedder | None) -> dict[str, str]:
        if self.path.is_dir():
            raise MemoryStoreError(f"memory store {self.path}: is a directory; pass a file path such as "
                                   f"{self.path / 'memory.db'}")
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and not create:
            raise MemoryStoreError(f"memory store {self.path}: does not exist; pass create=True to create it")
        if exists:
            self._inspect_existing()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise MemoryStoreError(f"memory store {self.path}: cannot create its directory ({e.strerror}); "
                                       "pass a path in a writable directory") from e
        self._check_writable(exists)
        conn = self._connect()
        try:
            if not exists:
                self._set_wal(conn)
            self._begin_immediate(conn)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "kg_meta" not in tables:
                    if tables:
                        raise self._error(f"this is a SQLite database of something else (tables: "
                                          f"{', '.join(sorted(tables)[:8])})", "Pass another path")
                    emb = embedder if embedder is not None else HashingEmbedder()
                    for stmt in _SCHEMA.split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                    meta = {"format": FORMAT, "schema_version": str(SCHEMA_VERSION), "store_uuid": uuid.uuid4().hex,
                            "embedder_name": emb.name, "embedder_dim": str(int(emb.dim)), "generation": "0",
                            "n_items": "0", "clock": "0", "log_floor": "0", "created_unix": f"{time.time():.3f}"}
                    conn.executemany("INSERT INTO kg_meta (key, value) VALUES (?, ?)", list(meta.items()))
                meta = dict(conn.execute("SELECT key, value FROM kg_meta").fetchall())
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            if meta.get("format") != FORMAT:
                raise self._error("the kg_meta table lacks the kernel-gym format marker", "Pass another path")
            version = int(meta.get("schema_version", "0"))
            if version > SCHEMA_VERSION:
                raise MemoryStoreError(f"memory store {self.path}: schema version {version} is newer than this "
                                       f"kernel-gym supports ({SCHEMA_VERSION}); upgrade kernel-gym")
            if exists:
                self._set_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return meta

    def _check_writable(self, exists: bool) -> None:
        """A store writes its database, its WAL files beside it and its index: refuse early and
        clearly when it cannot, rather than with SQLite's 'attempt to write a readonly database'."""
        parent = self.path.parent
        blocked = [str(p) for p in ([self.path] if exists else []) + [parent] if not os.access(p, os.W_OK)]
        if blocked:
            raise MemoryStoreError(
                f"memory store {self.path}: is read-only ({' and '.join(blocked)} not writable). A memory store "
                "writes its database, the SQLite WAL files beside it and its index file: make the file and its "
                "directory writable, or copy the store to a writable path and open the copy")

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        for attempt in range(50):
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() == "wal":
                    return
            except sqlite3.OperationalError:
                pass
            time.sleep(0.05 * (attempt + 1))
        raise MemoryStoreError(f"memory store {self.path}: cannot switch the database to WAL mode (is it on a "
                               "file system without shared-memory support, e.g. some network mounts?)")

    def _resolve_embedder(self, meta: dict[str, str], embedder: Embedder | None) -> Embedder:
        name, dim = meta["embedder_name"], int(meta["embedder_dim"])
        if embedder is None:
            try:
                return get_embedder(name, dim=dim) if name.startswith("litellm") else get_embedder(name)
            except Exception as e:
                raise MemoryStoreError(f"memory store {self.path}: was built with embedder {name!r} (dim {dim}) "
                                       f"which cannot be rebuilt from its name ({e}); pass that embedder") from e
        if embedder.name != name:
            raise MemoryStoreError(
                f"memory store {self.path}: embedder mismatch: the store was built with {name!r} (dim {dim}), "
                f"you passed {embedder.name!r}. Open it with the same embedder (or embedder=None), or export_jsonl "
                "it and import_jsonl into a new store, which re-embeds the texts")
        if isinstance(embedder, LiteLLMEmbedder) and embedder._dim is None:
            embedder._dim = dim
        if int(embedder.dim) != dim:
            raise MemoryStoreError(
                f"memory store {self.path}: embedder dimension mismatch: the store has {name!r} with dim {dim}, "
                f"you passed {embedder.name!r} with dim {embedder.dim}. Use an embedder of dim {dim}")
        return embedder

    # ================================================================== connection / transactions

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise MemoryStoreError(f"memory store {self.path}: is closed")
        if self._pid != os.getpid():  # forked: never share a SQLite connection across processes
            self._conn = self._connect()
            self._pid = os.getpid()
        assert self._conn is not None
        return self._conn

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        delay = 0.01
        deadline = time.monotonic() + max(self.timeout, 1.0) * 4
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as e:
                msg = str(e).lower()
                if ("locked" not in msg and "busy" not in msg) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    @contextlib.contextmanager
    def _write(self) -> Iterator[_WriteCtx]:
        """A write transaction; bumps the generation and updates this process's index after COMMIT."""
        with self._lock:
            conn = self._connection()
            self._begin_immediate(conn)
            try:
                gen = int(conn.execute("SELECT value FROM kg_meta WHERE key = 'generation'").fetchone()[0])
                ctx = _WriteCtx(conn, gen)
                yield ctx
                conn.execute("UPDATE kg_meta SET value = ? WHERE key = 'generation'", (str(gen + 1),))
                if ctx.n_delta:
                    conn.execute("UPDATE kg_meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'n_items'",
                                 (ctx.n_delta,))
                period = max(1, _MAX_LOG_ROWS // 16)
                if ctx.log_seq is not None and ctx.log_seq // period != (ctx.log_seq - ctx.n_logged) // period:
                    self._trim_log(conn, ctx.log_seq)
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            self._apply_own_write(ctx)

    def _trim_log(self, conn: sqlite3.Connection, last_seq: int) -> None:
        n = conn.execute("SELECT COUNT(*) FROM kg_index_log").fetchone()[0]
        if n > _MAX_LOG_ROWS:
            floor = last_seq - _MAX_LOG_ROWS // 2
            conn.execute("DELETE FROM kg_index_log WHERE seq <= ?", (floor,))
            conn.execute("UPDATE kg_meta SET value = ? WHERE key = 'log_floor'", (str(floor),))

    def _apply_own_write(self, ctx: _WriteCtx) -> None:
        idx = self._index
        if idx is None or idx.stamp.get("generation") != ctx.generation:
            return  # the index is behind anyway; the next recall catches up from SQLite
        try:
            for op in ctx.ops:
                if op[0] == "add":
                    _, ids, vecs, rows = op
                    idx.add(ids, vecs, idx.encode_attrs(rows))
                elif op[0] == "del":
                    idx.remove(op[1])
                elif op[0] == "upd":
                    _, ids, vecs, rows = op
                    idx.update(ids, vecs, idx.encode_attrs(rows))
        except Exception:  # pragma: no cover - defensive: fall back to a rebuild
            log.exception("memory index update failed; it will be rebuilt")
            idx.close()
            self._index = None
            return
        idx.stamp["generation"] = ctx.generation + 1
        idx.stamp["n_items"] = idx.ntotal
        if ctx.log_seq is not None:
            idx.stamp["log_seq"] = ctx.log_seq

    def _meta(self, conn: sqlite3.Connection | None = None) -> dict[str, str]:
        conn = conn or self._connection()
        return dict(conn.execute("SELECT key, value FROM kg_meta").fetchall())

    # ================================================================== embeddings

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)
        if vecs.shape != (len(texts), self.dim):
            raise MemoryStoreError(f"memory store {self.path}: embedder {self.embedder.name!r} returned shape "
                                   f"{vecs.shape}, expected {(len(texts), self.dim)}")
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
        arr = np.asarray(vecs, dtype=np.float32)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.shape != (n, self.dim):
            raise ValueError(f"embeddings must have shape {(n, self.dim)}, got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("embeddings contain NaN or inf")
        norms = np.linalg.norm(arr, axis=1)
        off = (norms > 0) & (np.abs(norms - 1.0) > 1e-5)   # unit rows are kept bit-exact (round trips)
        if off.any():
            arr = arr.copy()
            arr[off] /= norms[off, None]
        return arr

    def _blob(self, vec: np.ndarray) -> bytes:
        return np.ascontiguousarray(vec, dtype="<f4").tobytes()

    # ================================================================== rows <-> items

    def _row_to_item(self, r: Sequence[Any]) -> MemoryItem:
        return MemoryItem(id=r[0], kind=r[1], title=r[2], text=r[3], task_id=r[4], level=r[5], category=r[6],
                          backend=r[7], payload=json.loads(r[8]), q1=r[9], q2=r[10], use_count=r[11],
                          created_at=r[12], count=r[13], key=r[14],
                          embedding=np.frombuffer(r[15], dtype="<f4"))

    @staticmethod
    def _attr_row(item: MemoryItem) -> dict[str, Any]:
        return {"kind": item.kind, "level": item.level, "category": item.category,
                "task_id": item.task_id, "backend": item.backend}

    # ================================================================== writing

    def add(self, items: MemoryItem | Sequence[MemoryItem], embeddings: np.ndarray | None = None,
            on_conflict: str = "ignore") -> int | list[int]:
        """Insert items in one transaction; returns the new id (one item) or ids (a sequence).

        Args:
            items: a MemoryItem or a sequence of them (their ``id`` and ``created_at`` are ignored and
                assigned by the store; the passed objects are updated with them).
            embeddings: optional precomputed float32 ``[n, dim]`` vectors (normalised here); items
                without one are embedded from ``title + text`` (outside the transaction).
            on_conflict: for an item whose ``key`` already exists: ``"ignore"`` returns the existing id
                and changes nothing; ``"error"`` raises ``MemoryStoreError``.
        """
        single = isinstance(items, MemoryItem)
        batch: list[MemoryItem] = [items] if single else list(items)  # type: ignore[list-item]
        ids = self._add(batch, embeddings, on_conflict, keep_ids=False, keep_created=False)
        return ids[0] if single else ids

    def _add(self, batch: list[MemoryItem], embeddings: np.ndarray | None, on_conflict: str,
             keep_ids: bool, keep_created: bool) -> list[int]:
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
        payloads = [_dumps(it.payload) for it in batch]
        out: list[int] = [0] * len(batch)
        with self._write() as ctx:
            conn = ctx.conn
            # keys that already exist (or repeat inside the batch) map to the first id
            keyed = [it.key for it in batch if it.key is not None]
            existing: dict[str, int] = {}
            for start in range(0, len(keyed), 500):
                chunk = keyed[start:start + 500]
                q = f"SELECT key, id FROM kg_items WHERE key IN ({','.join('?' * len(chunk))})"
                existing.update(dict(conn.execute(q, chunk).fetchall()))
            seq_row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kg_items'").fetchone()
            next_id = max(int(seq_row[0]) if seq_row else 0,
                          int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM kg_items").fetchone()[0])) + 1
            clock = int(conn.execute("SELECT value FROM kg_meta WHERE key = 'clock'").fetchone()[0])
            rows, new_pos, pending_key, created_of = [], [], {}, {}
            for i, it in enumerate(batch):
                if it.key is not None and (it.key in existing or it.key in pending_key):
                    if on_conflict == "error":
                        raise MemoryStoreError(f"memory store {self.path}: an item with key {it.key!r} exists")
                    continue
                if keep_ids:
                    if it.id is None:
                        raise ValueError("keep_ids needs item ids")
                    new_id = int(it.id)
                else:
                    new_id = next_id
                    next_id += 1
                if keep_created and it.created_at is not None:
                    created = int(it.created_at)
                    clock = max(clock, created)
                else:
                    clock += 1
                    created = clock
                if it.key is not None:
                    pending_key[it.key] = new_id
                out[i] = new_id
                created_of[i] = created
                new_pos.append(i)
                rows.append((new_id, it.kind, it.title or "", it.text, it.task_id,
                             None if it.level is None else int(it.level), it.category, it.backend, payloads[i],
                             float(it.q1), float(it.q2), int(it.use_count), created, int(it.count), it.key,
                             self._blob(vecs[i])))
            if rows:
                conn.executemany(f"INSERT INTO kg_items ({', '.join(_COLUMNS)}) VALUES "
                                 f"({', '.join('?' * len(_COLUMNS))})", rows)
                conn.execute("UPDATE kg_meta SET value = ? WHERE key = 'clock'", (str(clock),))
                ctx.n_delta = len(rows)
                order = np.argsort([r[0] for r in rows], kind="stable")
                ids_arr = np.asarray([rows[j][0] for j in order], dtype=np.int64)
                pos = [new_pos[j] for j in order]
                ctx.ops.append(("add", ids_arr, vecs[pos], [self._attr_row(batch[p]) for p in pos]))
                if keep_ids and self._index is not None and ids_arr.size and ids_arr[0] <= self._index.max_id:
                    self._index.close()
                    self._index = None  # explicit ids below the index's max: rebuild on next recall
            for i, it in enumerate(batch):
                if out[i] == 0:
                    out[i] = existing.get(it.key) or pending_key[it.key]  # type: ignore[index]
        for i in new_pos:
            batch[i].id = out[i]
            batch[i].created_at = created_of[i]
            batch[i].embedding = vecs[i]
        return out

    def update(self, item_id: int, **fields: Any) -> MemoryItem:
        """Change fields of one item (e.g. ``q1=0.4, payload={...}``); returns the updated item.

        Changing ``text`` or ``title`` re-embeds the item unless ``embedding`` is given too.
        Raises KeyError when the id does not exist.
        """
        bad = set(fields) - _UPDATABLE
        if bad:
            raise ValueError(f"cannot update field(s) {sorted(bad)}; updatable: {sorted(_UPDATABLE)}")
        if "kind" in fields:
            fields["kind"] = normalize_kind(fields["kind"])
        if ("text" in fields or "title" in fields) and "embedding" not in fields:
            cur = self.get(item_id)
            probe = MemoryItem(kind=cur.kind, text=fields.get("text", cur.text), title=fields.get("title", cur.title),
                               payload=fields.get("payload", cur.payload))
            fields["embedding"] = self._item_vectors([probe])[0]
        vec = None
        if "embedding" in fields:
            vec = self._check_vectors(fields["embedding"], 1)[0]
            fields["embedding"] = self._blob(vec)
        if "payload" in fields:
            fields["payload"] = _dumps(fields["payload"])
        if not fields:
            return self.get(item_id)
        with self._write() as ctx:
            sets = ", ".join(f"{k} = ?" for k in fields)
            cur = ctx.conn.execute(f"UPDATE kg_items SET {sets} WHERE id = ?", (*fields.values(), int(item_id)))
            if cur.rowcount == 0:
                raise KeyError(f"memory item {item_id} does not exist")
            if _INDEXED_FIELDS & set(fields):
                row = ctx.conn.execute(_SELECT + " WHERE id = ?", (int(item_id),)).fetchone()
                item = self._row_to_item(row)
                ctx.log([item_id], "upd")
                ctx.ops.append(("upd", np.asarray([item_id], dtype=np.int64),
                                None if vec is None else vec[None, :], [self._attr_row(item)]))
        return self.get(item_id)

    def update_q(self, ids: Sequence[int], q1: float | Sequence[float] | None = None,
                 q2: float | Sequence[float] | None = None) -> None:
        """Set Q-values of many items in one transaction (a scalar applies to all ``ids``)."""
        ids = [int(i) for i in ids]
        if not ids or (q1 is None and q2 is None):
            return
        cols, values = [], []
        for name, v in (("q1", q1), ("q2", q2)):
            if v is None:
                continue
            vals = [float(v)] * len(ids) if np.isscalar(v) else [float(x) for x in v]  # type: ignore[union-attr]
            if len(vals) != len(ids):
                raise ValueError(f"{name} has {len(vals)} values for {len(ids)} ids")
            cols.append(name)
            values.append(vals)
        sets = ", ".join(f"{c} = ?" for c in cols)
        with self._write() as ctx:
            ctx.conn.executemany(f"UPDATE kg_items SET {sets} WHERE id = ?",
                                 [(*(v[j] for v in values), ids[j]) for j in range(len(ids))])

    def mc_update(self, ids: Sequence[int], reward: float, alpha: float = 0.3, stage: str = "drafting") -> None:
        """Monte-Carlo step ``Q <- Q + alpha (reward - Q)`` on q1 (``stage="drafting"``) or q2
        (``"refining"``) of every id, atomically in SQL (no lost update between processes)."""
        col = {"drafting": "q1", "q1": "q1", "refining": "q2", "q2": "q2"}.get(stage)
        if col is None:
            raise ValueError("stage must be 'drafting' or 'refining'")
        ids = [int(i) for i in ids]
        if not ids:
            return
        with self._write() as ctx:
            ctx.conn.executemany(f"UPDATE kg_items SET {col} = {col} + ? * (? - {col}) WHERE id = ?",
                                 [(float(alpha), float(reward), i) for i in ids])

    def increment(self, ids: Sequence[int], field: str = "use_count", by: int = 1) -> None:
        """Atomically add ``by`` to ``use_count`` or ``count`` of every id."""
        if field not in ("use_count", "count"):
            raise ValueError("field must be 'use_count' or 'count'")
        ids = [int(i) for i in ids]
        if not ids:
            return
        with self._write() as ctx:
            ctx.conn.executemany(f"UPDATE kg_items SET {field} = {field} + ? WHERE id = ?", [(int(by), i) for i in ids])

    def delete(self, ids: int | Sequence[int]) -> int:
        """Delete one id or many; returns how many existed."""
        id_list = [int(ids)] if isinstance(ids, (int, np.integer)) else [int(i) for i in ids]
        if not id_list:
            return 0
        with self._write() as ctx:
            n = 0
            for start in range(0, len(id_list), 500):
                chunk = id_list[start:start + 500]
                n += ctx.conn.execute(f"DELETE FROM kg_items WHERE id IN ({','.join('?' * len(chunk))})",
                                      chunk).rowcount
            ctx.n_delta = -n
            if n:
                ctx.log(id_list, "del")
                ctx.ops.append(("del", id_list))
        return n

    # ================================================================== reading

    def get(self, item_id: int) -> MemoryItem:
        """The item with this id (KeyError if absent)."""
        with self._lock:
            row = self._connection().execute(_SELECT + " WHERE id = ?", (int(item_id),)).fetchone()
        if row is None:
            raise KeyError(f"memory item {item_id} does not exist")
        return self._row_to_item(row)

    def get_many(self, ids: Sequence[int]) -> list[MemoryItem]:
        """Items for ``ids`` in the order given; ids that do not exist are left out."""
        ids = [int(i) for i in ids]
        found: dict[int, MemoryItem] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                for r in conn.execute(_SELECT + f" WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                    found[r[0]] = self._row_to_item(r)
        return [found[i] for i in ids if i in found]

    def _where(self, kinds: Any = None, level: Any = None, category: Any = None, task_id: Any = None,
               exclude_task_id: str | None = None, backend: Any = None) -> tuple[str, list[Any]]:
        clauses, params = [], []
        for col, want in (("kind", kinds), ("level", level), ("category", category), ("task_id", task_id),
                          ("backend", backend)):
            if want is None:
                continue
            vals = _values(want)
            if col == "kind":
                vals = [normalize_kind(v) for v in vals]
            concrete = [v for v in vals if v is not None]
            parts = []
            if concrete:
                parts.append(f"{col} IN ({','.join('?' * len(concrete))})")
                params.extend(concrete)
            if len(concrete) != len(vals):
                parts.append(f"{col} IS NULL")
            clauses.append("(" + " OR ".join(parts) + ")")
        if exclude_task_id is not None:
            clauses.append("(task_id IS NULL OR task_id != ?)")
            params.append(exclude_task_id)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def count(self, kind: Any = None, **filters: Any) -> int:
        """Number of items, optionally filtered (same filters as :meth:`recall`; ``kind`` = ``kinds``)."""
        where, params = self._where(kinds=filters.pop("kinds", kind), **filters)
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM kg_items" + where, params).fetchone()[0])

    def __len__(self) -> int:
        return self.count()

    def iterate(self, kind: Any = None, batch_size: int = 1000, **filters: Any) -> Iterator[MemoryItem]:
        """Yield items in id order (keyset pagination: no long-lived read transaction)."""
        where, params = self._where(kinds=filters.pop("kinds", kind), **filters)
        last = 0
        while True:
            cond = (where + " AND id > ?") if where else " WHERE id > ?"
            with self._lock:
                rows = self._connection().execute(_SELECT + cond + " ORDER BY id LIMIT ?",
                                                  (*params, last, batch_size)).fetchall()
            if not rows:
                return
            for r in rows:
                yield self._row_to_item(r)
            last = rows[-1][0]

    def all(self, kind: Any = None, **filters: Any) -> list[MemoryItem]:
        """All items (optionally filtered) in id order."""
        return list(self.iterate(kind, **filters))

    @property
    def clock(self) -> int:
        """The insertion counter: ``created_at`` of the newest item (age of an item = clock - created_at)."""
        with self._lock:
            return int(self._meta()["clock"])

    @property
    def generation(self) -> int:
        """Number of write transactions ever committed to this store (all processes)."""
        with self._lock:
            return int(self._meta()["generation"])

    # ================================================================== index maintenance

    def _stamp(self, meta: dict[str, str], log_seq: int) -> dict[str, Any]:
        return {"store_uuid": self.uuid, "generation": int(meta["generation"]), "n_items": int(meta["n_items"]),
                "log_seq": int(log_seq), "embedder": self.embedder.name, "dim": self.dim}

    def _rebuild_index(self) -> VectorIndex:
        """Build the index from SQLite in one read snapshot."""
        conn = self._connection()
        idx = VectorIndex(self.dim, self._n_shards)
        conn.execute("BEGIN")
        try:
            meta = self._meta(conn)
            log_seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM kg_index_log").fetchone()[0])
            cur = conn.execute(_ATTR_SELECT + " ORDER BY id")
            while True:
                rows = cur.fetchmany(50_000)
                if not rows:
                    break
                self._index_add_rows(idx, rows)
        finally:
            conn.execute("COMMIT")
        idx.stamp = self._stamp(meta, log_seq)
        if idx.ntotal != idx.stamp["n_items"]:
            raise MemoryStoreError(f"memory store {self.path}: meta n_items={idx.stamp['n_items']} but "
                                   f"{idx.ntotal} rows; the database is inconsistent")
        return idx

    def _vectors_of(self, rows: Sequence[Sequence[Any]], col: int) -> np.ndarray:
        blob = b"".join(r[col] for r in rows)
        if len(blob) != len(rows) * self.dim * 4:
            raise MemoryStoreError(f"memory store {self.path}: stored embeddings do not have dim {self.dim}")
        return np.frombuffer(blob, dtype="<f4").reshape(len(rows), self.dim)

    def _index_add_rows(self, idx: VectorIndex, rows: Sequence[Sequence[Any]]) -> None:
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        attrs = idx.encode_attrs([{"kind": r[1], "level": r[2], "category": r[3],
                                   "task_id": r[4], "backend": r[5]} for r in rows])
        idx.add(ids, self._vectors_of(rows, 6), attrs)

    def _catch_up(self, idx: VectorIndex) -> bool:
        """Bring ``idx`` to the current SQLite state incrementally; False when a rebuild is needed."""
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            meta = self._meta(conn)
            if int(meta["log_floor"]) > idx.stamp["log_seq"]:
                return False
            changes = conn.execute("SELECT seq, item_id FROM kg_index_log WHERE seq > ? ORDER BY seq",
                                   (idx.stamp["log_seq"],)).fetchall()
            log_seq = changes[-1][0] if changes else idx.stamp["log_seq"]
            old_max = idx.max_id
            changed = sorted({c[1] for c in changes if c[1] <= old_max})
            changed_rows = []
            for start in range(0, len(changed), 500):
                chunk = changed[start:start + 500]
                changed_rows += conn.execute(_ATTR_SELECT + f" WHERE id IN ({','.join('?' * len(chunk))})",
                                             chunk).fetchall()
            new_rows = conn.execute(_ATTR_SELECT + " WHERE id > ? ORDER BY id", (old_max,)).fetchall()
        finally:
            conn.execute("COMMIT")
        present = {r[0] for r in changed_rows}
        in_index = set(idx.ids[np.isin(idx.ids, np.asarray(changed, dtype=np.int64))].tolist()) if changed else set()
        if present - in_index:
            return False  # an old id reappeared (explicit-id import): rebuild
        idx.remove([i for i in changed if i not in present])
        if changed_rows:
            changed_rows.sort(key=lambda r: r[0])
            ids = np.asarray([r[0] for r in changed_rows], dtype=np.int64)
            attrs = idx.encode_attrs([{"kind": r[1], "level": r[2], "category": r[3],
                                       "task_id": r[4], "backend": r[5]} for r in changed_rows])
            idx.update(ids, self._vectors_of(changed_rows, 6), attrs)
        if new_rows:
            self._index_add_rows(idx, new_rows)
        idx.stamp = self._stamp(meta, log_seq)
        return idx.ntotal == idx.stamp["n_items"]

    def _load_index_file(self) -> VectorIndex | None:
        """The saved index, if its bytes are the ones this store recorded when saving it.

        The stamp inside the file says which SQLite state it reflects, but anyone can edit a file
        and keep its stamp; the SHA-256 recorded in SQLite (the store of record) at save time
        catches that. A mismatch, or an index saved before digests were recorded, is rebuilt."""
        try:
            raw = self.index_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            log.warning("memory index %s unreadable (%s); rebuilding from SQLite", self.index_path, e)
            return None
        recorded = self._meta().get("index_sha256")
        if recorded != hashlib.sha256(raw).hexdigest():
            log.warning("memory index %s does not match the digest recorded in the store (%s); rebuilding "
                        "from SQLite", self.index_path, "modified since it was saved" if recorded else "no digest")
            return None
        try:
            idx = VectorIndex.from_bytes(raw)
        except Exception as e:  # a damaged cache is rebuilt, never trusted
            log.warning("memory index %s unreadable (%s); rebuilding from SQLite", self.index_path, e)
            return None
        st = idx.stamp
        if (st.get("store_uuid") != self.uuid or st.get("embedder") != self.embedder.name or st.get("dim") != self.dim
                or idx.n_shards != (self._n_shards or idx.n_shards)):
            log.info("memory index %s belongs to another store state; rebuilding", self.index_path)
            return None
        self._saved_generation = st.get("generation")
        return idx

    def _ensure_index(self) -> VectorIndex:
        """The index, up to date with SQLite (loaded, caught up or rebuilt as needed). Caller holds the lock."""
        conn = self._connection()
        gen = int(conn.execute("SELECT value FROM kg_meta WHERE key = 'generation'").fetchone()[0])
        idx = self._index
        if idx is None:
            idx = self._load_index_file()
        if idx is not None and idx.stamp.get("generation") != gen:
            if not self._catch_up(idx):
                idx = None
        if idx is None:
            idx = self._rebuild_index()
        if self._index is not None and self._index is not idx:
            self._index.close()
        self._index = idx
        return idx

    def sync_index(self) -> None:
        """Bring the in-memory index up to date now (recall does this by itself)."""
        with self._lock:
            self._ensure_index()

    def save_index(self, force: bool = False) -> bool:
        """Write ``<db>.faiss`` if the index changed since it was loaded/saved; True if written."""
        with self._lock:
            idx = self._ensure_index()
            gen = idx.stamp["generation"]
            if not force and self._saved_generation == gen and self.index_path.exists():
                return False
            if not force and self.index_path.exists():
                try:  # another process may already have saved a state at least as new (and recorded it)
                    raw = self.index_path.read_bytes()
                    with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                        disk = json.loads(bytes(z["header"]).decode())["stamp"]
                    if (disk.get("store_uuid") == self.uuid and disk.get("generation", -1) >= gen
                            and self._meta().get("index_sha256") == hashlib.sha256(raw).hexdigest()):
                        return False
                except Exception:
                    pass
            # Under the write lock, so the file and its recorded digest always change together.
            conn = self._connection()
            self._begin_immediate(conn)
            try:
                digest = idx.to_file(str(self.index_path))
                conn.execute("INSERT OR REPLACE INTO kg_meta (key, value) VALUES ('index_sha256', ?)", (digest,))
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            self._saved_generation = gen
            return True

    # ================================================================== recall

    def _query_vector(self, query: str | np.ndarray) -> np.ndarray:
        if isinstance(query, str):
            return self._embed([query])[0]
        return self._check_vectors(query, 1)[0]

    def recall(self, query: str | np.ndarray, k: int = 10, kinds: Any = None, level: Any = None,
               category: Any = None, task_id: Any = None, exclude_task_id: str | None = None,
               backend: Any = None) -> list[tuple[MemoryItem, float]]:
        """Top-``k`` items by cosine similarity to ``query`` among those passing the filters.

        Args:
            query: text (embedded with the store's embedder) or a float vector ``[dim]``.
            k: number of results (fewer if fewer items pass the filters).
            kinds, level, category, task_id, backend: a value or a sequence of values to keep
                (None inside a sequence keeps items where the field is unset).
            exclude_task_id: leave out items of this task (cross-task retrieval).
        Returns:
            ``[(item, similarity)]``, similarity = exact float32 cosine in [-1, 1], best first
            (ties by ascending id). Exact: the same as a brute-force scan of the filtered set.
        """
        q = self._query_vector(query)
        filters = {"kind": None if kinds is None else [normalize_kind(v) for v in _values(kinds)],
                   "level": level, "category": category, "task_id": task_id,
                   "exclude_task_id": exclude_task_id, "backend": backend}
        with self._lock:
            idx = self._ensure_index()
            cand, _ = idx.candidates(q, int(k), filters)
            if cand.size == 0:
                return []
            conn = self._connection()
            cand_list = cand.tolist()
            if len(cand_list) > _RERANK_FULL_ROWS:
                embs: dict[int, bytes] = {}
                for start in range(0, len(cand_list), 500):
                    chunk = cand_list[start:start + 500]
                    embs.update(conn.execute(f"SELECT id, embedding FROM kg_items WHERE id IN "
                                             f"({','.join('?' * len(chunk))})", chunk).fetchall())
                ids_found = list(embs)
                scores = self._vectors_of([(b,) for b in embs.values()], 0) @ q
                order = sorted(range(len(ids_found)), key=lambda j: (-scores[j], ids_found[j]))[:k]
                top = [(ids_found[j], float(scores[j])) for j in order]
                items = {it.id: it for it in self.get_many([i for i, _ in top])}
                return [(items[i], s) for i, s in top if i in items]
            rows = []
            for start in range(0, len(cand_list), 500):
                chunk = cand_list[start:start + 500]
                rows += conn.execute(_SELECT + f" WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
        if not rows:
            return []
        scores = self._vectors_of(rows, 15) @ q
        order = sorted(range(len(rows)), key=lambda j: (-scores[j], rows[j][0]))[:k]
        return [(self._row_to_item(rows[j]), float(scores[j])) for j in order]

    # ================================================================== export / import

    def export_jsonl(self, path: str | os.PathLike[str], include_embeddings: bool = True, **filters: Any) -> int:
        """Write a header line and one JSON line per item (id order); returns the number of items.

        Embeddings are kept bit-exact as base64 of little-endian float32 (``embedding_f32``).
        """
        meta = self._meta()
        n = 0
        tmp = Path(f"{path}.tmp.{os.getpid()}")
        with open(tmp, "w", encoding="utf-8") as fh:
            header = {"format": JSONL_FORMAT, "schema_version": SCHEMA_VERSION, "embedder": self.embedder.name,
                      "dim": self.dim, "store_uuid": self.uuid, "clock": int(meta["clock"])}
            fh.write(json.dumps(header) + "\n")
            for it in self.iterate(**filters):
                d = it.to_dict()
                if include_embeddings and it.embedding is not None:
                    d["embedding_f32"] = base64.b64encode(np.ascontiguousarray(it.embedding, "<f4").tobytes()).decode()
                fh.write(json.dumps(d, ensure_ascii=False, default=_json_default) + "\n")
                n += 1
        os.replace(tmp, path)
        return n

    def import_jsonl(self, path: str | os.PathLike[str], batch_size: int = 5000) -> dict[int, int]:
        """Add the items of a file written by :meth:`export_jsonl`; returns ``{old id: new id}``.

        Into an empty store ids and ``created_at`` are kept (an exact round trip). Into a non-empty
        store items get new ids; payload references (:data:`ID_REF_KEYS`) to items of the same file
        are rewritten. Items whose ``key`` already exists map to the existing item (not re-added).
        Embeddings are kept when the file's embedder is the store's, recomputed otherwise.
        """
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
            try:
                header = json.loads(first)
            except json.JSONDecodeError as e:
                raise MemoryStoreError(f"{path}: not a kernel-gym memory export (bad header line)") from e
            if header.get("format") != JSONL_FORMAT:
                raise MemoryStoreError(f"{path}: not a kernel-gym memory export (format {header.get('format')!r})")
            same_embedder = header.get("embedder") == self.embedder.name and int(header.get("dim", -1)) == self.dim
            records = [json.loads(line) for line in fh if line.strip()]
        keep_ids = self.count() == 0
        items: list[MemoryItem] = []
        for d in records:
            emb = d.pop("embedding_f32", None)
            d.pop("embedding", None)
            it = MemoryItem(**d)
            if emb is not None and same_embedder:
                it.embedding = np.frombuffer(base64.b64decode(emb), dtype="<f4")
            items.append(it)
        old_ids = [it.id for it in items]
        mapping: dict[int, int] = {}
        if keep_ids:
            for start in range(0, len(items), batch_size):
                chunk = items[start:start + batch_size]
                new = self._add(chunk, None, "ignore", keep_ids=True, keep_created=True)
                mapping.update(zip(old_ids[start:start + batch_size], new))
            with self._write() as ctx:  # the clock continues after the imported items
                ctx.conn.execute("UPDATE kg_meta SET value = MAX(CAST(value AS INTEGER), ?) WHERE key = 'clock'",
                                 (int(header.get("clock", 0)),))
            return mapping
        for it in items:
            it.id = None
        for start in range(0, len(items), batch_size):
            chunk = items[start:start + batch_size]
            new = self._add(chunk, None, "ignore", keep_ids=False, keep_created=False)
            mapping.update(zip(old_ids[start:start + batch_size], new))
        # rewrite cross-item references inside payloads
        fixes = []
        for old, it in zip(old_ids, items):
            changed = False
            payload = dict(it.payload)
            for key in ID_REF_KEYS:
                v = payload.get(key)
                if isinstance(v, int) and v in mapping:
                    payload[key], changed = mapping[v], True
                elif isinstance(v, list) and any(isinstance(x, int) and x in mapping for x in v):
                    payload[key] = [mapping.get(x, x) if isinstance(x, int) else x for x in v]
                    changed = True
            if changed and it.id is not None and it.id == mapping.get(old):
                fixes.append((_dumps(payload), it.id))
        if fixes:
            with self._write() as ctx:
                ctx.conn.executemany("UPDATE kg_items SET payload = ? WHERE id = ?", fixes)
        return mapping

    # ================================================================== lifecycle

    def close(self) -> None:
        """Save the index (if it changed and ``save_index_on_close``) and close the connection."""
        with self._lock:
            if self._closed:
                return
            try:
                if self.save_index_on_close and self._index is not None and self._pid == os.getpid():
                    try:
                        self.save_index()
                    except Exception:  # saving a cache must never lose the caller's work
                        log.exception("could not save memory index %s", self.index_path)
            finally:
                if self._conn is not None and self._pid == os.getpid():
                    self._conn.close()
                self._conn = None
                if self._index is not None:
                    self._index.close()
                self._closed = True

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.count()} items"
        return f"MemoryStore({str(self.path)!r}, embedder={self.embedder.name!r}, {state})"
