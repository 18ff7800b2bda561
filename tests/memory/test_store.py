"""MemoryStore facade: CRUD, persistence across processes, concurrency, safety of foreign files."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernel_gym.memory import ITEM_KINDS, HashingEmbedder, MemoryItem, MemoryStore, MemoryStoreError
from tests.memory._workers import REPO, run_worker


def test_crud_and_fields(db):
    with MemoryStore(db) as s:
        assert s.dim == 512 and s.embedder.name == "hashing-v1-d512"
        item = MemoryItem(
            kind="trace",
            title="relu draft",
            text="relu kernel with Maxs",
            task_id="level1/021_relu",
            level=1,
            category="activation",
            backend="ascend_sim",
            payload={
                "code": "...",
                "verifier": {"correct": True},
                "reward": 1.0,
                "context_ids": [],
                "stage": "drafting",
                "parent_id": None,
                "np": np.float32(0.5),
            },
        )
        i = s.add(item)
        assert isinstance(i, int) and item.id == i and item.created_at == 1
        got = s.get(i)
        assert got.kind == "trace" and got.payload["verifier"] == {"correct": True} and got.payload["np"] == 0.5
        assert got.embedding.dtype == np.float32 and got.embedding.shape == (512,)
        assert abs(float(np.linalg.norm(got.embedding)) - 1.0) < 1e-5
        ids = s.add([MemoryItem(kind=k, text=f"item of kind {k}") for k in ITEM_KINDS])
        assert ids == list(range(i + 1, i + 1 + len(ITEM_KINDS)))
        assert [x.created_at for x in s.get_many(ids)] == list(range(2, 2 + len(ITEM_KINDS)))
        assert s.clock == 1 + len(ITEM_KINDS)
        assert s.count() == 7 and s.count(kind="trace") == 2 and s.count(kinds=["trace", "api_template"]) == 3
        assert s.count(task_id="level1/021_relu") == 1 and s.count(exclude_task_id="level1/021_relu") == 6
        assert s.count(category=[None]) == 6 and s.count(level=1) == 1
        s.update(i, q1=0.25, use_count=3, payload={"reward": -1})
        s.update_q(ids[:3], q1=[0.1, 0.2, 0.3], q2=0.9)
        s.mc_update([i], reward=1.0, alpha=0.5, stage="drafting")  # 0.25 + 0.5 * 0.75
        s.increment([i], "use_count", 2)
        got = s.get(i)
        assert got.q1 == pytest.approx(0.625) and got.use_count == 5 and got.payload == {"reward": -1}
        assert [x.q1 for x in s.get_many(ids[:3])] == pytest.approx([0.1, 0.2, 0.3])
        assert all(x.q2 == 0.9 for x in s.get_many(ids[:3]))
        # re-embedding on text change moves the item in recall
        s.update(ids[0], text="layer norm rsqrt variance")
        assert s.recall("layer norm variance", k=1)[0][0].id == ids[0]
        assert s.delete(ids[0]) == 1 and s.delete([ids[0]]) == 0
        with pytest.raises(KeyError):
            s.get(ids[0])
        assert s.get_many([ids[0], ids[1]])[0].id == ids[1]
        assert [x.id for x in s.all(kind="trace")] == [i, ids[ITEM_KINDS.index("trace")]]
        # keyed items are deduplicated
        k1 = s.add(MemoryItem(kind="validity_rule", text="You cannot ...", key="rule/x"))
        assert s.add(MemoryItem(kind="validity_rule", text="other", key="rule/x")) == k1
        with pytest.raises(MemoryStoreError):
            s.add(MemoryItem(kind="validity_rule", text="other", key="rule/x"), on_conflict="error")
        with pytest.raises(ValueError):
            MemoryItem(kind="nonsense", text="x")
        with pytest.raises(ValueError):
            s.update(i, id=5)


def test_persistence_across_processes(db):
    with MemoryStore(db) as s:
        s.add(MemoryItem(kind="best_practice", text="double buffering overlaps copy and compute"))
    ids = [int(x) for x in run_worker("add", db, "5", "reduction with atomic add partial sums").split(",")]
    assert len(ids) == 5
    with MemoryStore(db) as s:
        assert s.count() == 6
        top = s.recall("atomic add partial sums reduction", k=5)
        assert {it.id for it, _ in top} == set(ids)
        assert s.get(ids[2]).payload == {"n": 2}


def test_four_concurrent_writer_processes_lose_nothing(db):
    with MemoryStore(db) as s:
        shared = s.add(MemoryItem(kind="best_practice", text="shared counter item"))
    ctx = mp.get_context("spawn")
    n = 200
    from tests.memory._workers import concurrent_writer

    procs = [ctx.Process(target=concurrent_writer, args=(db, w, n, shared)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with MemoryStore(db) as s:
        assert s.count() == 1 + 4 * n
        assert s.count(kind="trace") == 4 * n
        for w in range(4):
            items = s.all(task_id=f"w{w}")
            assert sorted(it.payload["i"] for it in items) == list(range(n))
            assert all(it.q1 == 0.5 and it.q2 == it.payload["i"] for it in items)
        assert s.get(shared).use_count == 4 * n  # no lost read-modify-write
        assert len({it.id for it in s.all()}) == 1 + 4 * n
        assert len(s.recall("worker 3 step 7 softmax", k=20, task_id="w3")) == 20


def test_threads_share_one_store(db):
    import threading

    with MemoryStore(db) as s:
        errors = []

        def work(t):
            try:
                for i in range(25):
                    s.add(MemoryItem(kind="trace", text=f"thread {t} item {i}"))
                    s.recall(f"thread {t}", k=3)
            except Exception as e:  # pragma: no cover
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and s.count() == 100


def _sha(path):
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_corrupt_file_is_refused_and_untouched(tmp_path):
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(os.urandom(8192))
    digest = _sha(bad)
    with pytest.raises(MemoryStoreError) as e:
        MemoryStore(bad)
    assert str(bad) in str(e.value) and "not a SQLite database" in str(e.value)
    assert _sha(bad) == digest
    # a SQLite header followed by garbage
    half = tmp_path / "half.db"
    half.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    digest = _sha(half)
    with pytest.raises(MemoryStoreError) as e:
        MemoryStore(half)
    assert str(half) in str(e.value) and "corrupt" in str(e.value)
    assert _sha(half) == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.db", "half.db"]


def test_foreign_sqlite_database_is_refused_and_untouched(tmp_path):
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.execute("INSERT INTO users VALUES ('ada')")
    conn.commit()
    conn.close()
    digest = _sha(foreign)
    with pytest.raises(MemoryStoreError) as e:
        MemoryStore(foreign)
    msg = str(e.value)
    assert str(foreign) in msg and "users" in msg and "not a kernel-gym memory store" in msg
    assert _sha(foreign) == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign.db"]
    # a table named like ours but without the format marker
    fake = tmp_path / "fake.db"
    conn = sqlite3.connect(fake)
    conn.execute("CREATE TABLE kg_meta (key TEXT, value TEXT)")
    conn.commit()
    conn.close()
    digest = _sha(fake)
    with pytest.raises(MemoryStoreError):
        MemoryStore(fake)
    assert _sha(fake) == digest
    with pytest.raises(MemoryStoreError, match="does not exist"):
        MemoryStore(tmp_path / "missing.db", create=False)
    with pytest.raises(MemoryStoreError, match="directory"):
        MemoryStore(tmp_path)


def test_embedder_mismatch_is_refused(db):
    with MemoryStore(db, embedder=HashingEmbedder(dim=512)) as s:
        s.add(MemoryItem(kind="trace", text="x"))
    with pytest.raises(MemoryStoreError) as e:
        MemoryStore(db, embedder=HashingEmbedder(dim=256))
    msg = str(e.value)
    assert "hashing-v1-d512" in msg and "hashing-v1-d256" in msg and db in msg

    class Fake:
        name = "hashing-v1-d512"
        dim = 384

        def embed(self, texts):  # pragma: no cover
            return np.zeros((len(texts), 384), np.float32)

    with pytest.raises(MemoryStoreError) as e:
        MemoryStore(db, embedder=Fake())
    assert "512" in str(e.value) and "384" in str(e.value)
    with MemoryStore(db) as s:  # embedder=None: the recorded one
        assert s.embedder.name == "hashing-v1-d512"


BWRAP = shutil.which("bwrap")


@pytest.mark.skipif(BWRAP is None, reason="needs bubblewrap for a read-only mount (root ignores file modes)")
@pytest.mark.parametrize("existing", [True, False])
def test_read_only_store_path_gives_one_clear_error(tmp_path, existing):
    """On a read-only mount (file modes do not stop root, a read-only mount does) opening a store
    fails with one MemoryStoreError naming the fix, not sqlite3's 'attempt to write a readonly database'."""
    ro = tmp_path / "ro"
    ro.mkdir()
    db = ro / "memory.db"
    if existing:
        with MemoryStore(db) as s:
            s.add(MemoryItem(kind="trace", text="kept"))
    code = (
        "import sys\nfrom kernel_gym.memory import MemoryStore, MemoryStoreError\n"
        f"try:\n    MemoryStore({str(db)!r})\nexcept MemoryStoreError as e:\n    print('ERR', e); sys.exit(3)\n"
    )
    probe = subprocess.run(
        [BWRAP, "--dev-bind", "/", "/", "--ro-bind", str(ro), str(ro), sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "Operation not permitted" in probe.stderr or "No permissions" in probe.stderr:
        pytest.skip(f"bubblewrap cannot create a mount namespace here: {probe.stderr.strip()[:200]}")
    assert probe.returncode == 3, probe.stdout + probe.stderr
    assert "is read-only" in probe.stdout and "copy the store to a writable path" in probe.stdout
    assert "Traceback" not in probe.stderr
    if existing:
        with MemoryStore(db) as s:
            assert [it.text for it in s.all()] == ["kept"]  # nothing lost


def test_a_live_store_mid_checkpoint_is_not_called_corrupt(tmp_path):
    """While another process checkpoints, the main file alone is torn: its first page already
    new, the pages it names still only in the WAL. Opening the store then must see the committed
    state through the WAL, not refuse the file as corrupt (a race four writers hit in CI)."""
    import struct

    path = tmp_path / "memory.db"
    live = MemoryStore(path, save_index_on_close=False)  # keeps the WAL: nothing checkpointed yet
    try:
        live.add([MemoryItem(kind="trace", text=f"item {i}") for i in range(50)])
        wal = (tmp_path / "memory.db-wal").read_bytes()
        page_size = struct.unpack(">I", wal[8:12])[0]
        newest_page_1 = None
        for off in range(32, len(wal) - 24 - page_size + 1, 24 + page_size):
            if struct.unpack(">I", wal[off : off + 4])[0] == 1:
                newest_page_1 = wal[off + 24 : off + 24 + page_size]
        assert newest_page_1 is not None
        with open(path, "r+b") as fh:  # a checkpoint that has written page 1 and nothing else yet
            fh.write(newest_page_1)
        with MemoryStore(path, save_index_on_close=False) as other:
            assert other.count() == 50
    finally:
        live.close()
