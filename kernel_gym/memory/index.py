"""In-memory vector index of a :class:`~kernel_gym.memory.store.MemoryStore`.

The index is a cache derived from SQLite (the source of truth). It holds

* ``S`` shards (S = min(4, cores)), shard ``s`` holding the items with ``id % S == s`` in a
  ``faiss.IndexIDMap2(faiss.IndexScalarQuantizer(dim, QT_fp16, METRIC_INNER_PRODUCT))``; shards are
  scanned in parallel threads (faiss releases the GIL). Ids enter a shard in ascending order and
  removals keep the order, so each shard's id list is sorted and a position is a binary search.
* the filter attributes of every item (kind, level, category, task_id, backend) as integer-coded
  numpy arrays sorted by id, so a filter is a vectorised mask.

Exactness. Vectors are stored as IEEE fp16, so a coarse score ``c`` differs from the exact float32
cosine ``s`` by at most ``delta = 2**-11 + dim * 2**-22 + 1e-6`` (|x|=|q|=1, Cauchy-Schwarz, plus
accumulation). If ``c_k`` is the k-th best coarse score, every item of the exact top-k has
``c >= c_k - 2 * delta``; :meth:`VectorIndex.candidates` returns all such items (it widens its
search until every unseen item is provably below that threshold) and the store reranks them with
the exact float32 embeddings from SQLite. A filter is turned into a bitmap over ids that faiss tests
before scoring an item (``IDSelectorBitmap``), so filtered queries are exact the same way and cost
about n bit tests plus the matching items' scores.

Every faiss call runs in worker threads whose OpenMP team size is 1: on a busy machine OpenMP's
barriers around single-query work cost milliseconds; parallelism comes from the shards instead.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import faiss
import numpy as np

ATTR_FIELDS: tuple[str, ...] = ("kind", "level", "category", "task_id", "backend")
_STRING_FIELDS: tuple[str, ...] = ("kind", "category", "task_id", "backend")
NONE_CODE = -1  # code of a missing (None) attribute value
UNKNOWN_CODE = -2  # code of a filter value never seen (matches nothing)

OVERFETCH = 16  # first search asks each shard for k + OVERFETCH items, then widens x4 as needed
PARALLEL_MIN_ITEMS = 20_000  # search shards in parallel threads from this many items on


def coarse_error_bound(dim: int) -> float:
    """Upper bound on |fp16-coded inner product - exact inner product| for unit vectors of ``dim``."""
    return 2.0**-11 + dim * 2.0**-22 + 1e-6


class VectorIndex:
    """Sharded fp16 faiss index plus filter attributes. Not thread-safe by itself (the store locks)."""

    def __init__(self, dim: int, n_shards: int | None = None) -> None:
        self.dim = int(dim)
        self.n_shards = int(n_shards or min(4, max(1, os.cpu_count() or 1)))
        self.delta = coarse_error_bound(self.dim)
        self.shards = [self._new_shard() for _ in range(self.n_shards)]
        self.shard_ids = [np.empty(0, dtype=np.int64) for _ in range(self.n_shards)]
        self.ids = np.empty(0, dtype=np.int64)
        self.attrs = {f: np.empty(0, dtype=np.int32) for f in ATTR_FIELDS}
        self.vocab: dict[str, dict[str, int]] = {f: {} for f in _STRING_FIELDS}
        # Stamp of the SQLite state this index reflects (set by the store).
        self.stamp: dict[str, Any] = {}
        self._bitmaps: dict[str, np.ndarray] = {}  # filter -> id bitmap, cleared on every change
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0

    # ------------------------------------------------------------------ construction

    def _new_shard(self) -> faiss.IndexIDMap2:
        sq = faiss.IndexScalarQuantizer(self.dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        return faiss.IndexIDMap2(sq)

    @property
    def ntotal(self) -> int:
        """Number of vectors in the index."""
        return int(self.ids.shape[0])

    @property
    def max_id(self) -> int:
        """Largest id in the index (0 when empty)."""
        return int(self.ids[-1]) if self.ids.shape[0] else 0

    def _code(self, field: str, value: Any, create: bool) -> int:
        if value is None:
            return NONE_CODE
        if field == "level":
            return int(value)
        voc = self.vocab[field]
        code = voc.get(str(value))
        if code is None:
            if not create:
                return UNKNOWN_CODE
            code = voc[str(value)] = len(voc)
        return code

    def encode_attrs(self, rows: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
        """Integer codes ``{field: int32[n]}`` of attribute dicts (growing the vocabularies)."""
        return {
            f: np.fromiter((self._code(f, r.get(f), True) for r in rows), dtype=np.int32, count=len(rows))
            for f in ATTR_FIELDS
        }

    def add(self, ids: np.ndarray, vectors: np.ndarray, attrs: dict[str, np.ndarray]) -> None:
        """Append items. ``ids``: int64 ``[n]``, ascending, all larger than :attr:`max_id`;
        ``vectors``: float32 ``[n, dim]`` unit rows; ``attrs``: codes from :meth:`encode_attrs`."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if ids.size == 0:
            return
        self._bitmaps.clear()
        if ids.size > 1 and np.any(np.diff(ids) <= 0):
            raise ValueError("VectorIndex.add needs strictly ascending ids")
        if ids[0] <= self.max_id:
            raise ValueError(f"VectorIndex.add: id {ids[0]} is not above the current max id {self.max_id}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        shard_of = ids % self.n_shards
        for s in range(self.n_shards):
            sel = shard_of == s
            if sel.any():
                self._faiss(self.shards[s].add_with_ids, vectors[sel], ids[sel])
                self.shard_ids[s] = np.concatenate([self.shard_ids[s], ids[sel]])
        self.ids = np.concatenate([self.ids, ids])
        for f in ATTR_FIELDS:
            self.attrs[f] = np.concatenate([self.attrs[f], np.asarray(attrs[f], dtype=np.int32)])

    def remove(self, ids: Iterable[int]) -> int:
        """Remove ``ids`` (absent ids are ignored); returns how many were removed."""
        ids = np.unique(np.asarray(list(ids), dtype=np.int64))
        ids = ids[np.isin(ids, self.ids)]
        if ids.size == 0:
            return 0
        self._bitmaps.clear()
        shard_of = ids % self.n_shards
        for s in range(self.n_shards):
            rm = ids[shard_of == s]
            if rm.size:
                self._faiss(self.shards[s].remove_ids, faiss.IDSelectorBatch(rm))
                self.shard_ids[s] = self.shard_ids[s][~np.isin(self.shard_ids[s], rm)]
        keep = ~np.isin(self.ids, ids)
        self.ids = self.ids[keep]
        for f in ATTR_FIELDS:
            self.attrs[f] = self.attrs[f][keep]
        return int(ids.size)

    def _quantizer(self, s: int) -> faiss.IndexScalarQuantizer:
        """The fp16 scalar quantizer inside shard ``s`` (faiss hands out the base class; downcast it)."""
        sq = faiss.downcast_index(self.shards[s].index)
        if not isinstance(sq, faiss.IndexScalarQuantizer):
            raise TypeError(f"shard {s} does not hold a scalar quantizer but {type(sq).__name__}")
        return sq

    def _codes_view(self, s: int) -> np.ndarray:
        """Writable uint8 view ``[ntotal_s, code_size]`` of shard ``s``'s fp16 codes (valid until the next add)."""
        sq = self._quantizer(s)
        n = int(sq.ntotal)
        if n == 0:
            return np.empty((0, sq.code_size), dtype=np.uint8)
        buf = faiss.rev_swig_ptr(sq.codes.data(), n * sq.code_size)
        return np.asarray(buf).reshape(n, sq.code_size)

    def update(self, ids: np.ndarray, vectors: np.ndarray | None, attrs: dict[str, np.ndarray]) -> None:
        """Overwrite vectors (if given) and attributes of existing ``ids`` in place (order is kept)."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return
        gpos = np.searchsorted(self.ids, ids)
        if np.any(gpos >= self.ids.size) or np.any(self.ids[np.minimum(gpos, self.ids.size - 1)] != ids):
            raise KeyError("VectorIndex.update: some ids are not in the index")
        self._bitmaps.clear()
        for f in ATTR_FIELDS:
            self.attrs[f][gpos] = attrs[f]
        if vectors is None:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        shard_of = ids % self.n_shards
        for s in range(self.n_shards):
            sel = shard_of == s
            if sel.any():
                sq = self._quantizer(s)
                pos = np.searchsorted(self.shard_ids[s], ids[sel])
                self._codes_view(s)[pos] = self._faiss(sq.sa_encode, vectors[sel])

    # ------------------------------------------------------------------ filtering

    def filter_mask(self, filters: dict[str, Any]) -> np.ndarray | None:
        """Boolean mask over :attr:`ids` for ``filters`` (None = no filter).

        Keys: ``kind``/``category``/``task_id``/``backend``/``level``: a value or a sequence of values
        (None inside matches a missing attribute); ``exclude_task_id``: a task id to leave out.
        """
        mask: np.ndarray | None = None
        for f, want in filters.items():
            if want is None:
                continue
            if f == "exclude_task_id":
                m = self.attrs["task_id"] != self._code("task_id", want, False)
            else:
                values = [want] if isinstance(want, (str, int)) or not isinstance(want, Iterable) else list(want)
                codes = np.asarray([self._code(f, v, False) for v in values], dtype=np.int32)
                m = np.isin(self.attrs[f], codes)
            mask = m if mask is None else (mask & m)
        return mask

    # ------------------------------------------------------------------ search

    def _executor(self) -> ThreadPoolExecutor:
        """Worker threads for every faiss call. Each sets OpenMP to one thread (a per-thread setting):
        faiss's OpenMP regions for a single query cost milliseconds of barrier waits when the cores are
        busy, far more than the work; parallelism comes from searching the shards in these threads."""
        if self._pool is None or self._pool_pid != os.getpid():
            self._pool = ThreadPoolExecutor(
                self.n_shards,
                thread_name_prefix="kg-memory-faiss",
                initializer=faiss.omp_set_num_threads,
                initargs=(1,),
            )
            self._pool_pid = os.getpid()
        return self._pool

    def close(self) -> None:
        """Stop the worker threads (the index stays usable; they restart on demand)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def _faiss(self, fn: Any, *args: Any) -> Any:
        """Run one faiss call in a worker thread (see :meth:`_executor`)."""
        return self._executor().submit(fn, *args).result()

    def _bitmap(self, mask: np.ndarray) -> np.ndarray:
        """Bitmap over ids (bit ``id`` set when the item passes the filter), for faiss.IDSelectorBitmap."""
        bits = np.zeros(self.max_id + 1, dtype=bool)
        bits[self.ids[mask]] = True
        return np.packbits(bits, bitorder="little")

    def _search_shards(
        self, q: np.ndarray, kk: int, bitmap: np.ndarray | None
    ) -> list[tuple[np.ndarray, np.ndarray, bool]]:
        """Per shard: (scores, ids, full) where ``full`` means the shard may hold more matching items."""
        jobs = [(s, min(kk, int(self.shards[s].ntotal))) for s in range(self.n_shards)]
        jobs = [(s, k) for s, k in jobs if k > 0]

        def one(job: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, bool]:
            s, k = job
            if bitmap is None:
                scores, labels = self.shards[s].search(q, k)
            else:
                params = faiss.SearchParameters()
                params.sel = faiss.IDSelectorBitmap(bitmap.size, faiss.swig_ptr(bitmap))
                scores, labels = self.shards[s].search(q, k, params=params)
            return scores[0], labels[0], k < int(self.shards[s].ntotal) and labels[0][-1] >= 0

        if len(jobs) > 1 and self.ntotal >= PARALLEL_MIN_ITEMS:
            return list(self._executor().map(one, jobs))
        return self._faiss(lambda: [one(j) for j in jobs])

    def _window(self, ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Keep candidates with coarse score >= (k-th best - 2 delta); returns them and the threshold."""
        if scores.size < k:
            return ids, scores, -np.inf
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        thr = float(kth) - 2.0 * self.delta
        keep = scores >= thr
        return ids[keep], scores[keep], thr

    def candidates(
        self, query: np.ndarray, k: int, filters: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Candidate ids and coarse scores that surely contain the exact top-``k`` of the filtered set.

        ``query``: float32 ``[dim]`` unit vector. Returns (ids int64 ``[m]``, coarse scores float32 ``[m]``),
        unordered, ``m >= min(k, size of the filtered set)``. A filter becomes a bitmap over ids that
        faiss checks before scoring an item (cost ~ n bit tests + matching items scored), so a
        filtered search is as exact as an unfiltered one.
        """
        empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))
        n = self.ntotal
        if n == 0 or k <= 0:
            return empty
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        bitmap = None
        if filters and any(v is not None for v in filters.values()):
            key = json.dumps(filters, sort_keys=True, default=str)
            bitmap = self._bitmaps.get(key)
            if bitmap is None:
                mask = self.filter_mask(filters)
                if mask is None or not mask.any():
                    return empty
                bitmap = self._bitmaps[key] = self._bitmap(mask) if not mask.all() else np.empty(0, np.uint8)
                if len(self._bitmaps) > 64:
                    self._bitmaps.pop(next(iter(self._bitmaps)))
            if bitmap.size == 0:  # the filter keeps everything
                bitmap = None
        kk = k + OVERFETCH
        while True:
            parts = self._search_shards(q, kk, bitmap)
            ids = np.concatenate([p[1] for p in parts])
            scores = np.concatenate([p[0] for p in parts])
            valid = ids >= 0
            ids, scores = ids[valid], scores[valid]
            full = [float(p[0][-1]) for p in parts if p[2]]
            bound = max(full) if full else -np.inf  # every unseen matching item scores <= bound
            ids, scores, thr = self._window(ids, scores, k)
            if bound < thr or not full:
                return ids, scores
            kk *= 4

    # ------------------------------------------------------------------ persistence

    def to_bytes(self) -> bytes:
        """The index as an .npz container (shards, attributes, stamp)."""
        arrays: dict[str, np.ndarray] = {
            "ids": self.ids,
            "header": np.frombuffer(
                json.dumps(
                    {
                        "dim": self.dim,
                        "n_shards": self.n_shards,
                        "vocab": self.vocab,
                        "stamp": self.stamp,
                        "format": "kernel_gym.memory.index/1",
                    }
                ).encode(),
                dtype=np.uint8,
            ),
        }
        for f in ATTR_FIELDS:
            arrays[f"attr_{f}"] = self.attrs[f]
        for s in range(self.n_shards):
            arrays[f"shard_{s}"] = faiss.serialize_index(self.shards[s])
        buf = io.BytesIO()
        # numpy's stub types **kwds as if a key could be its allow_pickle: bool keyword; ours are array names
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    def to_file(self, path: str) -> str:
        """Write the index atomically to ``path``; returns the SHA-256 (hex) of what was written."""
        data = self.to_bytes()
        tmp = f"{path}.tmp.{os.getpid()}.{threading.get_ident()}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return hashlib.sha256(data).hexdigest()

    @classmethod
    def from_file(cls, path: str) -> VectorIndex:
        """Read an index written by :meth:`to_file` (raises on any inconsistency)."""
        with open(path, "rb") as fh:
            return cls.from_bytes(fh.read())

    @classmethod
    def from_bytes(cls, raw: bytes) -> VectorIndex:
        """Read an index from :meth:`to_bytes`'s container (raises on any inconsistency)."""
        data = np.load(io.BytesIO(raw), allow_pickle=False)
        header = json.loads(bytes(data["header"]).decode())
        if header.get("format") != "kernel_gym.memory.index/1":
            raise ValueError("not a kernel-gym memory index file")
        idx = cls(header["dim"], header["n_shards"])
        idx.vocab = {f: dict(v) for f, v in header["vocab"].items()}
        idx.stamp = header["stamp"]
        idx.ids = data["ids"].astype(np.int64)
        for f in ATTR_FIELDS:
            idx.attrs[f] = data[f"attr_{f}"].astype(np.int32)
        for s in range(idx.n_shards):
            shard = faiss.deserialize_index(data[f"shard_{s}"])
            if not isinstance(shard, faiss.IndexIDMap2):
                raise ValueError(f"index file: shard {s} is a {type(shard).__name__}, not an IndexIDMap2")
            idx.shards[s] = shard
            idx.shard_ids[s] = faiss.vector_to_array(shard.id_map).astype(np.int64)
        total = sum(int(sh.ntotal) for sh in idx.shards)
        if total != idx.ids.size or any(sh.d != idx.dim for sh in idx.shards):
            raise ValueError("index file is inconsistent")
        return idx
