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

A lost connection (the server restarted, a network partition) is not an error at once: the
operation waits, reconnecting with backoff, for up to ``reconnect_timeout`` seconds, then raises
:class:`MemoryStoreError` naming the server and the setting. Only whole operations are retried:
a read is one statement or one snapshot, a write is one transaction, rolled back by the server when
its connection dies. A write whose connection died during ``COMMIT`` is in doubt; each write
transaction records a random token in ``kg_txn`` together with what its caller needs (the ids it
allocated), so after reconnecting the backend looks the token up and returns the committed result
instead of applying the write a second time.

psycopg is imported lazily: ``pip install kernel-gym[postgres]`` installs it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

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
    ScanInterrupted,
    StoreMeta,
    WriteReceipt,
)
from .sqlite_backend import _COLUMNS, _blob, _row_to_item, _values, attr_row
from .types import MemoryItem, MemoryStoreError, normalize_kind, payload_json

__all__ = ["DSN_PREFIXES", "MAX_LOG_ROWS", "PostgresBackend", "is_postgres_dsn", "redact_dsn", "valid_schema_name"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: A store location starting with one of these is a PostgreSQL connection URI.
DSN_PREFIXES = ("postgresql://", "postgres://")
#: The index log is trimmed to half of this many rows when it grows beyond it.
MAX_LOG_ROWS = 200_000
#: Key of the advisory lock taken while creating the schema (two processes may open a new store at once).
_SCHEMA_LOCK_KEY = 0x6B675F6D656D  # "kg_mem"
#: Commit tokens are kept at least this many seconds (and twice the reconnect timeout): a client
#: resolves an in-doubt commit within its reconnect timeout, so older ones are never looked up again.
_TOKEN_TTL_S = 3600.0
#: SQLSTATEs of a connection the server ended or refused: shutdown, crash, starting up (class 08 too).
_CONNECTION_SQLSTATES = ("57P01", "57P02", "57P03")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
#: Table of commit tokens (created on open when missing: stores made before it gain it).
_TOKENS_TABLE = (
    "CREATE TABLE IF NOT EXISTS kg_txn (token TEXT PRIMARY KEY, result TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS kg_txn_at ON kg_txn(at)",
)

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


def valid_schema_name(name: object) -> bool:
    """Whether ``name`` can name the PostgreSQL schema of a store (lower-case letters, digits, ``_``)."""
    return isinstance(name, str) and bool(_SCHEMA_NAME.match(name))


class _AlreadyCommitted(Exception):
    """A rerun of a write found its commit token: an earlier attempt committed (``record``: what it stored)."""

    def __init__(self, record: str) -> None:
        super().__init__("committed by an earlier attempt")
        self.record = record


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
        schema: the PostgreSQL schema holding the store's tables (created when missing); None: the
            connection's default (``public``). One database can hold many stores, one per schema.
        reconnect_timeout: seconds an operation waits for a lost connection to come back
            (reconnecting with backoff) before it raises MemoryStoreError.

    An unreachable server, a bad DSN, a missing database, or a database holding a ``kg_meta``
    table of something else raise MemoryStoreError naming the location (without password) and a fix.

    Attributes:
        reconnects: connections re-opened after a loss; ``retries``: operations run again after one;
        ``in_doubt_resolved``: writes found committed after their connection died during COMMIT.
    """

    def __init__(
        self,
        dsn: str,
        *,
        create: bool = True,
        new_store_embedder: Embedder | None = None,
        timeout: float = 30.0,
        schema: str | None = None,
        reconnect_timeout: float = 60.0,
    ) -> None:
        self._psycopg = _import_psycopg()
        if schema is not None and not valid_schema_name(schema):
            raise MemoryStoreError(
                f"memory store {redact_dsn(dsn)}: schema {schema!r} is not a plain lower-case identifier; "
                "use letters a-z, digits and _ (memory.schema=...)"
            )
        if not reconnect_timeout >= 0:
            raise ValueError(f"reconnect_timeout must be >= 0 seconds, got {reconnect_timeout!r}")
        self.dsn = dsn
        self.schema = schema
        self.location = redact_dsn(dsn) + (f" (schema {schema})" if schema else "")
        self.timeout = float(timeout)
        self.reconnect_timeout = float(reconnect_timeout)
        self.reconnects = 0
        self.retries = 0
        self.in_doubt_resolved = 0
        self._lock = threading.RLock()
        self._conn: Any = None
        self._pid = os.getpid()
        self._closed = False
        self._open(create, new_store_embedder)

    # ================================================================== opening

    def _connect_raw(self) -> Any:
        """A new session with the store's settings; psycopg's errors pass through."""
        psycopg = self._psycopg
        conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(1, int(self.timeout)))
        try:
            # a writer waiting for another one's lock gives up after 4 x timeout, as the SQLite backend does
            conn.execute(f"SET lock_timeout = {int(self.timeout * 4000)}")
            # a session whose client vanished mid-transaction (a partition) releases the writers' lock
            conn.execute(f"SET idle_in_transaction_session_timeout = {int(max(60.0, self.timeout * 4) * 1000)}")
            if self.schema:
                conn.execute(psycopg.sql.SQL("SET search_path TO {}").format(psycopg.sql.Identifier(self.schema)))
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect(self) -> Any:
        psycopg = self._psycopg
        try:
            return self._connect_raw()
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

    def _open(self, create: bool, new_store_embedder: Embedder | None) -> None:
        conn = self._connect()
        try:
            with conn.transaction():
                cur = conn.cursor()
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                if self.schema:
                    sql = self._psycopg.sql
                    cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
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
                if meta.get("format") == FORMAT:
                    for stmt in _TOKENS_TABLE:  # stores created before commit tokens gain the table
                        cur.execute(stmt)
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
        """The session, re-opened when the server dropped it (psycopg marks such a connection broken)."""
        if self._closed:
            raise MemoryStoreError(f"memory store {self.location}: is closed")
        if self._pid != os.getpid():  # forked: the parent's session must not be shared
            _INHERITED.append(self._conn)
            self._conn = None
            self._pid = os.getpid()
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
                self.reconnects += 1
            self._conn = self._connect_raw()
        return self._conn

    def _connection_fault(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the session is gone or the server refuses sessions for now (restart,
        shutdown, network), as opposed to an error of the statement (those are never retried)."""
        if not isinstance(exc, self._psycopg.OperationalError):
            return False
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            return True
        state = getattr(exc, "sqlstate", None) or ""
        return state.startswith("08") or state in _CONNECTION_SQLSTATES

    def _retrying(self, attempt: Callable[[], T], what: str) -> T:
        """Run ``attempt`` (one whole read or one whole transaction), running it again while the
        connection is lost, for up to ``reconnect_timeout`` seconds; then a MemoryStoreError."""
        deadline: float | None = None
        delay = 0.05
        while True:
            try:
                return attempt()
            except self._psycopg.Error as e:
                if not self._connection_fault(e):
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.reconnect_timeout
                    log.warning("memory store %s: lost the connection during %s; reconnecting", self.location, what)
                if now >= deadline:
                    msg = " ".join(str(e).split())[:300]
                    raise MemoryStoreError(
                        f"memory store {self.location}: lost the connection to PostgreSQL during {what} and could "
                        f"not reconnect within {self.reconnect_timeout:g} s ({msg}); check that the server is "
                        "running and reachable, or raise memory.reconnect_timeout_s"
                    ) from e
                if self._conn is not None and (self._conn.closed or self._conn.broken):
                    with contextlib.suppress(Exception):
                        self._conn.close()
                    self._conn = None
                    self.reconnects += 1
                time.sleep(min(delay, max(0.0, deadline - now)))
                delay = min(2 * delay, 1.0)
                self.retries += 1

    def _transaction(
        self,
        body: Callable[[_Txn], tuple[T, Any]],
        recover: Callable[[Any, WriteReceipt], T],
        what: str,
    ) -> T:
        """One write transaction, run again as a whole after a lost connection, never applied twice.

        ``body`` does the writes and returns ``(result, record)``; ``record`` (JSON) is stored under
        the transaction's commit token. A rerun first takes the writers' lock (so an earlier attempt
        still committing has finished) and looks the token up: found, the earlier attempt committed
        (its connection died during COMMIT), and ``recover(record, receipt)`` rebuilds its result,
        the receipt making the index catch up from the database instead of applying the write."""
        token = uuid.uuid4().hex
        attempts = 0

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            with self._lock:
                try:
                    return self._write_once(token, body, check_token=attempts > 1)
                except _AlreadyCommitted as done:
                    self.in_doubt_resolved += 1
                    return recover(json.loads(done.record), WriteReceipt(generation=-1))

        return self._retrying(attempt, what)

    def _write_once(self, token: str, body: Callable[[_Txn], tuple[T, Any]], check_token: bool) -> T:
        """One attempt of a write transaction: takes the generation row's lock first (serialising
        writers), bumps the generation (and n_items by ``n_delta``), records the commit token and
        trims the log. With ``check_token``, raises _AlreadyCommitted (rolling back) when an earlier
        attempt with this token committed."""
        conn = self._connection()
        with conn.transaction():
            cur = conn.cursor()
            cur.execute("UPDATE kg_meta SET value = (value::bigint + 1)::text WHERE key = 'generation' RETURNING value")
            generation = int(cur.fetchone()[0]) - 1
            if check_token:
                cur.execute("SELECT result FROM kg_txn WHERE token = %s", (token,))
                row = cur.fetchone()
                if row is not None:
                    raise _AlreadyCommitted(row[0])
            txn = _Txn(cur, generation)
            result, record = body(txn)
            if txn.n_delta:
                cur.execute(
                    "UPDATE kg_meta SET value = (value::bigint + %s)::text WHERE key = 'n_items'", (txn.n_delta,)
                )
            period = max(1, MAX_LOG_ROWS // 16)
            seq = txn.receipt.log_seq
            if seq is not None and seq // period != (seq - txn.n_logged) // period:
                self._trim_log(cur, seq)
            now = time.time()
            cur.execute("INSERT INTO kg_txn (token, result, at) VALUES (%s, %s, %s)", (token, json.dumps(record), now))
            if generation % 512 == 0:
                ttl = max(_TOKEN_TTL_S, 2 * self.reconnect_timeout)
                cur.execute("DELETE FROM kg_txn WHERE at < %s", (now - ttl,))
        return result

    def _write(self, work: Callable[[_Txn], None], what: str) -> WriteReceipt:
        """A write transaction whose only result is its receipt (see :meth:`_transaction`)."""

        def body(txn: _Txn) -> tuple[WriteReceipt, Any]:
            work(txn)
            return txn.receipt, None

        return self._transaction(body, lambda _record, receipt: receipt, what)

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
        """Rows of one read statement (its own snapshot), run again after a lost connection."""

        def attempt() -> list[Any]:
            with self._lock:
                return list(self._connection().execute(sql, params).fetchall())

        return self._retrying(attempt, "a read")

    def meta(self) -> StoreMeta:
        """The store record now."""

        def attempt() -> StoreMeta:
            with self._lock:
                return self._meta_of(self._connection().cursor())

        return self._retrying(attempt, "a read")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its session, lock and driver module: a copy opens its own session to
        the same database and schema on first use."""
        state = self.__dict__.copy()
        for key in ("_conn", "_lock", "_psycopg"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._psycopg = _import_psycopg()
        self._lock = threading.RLock()
        self._conn = None
        self._pid = os.getpid()

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

        def body(txn: _Txn) -> tuple[InsertResult, Any]:
            out: list[int] = [0] * len(items)
            created_of: dict[int, int] = {}
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
            result = InsertResult(ids=out, created_at=created_of, receipt=txn.receipt)
            return result, {"ids": out, "created_at": {str(k): v for k, v in created_of.items()}}

        def recover(record: Any, receipt: WriteReceipt) -> InsertResult:
            created = {int(k): int(v) for k, v in record["created_at"].items()}
            return InsertResult(ids=[int(i) for i in record["ids"]], created_at=created, receipt=receipt)

        return self._transaction(body, recover, "an insert")

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

        def work(txn: _Txn) -> None:
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

        return self._write(work, "an update")

    def delete_items(self, ids: Sequence[int]) -> tuple[int, WriteReceipt]:
        """See :meth:`StorageBackend.delete_items`."""
        id_list = [int(i) for i in ids]

        def body(txn: _Txn) -> tuple[tuple[int, WriteReceipt], Any]:
            txn.cur.execute("DELETE FROM kg_items WHERE id = ANY(%s)", (id_list,))
            n = int(txn.cur.rowcount)
            txn.n_delta = -n
            if n:
                txn.log(id_list, "del")
                txn.receipt.ops.append(IndexOp("del", np.asarray(id_list, dtype=np.int64)))
            return (n, txn.receipt), n

        return self._transaction(body, lambda record, receipt: (int(record), receipt), "a delete")

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

        def work(txn: _Txn) -> None:
            txn.cur.executemany(f"UPDATE kg_items SET {sets} WHERE id = %s", rows)

        return self._write(work, "a value update")

    def step_values(self, column: str, ids: Sequence[int], reward: float, alpha: float) -> WriteReceipt:
        """See :meth:`StorageBackend.step_values`: the new value is computed by the UPDATE itself
        (float8, the same expression as :func:`~kernel_gym.memory.values.mc_step`), one row per id
        in order, so a repeated id is stepped once per occurrence."""
        if column not in VALUE_COLUMNS:
            raise ValueError(f"value columns are {VALUE_COLUMNS}, got {column!r}")
        rows = [(float(alpha), float(reward), int(i)) for i in ids]

        def work(txn: _Txn) -> None:
            txn.cur.executemany(
                f"UPDATE kg_items SET {column} = {column} + %s::float8 * (%s::float8 - {column}) WHERE id = %s", rows
            )

        return self._write(work, "a Q step")

    def add_to_counter(self, column: str, ids: Sequence[int], by: int) -> WriteReceipt:
        """See :meth:`StorageBackend.add_to_counter`."""
        if column not in COUNTER_COLUMNS:
            raise ValueError(f"counter columns are {COUNTER_COLUMNS}, got {column!r}")
        rows = [(int(by), int(i)) for i in ids]

        def work(txn: _Txn) -> None:
            txn.cur.executemany(f"UPDATE kg_items SET {column} = {column} + %s WHERE id = %s", rows)

        return self._write(work, "a counter update")

    # ================================================================== provenance

    def advance_clock(self, at_least: int) -> WriteReceipt:
        """See :meth:`StorageBackend.advance_clock`."""

        def work(txn: _Txn) -> None:
            txn.cur.execute(
                "UPDATE kg_meta SET value = GREATEST(value::bigint, %s)::text WHERE key = 'clock'", (int(at_least),)
            )

        return self._write(work, "a clock update")

    def rewrite_payloads(self, payloads: Sequence[tuple[int, dict[str, Any]]]) -> WriteReceipt:
        """See :meth:`StorageBackend.rewrite_payloads`."""
        rows = [(payload_json(p), int(i)) for i, p in payloads]

        def work(txn: _Txn) -> None:
            txn.cur.executemany("UPDATE kg_items SET payload = %s WHERE id = %s", rows)

        return self._write(work, "a payload rewrite")

    # ================================================================== index support

    def _index_rows(self, rows: Sequence[Sequence[Any]], dim: int) -> IndexRows:
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        attrs = [{"kind": r[1], "level": r[2], "category": r[3], "task_id": r[4], "backend": r[5]} for r in rows]
        return IndexRows(ids, self._vectors([r[6] for r in rows], dim), attrs)

    def scan_index_rows(self, consume: Callable[[IndexRows], None], chunk: int = 50_000) -> tuple[StoreMeta, int]:
        """See :meth:`StorageBackend.scan_index_rows` (keyset pages inside one REPEATABLE READ snapshot).

        A connection lost before the first page was consumed is waited for like any read; one lost
        later raises :class:`~kernel_gym.memory.persistence.ScanInterrupted` (the consumer holds
        part of a snapshot that is gone), and the caller starts its scan over."""
        consumed = False

        def attempt() -> tuple[StoreMeta, int]:
            nonlocal consumed
            try:
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
                        consumed = True
                        last = int(rows[-1][0])
                return meta, log_seq
            except self._psycopg.Error as e:
                if consumed and self._connection_fault(e):
                    raise ScanInterrupted(f"memory store {self.location}: the connection was lost mid-scan") from e
                raise

        return self._retrying(attempt, "an index scan")

    def index_delta(self, since_log_seq: int, max_id: int) -> IndexDelta | None:
        """See :meth:`StorageBackend.index_delta`."""

        def attempt() -> tuple[StoreMeta, int, list[int], list[Any], list[Any]] | None:
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
            return meta, log_seq, changed, changed_rows, new_rows

        got = self._retrying(attempt, "an index catch-up")
        if got is None:
            return None
        meta, log_seq, changed, changed_rows, new_rows = got
        dim = meta.embedder_dim
        return IndexDelta(meta, log_seq, changed, self._index_rows(changed_rows, dim), self._index_rows(new_rows, dim))

    def record_index_digest(self, write: Callable[[], str]) -> None:
        """See :meth:`StorageBackend.record_index_digest`. Locks the generation row without
        bumping it: saving the index changes no item, so no index becomes stale by it. Rerun after
        a lost connection (writing the file again is harmless; the digest is set, not added)."""

        def attempt() -> None:
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

        self._retrying(attempt, "saving the index digest")
