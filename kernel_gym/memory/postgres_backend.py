"""PostgreSQL implementation of :class:`~kernel_gym.memory.persistence.StorageBackend` (psycopg 3).

The same three tables as the SQLite backend, in the database the DSN names: ``kg_meta``
(key/value store record), ``kg_items`` (payload as JSON text so round trips are byte-exact,
embedding as little-endian float32 ``bytea``, ``key`` UNIQUE) and ``kg_index_log``.

Concurrency: every write transaction starts by incrementing the ``generation`` row of
``kg_meta``, which takes that row's lock until commit. Writers are therefore serialised (as
SQLite's ``BEGIN IMMEDIATE`` does), which gives three guarantees the index relies on:

* ids (and index-log sequence numbers) are allocated under the lock, so they become visible in
  the order they were allocated: a process catching up by "ids above my max id" misses none;
* the Q steps and counter increments are SQL expressions of the old value inside the UPDATE, so
  two workers updating one item never lose an update;
* a reader in a ``REPEATABLE READ`` snapshot sees the store record and the rows of one state.

Readers never wait for writers (MVCC). One connection per backend object, guarded by a lock;
after ``fork`` the child opens its own connection (the inherited one is left untouched, since
closing it would end the parent's session).

psycopg is imported lazily: ``pip install kernel-gym[postgres]`` installs it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

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
from .sqlite_backend import _COLUMNS, _blob, _row_to_item, _values, attr_row
from .types import MemoryItem, MemoryStoreError, normalize_kind, payload_json

__all__ = ["DSN_PREFIXES", "MAX_LOG_ROWS", "PostgresBackend", "is_postgres_dsn", "redact_dsn"]

#: A store location starting with one of these is a PostgreSQL connection URI.
DSN_PREFIXES = ("postgresql://", "postgres://")
#: The index log is trimmed to half of this many rows when it grows beyond it.
MAX_LOG_ROWS = 200_000
#: Key of the advisory lock taken while creating the schema (two processes may open a new store at once).
_SCHEMA_LOCK_KEY = 0x6B675F6D656D  # "kg_mem"

_SCHEMA = """
CREATE TABLE kg_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE kg_items (
    id         BIGINT PRIMARY KEY,
    kind       TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    text       TEXT NOT NULL,
    task_id    TEXT,
    level      INTEGER,
    category   TEXT,
    backend    TEXT,
    payload    TEXT NOT NULL DEFAULT '{}',
    q1         DOUBLE PRECISION NOT NULL DEFAULT 0,
    q2         DOUBLE PRECISION NOT NULL DEFAULT 0,
    use_count  BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    count      BIGINT NOT NULL DEFAULT 1,
    key        TEXT UNIQUE,
    embedding  BYTEA NOT NULL
);
CREATE INDEX kg_items_kind ON kg_items(kind);
CREATE INDEX kg_items_task ON kg_items(task_id);
CREATE TABLE kg_index_log (seq BIGSERIAL PRIMARY KEY, item_id BIGINT NOT NULL, op TEXT NOT NULL)
"""

_SELECT = "SELECT " + ", ".join(_COLUMNS) + " FROM kg_items"
_ATTR_SELECT = "SELECT id, kind, level, category, task_id, backend, embedding FROM kg_items"
_INSTALL_HINT = "pip install kernel-gym[postgres]"

# Connections inherited through fork are kept referenced here and never closed in the child:
# closing (or garbage-collecting) one would send the server a terminate message on the parent's socket.
_INHERITED: list[Any] = []


def is_postgres_dsn(location: object) -> bool:
    """Whether ``location`` is a PostgreSQL connection URI (``postgresql://...``)."""
    return isinstance(location, str) and location.startswith(DSN_PREFIXES)


def redact_dsn(dsn: str) -> str:
    """``dsn`` without its password, for messages."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:  # not parseable (or psycopg missing): show only the scheme
        return dsn.split("://", 1)[0] + "://..."
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = str(parts.get("host") or "")
    if "/" in host:  # a unix socket directory
        host = f"[{host}]"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise MemoryStoreError(
            f"the PostgreSQL memory backend needs psycopg 3, which is not installed: {_INSTALL_HINT}"
        ) from e
    return psycopg


class _Txn:
    """One write transaction in progress: its cursor and what it did to the indexed rows."""

    def __init__(self, cur: Any, generation: int) -> None:
        self.cur = cur
        self.receipt = WriteReceipt(generation=generation)
        self.n_logged = 0
        self.n_delta = 0

    def log(self, item_ids: Sequence[int], op: str) -> None:
        """Append index-log rows (deletions and changes of indexed fields)."""
        ids = [int(i) for i in item_ids]
        if ids:
            self.cur.execute(
                "INSERT INTO kg_index_log (item_id, op) SELECT unnest(%s::bigint[]), %s RETURNING seq", (ids, op)
            )
            self.receipt.log_seq = max(int(r[0]) for r in self.cur.fetchall())
            self.n_logged += len(ids)


class PostgresBackend:
    """A memory store in a PostgreSQL database.

    Args:
        dsn: libpq connection URI, e.g. ``postgresql://user:pw@host:5432/kernel_gym`` (the
            database must exist; the tables are created in it on first open).
        create: create the store's tables when the database has none (else MemoryStoreError).
        new_store_embedder: the embedder recorded in a store created now (None:
            ``HashingEmbedder(512)``); only its ``name`` and ``dim`` are read, and only then.
        timeout: seconds to wait for the connection, and (times 4) for another writer's lock.

    An unreachable server, a bad DSN, a missing database, or a database holding a ``kg_meta``
    table of something else raise MemoryStoreError naming the location (without password) and a fix.
    """

    def __init__(
        self,
        dsn: str,
        *,
        create: bool = True,
        new_store_embedder: Embedder | None = None,
        timeout: float = 30.0,
    ) -> None:
        self._psycopg = _import_psycopg()
        self.dsn = dsn
        self.location = redact_dsn(dsn)
        self.timeout = float(timeout)
        self._lock = threading.RLock()
        self._conn: Any = None
        self._pid = os.getpid()
        self._closed = False
        self._open(create, new_store_embedder)

    # ================================================================== opening

    def _connect(self) -> Any:
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(1, int(self.timeout)))
        except psycopg.ProgrammingError as e:  # the DSN itself does not parse
            raise MemoryStoreError(
                f"memory store {self.location}: invalid PostgreSQL DSN ({str(e).strip()}). "
                "Pass memory.dsn=postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            ) from e
        except psycopg.OperationalError as e:
            msg = str(e).strip().replace("\n", " ")
            if "does not exist" in msg and "database" in msg:
                fix = "create the database first (e.g. createdb -h HOST -U USER DATABASE) or name an existing one"
            elif "password" in msg or "authentication" in msg:
                fix = "check the user and password in memory.dsn"
            else:
                fix = "start the PostgreSQL server or fix the host/port in memory.dsn"
            raise MemoryStoreError(f"memory store {self.location}: cannot connect to PostgreSQL ({msg}); {fix}") from e
        # a writer waiting for another one's lock gives up after 4 x timeout, as the SQLite backend does
        conn.execute(f"SET lock_timeout = {int(self.timeout * 4000)}")
        return conn

    def _open(self, create: bool, new_store_embedder: Embedder | None) -> None:
        conn = self._connect()
        try:
            with conn.transaction():
                cur = conn.cursor()
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                cur.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema() AND table_name IN ('kg_meta', 'kg_items', 'kg_index_log')"
                )
                tables = {r[0] for r in cur.fetchall()}
                if not tables:
                    if not create:
                        raise MemoryStoreError(
                            f"memory store {self.location}: the database holds no memory store; pass create=True"
                        )
                    self._create_schema(cur, new_store_embedder or HashingEmbedder())
                elif "kg_meta" not in tables:
                    raise MemoryStoreError(
                        f"memory store {self.location}: the database has tables {sorted(tables)} but no kg_meta, "
                        "so it is not a kernel-gym memory store. Name another database in memory.dsn"
                    )
                cur.execute("SELECT key, value FROM kg_meta")
                meta = dict(cur.fetchall())
        except self._psycopg.Error as e:
            conn.close()
            raise MemoryStoreError(f"memory store {self.location}: cannot open ({e})") from e
        except BaseException:
            conn.close()
            raise
        if meta.get("format") != FORMAT:
            conn.close()
            raise MemoryStoreError(
                f"memory store {self.location}: the kg_meta table lacks the kernel-gym format marker; "
                "name another database in memory.dsn"
            )
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            conn.close()
            raise MemoryStoreError(
                f"memory store {self.location}: schema version {version} is newer than this "
                f"kernel-gym supports ({SCHEMA_VERSION}); upgrade kernel-gym"
            )
        # Version 1 is the only schema so far: a migration from an older version goes here.
        self._conn = conn

    @staticmethod
    def _create_schema(cur: Any, embedder: Embedder) -> None:
        for stmt in _SCHEMA.split(";"):
            if stmt.strip():
                cur.execute(stmt)
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
            # the highest id ever used: ids only grow, even after the newest item is deleted
            "id_high": "0",
            "created_unix": f"{time.time():.3f}",
        }
        cur.executemany("INSERT INTO kg_meta (key, value) VALUES (%s, %s)", list(meta.items()))

    # ================================================================== connection / transactions

    def _connection(self) -> Any:
        if self._closed:
            raise MemoryStoreError(f"memory store {self.location}: is closed")
        if self._pid != os.getpid():  # forked: the parent's session must not be shared
            _INHERITED.append(self._conn)
            self._conn = self._connect()
            self._pid = os.getpid()
        return self._conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[_Txn]:
        """A write transaction: takes the generation row's lock first (serialising writers),
        bumps the generation (and n_items by ``n_delta``), trims the log."""
        with self._lock:
            conn = self._connection()
            with conn.transaction():
                cur = conn.cursor()
                cur.execute(
                    "UPDATE kg_meta SET value = (value::bigint + 1)::text WHERE key = 'generation' RETURNING value"
                )
                txn = _Txn(cur, int(cur.fetchone()[0]) - 1)
                yield txn
                if txn.n_delta:
                    cur.execute(
                        "UPDATE kg_meta SET value = (value::bigint + %s)::text WHERE key = 'n_items'", (txn.n_delta,)
                    )
                period = max(1, MAX_LOG_ROWS // 16)
                seq = txn.receipt.log_seq
                if seq is not None and seq // period != (seq - txn.n_logged) // period:
                    self._trim_log(cur, seq)

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[Any]:
        """A read-only transaction in which every query sees the same committed state."""
        with self._lock:
            conn = self._connection()
            with conn.transaction():
                cur = conn.cursor()
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield cur

    @staticmethod
    def _trim_log(cur: Any, last_seq: int) -> None:
        cur.execute("SELECT COUNT(*) FROM kg_index_log")
        if int(cur.fetchone()[0]) > MAX_LOG_ROWS:
            floor = last_seq - MAX_LOG_ROWS // 2
            cur.execute("DELETE FROM kg_index_log WHERE seq <= %s", (floor,))
            cur.execute("UPDATE kg_meta SET value = %s WHERE key = 'log_floor'", (str(floor),))

    @staticmethod
    def _meta_of(cur: Any) -> StoreMeta:
        cur.execute("SELECT key, value FROM kg_meta")
        m = dict(cur.fetchall())
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

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Rows of one read statement (its own snapshot)."""
        with self._lock:
            return list(self._connection().execute(sql, params).fetchall())

    def meta(self) -> StoreMeta:
        """The store record now."""
        with self._lock:
            return self._meta_of(self._connection().cursor())

    def close(self) -> None:
        """Close the connection (in the process that opened it); later calls raise MemoryStoreError."""
        with self._lock:
            if self._conn is not None:
                if self._pid == os.getpid():
                    self._conn.close()
                else:
                    _INHERITED.append(self._conn)
            self._conn = None
            self._closed = True

    # ================================================================== items

    def _dim(self) -> int:
        return int(self._query("SELECT value FROM kg_meta WHERE key = 'embedder_dim'")[0][0])

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
            cur = txn.cur
            keyed = [it.key for it in items if it.key is not None]
            existing: dict[str, int] = {}
            if keyed:
                cur.execute("SELECT key, id FROM kg_items WHERE key = ANY(%s)", (keyed,))
                existing = {k: int(i) for k, i in cur.fetchall()}
            # under the generation lock, so ids become visible in allocation order
            cur.execute("SELECT key, value FROM kg_meta WHERE key IN ('id_high', 'clock')")
            counters = {k: int(v) for k, v in cur.fetchall()}
            cur.execute("SELECT COALESCE(MAX(id), 0) FROM kg_items")
            id_high = max(counters["id_high"], int(cur.fetchone()[0]))
            next_id, clock = id_high + 1, counters["clock"]
            rows: list[tuple[Any, ...]] = []
            new_pos: list[int] = []
            pending_key: dict[str, int] = {}
            for i, it in enumerate(items):
                if it.key is not None and (it.key in existing or it.key in pending_key):
                    if on_conflict == "error":
                        raise MemoryStoreError(f"memory store {self.location}: an item with key {it.key!r} exists")
                    out[i] = existing.get(it.key) or pending_key[it.key]
                    continue
                if keep_ids:
                    if it.id is None:
                        raise ValueError("keep_ids needs item ids")
                    new_id = int(it.id)
                else:
                    new_id = next_id
                    next_id += 1
                id_high = max(id_high, new_id)
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
                placeholders = ", ".join(["%s"] * len(_COLUMNS))
                try:
                    cur.executemany(f"INSERT INTO kg_items ({', '.join(_COLUMNS)}) VALUES ({placeholders})", rows)
                except self._psycopg.errors.UniqueViolation as e:  # an explicit id that exists
                    raise MemoryStoreError(f"memory store {self.location}: {str(e).strip()}") from e
                cur.executemany(
                    "UPDATE kg_meta SET value = %s WHERE key = %s", [(str(clock), "clock"), (str(id_high), "id_high")]
                )
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
            sets = ", ".join(f"{k} = %s" for k in columns)
            txn.cur.execute(
                f"UPDATE kg_items SET {sets} WHERE id = %s RETURNING " + ", ".join(_COLUMNS),
                (*columns.values(), int(item_id)),
            )
            row = txn.cur.fetchone()
            if row is None:
                raise KeyError(f"memory item {item_id} does not exist")
            if INDEXED_FIELDS & set(columns):
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
            txn.cur.execute("DELETE FROM kg_items WHERE id = ANY(%s)", (id_list,))
            n = int(txn.cur.rowcount)
            txn.n_delta = -n
            if n:
                txn.log(id_list, "del")
                txn.receipt.ops.append(IndexOp("del", np.asarray(id_list, dtype=np.int64)))
        return n, txn.receipt

    def read_items(self, ids: Sequence[int]) -> list[MemoryItem]:
        """See :meth:`StorageBackend.read_items`."""
        id_list = [int(i) for i in ids]
        found = {int(r[0]): _row_to_item(r) for r in self._query(_SELECT + " WHERE id = ANY(%s)", (id_list,))}
        return [found[i] for i in id_list if i in found]

    def read_embeddings(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """See :meth:`StorageBackend.read_embeddings`."""
        id_list = [int(i) for i in ids]
        dim = self._dim()
        rows = self._query("SELECT id, embedding FROM kg_items WHERE id = ANY(%s)", (id_list,))
        return np.asarray([r[0] for r in rows], dtype=np.int64), self._vectors([r[1] for r in rows], dim)

    def _vectors(self, blobs: Sequence[bytes], dim: int) -> np.ndarray:
        blob = b"".join(blobs)
        if len(blob) != len(blobs) * dim * 4:
            raise MemoryStoreError(f"memory store {self.location}: stored embeddings do not have dim {dim}")
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
            concrete = [int(v) if col == "level" else str(v) for v in vals if v is not None]
            parts = []
            if concrete:
                parts.append(f"{col} = ANY(%s)")
                params.append(concrete)
            if len(concrete) != len(vals):
                parts.append(f"{col} IS NULL")
            clauses.append("(" + " OR ".join(parts) + ")")
        if f.exclude_task_id is not None:
            clauses.append("(task_id IS NULL OR task_id <> %s)")
            params.append(f.exclude_task_id)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def scan_items(self, filters: ItemFilters, after_id: int, limit: int) -> list[MemoryItem]:
        """See :meth:`StorageBackend.scan_items` (keyset pagination: no long-lived read transaction)."""
        where, params = self._where(filters)
        cond = (where + " AND id > %s") if where else " WHERE id > %s"
        rows = self._query(_SELECT + cond + " ORDER BY id LIMIT %s", (*params, int(after_id), int(limit)))
        return [_row_to_item(r) for r in rows]

    def count_items(self, filters: ItemFilters) -> int:
        """See :meth:`StorageBackend.count_items`."""
        where, params = self._where(filters)
        return int(self._query("SELECT COUNT(*) FROM kg_items" + where, params)[0][0])

    # ================================================================== values and counters

    def set_values(self, ids: Sequence[int], values: Mapping[str, Sequence[float]]) -> WriteReceipt:
        """See :meth:`StorageBackend.set_values`."""
        cols = list(values)
        if not set(cols) <= set(VALUE_COLUMNS):
            raise ValueError(f"value columns are {VALUE_COLUMNS}, got {cols}")
        id_list = [int(i) for i in ids]
        sets = ", ".join(f"{c} = %s" for c in cols)
        rows = [(*(float(values[c][j]) for c in cols), id_list[j]) for j in range(len(id_list))]
        with self._write() as txn:
            txn.cur.executemany(f"UPDATE kg_items SET {sets} WHERE id = %s", rows)
        return txn.receipt

    def step_values(self, column: str, ids: Sequence[int], reward: float, alpha: float) -> WriteReceipt:
        """See :meth:`StorageBackend.step_values`: the new value is computed by the UPDATE itself
        (float8, the same expression as :func:`~kernel_gym.memory.values.mc_step`), one row per id
        in order, so a repeated id is stepped once per occurrence."""
        if column not in VALUE_COLUMNS:
            raise ValueError(f"value columns are {VALUE_COLUMNS}, got {column!r}")
        rows = [(float(alpha), float(reward), int(i)) for i in ids]
        with self._write() as txn:
            txn.cur.executemany(
                f"UPDATE kg_items SET {column} = {column} + %s::float8 * (%s::float8 - {column}) WHERE id = %s", rows
            )
        return txn.receipt

    def add_to_counter(self, column: str, ids: Sequence[int], by: int) -> WriteReceipt:
        """See :meth:`StorageBackend.add_to_counter`."""
        if column not in COUNTER_COLUMNS:
            raise ValueError(f"counter columns are {COUNTER_COLUMNS}, got {column!r}")
        rows = [(int(by), int(i)) for i in ids]
        with self._write() as txn:
            txn.cur.executemany(f"UPDATE kg_items SET {column} = {column} + %s WHERE id = %s", rows)
        return txn.receipt

    # ================================================================== provenance

    def advance_clock(self, at_least: int) -> WriteReceipt:
        """See :meth:`StorageBackend.advance_clock`."""
        with self._write() as txn:
            txn.cur.execute(
                "UPDATE kg_meta SET value = GREATEST(value::bigint, %s)::text WHERE key = 'clock'", (int(at_least),)
            )
        return txn.receipt

    def rewrite_payloads(self, payloads: Sequence[tuple[int, dict[str, Any]]]) -> WriteReceipt:
        """See :meth:`StorageBackend.rewrite_payloads`."""
        rows = [(payload_json(p), int(i)) for i, p in payloads]
        with self._write() as txn:
            txn.cur.executemany("UPDATE kg_items SET payload = %s WHERE id = %s", rows)
        return txn.receipt

    # ================================================================== index support

    def _index_rows(self, rows: Sequence[Sequence[Any]], dim: int) -> IndexRows:
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        attrs = [{"kind": r[1], "level": r[2], "category": r[3], "task_id": r[4], "backend": r[5]} for r in rows]
        return IndexRows(ids, self._vectors([r[6] for r in rows], dim), attrs)

    def scan_index_rows(self, consume: Callable[[IndexRows], None], chunk: int = 50_000) -> tuple[StoreMeta, int]:
        """See :meth:`StorageBackend.scan_index_rows` (keyset pages inside one REPEATABLE READ snapshot)."""
        with self._snapshot() as cur:
            meta = self._meta_of(cur)
            cur.execute("SELECT COALESCE(MAX(seq), 0) FROM kg_index_log")
            log_seq = int(cur.fetchone()[0])
            last = 0
            while True:
                cur.execute(_ATTR_SELECT + " WHERE id > %s ORDER BY id LIMIT %s", (last, int(chunk)))
                rows = cur.fetchall()
                if not rows:
                    break
                consume(self._index_rows(rows, meta.embedder_dim))
                last = int(rows[-1][0])
        return meta, log_seq

    def index_delta(self, since_log_seq: int, max_id: int) -> IndexDelta | None:
        """See :meth:`StorageBackend.index_delta`."""
        with self._snapshot() as cur:
            meta = self._meta_of(cur)
            if meta.log_floor > since_log_seq:
                return None
            cur.execute("SELECT seq, item_id FROM kg_index_log WHERE seq > %s ORDER BY seq", (int(since_log_seq),))
            changes = cur.fetchall()
            log_seq = int(changes[-1][0]) if changes else int(since_log_seq)
            changed = sorted({int(c[1]) for c in changes if c[1] <= max_id})
            cur.execute(_ATTR_SELECT + " WHERE id = ANY(%s) ORDER BY id", (changed,))
            changed_rows = cur.fetchall()
            cur.execute(_ATTR_SELECT + " WHERE id > %s ORDER BY id", (int(max_id),))
            new_rows = cur.fetchall()
        dim = meta.embedder_dim
        return IndexDelta(meta, log_seq, changed, self._index_rows(changed_rows, dim), self._index_rows(new_rows, dim))

    def record_index_digest(self, write: Callable[[], str]) -> None:
        """See :meth:`StorageBackend.record_index_digest`. Locks the generation row without
        bumping it: saving the index changes no item, so no index becomes stale by it."""
        with self._lock:
            conn = self._connection()
            with conn.transaction():
                cur = conn.cursor()
                cur.execute("SELECT value FROM kg_meta WHERE key = 'generation' FOR UPDATE")
                digest = write()
                cur.execute(
                    "INSERT INTO kg_meta (key, value) VALUES ('index_sha256', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (digest,),
                )
