"""Embedders: hashing determinism and ranking, litellm through a monkeypatched litellm.embedding."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from kernel_gym.memory import (
    HashingEmbedder,
    LiteLLMEmbedder,
    MemoryItem,
    MemoryStore,
    get_embedder,
    load_seed_knowledge,
)
from kernel_gym.memory.embedders import tokenize


def test_tokenize_is_code_aware():
    toks = tokenize("DataCopyPad GetBlockIdx BUFFER_NUM TQue snake_case fp16 buffering the")
    for t in [
        "datacopypad",
        "data",
        "copy",
        "pad",
        "getblockidx",
        "block",
        "idx",
        "buffer_num",
        "buffer",
        "num",
        "tque",
        "que",
        "snake_case",
        "snake",
        "case",
        "fp16",
    ]:
        assert t in toks
    assert "the" not in toks and toks.count("buffer") == 2  # "buffering" is stemmed


def test_hashing_embedder_is_deterministic_and_normalised():
    texts = ["double buffering with TQue", "ReduceSum over rows", "", "x"]
    a = HashingEmbedder().embed(texts)
    b = HashingEmbedder().embed(texts)
    assert a.dtype == np.float32 and a.shape == (4, 512)
    assert np.array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), [1, 1, 0, 1], atol=1e-5)
    code = (
        "import sys; from kernel_gym.memory import HashingEmbedder as H; "
        "sys.stdout.buffer.write(H().embed(['double buffering with TQue']).tobytes())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, env={"PYTHONHASHSEED": "123", "PATH": ""}
    ).stdout
    assert other == a[:1].tobytes()  # same bytes in another process and hash seed
    assert HashingEmbedder(dim=1024).embed(["x"]).shape == (1, 1024)
    assert HashingEmbedder(seed="other").name != HashingEmbedder().name
    with pytest.raises(TypeError):
        HashingEmbedder().embed("a string")


def test_hashing_similarity_is_meaningful(tmp_path):
    e = HashingEmbedder()
    v = e.embed(
        [
            "double buffering TQue depth 2",
            "Use BUFFER_NUM = 2 in InitBuffer so copy overlaps compute (double buffer)",
            "cumulative sum along rows",
        ]
    )
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    with MemoryStore(str(tmp_path / "s.db")) as s:
        load_seed_knowledge(s)
        s.add([MemoryItem(kind="trace", text=f"unrelated trace about matmul tiles {i}") for i in range(20)])
        expect = {
            "double buffering TQue depth 2": "bp-double-buffering",
            "DataCopyPad for an unaligned tail": "datacopypad-tail",
            "bf16 add": "bp-bf16-support",
            "launch the kernel from the host with blockDim and stream": "host-launcher-chevron",
            "cumulative sum": "scan-cumsum",
            "where mask select": "compare-select",
        }
        for query, slug in expect.items():
            top = s.recall(query, k=1)[0][0]
            assert top.payload["seed_key"] == slug, (query, top.title)
        top3 = [it.payload.get("seed_key") for it, _ in s.recall("softmax over the last dimension", k=3)]
        assert "softmax-row-recipe" in top3


class FakeResponse:
    """Shaped like litellm's EmbeddingResponse: .data is a list of {"embedding", "index", "object"}."""

    def __init__(self, data):
        self.data = data
        self.model = "fake"


def test_litellm_embedder_with_monkeypatched_litellm(monkeypatch, tmp_path):
    import litellm
    from litellm.types.utils import EmbeddingResponse

    calls = []

    def fake_embedding(model, input, **kw):
        calls.append((model, list(input), kw))
        rows = []
        for i, text in enumerate(input):
            vec = [float(len(text)), 1.0, float(text.count("a")), 0.5, 0.0, 2.0]
            rows.append({"object": "embedding", "index": i, "embedding": vec})
        rows.reverse()  # order must come from "index"
        if len(calls) % 2:
            return EmbeddingResponse(model=model, data=rows)
        return FakeResponse(rows)

    monkeypatch.setattr(litellm, "embedding", fake_embedding)
    emb = LiteLLMEmbedder("openai/fake-embed", batch_size=2, api_base="http://localhost:1")
    assert emb.name == "litellm:openai/fake-embed"
    out = emb.embed(["aaa", "b", "", "banana"])
    assert emb.dim == 6 and out.shape == (4, 6) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    expected = np.array([3, 1, 3, 0.5, 0, 2], np.float32)
    np.testing.assert_allclose(out[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert [len(c[1]) for c in calls] == [2, 2] and calls[0][2] == {"api_base": "http://localhost:1"}
    assert calls[1][1][0] == " "  # empty text sent as a space
    with pytest.raises(ValueError):
        LiteLLMEmbedder("openai/fake-embed", dim=8).embed(["x"])
    # a store built on it records the name and dim and reopens with it
    with MemoryStore(str(tmp_path / "l.db"), embedder=emb) as s:
        s.add([MemoryItem(kind="trace", text=t) for t in ["aaa", "banana"]])
        assert s.recall("aaa", k=1)[0][0].text == "aaa"
    with MemoryStore(str(tmp_path / "l.db")) as s:
        assert isinstance(s.embedder, LiteLLMEmbedder) and s.dim == 6
    assert isinstance(get_embedder("litellm:openai/fake-embed"), LiteLLMEmbedder)


def test_get_embedder_names():
    assert get_embedder("hashing").name == "hashing-v1-d512"
    assert get_embedder("hashing-v1-d1024").dim == 1024
    assert get_embedder("hashing", dim=256).name == "hashing-v1-d256"
    with pytest.raises(ValueError):
        get_embedder("word2vec")
