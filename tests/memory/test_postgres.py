"""PostgreSQL-specific behaviour: clear errors for a missing driver, a bad DSN, an unreachable
server or a foreign database; a store opened from a DSN string; two environments sharing one
PostgreSQL store. The persistence contract itself runs on PostgreSQL in test_persistence.py."""

from __future__ import annotations

import sys

import gymnasium as gym
import pytest

from kernel_gym.memory import MemoryItem, MemoryStore, MemoryStoreError
from kernel_gym.memory.postgres_backend import PostgresBackend, is_postgres_dsn, redact_dsn


def test_missing_driver_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # makes ``import psycopg`` raise ImportError
    with pytest.raises(MemoryStoreError, match=r"pip install kernel-gym\[postgres\]"):
        MemoryStore("postgresql://someone@localhost/kernel_gym")


def test_unreachable_server_and_bad_dsn_name_the_fix():
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e .[postgres]")
    # port 1 on the loopback: nothing listens, the connection is refused at once
    with pytest.raises(MemoryStoreError, match="cannot connect to PostgreSQL.*start the PostgreSQL server") as e:
        PostgresBackend("postgresql://kg:secret@127.0.0.1:1/kernel_gym", timeout=2)
    assert "secret" not in str(e.value) and "postgresql://kg@127.0.0.1:1/kernel_gym" in str(e.value)
    with pytest.raises(MemoryStoreError, match="invalid PostgreSQL DSN.*memory.dsn=postgresql://"):
        PostgresBackend("postgresql://kg@127.0.0.1:1/kernel_gym?no_such_option=1", timeout=2)
    assert is_postgres_dsn("postgres://h/db") and not is_postgres_dsn("runs/memory.db")
    assert redact_dsn("postgresql://u:pw@h:5433/db") == "postgresql://u@h:5433/db"


def test_missing_or_foreign_database_is_refused(postgres_server):
    import psycopg

    with pytest.raises(MemoryStoreError, match="createdb"):
        PostgresBackend(postgres_server.dsn("no_such_database"))
    dsn = postgres_server.new_database()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE kg_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO kg_meta VALUES ('format', 'someone.else')")
    with pytest.raises(MemoryStoreError, match="format marker"):
        PostgresBackend(dsn)
    with pytest.raises(MemoryStoreError, match="create=True"):
        PostgresBackend(postgres_server.new_database(), create=False)


