"""Contract of the persistence protocol (kernel_gym.memory.persistence.StorageBackend).

Every test runs against each backend of tests/memory/backends.py, so a new backend (PostgreSQL)
is checked by adding it there. SQLite-only behaviour (file safety, log trimming) is tested in
test_store.py / test_index_sync.py.
"""

from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest

from kernel_gym.memory import MemoryItem, MemoryStoreError
from kernel_gym.memory.persistence import SCHEMA_VERSION, ItemFilters, StorageBackend
from kernel_gym.memory.values import mc_step
from tests.memory.backends import BACKEND_NAMES, new_location, open_backend, require_server

DIM = 512


@pytest.fixture(params=BACKEND_NAMES)
def backend(request, tmp_path):
    require_server(request.param, request)
    b = open_backend(request.param, new_location(request.param, tmp_path))
    yield b
    b.close()


def unit_vectors(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def insert(backend: StorageBackend, items: list[MemoryItem], seed: int = 0) -> list[int]:
    return backend.insert_items(
        items, unit_vectors(len(items), seed), keep_ids=False, keep_created=False, on_conflict="ignore"
    ).ids


def test_a_new_store_records_its_provenance(backend):
    meta = backend.meta()
    assert meta.schema_version == SCHEMA_VERSION and len(meta.store_uuid) == 32
    assert (meta.embedder_name, meta.embedder_dim) == ("hashing-v1-d512", DIM)
    assert (meta.generation, meta.n_items, meta.clock, meta.log_floor) == (0, 0, 0, 0)
    assert meta.index_sha256 is None


def test_insert_allocates_growing_ids_and_clock_and_dedups_keys(backend):
    items = [MemoryItem(kind="trace", text=f"t{i}", key="k/a" if i in (1, 3) else None) for i in range(4)]
    vecs = unit_vectors(4)
    res = backend.insert_items(items, vecs, keep_ids=False, keep_created=False, on_conflict="ignore")
    assert res.ids == [1, 2, 3, 2]  # the repeated key maps to its first id
    assert res.created_at == {0: 1, 1: 2, 2: 3}
    assert res.receipt.generation == 0 and [op.op for op in res.receipt.ops] == ["add"]
    assert res.receipt.ops[0].ids.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(res.receipt.ops[0].vectors, vecs[:3])
    meta = backend.meta()
    assert (meta.generation, meta.n_items, meta.clock) == (1, 3, 3)
    got = backend.read_items([3, 99, 1])
    assert [it.id for it in got] == [3, 1] and got[1].text == "t0" and got[0].created_at == 3
    assert got[1].embedding is not None and np.array_equal(got[1].embedding, vecs[0])  # bit-exact
    # an existing key: ignored, or refused with nothing written
    again = insert(backend, [MemoryItem(kind="trace", text="x", key="k/a"), MemoryItem(kind="trace", text="y")])
    assert again == [2, 4]
    gen = backend.meta().generation
    with pytest.raises(MemoryStoreError):
        backend.insert_items(
            [MemoryItem(kind="trace", text="z"), MemoryItem(kind="trace", text="w", key="k/a")],
            unit_vectors(2),
            keep_ids=False,
            keep_created=False,
            on_conflict="error",
        )
    assert backend.meta().generation == gen and backend.count_items(ItemFilters()) == 4
    # ids only grow: deleting the newest does not free its id
    n, receipt = backend.delete_items([4, 77])
    assert n == 1 and [op.op for op in receipt.ops] == ["del"]
    assert insert(backend, [MemoryItem(kind="trace", text="after delete")]) == [5]


def test_explicit_ids_and_created_at_are_kept(backend):
    items = [MemoryItem(kind="trace", text=f"t{i}", id=10 + 5 * i, created_at=100 + i) for i in range(3)]
    res = backend.insert_items(items, unit_vectors(3), keep_ids=True, keep_created=True, on_conflict="ignore")
    assert res.ids == [10, 15, 20] and res.created_at == {0: 100, 1: 101, 2: 102}
    assert backend.meta().clock == 102
    backend.advance_clock(150)
    backend.advance_clock(120)  # never moves back
    assert backend.meta().clock == 150
    assert insert(backend, [MemoryItem(kind="trace", text="next")]) == [21]


def test_filters_count_and_scan(backend):
    items = [
        MemoryItem(kind="trace", text="a", task_id="t1", level=1, category="softmax", backend="ascend_sim"),
        MemoryItem(kind="best_practice", text="b", task_id=None, level=2, category=None, backend=None),
        MemoryItem(kind="trace", text="c", task_id="t2", level=2, category="reduction", backend="cpu"),
        MemoryItem(kind="validity_rule", text="d", task_id="t1", level=None, category="softmax", backend=None),
    ]
    insert(backend, items)

    def ids(**kw):
        return [it.id for it in backend.scan_items(ItemFilters(**kw), 0, 100)]

    assert ids() == [1, 2, 3, 4]
    assert ids(kinds="trace") == [1, 3] and ids(kinds=["trace", "validity_rule"]) == [1, 3, 4]
    assert ids(category=[None]) == [2] and ids(category=["softmax", None]) == [1, 2, 4]
    assert ids(exclude_task_id="t1") == [2, 3] and ids(level=[2]) == [2, 3]
    assert ids(backend=["cpu", None], kinds="trace") == [3]
    assert backend.count_items(ItemFilters(task_id="t1")) == 2
    assert [it.id for it in backend.scan_items(ItemFilters(), 2, 1)] == [3]  # keyset page
    with pytest.raises(ValueError):
        ids(kinds="no_such_kind")


def test_update_fields_logs_only_indexed_changes(backend):
    insert(backend, [MemoryItem(kind="trace", text=f"t{i}") for i in range(3)])
    r1 = backend.update_fields(2, {"title": "renamed", "payload": {"a": [1, 2]}})
    assert r1.log_seq is None and r1.ops == []
    new_vec = unit_vectors(1, seed=5)[0]
    r2 = backend.update_fields(3, {"category": "softmax", "embedding": new_vec})
    assert r2.log_seq is not None and [op.op for op in r2.ops] == ["upd"]
    assert r2.ops[0].attrs[0]["category"] == "softmax"
    item = backend.read_items([2])[0]
    assert item.title == "renamed" and item.payload == {"a": [1, 2]}
    assert np.array_equal(backend.read_items([3])[0].embedding, new_vec)
    with pytest.raises(KeyError):
        backend.update_fields(42, {"title": "x"})
    with pytest.raises(ValueError):
        backend.update_fields(1, {"id": 7})
    backend.rewrite_payloads([(1, {"parent_id": 3})])
    assert backend.read_items([1])[0].payload == {"parent_id": 3}


def test_value_updates(backend):
    insert(backend, [MemoryItem(kind="trace", text=f"t{i}", q1=0.5) for i in range(3)])
    backend.set_values([1, 2], {"q1": [0.1, 0.2], "q2": [-1.0, 1.0]})
    backend.step_values("q1", [1, 3, 1], reward=1.0, alpha=0.3)  # id 1 twice: stepped twice
    backend.add_to_counter("use_count", [2, 2, 3], 4)
    got = {it.id: it for it in backend.read_items([1, 2, 3])}
    assert got[1].q1 == mc_step(mc_step(0.1, 1.0, 0.3), 1.0, 0.3) and got[1].q2 == -1.0
    assert got[2].q1 == 0.2 and got[2].use_count == 8
    assert got[3].q1 == mc_step(0.5, 1.0, 0.3) and got[3].use_count == 4
    with pytest.raises(ValueError):
        backend.step_values("use_count", [1], 1.0, 0.3)
    with pytest.raises(ValueError):
        backend.add_to_counter("q1", [1], 1)


def test_index_support(backend):
    ids = insert(backend, [MemoryItem(kind="trace", text=f"t{i}", level=i % 2) for i in range(7)])
    chunks = []
    meta, log_seq = backend.scan_index_rows(chunks.append, chunk=3)
    assert [len(c) for c in chunks] == [3, 3, 1] and meta.n_items == 7 and log_seq == 0
    assert np.concatenate([c.ids for c in chunks]).tolist() == ids
    assert chunks[0].vectors.shape == (3, DIM) and chunks[0].attrs[1]["level"] == 1
    backend.delete_items([2])
    backend.update_fields(5, {"backend": "cpu"})
    insert(backend, [MemoryItem(kind="trace", text="new")])
    delta = backend.index_delta(since_log_seq=log_seq, max_id=7)
    assert delta is not None
    assert delta.changed_ids == [2, 5] and delta.changed.ids.tolist() == [5] and delta.new.ids.tolist() == [8]
    assert delta.changed.attrs[0]["backend"] == "cpu" and delta.meta.n_items == 7
    # saving the index records its digest under the write lock without a new generation
    gen = backend.meta().generation
    backend.record_index_digest(lambda: "ab" * 32)
    assert backend.meta().index_sha256 == "ab" * 32 and backend.meta().generation == gen


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_two_processes_stepping_one_item_lose_no_update(name, tmp_path, request):
    """Q steps with the same reward and alpha commute, so the result after 2n steps is exact
    whatever the interleaving; a lost update would leave one step (and one count) missing."""
    from tests.memory._workers import backend_value_steps

    require_server(name, request)
    location = new_location(name, tmp_path)
    b = open_backend(name, location)
    [item] = insert(b, [MemoryItem(kind="best_practice", text="shared", q1=0.0)])
    b.close()
    n, reward, alpha = 150, 1.0, 0.01
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=backend_value_steps, args=(name, location, item, n, reward, alpha)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    q = [0.0]
    for _ in range(2 * n):
        q.append(mc_step(q[-1], reward, alpha))
    b = open_backend(name, location)
    got = b.read_items([item])[0]
    b.close()
    assert got.use_count == 2 * n
    assert got.q1 == pytest.approx(q[2 * n], rel=1e-12)
    assert got.q1 != pytest.approx(q[2 * n - 1], rel=1e-6)  # one lost step would show
