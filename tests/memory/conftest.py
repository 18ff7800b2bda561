import os

import pytest

from tests.memory import pg_server

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "memory.db")


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for the session (tests make their own databases in it)."""
    bindir = pg_server.find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: apt-get install postgresql")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: pip install -e .[postgres]")
    server = pg_server.start_server(bindir)
    pg_server.set_current(server)
    yield server
    pg_server.set_current(None)
    server.stop()