def test_store_from_a_dsn_recalls_and_ids_only_grow(postgres_server, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn = postgres_server.new_database()
    with MemoryStore(dsn) as a, MemoryStore(dsn) as b:
        assert a.uuid == b.uuid and a.dsn == dsn and a.location.startswith("postgresql://")
        ids = a.add([MemoryItem(kind="trace", text=f"softmax row max exp sum {i}", task_id="t") for i in range(3)])
        # b's index catches up by id: a's items are recalled through b
        hit = b.recall("softmax row max exp sum 1", k=1)
        assert hit[0][0].id == ids[1]
        a.delete(ids[2])
        [new] = b.add([MemoryItem(kind="trace", text="layer norm variance", task_id="t")])
        assert new == ids[2] + 1  # the deleted newest id is not reused
        assert [it.id for it, _ in a.recall("layer norm variance", k=5)][0] == new
        assert ids[2] not in {it.id for it, _ in a.recall("softmax row max exp sum 2", k=5)}
    # the index was saved in the cache directory, keyed by the store's uuid, and is reused
    saved = list((tmp_path / "cache" / "memory-index").glob("*.faiss"))
    assert [p.name for p in saved] == [f"{a.uuid}.faiss"]
    with MemoryStore(dsn) as c:
        assert c.count("trace") == 3 and c.recall("layer norm variance", k=1)[0][0].id == new


def test_two_envs_share_one_postgres_store(postgres_server, tmp_path, monkeypatch):
    """A feasible kernel written by one environment is recalled by another one on the same database."""
    import kernel_gym  # noqa: F401  (registers the ids)
    from kernel_gym.llm.fixed import FixedGenerator
    from solutions import reference_answer

    relu = "level1/021_relu"
    good = reference_answer(relu, "ascend_sim")
    dsn = postgres_server.new_database()
    kw = dict(tasks=[relu], verify_settings={"correctness_trials": 1, "timing_trials": 1}, budget=1, memory=dsn)
    env_a = gym.make("KernelBench-Ascend-v0", generator=FixedGenerator([good]), **kw)
    env_b = gym.make("KernelBench-Ascend-v0", generator=FixedGenerator([good]), **kw)
    try:
        _, info_b = env_b.reset(seed=0)
        assert info_b["stage"] == "drafting"  # nothing feasible in the store yet
        env_a.reset(seed=0)
        _, reward, _, _, info_a = env_a.step(env_a.action_space.sample())
        assert reward == 1.0 and info_a["trace_id"] is not None
        # env b's own store object sees the trace: its next episode starts refining from it
        _, info_b = env_b.reset(seed=1)
        assert info_b["stage"] == "refining"
        store_b = env_b.unwrapped.memory
        assert store_b is not env_a.unwrapped.memory
        hits = store_b.recall(good, k=3, kinds="trace", task_id=relu)
        assert hits[0][0].id == info_a["trace_id"] and hits[0][0].payload["code"] == good
    finally:
        env_a.close()
        env_b.close()


def test_concurrent_writers_and_an_incrementally_synced_reader(postgres_server, tmp_path, monkeypatch):
    """Four writer processes add, value-update and count on one PostgreSQL store while this process
    keeps recalling, so its index catches up by "ids above my max id" many times: since ids become
    visible in allocation order, the index ends holding exactly the stored ids, with nothing lost."""
    import multiprocessing as mp

    import numpy as np

    from tests.memory._workers import concurrent_writer

    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn = postgres_server.new_database()
    n = 60
    with MemoryStore(dsn, save_index_on_close=False) as reader:
        shared = reader.add(MemoryItem(kind="best_practice", text="shared counter item"))
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=concurrent_writer, args=(dsn, w, n, shared)) for w in range(4)]
        for p in procs:
            p.start()
        catch_ups = 0
        while any(p.is_alive() for p in procs):
            reader.recall("worker step softmax kernel", k=5)  # catches the index up with what committed
            catch_ups += 1
        for p in procs:
            p.join(timeout=120)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0]
        reader.recall("worker step softmax kernel", k=5)
        stored = sorted(it.id for it in reader.iterate())
        assert len(stored) == 1 + 4 * n and catch_ups > 1
        assert np.sort(reader.index_sync.index.ids).tolist() == stored  # incremental == truth
        assert reader.get(shared).use_count == 4 * n
        for w in range(4):
            items = reader.all(task_id=f"w{w}")
            assert sorted(it.payload["i"] for it in items) == list(range(n))
            assert all(it.q1 == 0.5 and it.q2 == it.payload["i"] for it in items)


def test_a_postgres_store_pickles_and_the_copy_opens_its_own_session(postgres_server, tmp_path, monkeypatch):
    import pickle

    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "cache"))
    dsn = postgres_server.new_database()
    with MemoryStore(dsn) as a:
        [first] = a.add([MemoryItem(kind="trace", text="softmax row max exp sum", task_id="t")])
        assert a.recall("softmax row max", k=1)[0][0].id == first  # the index and its threads exist
        b = pickle.loads(pickle.dumps(a))
        try:
            assert b.backend._conn is None and b.backend._lock is not a.backend._lock
            [second] = b.add([MemoryItem(kind="trace", text="layer norm variance", task_id="t")])
            assert a.recall("layer norm variance", k=1)[0][0].id == second  # written through the copy's session
            assert b.count("trace") == 2
        finally:
            b.close()
