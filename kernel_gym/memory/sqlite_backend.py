"""SQLite (WAL mode) implementation of :class:`~kernel_gym.memory.persistence.StorageBackend`.

Tables: ``kg_meta`` (key/value store record: format marker, schema version, store uuid, embedder
name and dimension, generation, n_items, clock, log_floor, index digest), ``kg_items`` (one row per
item; payload as JSON text, embedding as a little-endian float32 blob, ``key`` UNIQUE) and
``kg_index_log`` (seq, item_id, op): deletions and changes of indexed fields, read by index
catch-up and trimmed to half of :data:`MAX_LOG_ROWS` when it grows beyond.

Concurrency: any number of processes (and threads: one lock per backend object) may open the
same file. Writers take ``BEGIN IMMEDIATE`` with a busy timeout plus retries, so concurrent writes
are serialised and none is lost; value and counter updates are SQL expressions of the old value
evaluated inside that transaction. Readers never block writers (WAL). The connection is reopened
after ``fork``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import numpy as np

from .embedders import Embedder, HashingEmbedder
from .persistence import (
    COUNTER_COLUMNS,
    FORMAT,
    INDEXED_FIELDS,
    SCHEMA_VERSION,
    UPDATABLE_FIELDS,
    VALUE_COLUMNS,
    IndexDelta,
    IndexOp,
    IndexRows,
    InsertResult,
    ItemFilters,
    StoreMeta,
    WriteReceipt,
)
from .types import ItemKind, MemoryItem, MemoryStoreError, normalize_kind, payload_json

__all__ = ["MAX_LOG_ROWS", "SQLiteBackend"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
#: The index log is trimmed to half of this many rows when it grows beyond it.
MAX_LOG_ROWS = 200_000
_CHUNK = 500  # ids per ``IN (...)`` query (SQLite's default variable limit is far above)

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

_COLUMNS = (
    "id",
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
    "created_at",
    "count",
    "key",
    "embedding",
)
_SELECT = "SELECT " + ", ".join(_COLUMNS) + " FROM kg_items"
_ATTR_SELECT = "SELECT id, kind, level, category, task_id, backend, embedding FROM kg_items"


def _blob(vec: np.ndarray) -> bytes:
    return np.ascontiguousarray(vec, dtype="<f4").tobytes()


def _row_to_item(r: Sequence[Any]) -> MemoryItem:
    return MemoryItem(
        id=r[0],
        kind=r[1],
        title=r[2],
        text=r[3],
        task_id=r[4],
        level=r[5],
        category=r[6],
        backend=r[7],
        payload=json.loads(r[8]),
        q1=r[9],
        q2=r[10],
        use_count=r[11],
        created_at=r[12],
        count=r[13],
        key=r[14],
        embedding=np.frombuffer(r[15], dtype="<f4"),
    )


def attr_row(item: MemoryItem) -> dict[str, Any]:
    """The filter attributes of an item, as the vector index encodes them."""
    return {
        "kind": item.kind,
        "level": item.level,
        "category": item.category,
        "task_id": item.task_id,
        "backend": item.backend,
    }


def _values(want: Any) -> list[Any]:
    if isinstance(want, (str, int, ItemKind)) or want is None:
        return [want]
    return list(want)


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


class _Txn:
    """One write transaction in progress: its connection and what it did to the indexed rows."""

    def __init__(self, conn: sqlite3.Connection, generation: int) -> None:
        self.conn = conn
        self.receipt = WriteReceipt(generation=generation)
        self.n_logged = 0
        self.n_delta = 0

    def log(self, item_ids: Sequence[int], op: str) -> None:
        """Append index-log rows (deletions and changes of indexed fields)."""
        rows = [(int(i), op) for i in item_ids]
        if rows:
            self.conn.executemany("INSERT INTO kg_index_log (item_id, op) VALUES (?, ?)", rows)
            self.receipt.log_seq = int(self.conn.execute("SELECT MAX(seq) FROM kg_index_log").fetchone()[0])
            self.n_logged += len(rows)


class SQLiteBackend:
    """A memory store in one SQLite file (WAL mode).

    Args:
        path: the database file (created with its directory when missing and ``create``).
        create: create the store when the file does not exist (else MemoryStoreError).
        new_store_embedder: the embedder recorded in a store created now (None:
            ``HashingEmbedder(512)``); only its ``name`` and ``dim`` are read, and only then.
        timeout: SQLite busy timeout in seconds; a writer retries ``BEGIN IMMEDIATE`` with backoff
            for up to 4 times this long before giving up.

    Before opening for writing, an existing file must start with the SQLite magic and (read
    through an ``immutable=1`` read-only connection, confirmed by a plain read-only one that sees
    the WAL before anything is refused) have no tables or carry ``kg_meta`` with the
    kernel-gym format marker; otherwise MemoryStoreError names the path and a remedy, and the
    file's bytes are untouched.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        new_store_embedder: Embedder | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.timeout = float(timeout)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._closed = False
        self.busy_retries = 0  # BEGIN IMMEDIATE attempts that found another writer's lock (benchmarks read it)
        self._open(create, new_store_embedder)

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
            raise self._error(
                "the file is not a SQLite database (corrupt, or another kind of file)",
                "Move it away or pass another path",
            )
        base = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            tables: set[str] | None = self._read_tables(base + "&immutable=1")
        except sqlite3.DatabaseError:
            tables = None
        if tables is None or (tables and "kg_meta" not in tables):
            # immutable=1 ignores the WAL and other processes' locks: while another process
            # checkpoints a live store, the main file alone is torn (some pages new, some old) and
            # reads as malformed or as something else. A plain read-only connection sees the
            # committed state; only its verdict refuses the file.
            try:
                tables = self._read_tables(base)
            except sqlite3.DatabaseError as e:
                raise self._error(
                    f"the SQLite database cannot be read ({e}); it is corrupt",
                    "Restore it from a backup or an export_jsonl dump, or pass another path",
                ) from e
        if tables and "kg_meta" not in tables:
            raise self._error(
                f"this is a SQLite database of something else (tables: {', '.join(sorted(tables)[:8])}), "
                "not a kernel-gym memory store",
                "Pass the path of a memory store or of a new file",
            )

    def _read_tables(self, uri: str) -> set[str]:
        """The file's table names through a read-only connection; ``kg_meta`` without the format
        marker is reported under another name."""
        conn = sqlite3.connect(uri, uri=True, timeout=self.timeout)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "kg_meta" in tables:
                fmt = conn.execute("SELECT value FROM kg_meta WHERE key = 'format'").fetchone()
                if not fmt or fmt[0] != FORMAT:
                    tables.discard("kg_meta")
                    tables.add("<kg_meta without the kernel-gym format marker>")
            return tables
        finally:
            conn.close()

    def _open(self, create: bool, new_store_embedder: Embedder | None) -> None:
        if self.path.is_dir():
            raise MemoryStoreError(
                f"memory store {self.path}: is a directory; pass a file path such as {self.path / 'memory.db'}"
            )
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and not create:
            raise MemoryStoreError(f"memory store {self.path}: does not exist; pass create=True to create it")
        if exists:
            self._inspect_existing()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise MemoryStoreError(
                    f"memory store {self.path}: cannot create its directory ({e.strerror}); "
                    "pass a path in a writable directory"
                ) from e
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
                        raise self._error(
                            f"this is a SQLite database of something else (tables: {', '.join(sorted(tables)[:8])})",
                            "Pass another path",
                        )
                    self._create_schema(conn, new_store_embedder or HashingEmbedder())
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
                raise MemoryStoreError(
                    f"memory store {self.path}: schema version {version} is newer than this "
                    f"kernel-gym supports ({SCHEMA_VERSION}); upgrade kernel-gym"
                )
            # Version 1 is the only schema so far: a migration from an older version goes here.
            if exists:
                self._set_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    @staticmethod
    def _create_schema(conn: sqlite3.Connection, embedder: Embedder) -> None:
        for stmt in _SCHEMA.split(";"):
            if stmt.strip():
                conn.execute(stmt)
        meta = {
            "format": FORMAT,
            "schema_version": str(SCHEMA_VERSION),
            "store_uuid": uuid.uuid4().hex,
            "embedder_name": embedder.name,
            "embedder_dim": str(int(embedder.dim)),
            "generation": "0",
            "n_items": "0",
            "clock": "0",
            "log_floor": "0",
            "created_unix": f"{time.time():.3f}",
        }
        conn.executemany("INSERT INTO kg_meta (key, value) VALUES (?, ?)", list(meta.items()))

    def _check_writable(self, exists: bool) -> None:
        """A store writes its database, its WAL files beside it and its index: refuse early and
        clearly when it cannot, rather than with SQLite's 'attempt to write a readonly database'."""
        parent = self.path.parent
        blocked = [str(p) for p in ([self.path] if exists else []) + [parent] if not os.access(p, os.W_OK)]
        if blocked:
            raise MemoryStoreError(
                f"memory store {self.path}: is read-only ({' and '.join(blocked)} not writable). A memory store "
                "writes its database, the SQLite WAL files beside it and its index file: make the file and its "
                "directory writable, or copy the store to a writable path and open the copy"
            )

    def _set_wal(self, conn: sqlite3.Connection) -> None:
        for attempt in range(50):
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() == "wal":
                    return
            except sqlite3.OperationalError:
                pass
            time.sleep(0.05 * (attempt + 1))
        raise MemoryStoreError(
            f"memory store {self.path}: cannot switch the database to WAL mode (is it on a "
            "file system without shared-memory support, e.g. some network mounts?)"
        )

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
                self.busy_retries += 1  # another writer held the lock past the busy timeout
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    @contextlib.contextmanager
    def _write(self) -> Iterator[_Txn]:
        """A write transaction; bumps the generation (and n_items by ``n_delta``), trims the log."""
        with self._lock:
            conn = self._connection()
            self._begin_immediate(conn)
            try:
                gen = int(conn.execute("SELECT value FROM kg_meta WHERE key = 'generation'").fetchone()[0])
                txn = _Txn(conn, gen)
                yield txn
                conn.execute("UPDATE kg_meta SET value = ? WHERE key = 'generation'", (str(gen + 1),))
                if txn.n_delta:
                    conn.execute(
                        "UPDATE kg_meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'n_items'", (txn.n_delta,)
                    )
                period = max(1, MAX_LOG_ROWS // 16)
                seq = txn.receipt.log_seq
                if seq is not None and seq // period != (seq - txn.n_logged) // period:
                    self._trim_log(conn, seq)
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the same committed state."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @staticmethod
    def _trim_log(conn: sqlite3.Connection, last_seq: int) -> None:
        n = conn.execute("SELECT COUNT(*) FROM kg_index_log").fetchone()[0]
        if n > MAX_LOG_ROWS:
            floor = last_seq - MAX_LOG_ROWS // 2
            conn.execute("DELETE FROM kg_index_log WHERE seq <= ?", (floor,))
            conn.execute("UPDATE kg_meta SET value = ? WHERE key = 'log_floor'", (str(floor),))

    @staticmethod
    def _meta_of(conn: sqlite3.Connection) -> StoreMeta:
        m = dict(conn.execute("SELECT key, value FROM kg_meta").fetchall())
        return StoreMeta(
            store_uuid=m["store_uuid"],
            schema_version=int(m["schema_version"]),
            embedder_name=m["embedder_name"],
            embedder_dim=int(m["embedder_dim"]),
            generation=int(m["generation"]),
            n_items=int(m["n_items"]),
            clock=int(m["clock"]),
            log_floor=int(m["log_floor"]),
            index_sha256=m.get("index_sha256"),
        )

    def meta(self) -> StoreMeta:
        """The store record now."""
        with self._lock:
            return self._meta_of(self._connection())

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its connection and lock: a copy (another process, a vector env's
        worker) opens its own connection to the same file on first use, as a forked one does."""
        state = self.__dict__.copy()
        state["_conn"] = None
        state["_pid"] = None  # no process owns a connection: _connection() opens one
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def close(self) -> None:
        """Close the connection (in the process that opened it); later calls raise MemoryStoreError."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._closed = True

    # ================================================================== items

    def _dim(self, conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT value FROM kg_meta WHERE key = 'embedder_dim'").fetchone()[0])

    def insert_items(
        self,
        items: Sequence[MemoryItem],
        vectors: np.ndarray,
        *,
        keep_ids: bool,
        keep_created: bool,
        on_conflict: Literal["ignore", "error"],
    ) -> InsertResult:
        """See :meth:`StorageBackend.insert_items`. ``vectors``: float32 ``[len(items), dim]``."""
        payloads = [payload_json(it.payload) for it in items]
        out: list[int] = [0] * len(items)
        created_of: dict[int, int] = {}
        with self._write() as txn:
            conn = txn.conn
            # keys that already exist (or repeat inside the batch) map to the first id
            keyed = [it.key for it in items if it.key is not None]
            existing: dict[str, int] = {}
            for start in range(0, len(keyed), _CHUNK):
                chunk = keyed[start : start + _CHUNK]
                q = f"SELECT key, id FROM kg_items WHERE key IN ({_placeholders(len(chunk))})"
                existing.update(dict(conn.execute(q, chunk).fetchall()))
            # ids only grow (AUTOINCREMENT): the index relies on it to find new items
            seq_row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kg_items'").fetchone()
            max_row = conn.execute("SELECT COALESCE(MAX(id), 0) FROM kg_items").fetchone()
            next_id = max(int(seq_row[0]) if seq_row else 0, int(max_row[0])) + 1
            clock = int(conn.execute("SELECT value FROM kg_meta WHERE key = 'clock'").fetchone()[0])
            rows: list[tuple[Any, ...]] = []
            new_pos: list[int] = []
            pending_key: dict[str, int] = {}
            for i, it in enumerate(items):
                if it.key is not None and (it.key in existing or it.key in pending_key):
                    if on_conflict == "error":
                        raise MemoryStoreError(f"memory store {self.path}: an item with key {it.key!r} exists")
                    out[i] = existing.get(it.key) or pending_key[it.key]
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
                level = None if it.level is None else int(it.level)
                rows.append(
                    (new_id, it.kind, it.title or "", it.text, it.task_id, level, it.category, it.backend,
                     payloads[i], float(it.q1), float(it.q2), int(it.use_count), created, int(it.count), it.key,
                     _blob(vectors[i]))
                )  # fmt: skip
            if rows:
                conn.executemany(
                    f"INSERT INTO kg_items ({', '.join(_COLUMNS)}) VALUES ({_placeholders(len(_COLUMNS))})", rows
                )
                conn.execute("UPDATE kg_meta SET value = ? WHERE key = 'clock'", (str(clock),))
                txn.n_delta = len(rows)
                order = np.argsort([r[0] for r in rows], kind="stable")
                ids_arr = np.asarray([rows[j][0] for j in order], dtype=np.int64)
                pos = [new_pos[j] for j in order]
                txn.receipt.ops.append(IndexOp("add", ids_arr, vectors[pos], [attr_row(items[p]) for p in pos]))
        return InsertResult(ids=out, created_at=created_of, receipt=txn.receipt)

    def update_fields(self, item_id: int, fields: Mapping[str, Any]) -> WriteReceipt:
        """See :meth:`StorageBackend.update_fields`."""
        bad = set(fields) - UPDATABLE_FIELDS
        if bad:
            raise ValueError(f"cannot update field(s) {sorted(bad)}; updatable: {sorted(UPDATABLE_FIELDS)}")
        columns = dict(fields)
        vec: np.ndarray | None = None
        if "embedding" in columns:
            vec = np.asarray(columns["embedding"], dtype=np.float32)
            columns["embedding"] = _blob(vec)
        if "payload" in columns:
            columns["payload"] = payload_json(columns["payload"])
        with self._write() as txn:
            sets = ", ".join(f"{k} = ?" for k in columns)
            cur = txn.conn.execute(f"UPDATE kg_items SET {sets} WHERE id = ?", (*columns.values(), int(item_id)))
            if cur.rowcount == 0:
                raise KeyError(f"memory item {item_id} does not exist")
            if INDEXED_FIELDS & set(columns):
                row = txn.conn.execute(_SELECT + " WHERE id = ?", (int(item_id),)).fetchone()
                txn.log([item_id], "upd")
                txn.receipt.ops.append(
                    IndexOp(
                        "upd",
                        np.asarray([item_id], dtype=np.int64),
                        None if vec is None else vec[None, :],
                        [attr_row(_row_to_item(row))],
                    )
                )
        return txn.receipt

    def delete_items(self, ids: Sequence[int]) -> tuple[int, WriteReceipt]:
        """See :meth:`StorageBackend.delete_items`."""
        id_list = [int(i) for i in ids]
        with self._write() as txn:
            n = 0
            for start in range(0, len(id_list), _CHUNK):
                chunk = id_list[start : start + _CHUNK]
                n += txn.conn.execute(f"DELETE FROM kg_items WHERE id IN ({_placeholders(len(chunk))})", chunk).rowcount
            txn.n_delta = -n
            if n:
                txn.log(id_list, "del")
                txn.receipt.ops.append(IndexOp("del", np.asarray(id_list, dtype=np.int64)))
        return n, txn.receipt

    def read_items(self, ids: Sequence[int]) -> list[MemoryItem]:
        """See :meth:`StorageBackend.read_items`."""
        id_list = [int(i) for i in ids]
        found: dict[int, MemoryItem] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(id_list), _CHUNK):
                chunk = id_list[start : start + _CHUNK]
                for r in conn.execute(_SELECT + f" WHERE id IN ({_placeholders(len(chunk))})", chunk):
                    found[r[0]] = _row_to_item(r)
        return [found[i] for i in id_list if i in found]

    def read_embeddings(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """See :meth:`StorageBackend.read_embeddings`."""
        id_list = [int(i) for i in ids]
        embs: dict[int, bytes] = {}
        with self._lock:
            conn = self._connection()
            dim = self._dim(conn)
            for start in range(0, len(id_list), _CHUNK):
                chunk = id_list[start : start + _CHUNK]
                q = f"SELECT id, embedding FROM kg_items WHERE id IN ({_placeholders(len(chunk))})"
                embs.update(conn.execute(q, chunk).fetchall())
        return np.asarray(list(embs), dtype=np.int64), self._vectors(list(embs.values()), dim)

    def _vectors(self, blobs: Sequence[bytes], dim: int) -> np.ndarray:
        blob = b"".join(blobs)
        if len(blob) != len(blobs) * dim * 4:
            raise MemoryStoreError(f"memory store {self.path}: stored embeddings do not have dim {dim}")
        return np.frombuffer(blob, dtype="<f4").reshape(len(blobs), dim)

    @staticmethod
    def _where(f: ItemFilters) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for col, want in (
            ("kind", f.kinds),
            ("level", f.level),
            ("category", f.category),
            ("task_id", f.task_id),
            ("backend", f.backend),
        ):
            if want is None:
                continue
            vals = _values(want)
            if col == "kind":
                vals = [normalize_kind(v) for v in vals]
            concrete = [v for v in vals if v is not None]
            parts = []
            if concrete:
                parts.append(f"{col} IN ({_placeholders(len(concrete))})")
                params.extend(concrete)
            if len(concrete) != len(vals):
                parts.append(f"{col} IS NULL")
            clauses.append("(" + " OR ".join(parts) + ")")
        if f.exclude_task_id is not None:
            clauses.append("(task_id IS NULL OR task_id != ?)")
            params.append(f.exclude_task_id)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def scan_items(self, filters: ItemFilters, after_id: int, limit: int) -> list[MemoryItem]:
        """See :meth:`StorageBackend.scan_items` (keyset pagination: no long-lived read transaction)."""
        where, params = self._where(filters)
        cond = (where + " AND id > ?") if where else " WHERE id > ?"
        with self._lock:
            rows = (
                self._connection()
                .execute(_SELECT + cond + " ORDER BY id LIMIT ?", (*params, int(after_id), int(limit)))
                .fetchall()
            )
        return [_row_to_item(r) for r in rows]

    def count_items(self, filters: ItemFilters) -> int:
        """See :meth:`StorageBackend.count_items`."""
        where, params = self._where(filters)
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM kg_items" + where, params).fetchone()[0])

    # ================================================================== values and counters

    def set_values(self, ids: Sequence[int], values: Mapping[str, Sequence[float]]) -> WriteReceipt:
        """See :meth:`StorageBackend.set_values`."""
        cols = list(values)
        if not set(cols) <= set(VALUE_COLUMNS):
            raise ValueError(f"value columns are {VALUE_COLUMNS}, got {cols}")
        id_list = [int(i) for i in ids]
        sets = ", ".join(f"{c} = ?" for c in cols)
        rows = [(*(float(values[c][j]) for c in cols), id_list[j]) for j in range(len(id_list))]
        with self._write() as txn:
            txn.conn.executemany(f"UPDATE kg_items SET {sets} WHERE id = ?", rows)
        return txn.receipt

    def step_values(self, column: str, ids: Sequence[int], reward: float, alpha: float) -> WriteReceipt:
        """See :meth:`StorageBackend.step_values`."""
        if column not in VALUE_COLUMNS:
            raise ValueError(f"value columns are {VALUE_COLUMNS}, got {column!r}")
        rows = [(float(alpha), float(reward), int(i)) for i in ids]
        with self._write() as txn:
            txn.conn.executemany(f"UPDATE kg_items SET {column} = {column} + ? * (? - {column}) WHERE id = ?", rows)
        return txn.receipt

    def add_to_counter(self, column: str, ids: Sequence[int], by: int) -> WriteReceipt:
        """See :meth:`StorageBackend.add_to_counter`."""
        if column not in COUNTER_COLUMNS:
            raise ValueError(f"counter columns are {COUNTER_COLUMNS}, got {column!r}")
        rows = [(int(by), int(i)) for i in ids]
        with self._write() as txn:
            txn.conn.executemany(f"UPDATE kg_items SET {column} = {column} + ? WHERE id = ?", rows)
        return txn.receipt

    # ================================================================== provenance

    def advance_clock(self, at_least: int) -> WriteReceipt:
        """See :meth:`StorageBackend.advance_clock`."""
        with self._write() as txn:
            txn.conn.execute(
                "UPDATE kg_meta SET value = MAX(CAST(value AS INTEGER), ?) WHERE key = 'clock'", (int(at_least),)
            )
        return txn.receipt

    def rewrite_payloads(self, payloads: Sequence[tuple[int, dict[str, Any]]]) -> WriteReceipt:
        """See :meth:`StorageBackend.rewrite_payloads`."""
        rows = [(payload_json(p), int(i)) for i, p in payloads]
        with self._write() as txn:
            txn.conn.executemany("UPDATE kg_items SET payload = ? WHERE id = ?", rows)
        return txn.receipt

    # ================================================================== index support

    def _index_rows(self, rows: Sequence[Sequence[Any]], dim: int) -> IndexRows:
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        attrs = [{"kind": r[1], "level": r[2], "category": r[3], "task_id": r[4], "backend": r[5]} for r in rows]
        return IndexRows(ids, self._vectors([r[6] for r in rows], dim), attrs)

    def scan_index_rows(self, consume: Callable[[IndexRows], None], chunk: int = 50_000) -> tuple[StoreMeta, int]:
        """See :meth:`StorageBackend.scan_index_rows`."""
        with self._snapshot() as conn:
            meta = self._meta_of(conn)
            log_seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM kg_index_log").fetchone()[0])
            cur = conn.execute(_ATTR_SELECT + " ORDER BY id")
            while True:
                rows = cur.fetchmany(chunk)
                if not rows:
                    break
                consume(self._index_rows(rows, meta.embedder_dim))
        return meta, log_seq

    def index_delta(self, since_log_seq: int, max_id: int) -> IndexDelta | None:
        """See :meth:`StorageBackend.index_delta`."""
        with self._snapshot() as conn:
            meta = self._meta_of(conn)
            if meta.log_floor > since_log_seq:
                return None
            changes = conn.execute(
                "SELECT seq, item_id FROM kg_index_log WHERE seq > ? ORDER BY seq", (since_log_seq,)
            ).fetchall()
            log_seq = changes[-1][0] if changes else since_log_seq
            changed = sorted({c[1] for c in changes if c[1] <= max_id})
            changed_rows: list[Any] = []
            for start in range(0, len(changed), _CHUNK):
                chunk = changed[start : start + _CHUNK]
                changed_rows += conn.execute(_ATTR_SELECT + f" WHERE id IN ({_placeholders(len(chunk))})", chunk)
            new_rows = conn.execute(_ATTR_SELECT + " WHERE id > ? ORDER BY id", (max_id,)).fetchall()
        changed_rows.sort(key=lambda r: r[0])
        dim = meta.embedder_dim
        return IndexDelta(
            meta, int(log_seq), changed, self._index_rows(changed_rows, dim), self._index_rows(new_rows, dim)
        )

    def record_index_digest(self, write: Callable[[], str]) -> None:
        """See :meth:`StorageBackend.record_index_digest`. Takes the write lock without bumping the
        generation: saving the index changes no item, so no index becomes stale by it."""
        with self._lock:
            conn = self._connection()
            self._begin_immediate(conn)
            try:
                digest = write()
                conn.execute("INSERT OR REPLACE INTO kg_meta (key, value) VALUES ('index_sha256', ?)", (digest,))
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
