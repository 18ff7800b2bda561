"""Keeping the vector index in step with the store of record.

The database (a :class:`~kernel_gym.memory.persistence.StorageBackend`) is the truth; the
:class:`~kernel_gym.memory.index.VectorIndex` is a cache of it, saved beside the database as
``<db>.faiss`` with a stamp of the state it reflects (store uuid, generation, index-log sequence,
item count, embedder). Every write transaction bumps the store's ``generation``; deletions and
changes of an item's vector or filter attributes are also logged. Before a search,
:meth:`IndexSync.current` compares the generation with the index's stamp and

* applies nothing when they agree;
* catches up incrementally otherwise: new ids are those above the index's max id (ids only grow),
  changed and deleted ids come from the log;
* rebuilds from the database when the index file is missing, damaged, foreign to this store,
  differs from the digest recorded in the database, or is older than the trimmed log.

A write made through the same store updates the in-memory index directly (:meth:`IndexSync.apply`)
when nothing else wrote in between.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from .index import VectorIndex
from .persistence import IndexRows, ScanInterrupted, StorageBackend, StoreMeta, WriteReceipt
from .types import MemoryStoreError

__all__ = ["IndexSync"]

log = logging.getLogger(__name__)


class IndexSync:
    """The vector index of one store, loaded, caught up, rebuilt and saved on demand.

    Not thread-safe by itself: :class:`~kernel_gym.memory.store.MemoryStore` calls it under its lock.

    Args:
        backend: the store of record.
        index_path: where the index is saved (``<db>.faiss``).
        store_uuid: the store's uuid (an index stamped with another is foreign).
        embedder_name: the store's embedder name (likewise).
        dim: vector dimension (number of float32 entries).
        n_shards: index shards; None keeps a saved index's count (new indexes: min(4, cores)).
    """

    def __init__(
        self,
        backend: StorageBackend,
        index_path: Path,
        *,
        store_uuid: str,
        embedder_name: str,
        dim: int,
        n_shards: int | None = None,
    ) -> None:
        self.backend = backend
        self.index_path = index_path
        self.store_uuid = store_uuid
        self.embedder_name = embedder_name
        self.dim = int(dim)
        self.n_shards = n_shards
        #: The in-memory index (None until first needed, or after it was dropped).
        self.index: VectorIndex | None = None
        #: Generation of the state last saved to (or loaded from) ``index_path``.
        self.saved_generation: int | None = None

    def _stamp(self, meta: StoreMeta, log_seq: int) -> dict[str, Any]:
        return {
            "store_uuid": self.store_uuid,
            "generation": meta.generation,
            "n_items": meta.n_items,
            "log_seq": int(log_seq),
            "embedder": self.embedder_name,
            "dim": self.dim,
        }

    @staticmethod
    def _add_rows(idx: VectorIndex, rows: IndexRows) -> None:
        idx.add(rows.ids, rows.vectors, idx.encode_attrs(rows.attrs))

    # ------------------------------------------------------------------ bringing the index up to date

    def rebuild(self) -> VectorIndex:
        """A new index built from the database in one read snapshot."""
        for attempt in range(3):  # a server backend may lose its snapshot mid-scan: start over
            idx = VectorIndex(self.dim, self.n_shards)
            try:
                meta, log_seq = self.backend.scan_index_rows(functools.partial(self._add_rows, idx))
                break
            except ScanInterrupted:
                idx.close()
                if attempt == 2:
                    raise
        idx.stamp = self._stamp(meta, log_seq)
        if idx.ntotal != idx.stamp["n_items"]:
            raise MemoryStoreError(
                f"memory store {self.backend.location}: meta n_items={idx.stamp['n_items']} but "
                f"{idx.ntotal} rows; the database is inconsistent"
            )
        return idx

    def _catch_up(self, idx: VectorIndex) -> bool:
        """Bring ``idx`` to the database's state incrementally; False when a rebuild is needed."""
        delta = self.backend.index_delta(int(idx.stamp["log_seq"]), idx.max_id)
        if delta is None:
            return False  # the log was trimmed past the index's position
        changed = delta.changed_ids
        present = set(delta.changed.ids.tolist())
        in_index: set[int] = set()
        if changed:
            in_index = set(idx.ids[np.isin(idx.ids, np.asarray(changed, dtype=np.int64))].tolist())
        if present - in_index:
            return False  # an old id reappeared (explicit-id import): rebuild
        idx.remove([i for i in changed if i not in present])
        if len(delta.changed):
            idx.update(delta.changed.ids, delta.changed.vectors, idx.encode_attrs(delta.changed.attrs))
        if len(delta.new):
            self._add_rows(idx, delta.new)
        idx.stamp = self._stamp(delta.meta, delta.log_seq)
        return idx.ntotal == idx.stamp["n_items"]

    def _load_file(self) -> VectorIndex | None:
        """The saved index, if its bytes are the ones the database recorded when saving it.

        The stamp inside the file says which state it reflects, but anyone can edit a file and
        keep its stamp; the SHA-256 recorded in the database (the store of record) at save time
        catches that. A mismatch, or an index saved before digests were recorded, is rebuilt."""
        try:
            raw = self.index_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            log.warning("memory index %s unreadable (%s); rebuilding from the database", self.index_path, e)
            return None
        recorded = self.backend.meta().index_sha256
        if recorded != hashlib.sha256(raw).hexdigest():
            log.warning(
                "memory index %s does not match the digest recorded in the store (%s); rebuilding from the database",
                self.index_path,
                "modified since it was saved" if recorded else "no digest",
            )
            return None
        try:
            idx = VectorIndex.from_bytes(raw)
        except Exception as e:  # a damaged cache is rebuilt, never trusted
            log.warning("memory index %s unreadable (%s); rebuilding from the database", self.index_path, e)
            return None
        st = idx.stamp
        if (
            st.get("store_uuid") != self.store_uuid
            or st.get("embedder") != self.embedder_name
            or st.get("dim") != self.dim
            or idx.n_shards != (self.n_shards or idx.n_shards)
        ):
            log.info("memory index %s belongs to another store state; rebuilding", self.index_path)
            return None
        self.saved_generation = st.get("generation")
        return idx

    def current(self) -> VectorIndex:
        """The index, up to date with the database (loaded, caught up or rebuilt as needed)."""
        generation = self.backend.meta().generation
        idx = self.index
        if idx is None:
            idx = self._load_file()
        if idx is not None and idx.stamp.get("generation") != generation:
            if not self._catch_up(idx):
                idx = None
        if idx is None:
            idx = self.rebuild()
        if self.index is not None and self.index is not idx:
            self.index.close()
        self.index = idx
        return idx

    def drop(self) -> None:
        """Forget the in-memory index; the next :meth:`current` loads or rebuilds it."""
        if self.index is not None:
            self.index.close()
        self.index = None

    def apply(self, receipt: WriteReceipt) -> None:
        """Apply one committed write of this process to the in-memory index, if the index was at the
        generation the write started from (else it is behind anyway and catches up on use)."""
        idx = self.index
        if idx is None or idx.stamp.get("generation") != receipt.generation:
            return
        try:
            for op in receipt.ops:
                if op.op == "add":
                    if op.ids.size and op.ids[0] <= idx.max_id:
                        self.drop()  # explicit ids at or below the index's max (an import): rebuild on use
                        return
                    if op.vectors is None:
                        raise ValueError("an add op without vectors")
                    idx.add(op.ids, op.vectors, idx.encode_attrs(op.attrs))
                elif op.op == "del":
                    idx.remove(op.ids.tolist())
                else:
                    idx.update(op.ids, op.vectors, idx.encode_attrs(op.attrs))
        except Exception:  # pragma: no cover - defensive: fall back to a rebuild
            log.exception("memory index update failed; it will be rebuilt")
            self.drop()
            return
        idx.stamp["generation"] = receipt.generation + 1
        idx.stamp["n_items"] = idx.ntotal
        if receipt.log_seq is not None:
            idx.stamp["log_seq"] = receipt.log_seq

    # ------------------------------------------------------------------ saving

    def save(self, force: bool = False) -> bool:
        """Write the index file if it changed since it was loaded or saved; True if written."""
        idx = self.current()
        gen = idx.stamp["generation"]
        if not force and self.saved_generation == gen and self.index_path.exists():
            return False
        if not force and self.index_path.exists() and self._file_is_as_new(gen):
            return False
        self.backend.record_index_digest(lambda: idx.to_file(str(self.index_path)))
        self.saved_generation = gen
        return True

    def _file_is_as_new(self, generation: int) -> bool:
        """Whether another process already saved (and recorded) a state at least as new."""
        try:
            raw = self.index_path.read_bytes()
            with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                disk = json.loads(bytes(z["header"]).decode())["stamp"]
            return bool(
                disk.get("store_uuid") == self.store_uuid
                and disk.get("generation", -1) >= generation
                and self.backend.meta().index_sha256 == hashlib.sha256(raw).hexdigest()
            )
        except Exception:  # an unreadable file is simply overwritten
            return False

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the in-memory index (faiss objects and worker threads): a copy loads the
        saved file or rebuilds from the store on first use."""
        state = self.__dict__.copy()
        state["index"] = None
        state["saved_generation"] = None
        return state

    def close(self) -> None:
        """Stop the index's worker threads (the index stays usable)."""
        if self.index is not None:
            self.index.close()
