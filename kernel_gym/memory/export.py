"""The JSON-lines export format of a memory store (``MemoryStore.export_jsonl`` / ``import_jsonl``).

A file is a header line ``{"format", "schema_version", "embedder", "dim", "store_uuid", "clock"}``
followed by one line per item (:meth:`MemoryItem.to_dict`), embeddings kept bit-exact as base64 of
little-endian float32 under ``embedding_f32``. This module reads and writes the format and rewrites
cross-item references; inserting the items is the store's job.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .persistence import SCHEMA_VERSION, StoreMeta
from .types import ID_REF_KEYS, MemoryItem, MemoryStoreError, json_default

__all__ = ["JSONL_FORMAT", "read_jsonl", "rewrite_references", "write_jsonl"]

JSONL_FORMAT = "kernel_gym.memory/jsonl"


def write_jsonl(
    path: str | os.PathLike[str], meta: StoreMeta, items: Iterable[MemoryItem], include_embeddings: bool = True
) -> int:
    """Write the header of the store described by ``meta`` and one line per item, atomically
    (through a temporary file beside ``path``); returns the number of items written."""
    n = 0
    tmp = Path(f"{path}.tmp.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        header = {
            "format": JSONL_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "embedder": meta.embedder_name,
            "dim": meta.embedder_dim,
            "store_uuid": meta.store_uuid,
            "clock": meta.clock,
        }
        fh.write(json.dumps(header) + "\n")
        for it in items:
            d = it.to_dict()
            if include_embeddings and it.embedding is not None:
                d["embedding_f32"] = base64.b64encode(np.ascontiguousarray(it.embedding, "<f4").tobytes()).decode()
            fh.write(json.dumps(d, ensure_ascii=False, default=json_default) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


def read_jsonl(path: str | os.PathLike[str], embedder_name: str, dim: int) -> tuple[dict[str, Any], list[MemoryItem]]:
    """The header and items of an export. Items keep their exported ``id`` and ``created_at``;
    embeddings are kept only when the file's embedder is ``embedder_name`` with ``dim`` (else None:
    the importing store re-embeds)."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError as e:
            raise MemoryStoreError(f"{path}: not a kernel-gym memory export (bad header line)") from e
        if header.get("format") != JSONL_FORMAT:
            raise MemoryStoreError(f"{path}: not a kernel-gym memory export (format {header.get('format')!r})")
        same_embedder = header.get("embedder") == embedder_name and int(header.get("dim", -1)) == dim
        records = [json.loads(line) for line in fh if line.strip()]
    items: list[MemoryItem] = []
    for d in records:
        emb = d.pop("embedding_f32", None)
        d.pop("embedding", None)
        it = MemoryItem(**d)
        if emb is not None and same_embedder:
            it.embedding = np.frombuffer(base64.b64decode(emb), dtype="<f4")
        items.append(it)
    return header, items


def rewrite_references(
    items: Sequence[MemoryItem], old_ids: Sequence[int | None], mapping: Mapping[int, int]
) -> list[tuple[int, dict[str, Any]]]:
    """New payloads ``[(new id, payload)]`` of the items that were inserted (not mapped to an existing
    keyed item) and whose payload references (:data:`ID_REF_KEYS`) point at remapped ids."""
    fixes: list[tuple[int, dict[str, Any]]] = []
    for old, it in zip(old_ids, items, strict=True):
        changed = False
        payload = dict(it.payload)
        for key in ID_REF_KEYS:
            v = payload.get(key)
            if isinstance(v, int) and v in mapping:
                payload[key], changed = mapping[v], True
            elif isinstance(v, list) and any(isinstance(x, int) and x in mapping for x in v):
                payload[key] = [mapping.get(x, x) if isinstance(x, int) else x for x in v]
                changed = True
        if changed and it.id is not None and old is not None and it.id == mapping.get(old):
            fixes.append((it.id, payload))
    return fixes
