"""The caller's side of verification: one verification server (zygote) per calling process.

The answer never runs in the caller, nor in the judge that decides its verdict:
``kernel_gym.verify.zygote`` forks a judge per job, and the judge drives the answer's runner
in an OS sandbox (``kernel_gym.verify.isolation``). This module starts the server, sends it
jobs and reads verdicts, and restarts it whenever a call ends abnormally (an exception or a
signal in the caller while waiting), so the next verification always starts in step.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import json
import logging
import os
import select
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from kernel_gym.backends import BACKENDS, SandboxPolicy, sandbox_policy
from kernel_gym.native import cache_root

__all__ = ["SandboxLimits", "run_in_sandbox", "server_info", "shutdown_zygote"]

log = logging.getLogger("kernel_gym.verify")
_ENV_ALLOW = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "VIRTUAL_ENV",
    "KERNEL_GYM_ISOLATION",
    "KERNEL_GYM_CACHE",
    "LD_LIBRARY_PATH",
)  # plus each registered backend's SandboxPolicy.env_vars
# the caller's backend registry (name -> "module:Class"), plug-ins registered at run time included
BACKENDS_ENV = "KERNEL_GYM_BACKENDS"
CALLER_PYTHONPATH_ENV = "KERNEL_GYM_CALLER_PYTHONPATH"
_REDUCED = (
    "kernel-gym: VERIFICATION ISOLATION IS REDUCED ({why}). Answers run without namespaces "
    "(seccomp and resource limits only) and can read this machine's files. Set "
    "KERNEL_GYM_ISOLATION=require to refuse instead."
)


class SandboxLimits:
    def __init__(self, timeout_s: float, memory_limit_mb: int, threads: int = 1, file_size_mb: int = 16) -> None:
        self.timeout_s = timeout_s
        self.memory_limit_mb = memory_limit_mb
        self.threads = threads
        self.file_size_mb = file_size_mb


class ServerStartFailed(RuntimeError):
    """The verification server's Python cannot import what it needs (the message names it and the fix)."""


class IsolationRefused(RuntimeError):
    """KERNEL_GYM_ISOLATION=require and this machine cannot create the sandbox."""


def caller_python_path() -> list[Path]:
    """The caller's import folders that the verification server and the sandbox see read-only:
    its $PYTHONPATH (dependencies installed with ``pip install --target`` where the site folder is
    read-only) and the folders it added to ``sys.path`` at run time. Left out: the package's
    parent (the sandbox sees the package alone, not the checkout holding the reference answers),
    any folder holding the cache root (the judge's key is there), the caller's script folder and
    working directory, the file-system root and the home folder."""
    package_parent = Path(__file__).resolve().parent.parent.parent
    cache = cache_root().resolve()
    passed = os.environ.get(CALLER_PYTHONPATH_ENV)
    if passed is not None:  # in the server: what the caller computed
        entries = passed.split(os.pathsep)
    else:
        entries = os.environ.get("PYTHONPATH", "").split(os.pathsep) + _added_sys_path()
    out: list[Path] = []
    for entry in entries:
        if not entry:
            continue
        path = Path(entry).resolve()
        if not path.is_dir() or path == package_parent or path in out:
            continue
        if path == cache or path in cache.parents or path in package_parent.parents or path in (Path("/"), Path.home()):
            log.warning(
                "import folder %s holds the verifier's cache, checkout or home; the sandbox does not see it", path
            )
            continue
        out.append(path)
    return out


def _added_sys_path() -> list[str]:
    """``sys.path`` entries the server's interpreter would not have by itself (folders the caller
    added at run time: ``sys.path.insert``, ``site.addsitedir``), less the caller's script folder
    and working directory (``sys.path``'s first entry, which the server has no business reading)."""
    script = Path(sys.argv[0]).resolve().parent if sys.argv and sys.argv[0] not in ("", "-c", "-m") else None
    known = {*_interpreter_sys_path(), Path.cwd().resolve(), *([script] if script else [])}
    return [entry for entry in sys.path if entry and Path(entry).resolve() not in known]


