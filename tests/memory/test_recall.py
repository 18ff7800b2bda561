"""Filtered recall is exact: it equals a brute-force scan of the filtered set, on every search path."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_gym.memory import ITEM_KINDS, MemoryItem, MemoryStore
from kernel_gym.memory import index as index_mod

N = 3000
DIM = 512


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    rng = np.random.default_rng(7)
    path = str(tmp_path_factory.mktemp("recall") / "m.db")
    items = []
    for i in range(N):
        items.append(
            MemoryItem(
                kind=ITEM_KINDS[i % 6] if i % 5 else "trace",
                text=f"item {i}",
                task_id=f"task{rng.integers(60)}",
                level=int(rng.integers(1, 4)),
                category=["softmax", "reduction", "elementwise", None][rng.integers(4)],
                backend="ascend_sim" if i % 7 else "cpu",
            )
        )
    centers = rng.standard_normal((20, DIM)).astype(np.float32)
    vecs = centers[rng.integers(20, size=N)] + 0.3 * rng.standard_normal((N, DIM)).astype(np.float32)
    # near-duplicates: differences far below fp16 resolution, so only the exact rerank orders them
    vecs[100:140] = vecs[99] + 1e-6 * rng.standard_normal((40, DIM)).astype(np.float32)
    store = MemoryStore(path, n_shards=2)
    ids = store.add(items, embeddings=vecs)
    emb = np.stack([store.get(i).embedding for i in ids[:1]])  # stored vectors are normalised copies
    assert emb.shape == (1, DIM)
    all_items = store.all()
    meta = {
        "id": np.array([it.id for it in all_items]),
        "emb": np.stack([it.embedding for it in all_items]),
        "kind": np.array([it.kind for it in all_items]),
        "task_id": np.array([it.task_id for it in all_items]),
        "level": np.array([it.level for it in all_items]),
        "category": np.array([str(it.category) for it in all_items]),
        "backend": np.array([it.backend for it in all_items]),
    }
    yield store, meta, centers, vecs
    store.close()


def _as_list(v):
    return [v] if isinstance(v, (str, int)) or v is None else list(v)


def brute_force(meta, q, k, filters):
    mask = np.ones(len(meta["id"]), bool)
    for key, want in filters.items():
        if key == "kinds":
            mask &= np.isin(meta["kind"], _as_list(want))
        elif key == "exclude_task_id":
            mask &= meta["task_id"] != want
        elif key == "category":
            mask &= np.isin(meta["category"], [str(v) for v in _as_list(want)])
        else:
            mask &= np.isin(meta[key], _as_list(want))
    scores = meta["emb"][mask] @ q
    ids = meta["id"][mask]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order].tolist(), scores[order]


CASES = [
    {},
    {"kinds": "trace"},
    {"kinds": ["trace", "best_practice"]},
    {"task_id": "task5"},
    {"exclude_task_id": "task5"},
    {"level": 2, "category": "softmax"},
    {"category": [None]},
    {"backend": "cpu", "kinds": "api_template"},
    {"task_id": "no-such-task"},
    {"level": [1, 3]},
    {"kinds": ["api_template", "best_practice", "experience_success", "experience_failure", "validity_rule"]},
]


@pytest.mark.parametrize("path", ["default", "widen", "parallel"])
def test_filtered_recall_equals_brute_force(populated, path, monkeypatch):
    store, meta, centers, vecs = populated
    if path == "widen":  # start with exactly k per shard: the candidate window must widen
        monkeypatch.setattr(index_mod, "OVERFETCH", 0)
    elif path == "parallel":  # shards searched in parallel threads
        monkeypatch.setattr(index_mod, "PARALLEL_MIN_ITEMS", 0)
    rng = np.random.default_rng({"default": 1, "widen": 2, "parallel": 3}[path])
    queries = [centers[j] + 0.3 * rng.standard_normal(DIM).astype(np.float32) for j in range(4)]
    queries.append(vecs[99] + 1e-4 * rng.standard_normal(DIM).astype(np.float32))  # hits the near-duplicates
    for qi, q in enumerate(queries):
        q = (q / np.linalg.norm(q)).astype(np.float32)
        for ci, filters in enumerate(CASES):
            k = [1, 7, 20, 60][(qi + ci) % 4]
            want_ids, want_scores = brute_force(meta, q, k, filters)
            got = store.recall(q, k=k, **filters)
            got_scores = np.array([s for _, s in got])
            assert len(got) == len(want_ids), (filters, k)
            np.testing.assert_allclose(got_scores, want_scores, atol=2e-6)
            # ids equal except where exact scores tie to float rounding
            mismatch = [i for i, (a, b) in enumerate(zip([it.id for it, _ in got], want_ids, strict=True)) if a != b]
            for i in mismatch:
                assert abs(got_scores[i] - want_scores[i]) < 2e-6, (filters, k, i)
            for it, _ in got:
                if "kinds" in filters:
                    assert it.kind in _as_list(filters["kinds"])
                if "exclude_task_id" in filters:
                    assert it.task_id != filters["exclude_task_id"]


def test_recall_edge_cases(tmp_path):
    with MemoryStore(str(tmp_path / "e.db")) as s:
        assert s.recall("anything", k=5) == []
        s.add(MemoryItem(kind="trace", text=""))  # zero vector is allowed
        s.add(MemoryItem(kind="trace", text="softmax"))
        got = s.recall("softmax", k=10)
        assert [it.text for it, _ in got] == ["softmax", ""] and got[1][1] == 0.0
        assert s.recall("softmax", k=0) == []
        assert s.recall(np.ones(512, np.float32), k=1)[0][0].text in ("softmax", "")
        with pytest.raises(ValueError):
            s.recall(np.ones(3, np.float32), k=1)
