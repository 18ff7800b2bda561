"""Index sync: the faiss index follows the database (own writes, other processes' writes, stale,
damaged, forged or too-old index files) incrementally by item id, and is rebuilt when it must be."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from kernel_gym.memory import MemoryItem, MemoryStore, sqlite_backend
from kernel_gym.memory.persistence import IndexOp, WriteReceipt
from tests.memory._workers import run_worker


def count_calls(store: MemoryStore, name: str) -> list[int]:
    """Record calls of ``store.index_sync.<name>`` (still calling it)."""
    calls: list[int] = []
    orig = getattr(store.index_sync, name)

    def wrapped(*args, **kwargs):
        calls.append(1)
        return orig(*args, **kwargs)

    setattr(store.index_sync, name, wrapped)
    return calls


def test_own_writes_update_the_index_without_reading_the_database(db):
    with MemoryStore(db) as s:
        ids = s.add([MemoryItem(kind="trace", text=f"softmax trace {i}") for i in range(10)])
        s.recall("softmax", k=3)  # index built
        catch_ups = count_calls(s, "_catch_up")
        rebuilds = count_calls(s, "rebuild")
        s.add(MemoryItem(kind="trace", text="zebra giraffe"))
        s.update(ids[0], category="normalization")
        s.mc_update(ids[:3], reward=1.0)
        s.delete(ids[1])
        idx = s.index_sync.index
        assert idx is not None and idx.stamp["generation"] == s.generation and idx.ntotal == 10
        assert s.recall("zebra giraffe", k=1)[0][0].text == "zebra giraffe"
        assert [it.id for it, _ in s.recall("softmax", k=1, category="normalization")] == [ids[0]]
        assert catch_ups == [] and rebuilds == []


def test_inserts_from_another_process_are_caught_up_by_id(db):
    with MemoryStore(db) as s:
        s.add([MemoryItem(kind="trace", text=f"trace {i}") for i in range(5)])
        s.sync_index()
        rebuilds = count_calls(s, "rebuild")
        added = [int(x) for x in run_worker("add", db, "4", "reduction with atomic add").split(",")]
        s.sync_index()
        idx = s.index_sync.index
        assert idx is not None and idx.ids.tolist() == list(range(1, 6)) + added
        assert idx.stamp["generation"] == s.generation and rebuilds == []
        assert {it.id for it, _ in s.recall("reduction atomic add", k=4)} == set(added)


def test_import_into_an_empty_store_keeps_ids_in_the_index(tmp_path):
    src, dst = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    with MemoryStore(src) as s:
        s.add([MemoryItem(kind="trace", text=f"item {i}") for i in range(6)])
        s.delete([2, 3])
        s.export_jsonl(tmp_path / "a.jsonl")
    with MemoryStore(dst) as s:
        s.sync_index()  # an empty index (max id 0): the kept ids are above it and added in place
        s.import_jsonl(tmp_path / "a.jsonl")
        assert s.index_sync.index is not None and s.index_sync.index.ids.tolist() == [1, 4, 5, 6]
        assert s.index_sync.index.stamp["generation"] == s.generation


def test_an_added_id_at_or_below_the_index_max_drops_the_index(db):
    """Ids only grow, so an add at or below the index's max id (an explicit-id import) cannot be
    appended to the sorted shards: the index is dropped and rebuilt on next use."""
    with MemoryStore(db) as s:
        s.add([MemoryItem(kind="trace", text=f"item {i}") for i in range(5)])
        s.sync_index()
        vec = np.zeros((1, s.dim), np.float32)
        op = IndexOp("add", np.asarray([3], dtype=np.int64), vec, [{"kind": "trace"}])
        s.index_sync.apply(WriteReceipt(generation=s.generation, ops=[op]))
        assert s.index_sync.index is None
        assert len(s.recall("item", k=10)) == 5 and s.index_sync.index is not None


def test_saving_the_index_records_its_digest_without_a_write_generation(db):
    import hashlib

    with MemoryStore(db) as s:
        s.add([MemoryItem(kind="trace", text=f"item {i}") for i in range(3)])
        gen = s.generation
        assert s.save_index() is True and s.save_index() is False  # unchanged: not rewritten
        assert s.generation == gen
        digest = hashlib.sha256(Path(db + ".faiss").read_bytes()).hexdigest()
        assert s.backend.meta().index_sha256 == digest


def test_recall_sees_writes_of_other_processes(db):
    """The in-memory index of a live store catches up with adds, deletes and edits made elsewhere."""
    with MemoryStore(db) as s:
        ids = s.add([MemoryItem(kind="trace", text=f"softmax trace {i}") for i in range(20)])
        assert len(s.recall("softmax", k=50)) == 20  # index built now
        gen = s.generation
        new_id = int(run_worker("mutate", db, str(ids[0]), str(ids[1])))
        assert s.generation > gen
        rebuilds = count_calls(s, "rebuild")
        got = {it.id for it, _ in s.recall("softmax", k=50)}
        assert ids[0] not in got and len(got) == 20  # 19 old softmax items + the edited/new ones fill k
        assert s.recall("layer norm gamma beta variance", k=1)[0][0].id == ids[1]
        assert s.recall("zebra giraffe", k=1)[0][0].id == new_id
        assert s.recall("layer norm", k=1, category="normalization")[0][0].id == ids[1]
        assert rebuilds == []  # caught up incrementally


def test_index_rebuilt_when_file_missing_or_stale(db):
    with MemoryStore(db) as s:
        s.add([MemoryItem(kind="trace", text=f"exp kernel tail {i}") for i in range(30)])
        before = [(it.id, round(x, 6)) for it, x in s.recall("exp kernel tail 7", k=5)]
    index_file = Path(db + ".faiss")
    assert index_file.exists()  # saved on close
    # 1. loaded from the file, no rebuild
    with MemoryStore(db) as s:
        calls = count_calls(s, "rebuild")
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
        assert s.index_sync.index is not None and s.index_sync.index.ntotal == 33
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


def test_log_trim_forces_rebuild_of_old_index(db, monkeypatch):
    monkeypatch.setattr(sqlite_backend, "MAX_LOG_ROWS", 8)
    with MemoryStore(db) as s1, MemoryStore(db) as s2:
        ids = s1.add([MemoryItem(kind="trace", text=f"item {i}") for i in range(50)])
        s1.recall("item", k=1)
        s2.delete(ids[:45])  # 45 log rows -> trimmed
        got = s1.recall("item", k=50)
        assert sorted(it.id for it, _ in got) == ids[45:]


def test_tampered_index_with_a_matching_stamp_is_rebuilt(db, caplog):
    """Someone rewrites <db>.faiss keeping its stamp (so it still claims to reflect the current
    SQLite state) but pointing a query at the wrong item: the digest recorded in SQLite catches it."""
    from kernel_gym.memory.index import VectorIndex

    with MemoryStore(db) as s:
        ids = s.add(
            [MemoryItem(kind="trace", text=f"kernel number {i} {'alpha' if i == 3 else 'beta'}") for i in range(20)]
        )
        honest = [it.id for it, _ in s.recall("alpha", k=3)]
    assert honest[0] == ids[3]
    path = db + ".faiss"
    forged = VectorIndex.from_file(path)
    stamp = dict(forged.stamp)
    victim, decoy = ids[3], ids[11]
    vecs = {i: MemoryStore(db, save_index_on_close=False).get(i).embedding for i in (victim, decoy)}
    forged.update(
        np.asarray([victim, decoy], dtype=np.int64),
        np.stack([vecs[decoy], vecs[victim]]),
        forged.encode_attrs([{"kind": "trace"}] * 2),
    )
    forged.stamp = stamp
    forged.to_file(path)
    assert VectorIndex.from_file(path).stamp == stamp  # the forgery keeps a valid-looking stamp
    with caplog.at_level("WARNING", logger="kernel_gym.memory.index_sync"), MemoryStore(db) as s:
        calls = count_calls(s, "rebuild")
        assert [it.id for it, _ in s.recall("alpha", k=3)] == honest
        assert calls == [1]
    assert "does not match the digest recorded in the store" in caplog.text
    with MemoryStore(db) as s:  # the rebuilt index was saved and is trusted again
        calls = count_calls(s, "rebuild")
        assert [it.id for it, _ in s.recall("alpha", k=3)] == honest
        assert calls == []
