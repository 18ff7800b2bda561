"""Storage backends the persistence contract runs against (tests/memory/test_persistence.py).

A new backend (e.g. PostgreSQL) adds an entry: how to make a fresh location for a test and how to
open a backend there (also in a child process, so the factory must be importable).
"""

from __future__ import annotations

from pathlib import Path

from kernel_gym.memory.persistence import StorageBackend
from kernel_gym.memory.sqlite_backend import SQLiteBackend


def new_location(name: str, tmp_path: Path) -> str:
    """A location where no store exists yet."""
    if name == "sqlite":
        return str(tmp_path / "store.db")
    raise KeyError(name)


def open_backend(name: str, location: str) -> StorageBackend:
    """Open (creating if needed) the store at ``location`` with backend ``name``."""
    if name == "sqlite":
        return SQLiteBackend(location)
    raise KeyError(name)


BACKEND_NAMES = ["sqlite"]
