"""On-disk cache of verification results, keyed by task, answer, backend and settings.

Entries are written by the caller only (never by the judge's or the answer's process) and
carry an HMAC under the cache's secret key (``kernel_gym.native.compile.cache_key_file``),
which the verification sandbox cannot read: a forged or edited entry is ignored and logged.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
from pathlib import Path

from kernel_gym._version import __version__
from kernel_gym.native import cache_root
from kernel_gym.native.compile import cache_key_file
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.result import VerifyResult
from kernel_gym.verify.settings import VerifySettings

__all__ = ["ResultCache", "cache_key"]

# Results that depend on the machine's momentary state are not reused.
_UNCACHED = {"internal_error", "timeout", "memory_limit", "crash"}


@functools.lru_cache(maxsize=1)
def judge_code_digest() -> str:
    """Digest of the code a verdict depends on (the verifier, the backends, the simulator and its
    runtime, the native loaders): a changed judge, even at the same version (a checkout under
    development), never reuses an old verdict."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for sub in ("verify", "backends", "ascendc", "native"):
        for path in sorted((root / sub).rglob("*")):
            if path.suffix in (".py", ".cpp", ".h", ".hpp", ".txt") and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def cache_key(task: TaskSpec, answer: str, backend: str, settings: VerifySettings) -> str:
    h = hashlib.sha256()
    parts: tuple[str, ...] = (
        __version__,
        judge_code_digest(),
        task.id,
        task.source_hash,
        backend,
        settings.cache_key_part(),
    )
    if settings.published_shapes and task.published_source:
        parts += (hashlib.sha256(task.published_source.encode()).hexdigest()[:16],)
    for part in parts:
        h.update(part.encode() + b"\0")
    h.update(answer.encode())
    return h.hexdigest()[:32]


class ResultCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or cache_root() / "verify"
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    @staticmethod
    def _mac(key: str, body: str) -> str:
        return hmac.new(cache_key_file(), key.encode() + b"\0" + body.encode(), hashlib.sha256).hexdigest()

    def get(self, key: str) -> VerifyResult | None:
        path = self._path(key)
        try:
            entry = json.loads(path.read_text())
            body, mac = entry["result"], entry["mac"]
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(mac, self._mac(key, body)):
            logging.getLogger("kernel_gym.verify").warning("ignoring a tampered verification cache entry %s", path.name)
            return None
        try:
            result = VerifyResult.from_json(body)
        except (ValueError, TypeError):
            return None
        result.cached = True
        return result

    def put(self, key: str, result: VerifyResult) -> None:
        if result.error_class in _UNCACHED:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        body = json.dumps(result.to_dict())
        tmp.write_text(json.dumps({"result": body, "mac": self._mac(key, body)}))
        os.replace(tmp, path)
