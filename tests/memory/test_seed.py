"""Seed knowledge M0 loads fully and idempotently."""

from __future__ import annotations

from collections import Counter

from kernel_gym.backends.seeds.ascendc_vector import SEED_ITEMS
from kernel_gym.memory import MemoryStore, load_seed_knowledge


def test_seed_items_are_well_formed():
    assert len(SEED_ITEMS) >= 40
    slugs = [d["slug"] for d in SEED_ITEMS]
    assert len(set(slugs)) == len(slugs)
    kinds = Counter(d["kind"] for d in SEED_ITEMS)
    assert kinds["api_template"] >= 20 and kinds["best_practice"] >= 8 and kinds["validity_rule"] >= 5
    for d in SEED_ITEMS:
        assert d["title"].strip() and d["category"] and d["tags"] and len(d["text"].strip()) > 80, d["slug"]
    text = " ".join(d["text"] for d in SEED_ITEMS)
    for api in [
        "TPipe",
        "TQue",
        "InitBuffer",
        "AllocTensor",
        "EnQue",
        "DeQue",
        "FreeTensor",
        "SetGlobalBuffer",
        "GetBlockIdx",
        "GetBlockNum",
        "DataCopyPad",
        "DataCopyExtParams",
        "DataCopyPadExtParams",
        "ReduceSum",
        "ReduceMax",
        "WholeReduceSum",
        "SetAtomicAdd",
        "Cast",
        "RoundMode",
        "Compare",
        "Select",
        "Duplicate",
        "LeakyRelu",
        "Muls",
        "Adds",
        "Maxs",
        "Exp",
        "Ln",
        "Rsqrt",
        "Reciprocal",
        "Div",
        "Sqrt",
        "PipeBarrier",
        "SetFlag",
        "WaitFlag",
        "GM_ADDR",
        "__gm__",
        "<<<",
        "BUFFER_NUM",
        "192 KB",
        "TBuf",
    ]:
        assert api in text, api


def test_load_seed_knowledge_is_idempotent(db):
    with MemoryStore(db) as s:
        ids = load_seed_knowledge(s)
        assert len(ids) == len(SEED_ITEMS) >= 40 and len(set(ids)) == len(ids)
        assert s.count() == len(ids)
        assert load_seed_knowledge(s) == ids and s.count() == len(ids)
        items = s.get_many(ids)
        assert all(it.backend == "ascend_sim" and it.category and it.title and it.key for it in items)
        assert {it.kind for it in items} == {"api_template", "best_practice", "validity_rule"}
        assert [it.payload["seed_key"] for it in items] == [d["slug"] for d in SEED_ITEMS]
        # another backend gets its own copy; a backend without seed knowledge adds nothing
        other = load_seed_knowledge(s, backend="ascend_npu", entries=SEED_ITEMS)
        assert not set(other) & set(ids) and s.count(backend="ascend_npu") == len(SEED_ITEMS)
        assert load_seed_knowledge(s, backend="cpu") == [] and s.count(backend="cpu") == 0
    with MemoryStore(db) as s:  # and across processes / reopen
        assert load_seed_knowledge(s) == ids
