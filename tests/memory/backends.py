"""Storage backends the persistence contract runs against (tests/memory/test_persistence.py).

A new backend adds an entry: how to make a fresh location for a test and how to open a backend
there (also in a child process, so the factory must be importable). A backend that needs a
server names its session fixture in :data:`SERVER_FIXTURES`; a test requests it before
:func:`new_location` (it skips, with the reason, when the server cannot run here).
"""

from __future__ import annotations

from pathlib import Path

from kernel_gym.memory.persistence import StorageBackend
from kernel_gym.memory.sqlite_backend import SQLiteBackend

#: backend name -> pytest fixture that provides its server
SERVER_FIXTURES = {"postgres": "postgres_server"}


def new_location(name: str, tmp_path: Path) -> str:
    """A location where no store exists yet."""
    if name == "sqlite":
        return str(tmp_path / "store.db")
    if name == "postgres":
        from tests.memory import pg_server

        return pg_server.current().new_database()
    raise KeyError(name)


def open_backend(name: str, location: str) -> StorageBackend:
    """Open (creating if needed) the store at ``location`` with backend ``name``."""
    if name == "sqlite":
        return SQLiteBackend(location)
    if name == "postgres":
        from kernel_gym.memory.postgres_backend import PostgresBackend

        return PostgresBackend(location)
    raise KeyError(name)


def require_server(name: str, request) -> None:
    """Start (or skip for) the server backend ``name`` needs, through its session fixture."""
    if name in SERVER_FIXTURES:
        request.getfixturevalue(SERVER_FIXTURES[name])


BACKEND_NAMES = ["sqlite", "postgres"]
