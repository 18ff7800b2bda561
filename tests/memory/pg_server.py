"""A throwaway PostgreSQL server for the memory tests (a real server, not a mock).

:func:`start_server` finds the server binaries, runs ``initdb`` and ``pg_ctl start`` in a new
temporary directory, listening only on a unix socket there (no TCP port to collide with other
jobs). PostgreSQL refuses to run as root, so when the tests run as root the server runs as the
system user ``kg_pg`` (created with ``useradd --system`` when missing). The session fixture in
tests/memory/conftest.py starts one server and stops it at the end; each test gets a new database.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PG_USER = "kg_pg"  # the unprivileged account the server runs as when the tests run as root
_PORT = 54329  # only names the socket file (.s.PGSQL.<port>) in our own directory


def find_bindir() -> Path | None:
    """Directory holding initdb, pg_ctl and postgres, or None when PostgreSQL is not installed."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10).stdout
            candidates.append(Path(out.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    # Debian/Ubuntu keep the server binaries off PATH, one directory per major version (newest first)
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    for d in candidates:
        if all((d / exe).is_file() and os.access(d / exe, os.X_OK) for exe in ("initdb", "pg_ctl", "postgres")):
            return d
    return None


@dataclass
class PgServer:
    """A running server: its data/socket directory and the user it runs as."""

    bindir: Path
    root: Path
    user: str
    _as_user: list[str] = field(default_factory=list)
    opts: str = ""  # the server's command-line settings (pg_ctl -o), kept for restarts
    _db_numbers: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def dsn(self, dbname: str = "postgres") -> str:
        """A connection URI to ``dbname`` over the server's unix socket."""
        return f"postgresql://{self.user}@/{dbname}?host={self.socket_dir}&port={_PORT}"

    def new_database(self) -> str:
        """Create an empty database and return its DSN."""
        import psycopg

        name = f"kg_test_{os.getpid()}_{next(self._db_numbers)}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.dsn(name)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self._as_user, *args], capture_output=True, text=True, timeout=120, check=False)

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "stop", "-D", str(self.root / "data"), "-m", "immediate", "-w")
        shutil.rmtree(self.root, ignore_errors=True)

    def _ctl(self, *args: str) -> None:
        ctl = self._run(str(self.bindir / "pg_ctl"), *args, "-D", str(self.root / "data"), "-w", "-t", "60")
        if ctl.returncode != 0:
            log = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl {args[0]} failed: {ctl.stdout}{ctl.stderr}{log}")

    def shut_down(self, mode: str = "fast") -> None:
        """Stop the server but keep its data (``fast``: sessions are ended, as by an administrator's
        restart or a lost host; ``immediate``: as a crash). :meth:`start_again` brings it back."""
        self._ctl("stop", "-m", mode)

    def start_again(self) -> None:
        """Start the server stopped by :meth:`shut_down`, with the same settings and socket."""
        self._ctl("start", "-l", str(self.root / "log"), "-o", self.opts)

    def restart(self, mode: str = "fast") -> None:
        """``pg_ctl restart``: every session is ended, the server comes back on the same socket."""
        self._ctl("restart", "-m", mode, "-l", str(self.root / "log"), "-o", self.opts)


def _ensure_user() -> None:
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
            capture_output=True,
            timeout=60,
        )


def start_server(bindir: Path, durable_commits: bool = False) -> PgServer:
    """initdb + pg_ctl start in a new temporary directory; raises RuntimeError with the server's log.

    ``durable_commits``: acknowledge a commit only after its WAL is written (the default trades
    that for speed, which a test that stops the server abruptly must not)."""
    root = Path(tempfile.mkdtemp(prefix="kgpg-"))  # short: a socket path must stay under 108 bytes
    (root / "sock").mkdir()
    as_user: list[str] = []
    user = pwd.getpwuid(os.geteuid()).pw_name
    if os.geteuid() == 0:
        _ensure_user()
        pw = pwd.getpwnam(PG_USER)
        for p in (root, root / "sock"):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", PG_USER, "--"]
        user = PG_USER
    server = PgServer(bindir, root, user, as_user)
    data = str(root / "data")
    init = server._run(str(bindir / "initdb"), "-D", data, "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync")
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stdout}{init.stderr}")
    # test settings: no TCP, socket in our directory, durability traded for speed
    opts = f"-k {root / 'sock'} -p {_PORT} -c listen_addresses='' -c fsync=off"
    opts += f" -c synchronous_commit={'on' if durable_commits else 'off'} -c full_page_writes=off -c max_connections=60"
    server.opts = opts
    start = server._run(
        str(bindir / "pg_ctl"), "start", "-D", data, "-w", "-t", "60", "-l", str(root / "log"), "-o", opts
    )
    if start.returncode != 0:
        log = (root / "log").read_text(errors="replace") if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {start.stdout}{start.stderr}{log[-2000:]}")
    return server


_SERVER: PgServer | None = None


def set_current(server: PgServer | None) -> None:
    """Record the session's server (the conftest fixture does this)."""
    global _SERVER
    _SERVER = server


def current() -> PgServer:
    """The session's server; tests reach it only through the ``postgres_server`` fixture."""
    if _SERVER is None:
        raise RuntimeError("no PostgreSQL test server: request the postgres_server fixture")
    return _SERVER
