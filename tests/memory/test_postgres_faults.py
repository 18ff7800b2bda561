"""Faults of the PostgreSQL memory backend on a real server: restarted during a run, stopped for 10 s
(a partition), down for longer than the reconnect timeout, and a write retried after its commit went
through. What must hold: operations wait and reconnect, nothing is lost, nothing is applied twice.

These tests stop and start their own server (not the session's), with commits acknowledged only
once written, so that stopping it cannot drop an acknowledged commit."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from kernel_gym.memory import MemoryItem, MemoryStore, MemoryStoreError
from kernel_gym.memory.values import mc_step
from tests.memory import pg_server


@pytest.fixture(scope="module")
def server():
    bindir = pg_server.find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: apt-get install postgresql")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e .[postgres]")
    srv = pg_server.start_server(bindir, durable_commits=True)
    yield srv
    srv.stop()


class Writer(threading.Thread):
    """A worker's memory traffic: add an item, step the shared item's Q and use count, recall; ``n``
    times, each operation timed. Errors are kept for the test to raise."""

    def __init__(
        self, dsn: str, worker: int, n: int, shared_id: int, reconnect_timeout: float = 60.0, pause_at: int = -1
    ) -> None:
        super().__init__(daemon=True)
        self.dsn, self.worker, self.n, self.shared_id = dsn, worker, n, shared_id
        self.reconnect_timeout = reconnect_timeout
        # with pause_at >= 0 the writer stops before that step until ``go`` is set, so a test can make
        # sure it has traffic left when an outage begins (a fast writer could otherwise finish first)
        self.pause_at, self.paused, self.go = pause_at, threading.Event(), threading.Event()
        self.done_steps = 0
        self.slowest_s = 0.0
        self.ids: list[int] = []
        self.stats: dict[str, int] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with MemoryStore(self.dsn, save_index_on_close=False, reconnect_timeout=self.reconnect_timeout) as store:
                for i in range(self.n):
                    if i == self.pause_at:
                        self.paused.set()
                        self.go.wait(120)
                    t0 = time.monotonic()
                    [new_id] = store.add(
                        [MemoryItem(kind="trace", text=f"worker {self.worker} step {i} relu", payload={"i": i})]
                    )
                    self.ids.append(new_id)
                    store.mc_update([self.shared_id], reward=1.0, alpha=0.1, stage="drafting")
                    store.increment([self.shared_id], "use_count", 1)
                    store.recall(f"worker {self.worker} step {i}", k=3)
                    self.slowest_s = max(self.slowest_s, time.monotonic() - t0)
                    self.done_steps += 1
                backend = store.backend
                self.stats = {
                    "reconnects": getattr(backend, "reconnects", 0),
                    "retries": getattr(backend, "retries", 0),
                    "in_doubt_resolved": getattr(backend, "in_doubt_resolved", 0),
                }
        except BaseException as e:  # surfaced by check()
            self.error = e

    def check(self) -> None:
        if self.error is not None:
            raise self.error


def _wait_for(cond, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("the writers made no progress")
        time.sleep(0.01)


def _check_nothing_lost(dsn: str, writers: list[Writer], shared_id: int, n: int) -> None:
    """Every item each writer got an id for is stored once, and every Q step and increment of the
    shared item was applied exactly once (its Q equals n sequential steps from 0)."""
    with MemoryStore(dsn, save_index_on_close=False) as store:
        stored = store.all("trace")
        assert len(stored) == len(writers) * n  # none lost, none duplicated
        for w in writers:
            assert sorted(w.ids) == sorted(it.id for it in stored if it.text.startswith(f"worker {w.worker} "))
            got = sorted(it.payload["i"] for it in stored if it.text.startswith(f"worker {w.worker} "))
            assert got == list(range(n))
        shared = store.get(shared_id)
        assert shared.use_count == len(writers) * n
        q = 0.0
        for _ in range(len(writers) * n):
            q = mc_step(q, 1.0, 0.1)
        assert shared.q1 == pytest.approx(q, abs=1e-12)
        # the index caught up with writes it never saw applied in place: recall finds the last items
        for w in writers:
            top = store.recall(f"worker {w.worker} step {n - 1} relu", k=1)
            assert top[0][0].id == w.ids[-1]


def _setup(server) -> tuple[str, int]:
    dsn = server.new_database()
    with MemoryStore(dsn, save_index_on_close=False) as store:
        shared = store.add(MemoryItem(kind="best_practice", text="shared item stepped by every writer"))
    return dsn, shared


def test_server_restart_during_a_run_waits_reconnects_and_loses_nothing(server, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn, shared = _setup(server)
    n = 60
    # each writer pauses before step 10 until the restart, so both still have traffic when their
    # sessions end (a fast writer under load could otherwise finish all 60 steps first)
    writers = [Writer(dsn, w, n, shared, pause_at=10) for w in range(2)]
    for w in writers:
        w.start()
    _wait_for(lambda: all(w.paused.is_set() or w.error for w in writers))
    server.restart("fast")  # every session is ended with the run half done
    for w in writers:
        w.go.set()
    for w in writers:
        w.join(timeout=180)
    for w in writers:
        w.check()
        assert w.done_steps == n
    assert sum(w.stats["reconnects"] for w in writers) >= 2  # each writer lost its session and came back
    _check_nothing_lost(dsn, writers, shared, n)


@pytest.mark.slow
def test_partition_of_10_s_the_operations_wait_and_complete(server, tmp_path, monkeypatch):
    """The server is unreachable for 10 s (stopped, then started on the same socket): the writes and
    reads issued meanwhile wait, and complete once it is back; 0 items lost."""
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn, shared = _setup(server)
    n = 40
    writers = [Writer(dsn, w, n, shared, pause_at=5) for w in range(2)]
    for w in writers:
        w.start()
    _wait_for(lambda: all(w.paused.is_set() or w.error for w in writers))
    server.shut_down("fast")
    down_at = time.monotonic()
    stalled = [w.done_steps for w in writers]
    for w in writers:
        w.go.set()  # both go on into the outage
    time.sleep(10)
    during = [w.done_steps for w in writers]
    assert all(d - s <= 1 for s, d in zip(stalled, during, strict=True))  # nothing completes while it is down
    server.start_again()
    outage_s = time.monotonic() - down_at
    for w in writers:
        w.join(timeout=180)
    for w in writers:
        w.check()
        assert w.done_steps == n
        assert w.slowest_s >= 0.8 * outage_s  # the operation in flight waited out the outage
        assert w.stats["retries"] >= 1
    _check_nothing_lost(dsn, writers, shared, n)


def test_an_outage_longer_than_the_timeout_is_one_clear_error(server, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn, shared = _setup(server)
    store = MemoryStore(dsn, save_index_on_close=False, reconnect_timeout=2.0)
    try:
        store.add(MemoryItem(kind="trace", text="before the outage"))
        server.shut_down("fast")
        try:
            t0 = time.monotonic()
            with pytest.raises(MemoryStoreError, match=r"could not reconnect within 2 s.*memory.reconnect_timeout_s"):
                store.add(MemoryItem(kind="trace", text="during the outage"))
            assert 2.0 <= time.monotonic() - t0 < 15.0
        finally:
            server.start_again()
        # the failed write was not applied; the store works again once the server is back
        store.add(MemoryItem(kind="trace", text="after the outage"))
        assert sorted(it.text for it in store.all("trace")) == ["after the outage", "before the outage"]
    finally:
        store.close()


def test_a_write_rerun_after_its_commit_went_through_is_not_applied_twice(server, tmp_path, monkeypatch):
    """The in-doubt case: a connection that died during COMMIT leaves the writer not knowing whether
    the write committed. A rerun finds the attempt's commit token and returns the first result."""
    from kernel_gym.memory.postgres_backend import PostgresBackend, _AlreadyCommitted

    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn, shared = _setup(server)
    backend = PostgresBackend(dsn)
    try:
        token = uuid.uuid4().hex

        def body(txn):
            txn.cur.execute("UPDATE kg_items SET use_count = use_count + 1 WHERE id = %s", (shared,))
            return "applied", {"what": "applied"}

        assert backend._write_once(token, body, check_token=False) == "applied"
        with pytest.raises(_AlreadyCommitted) as done:
            backend._write_once(token, body, check_token=True)  # the rerun rolls back instead
        assert '"applied"' in done.value.record
        assert backend.read_items([shared])[0].use_count == 1
    finally:
        backend.close()
