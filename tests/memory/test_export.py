"""Export / import in JSON lines: exact round trip, remapped ids and references, re-embedding."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_gym.memory import HashingEmbedder, MemoryItem, MemoryStore, MemoryStoreError


def test_export_import_round_trip(tmp_path):
    a, b, c = (str(tmp_path / f"{x}.db") for x in "abc")
    with MemoryStore(a) as s:
        first = s.add(
            MemoryItem(
                kind="trace",
                text="draft of softmax",
                task_id="t1",
                level=2,
                category="softmax",
                backend="ascend_sim",
                payload={"code": "x = 1\n", "reward": -1.0, "stage": "drafting"},
                q1=0.123456789,
                q2=-1e-300,
                use_count=4,
                count=2,
                key="k/1",
            )
        )
        s.add(
            MemoryItem(
                kind="trace",
                text="refined softmax",
                task_id="t1",
                payload={"parent_id": first, "context_ids": [first, 999], "ünïcode": "✓"},
            )
        )
        s.add([MemoryItem(kind="best_practice", text=f"note {i}") for i in range(5)])
        s.delete(3)  # a hole in the ids
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
    assert all(np.array_equal(x.embedding, y.embedding) for x, y in zip(items_a, items_b, strict=True))
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


def test_not_an_export_is_refused(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "something else"}\n')
    with (
        MemoryStore(str(tmp_path / "m.db")) as s,
        pytest.raises(MemoryStoreError, match="not a kernel-gym memory export"),
    ):
        s.import_jsonl(bad)
    bad.write_text("not json\n")
    with MemoryStore(str(tmp_path / "m.db")) as s, pytest.raises(MemoryStoreError, match="bad header line"):
        s.import_jsonl(bad)
