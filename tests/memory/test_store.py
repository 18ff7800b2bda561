"""MemoryStore: CRUD, persistence across processes, concurrency, index rebuilds, safety of foreign files."""

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

from kernel_gym.memory import HashingEmbedder, ITEM_KINDS, MemoryItem, MemoryStore, MemoryStoreError
from kernel_gym.memory import store as store_mod

REPO = Path(__file__).resolve().parents[2]


def run_worker(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "tests.memory._workers", *args], cwd=REPO, check=True,
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip()


def test_crud_and_fields(db):
    with MemoryStore(db) as s:
        assert s.dim == 512 and s.embedder.name == "hashing-v1-d512"
        item = MemoryItem(kind="trace", title="relu draft", text="relu kernel with Maxs", task_id="level1/021_relu",
                          level=1, category="activation", backend="ascend_sim",
                          payload={"code": "...", "verifier": {"correct": True}, "reward": 1.0, "context_ids": [],
                                   "stage": "drafting", "parent_id": None, "np": np.float32(0.5)})
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
        s.mc_update([i], reward=1.0, alpha=0.5, stage="drafting")     # 0.25 + 0.5 * 0.75
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


def test_recall_sees_writes_of_other_processes(db):
    """The in-memory index of a live store catches up with adds, deletes and edits made elsewhere."""
    with MemoryStore(db) as s:
        ids = s.add([MemoryItem(kind="trace", text=f"softmax trace {i}") for i in range(20)])
        assert len(s.recall("softmax", k=50)) == 20      # index built now
        gen = s.generation
        new_id = int(run_worker("mutate", db, str(ids[0]), str(ids[1])))
        assert s.generation > gen
        rebuilds = []
        orig = s._rebuild_index
        s._rebuild_index = lambda: rebuilds.append(1) or orig()  # type: ignore[method-assign]
        got = {it.id for it, _ in s.recall("softmax", k=50)}
        assert ids[0] not in got and len(got) == 20  # 19 old softmax items + the edited/new ones fill k
        assert s.recall("layer norm gamma beta variance", k=1)[0][0].id == ids[1]
        assert s.recall("zebra giraffe", k=1)[0][0].id == new_id
        assert s.recall("layer norm", k=1, category="normalization")[0][0].id == ids[1]
        assert rebuilds == []                              # caught up incrementally


def test_index_rebuilt_when_file_missing_or_stale(db):
    with MemoryStore(db) as s:
        s.add([MemoryItem(kind="trace", text=f"exp kernel tail {i}") for i in range(30)])
        before = [(it.id, round(x, 6)) for it, x in s.recall("exp kernel tail 7", k=5)]
    index_file = Path(db + ".faiss")
    assert index_file.exists()                              # saved on close
    # 1. loaded from the file, no rebuild
    with MemoryStore(db) as s:
        calls = []
        orig = s._rebuild_index
        s._rebuild_index = lambda: calls.append(1) or orig()  # type: ignore[method-assign]
        assert [(it.id, round(x, 6)) for it, x in s.recall("exp kernel tail 7", k=5)] == before
        assert calls == []
    # 2. file deleted: rebuilt from SQLite, saved again
    index_file.unlink()
    with MemoryStore(db) as s:
        assert [(it.id, round(x, 6)) for it, x in s.recall("exp kernel tail 7", k=5)] == before
    assert index_file.exists()
    # 3. stale file: another process added items (and did not save the index)
    added = [int(x) for x in run_worker("add", db, "3", "zebra giraffe unusual").split(",")]
    with MemoryStore(db) as s:
        assert {it.id for it, _ in s.recall("zebra giraffe unusual", k=3)} == set(added)
        assert s._index is not None and s._index.ntotal == 33
    # 4. damaged file: ignored and rebuilt, never trusted
    index_file.write_bytes(b"garbage" * 10)
    with MemoryStore(db) as s:
        assert len(s.recall("exp kernel", k=40)) == 33
    # 5. an index file of another store at the same path is not used
    os.unlink(db)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    with MemoryStore(db) as s:
        s.add(MemoryItem(kind="trace", text="fresh store"))
        assert [it.text for it, _ in s.recall("exp kernel", k=10)] == ["fresh store"]


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
        assert s.get(shared).use_count == 4 * n             # no lost read-modify-write
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
    with MemoryStore(db) as s:                               # embedder=None: the recorded one
        assert s.embedder.name == "hashing-v1-d512"