@functools.lru_cache(maxsize=1)
def _interpreter_sys_path() -> frozenset[Path]:
    """The interpreter's own ``sys.path`` (its site folders and their ``.pth`` entries), as a
    process started without $PYTHONPATH sees it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", CALLER_PYTHONPATH_ENV)}
    probe = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path))"],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:
        return frozenset(Path(p).resolve() for p in json.loads(probe.stdout) if p)
    except ValueError:
        return frozenset()


def python_path(policy: SandboxPolicy) -> str:
    """PYTHONPATH of the verification processes: the package's parent, the parents of the
    plug-in backends' packages and the caller's import folders (:func:`caller_python_path`)."""
    dirs = [str(Path(__file__).resolve().parent.parent.parent)]
    dirs += [str(Path(p).parent) for p in policy.import_roots]
    dirs += [str(p) for p in caller_python_path()]
    return os.pathsep.join(dict.fromkeys(dirs))


def _startup_failure(env: dict[str, str]) -> str:
    """Why the server could not start, when it is an import: the missing module and the fix."""
    probe = subprocess.run(
        [sys.executable, "-c", "import kernel_gym.verify.zygote, kernel_gym.verify.judge, kernel_gym.verify.runner"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if probe.returncode == 0:
        return ""
    import re

    missing = re.search(r"No module named '([^']+)'", probe.stderr)
    if missing:
        return (
            f"the verification server cannot import {missing.group(1)!r} (its Python: {sys.executable}; "
            f"PYTHONPATH={env.get('PYTHONPATH', '')}): install it for that Python, or put the folder it is "
            "installed in (pip install --target DIR) on PYTHONPATH before starting"
        )
    return "the verification server cannot start: " + probe.stderr.strip()[-600:]


class _Server:
    def __init__(self) -> None:
        self.owner = os.getpid()
        # the registered backends when the server started: a backend registered later restarts it
        self.policy = sandbox_policy()
        env = {k: os.environ[k] for k in (*_ENV_ALLOW, *self.policy.env_vars) if k in os.environ}
        env["KERNEL_GYM_CACHE"] = str(cache_root())
        env["PYTHONPATH"] = python_path(self.policy)
        env[CALLER_PYTHONPATH_ENV] = os.pathsep.join(str(p) for p in caller_python_path())
        env[BACKENDS_ENV] = json.dumps(BACKENDS, sort_keys=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kernel_gym.verify.zygote"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self.ids = itertools.count()
        try:
            self.info = self._read(120.0)
        except RuntimeError:
            self.close()
            why = _startup_failure(env)
            if why:
                raise ServerStartFailed(why) from None
            raise
        if not self.info.get("ready"):
            self.close()
            raise IsolationRefused(self.info.get("error", "the verification server did not start"))
        if not self.info.get("isolated"):
            log.warning(_REDUCED.format(why=self.info.get("why")))
            print(_REDUCED.format(why=self.info.get("why")), file=sys.stderr)

    def _read(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        if not select.select([self.proc.stdout], [], [], timeout_s)[0]:
            raise RuntimeError("no answer from the verification server")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the verification server exited")
        return json.loads(line)

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        request_id = next(self.ids)
        self.proc.stdin.write(json.dumps({**request, "request_id": request_id}) + "\n")
        self.proc.stdin.flush()
        while True:
            reply = self._read(float(request["timeout_s"]) + 180.0)
            if reply.get("request_id") == request_id:
                return reply

    def close(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


_SERVER: _Server | None = None
_LOCK = threading.Lock()


def shutdown_zygote() -> None:
    global _SERVER
    if _SERVER is not None and _SERVER.owner == os.getpid():
        _SERVER.close()
    _SERVER = None


def server_info() -> dict[str, Any]:
    """The running server's isolation status (starting it if needed)."""
    with _LOCK:
        return dict(_server().info)


def _server() -> _Server:
    global _SERVER
    if _SERVER is not None and _SERVER.owner == os.getpid() and _SERVER.policy != sandbox_policy():
        shutdown_zygote()
    if _SERVER is None or _SERVER.owner != os.getpid() or _SERVER.proc.poll() is not None:
        _SERVER = _Server()
    return _SERVER


def run_in_sandbox(job: dict[str, Any], limits: SandboxLimits) -> dict[str, Any]:
    """Verify ``job`` in the verification server; always returns a result dict.

    Any exception while waiting (a signal handler raising, KeyboardInterrupt) shuts the
    server down before it propagates, so a late verdict can never be read as the next one's.
    """
    request = {
        "job": job,
        "timeout_s": limits.timeout_s,
        "memory_limit_mb": limits.memory_limit_mb,
        "file_size_mb": limits.file_size_mb,
        "threads": limits.threads,
        "cache_root": str(cache_root()),
    }
    with _LOCK:
        for attempt in range(2):
            try:
                return _server().run(request)
            except (IsolationRefused, ServerStartFailed):
                raise
            except RuntimeError:
                shutdown_zygote()
                if attempt:
                    return {
                        "task_id": job["task"]["id"],
                        "backend": job["backend"],
                        "compiled": False,
                        "correct": False,
                        "error_class": "internal_error",
                        "message": "the verification server failed twice",
                    }
            except BaseException:
                shutdown_zygote()
                raise
    raise AssertionError("unreachable")


atexit.register(shutdown_zygote)
