"""Text embedders for the memory.

An embedder has a ``name`` (stored in the store's meta table), a dimension ``dim`` and
``embed(texts) -> np.ndarray`` of shape ``[len(texts), dim]``, dtype float32, every row
L2-normalised (all-zero rows are allowed for texts without any feature), so that the inner
product of two rows is their cosine similarity.

* :class:`HashingEmbedder` (default): offline and deterministic, no download. Code-aware
  tokens (identifiers split at camelCase / PascalCase / snake_case boundaries, the whole
  identifier kept too, a light suffix stemmer), word unigrams and bigrams, character 3/4-grams,
  sublinear term frequency, all feature-hashed with a keyed BLAKE2b hash into ``dim`` signed
  buckets.
* :class:`LiteLLMEmbedder`: any embedding model reachable through ``litellm.embedding``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "HashingEmbedder", "LiteLLMEmbedder", "get_embedder", "tokenize", "l2_normalize"]


@runtime_checkable
class Embedder(Protocol):
    """What the store needs from an embedder."""

    name: str

    @property
    def dim(self) -> int:  # pragma: no cover - protocol
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - protocol
        """Embed ``texts``: float32 array ``[len(texts), dim]``, rows L2-normalised."""
        ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation of a float array ``[n, d]`` (zero rows stay zero); returns float32."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0).astype(np.float32, copy=False)


# --------------------------------------------------------------------------- tokenisation

_WORD_RE = re.compile(r"[A-Za-z0-9_]+")
# Parts of an identifier: acronym before a capitalised word (TQue -> T, Que), capitalised or
# lower-case words, remaining upper-case runs, digit runs.
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_STOPWORDS = frozenset(
    """a an and are as at be been being but by can could do does for from had has have how if in into
    is it its may might must no not of on or our should so such than that the their them then there
    these they this those to too use used uses using via was we were what when where which while who
    will with would you your""".split()
)


def _stem(w: str) -> str:
    """A deliberately light suffix stripper (buffering -> buffer, tiles -> tile)."""
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _word_tokens(word: str) -> list[str]:
    parts = [p for chunk in word.split("_") if chunk for p in _CAMEL_RE.findall(chunk)]
    if len(parts) > 1:
        out = [word.lower().strip("_")]
        for p in parts:
            lp = p.lower()
            if (len(lp) > 1 or lp.isdigit()) and lp not in _STOPWORDS:
                out.append(_stem(lp))
        return out
    if parts:
        lp = parts[0].lower()
        if lp not in _STOPWORDS:
            return [_stem(lp)]
    return []


_WORD_CACHE: dict[str, list[str]] = {}


def tokenize(text: str) -> list[str]:
    """Code-aware tokens of ``text`` (lower case).

    ``DataCopyPad`` -> ``datacopypad, data, copy, pad``; ``BUFFER_NUM`` -> ``buffer_num, buffer, num``;
    plain words are stemmed and stop words dropped; digit runs are kept (``"2"``, ``"32"``).
    """
    cache = _WORD_CACHE
    out: list[str] = []
    for word in _WORD_RE.findall(text):
        toks = cache.get(word)
        if toks is None:
            if len(cache) > 500_000:
                cache.clear()
            toks = cache[word] = _word_tokens(word)
        out.extend(toks)
    return out


# --------------------------------------------------------------------------- hashing embedder


class HashingEmbedder:
    """Deterministic offline embedder by signed feature hashing.

    Features per text (term frequency ``tf`` weighted ``1 + ln tf``):
      * word unigram of every token, weight 1;
      * character 3- and 4-grams of every token (``<token>`` with boundary marks), scaled so that a
        token's n-gram part has L2 norm ``char_weight`` (fuzzy matches: ``buffering`` ~ ``buffer``);
      * word bigrams of consecutive tokens, weight ``bigram_weight``.
    Each unigram / n-gram string goes through BLAKE2b keyed with ``seed``; the hash picks the
    bucket (``h mod dim``) and the sign (the top bit). A bigram's hash is a fixed 64-bit mix of its
    two unigram hashes. Same text, same vector, in any process.

    Args:
        dim: output dimension (number of hash buckets), e.g. 512 or 1024.
        seed: key of the hash (changing it changes every vector, and the name).
        char_weight, bigram_weight: relative weights of the feature groups.
    """

    VERSION = "v1"

    def __init__(
        self,
        dim: int = 512,
        seed: str = "kernel-gym",
        char_weight: float = 0.6,
        bigram_weight: float = 0.5,
        cache_size: int = 200_000,
    ) -> None:
        if dim < 8:
            raise ValueError(f"HashingEmbedder dim must be >= 8, got {dim}")
        self._dim = int(dim)
        self.seed = seed
        self.char_weight = float(char_weight)
        self.bigram_weight = float(bigram_weight)
        self._key = hashlib.blake2b(seed.encode(), digest_size=32).digest()
        suffix = "" if seed == "kernel-gym" else f"-s{hashlib.blake2b(seed.encode(), digest_size=4).hexdigest()}"
        weights = "" if (char_weight, bigram_weight) == (0.6, 0.5) else f"-c{char_weight:g}-b{bigram_weight:g}"
        self.name = f"hashing-{self.VERSION}-d{self._dim}{suffix}{weights}"
        self._cache_size = cache_size
        self._reset_cache()

    @property
    def dim(self) -> int:
        """Output dimension."""
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(name={self.name!r})"

    def _hash(self, feature: str) -> int:
        return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8, key=self._key).digest(), "little")

    def _slot(self, token: str) -> int:
        """Index of ``token`` in the feature table, computing its features on first sight."""
        slot = self._slots.get(token)
        if slot is not None:
            return slot
        h = self._hash("w:" + token)
        idx = [h % self._dim]
        val = [1.0 if (h >> 63) & 1 else -1.0]
        padded = f"<{token}>"
        grams = [padded[j : j + n] for n in (3, 4) for j in range(len(padded) - n + 1)]
        if grams and self.char_weight > 0:
            counts = Counter(grams)
            norm = math.sqrt(sum(c * c for c in counts.values()))
            for g, c in counts.items():
                hg = self._hash("c:" + g)
                idx.append(hg % self._dim)
                val.append((1.0 if (hg >> 63) & 1 else -1.0) * self.char_weight * c / norm)
        slot = len(self._feat_idx)
        self._slots[token] = slot
        self._feat_idx.append(np.asarray(idx, dtype=np.int64))
        self._feat_val.append(np.asarray(val, dtype=np.float64))
        self._feat_hash.append(h)
        return slot

    def _reset_cache(self) -> None:
        self._slots: dict[str, int] = {}
        self._feat_idx: list[np.ndarray] = []
        self._feat_val: list[np.ndarray] = []
        self._feat_hash: list[int] = []

    _M1 = np.uint64(0x9E3779B97F4A7C15)
    _M2 = np.uint64(0xBF58476D1CE4E5B9)

    def _embed_chunk(self, texts: Sequence[str]) -> np.ndarray:
        dim = self._dim
        rows: list[int] = []  # one entry per distinct (text, token)
        slots: list[int] = []
        weights: list[float] = []
        seq_hash: list[int] = []  # token unigram hashes in text order (for bigrams)
        seq_row: list[int] = []
        log = math.log
        for row, text in enumerate(texts):
            toks = tokenize(text)
            if not toks:
                continue
            ids = [self._slot(t) for t in toks]
            for s, tf in Counter(ids).items():
                rows.append(row)
                slots.append(s)
                weights.append(1.0 + log(tf))
            if self.bigram_weight > 0 and len(ids) > 1:
                fh = self._feat_hash
                seq_hash.extend(fh[s] for s in ids)
                seq_row.extend([row] * len(ids))
        m = len(texts)
        if not slots:
            return np.zeros((m, dim), dtype=np.float32)
        lengths = np.fromiter((len(self._feat_idx[s]) for s in slots), dtype=np.int64, count=len(slots))
        idx = np.concatenate([self._feat_idx[s] for s in slots])
        val = np.concatenate([self._feat_val[s] for s in slots])
        idx += np.repeat(np.asarray(rows, dtype=np.int64) * dim, lengths)
        val *= np.repeat(np.asarray(weights), lengths)
        if len(seq_hash) > 1:
            hs = np.asarray(seq_hash, dtype=np.uint64)
            rs = np.asarray(seq_row, dtype=np.int64)
            same = rs[1:] == rs[:-1]
            with np.errstate(over="ignore"):
                x = hs[:-1][same] * self._M1 + hs[1:][same]
                x ^= x >> np.uint64(29)
                x *= self._M2
                x ^= x >> np.uint64(32)
            br = rs[1:][same]
            if x.size:
                pairs = np.stack([br.astype(np.uint64), x], axis=1)
                uniq, counts = np.unique(pairs, axis=0, return_counts=True)
                bucket = (uniq[:, 1] % np.uint64(dim)).astype(np.int64)
                sign = np.where((uniq[:, 1] >> np.uint64(63)) & np.uint64(1), 1.0, -1.0)
                idx = np.concatenate([idx, uniq[:, 0].astype(np.int64) * dim + bucket])
                val = np.concatenate([val, sign * self.bigram_weight * (1.0 + np.log(counts))])
        flat = np.bincount(idx, weights=val, minlength=m * dim)
        return flat.reshape(m, dim).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 ``[len(texts), dim]``, rows L2-normalised (zero if no token)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        texts = list(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        chunk = 2048
        for start in range(0, len(texts), chunk):
            if len(self._slots) > self._cache_size:
                self._reset_cache()
            out[start : start + chunk] = self._embed_chunk(texts[start : start + chunk])
        return l2_normalize(out)


# --------------------------------------------------------------------------- litellm embedder


class LiteLLMEmbedder:
    """Embeddings from any model behind ``litellm.embedding`` (OpenAI, Azure, Ollama, ...).

    Args:
        model: litellm model string, e.g. ``"text-embedding-3-small"`` or ``"ollama/nomic-embed-text"``.
        dim: expected dimension; when None it is taken from the first response (reading ``dim``
            before any call makes one probe call).
        batch_size: texts per request.
        request_dimensions: pass ``dimensions=dim`` to the provider (models that can shorten).
        **litellm_kwargs: passed to ``litellm.embedding`` (api_base, api_key, timeout, ...).
    """

    def __init__(
        self,
        model: str,
        dim: int | None = None,
        batch_size: int = 64,
        request_dimensions: bool = False,
        **litellm_kwargs: Any,
    ) -> None:
        self.model = model
        self.name = f"litellm:{model}"
        self._dim = int(dim) if dim is not None else None
        self.batch_size = int(batch_size)
        self.request_dimensions = request_dimensions
        self.litellm_kwargs = litellm_kwargs

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder(model={self.model!r}, dim={self._dim})"

    @property
    def dim(self) -> int:
        """Embedding dimension (one probe request if neither given nor seen yet)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @staticmethod
    def _vectors(response: Any) -> list[list[float]]:
        data = response["data"] if isinstance(response, dict) else response.data
        rows = []
        for pos, d in enumerate(data):
            if isinstance(d, dict):
                vec, index = d["embedding"], d.get("index", pos)
            else:
                vec, index = d.embedding, getattr(d, "index", pos)
            rows.append((pos if index is None else int(index), vec))
        rows.sort(key=lambda r: r[0])
        return [vec for _, vec in rows]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` through litellm: float32 ``[len(texts), dim]``, rows L2-normalised."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
        import litellm

        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            kwargs = dict(self.litellm_kwargs)
            if self.request_dimensions and self._dim is not None:
                kwargs["dimensions"] = self._dim
            vecs = self._vectors(litellm.embedding(model=self.model, input=batch, **kwargs))
            arr = np.asarray(vecs, dtype=np.float32)
            if arr.ndim != 2 or arr.shape[0] != len(batch):
                raise ValueError(f"{self.name}: expected {len(batch)} embeddings, got array of shape {arr.shape}")
            if self._dim is None:
                self._dim = int(arr.shape[1])
            elif arr.shape[1] != self._dim:
                raise ValueError(f"{self.name}: expected dimension {self._dim}, the model returned {arr.shape[1]}")
            out.append(arr)
        if not out:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return l2_normalize(np.concatenate(out, axis=0))


# --------------------------------------------------------------------------- factory

_HASHING_NAME_RE = re.compile(r"^hashing(?:-v1)?(?:-d(\d+))?$")


def get_embedder(name: str = "hashing", **kw: Any) -> Embedder:
    """Build an embedder from a name.

    * ``"hashing"`` / ``"hashing-v1-d512"`` -> :class:`HashingEmbedder` (``dim`` from the name or ``kw``);
    * ``"litellm:<model>"`` or ``"litellm"`` with ``model=`` -> :class:`LiteLLMEmbedder`.
    Names stored in a store's meta table round-trip through this function.
    """
    if name.startswith("litellm:"):
        return LiteLLMEmbedder(name[len("litellm:") :], **kw)
    if name == "litellm":
        return LiteLLMEmbedder(**kw)
    m = _HASHING_NAME_RE.match(name)
    if m:
        if m.group(1) is not None:
            kw.setdefault("dim", int(m.group(1)))
        return HashingEmbedder(**kw)
    if name.startswith("hashing-"):
        # Non-default seed / weights are encoded in the name but cannot be recovered from it.
        raise ValueError(f"cannot rebuild embedder {name!r} from its name; pass the HashingEmbedder instance")
    raise ValueError(f"unknown embedder {name!r}; use 'hashing', 'hashing-v1-d<dim>' or 'litellm:<model>'")