def test_export_import_round_trip(tmp_path):
    a, b, c = (str(tmp_path / f"{x}.db") for x in "abc")
    with MemoryStore(a) as s:
        first = s.add(MemoryItem(kind="trace", text="draft of softmax", task_id="t1", level=2, category="softmax",
                                 backend="ascend_sim", payload={"code": "x = 1\n", "reward": -1.0, "stage": "drafting"},
                                 q1=0.123456789, q2=-1e-300, use_count=4, count=2, key="k/1"))
        s.add(MemoryItem(kind="trace", text="refined softmax", task_id="t1",
                         payload={"parent_id": first, "context_ids": [first, 999], "ünïcode": "✓"}))
        s.add([MemoryItem(kind="best_practice", text=f"note {i}") for i in range(5)])
        s.delete(3)                                          # a hole in the ids
        s.export_jsonl(tmp_path / "a.jsonl")
        items_a = s.all()
    with MemoryStore(b) as s:
        mapping = s.import_jsonl(tmp_path / "a.jsonl")
        assert mapping == {it.id: it.id for it in items_a}
        items_b = s.all()
        s.export_jsonl(tmp_path / "b.jsonl")
        assert s.clock == 7
        assert [x.id for x, _ in s.recall("refined softmax", k=1)] == [2]
    assert items_a == items_b
    assert all(np.array_equal(x.embedding, y.embedding) for x, y in zip(items_a, items_b))
    lines_a = (tmp_path / "a.jsonl").read_text().splitlines()
    lines_b = (tmp_path / "b.jsonl").read_text().splitlines()
    assert lines_a[1:] == lines_b[1:]
    # into a non-empty store: new ids, references rewritten
    with MemoryStore(c) as s:
        s.add([MemoryItem(kind="api_template", text=f"existing {i}") for i in range(10)])
        mapping = s.import_jsonl(tmp_path / "a.jsonl")
        assert set(mapping) == {it.id for it in items_a}
        assert sorted(mapping.values()) == list(range(11, 11 + len(items_a)))
        refined = s.get(mapping[2])
        assert refined.payload["parent_id"] == mapping[first]
        assert refined.payload["context_ids"] == [mapping[first], 999]
        assert s.count() == 10 + len(items_a)
        # the same file again: keyed items map to the existing ones
        again = s.import_jsonl(tmp_path / "a.jsonl")
        assert again[first] == mapping[first]
    # an export made with another embedder is re-embedded
    with MemoryStore(str(tmp_path / "d.db"), embedder=HashingEmbedder(dim=256)) as s:
        s.import_jsonl(tmp_path / "a.jsonl")
        assert s.get(1).embedding.shape == (256,)
        assert s.recall("refined softmax", k=1)[0][0].text == "refined softmax"


def test_log_trim_forces_rebuild_of_old_index(db, monkeypatch):
    monkeypatch.setattr(store_mod, "_MAX_LOG_ROWS", 8)
    with MemoryStore(db) as s1, MemoryStore(db) as s2:
        ids = s1.add([MemoryItem(kind="trace", text=f"item {i}") for i in range(50)])
        s1.recall("item", k=1)
        s2.delete(ids[:45])                                   # 45 log rows -> trimmed
        got = s1.recall("item", k=50)
        assert sorted(it.id for it, _ in got) == ids[45:]


def test_tampered_index_with_a_matching_stamp_is_rebuilt(db, caplog):
    """Someone rewrites <db>.faiss keeping its stamp (so it still claims to reflect the current
    SQLite state) but pointing a query at the wrong item: the digest recorded in SQLite catches it."""
    from kernel_gym.memory.index import VectorIndex

    with MemoryStore(db) as s:
        ids = s.add([MemoryItem(kind="trace", text=f"kernel number {i} {'alpha' if i == 3 else 'beta'}")
                     for i in range(20)])
        honest = [it.id for it, _ in s.recall("alpha", k=3)]
    assert honest[0] == ids[3]
    path = db + ".faiss"
    forged = VectorIndex.from_file(path)
    stamp = dict(forged.stamp)
    victim, decoy = ids[3], ids[11]
    vecs = {i: MemoryStore(db, save_index_on_close=False).get(i).embedding for i in (victim, decoy)}
    forged.update(np.asarray([victim, decoy], dtype=np.int64), np.stack([vecs[decoy], vecs[victim]]),
                  forged.encode_attrs([{"kind": "trace"}] * 2))
    forged.stamp = stamp
    forged.to_file(path)
    assert VectorIndex.from_file(path).stamp == stamp       # the forgery keeps a valid-looking stamp
    with caplog.at_level("WARNING", logger="kernel_gym.memory.store"), MemoryStore(db) as s:
        calls = []
        orig = s._rebuild_index
        s._rebuild_index = lambda: calls.append(1) or orig()  # type: ignore[method-assign]
        assert [it.id for it, _ in s.recall("alpha", k=3)] == honest
        assert calls == [1]
    assert "does not match the digest recorded in the store" in caplog.text
    with MemoryStore(db) as s:                              # the rebuilt index was saved and is trusted again
        calls = []
        orig = s._rebuild_index
        s._rebuild_index = lambda: calls.append(1) or orig()  # type: ignore[method-assign]
        assert [it.id for it, _ in s.recall("alpha", k=3)] == honest
        assert calls == []


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
    code = ("import sys\nfrom kernel_gym.memory import MemoryStore, MemoryStoreError\n"
            f"try:\n    MemoryStore({str(db)!r})\nexcept MemoryStoreError as e:\n    print('ERR', e); sys.exit(3)\n")
    probe = subprocess.run([BWRAP, "--dev-bind", "/", "/", "--ro-bind", str(ro), str(ro), sys.executable, "-c", code],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    if "Operation not permitted" in probe.stderr or "No permissions" in probe.stderr:
        pytest.skip(f"bubblewrap cannot create a mount namespace here: {probe.stderr.strip()[:200]}")
    assert probe.returncode == 3, probe.stdout + probe.stderr
    assert "is read-only" in probe.stdout and "copy the store to a writable path" in probe.stdout
    assert "Traceback" not in probe.stderr
    if existing:
        with MemoryStore(db) as s:
            assert [it.text for it in s.all()] == ["kept"]      # nothing lost
