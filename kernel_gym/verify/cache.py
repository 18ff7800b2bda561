"""On-disk cache of verification results, keyed by task, answer, backend and settings."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import kernel_gym
from kernel_gym.native import cache_root
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.result import VerifyResult
from kernel_gym.verify.settings import VerifySettings

__all__ = ["ResultCache", "cache_key"]

# Results that depend on the machine's momentary state are not reused.
_UNCACHED = {"internal_error", "timeout", "memory_limit", "crash"}


def cache_key(task: TaskSpec, answer: str, backend: str, settings: VerifySettings) -> str:
    h = hashlib.sha256()
    for part in (kernel_gym.__version__, task.id, task.source_hash, backend, settings.cache_key_part()):
        h.update(part.encode() + b"\0")
    h.update(answer.encode())
    return h.hexdigest()[:32]


class ResultCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or cache_root() / "verify"
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> VerifyResult | None:
        path = self._path(key)
        try:
            result = VerifyResult.from_json(path.read_text())
        except (OSError, ValueError, TypeError):
            return None
        result.cached = True
        return result

    def put(self, key: str, result: VerifyResult) -> None:
        if result.error_class in _UNCACHED:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(result.to_dict()))
        os.replace(tmp, path)
