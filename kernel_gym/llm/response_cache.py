"""On-disk cache of LLM replies, so a run can be replayed offline.

The key is the SHA-256 of the canonical JSON of everything that decides a reply: model, messages,
temperature, max tokens, seed and any extra sampling arguments. Each entry is one JSON file
``<dir>/<key[:2]>/<key>.json`` holding the reply text, its usage record and the request (for
inspection). Writes go to a temporary file in the same directory and are renamed into place
(``os.replace``), so concurrent writers and crashed runs never leave a half-written entry; an
unreadable entry counts as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ResponseCache", "cache_key"]

#: Bump when the meaning of an entry changes; part of every key.
CACHE_FORMAT = 1


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)


def cache_key(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    temperature: float,
    max_tokens: int,
    seed: int | None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """The hex SHA-256 key of one request."""
    doc = {
        "format": CACHE_FORMAT,
        "model": model,
        "messages": list(messages),
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
        "seed": seed,
        "extra": dict(extra or {}),
    }
    return hashlib.sha256(_canonical(doc).encode("utf-8")).hexdigest()


class ResponseCache:
    """A directory of cached replies. ``get(key)`` -> record dict or None; ``put(key, record)``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` lives."""
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"cache keys are lower-case hex digests, got {key!r}")
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under ``key``, or None (also for an unreadable or foreign entry)."""
        try:
            record = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("reply"), str):
            return None
        return record

    def put(self, key: str, record: Mapping[str, Any]) -> Path:
        """Store ``record`` (JSON-able; must hold ``reply``) under ``key`` atomically; returns the path."""
        if not isinstance(record.get("reply"), str):
            raise ValueError("a cache record needs the reply text under 'reply'")
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {**record, "format": CACHE_FORMAT, "key": key, "created_at": time.time()}
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, ensure_ascii=False, indent=1, default=repr)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return path

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("??/*.json")) if self.directory.is_dir() else 0
