"""The sandbox host: PID 1 of the bubblewrap sandbox, forking one answer runner per verification.

    python -m kernel_gym.verify.sandbox_host SOCKET_FD      (started by kernel_gym.verify.zygote)

Importing torch costs ~1.5 s; forking a process that has it costs milliseconds, so the host
imports torch once and forks. It never runs task or answer code itself. Requests come from
the (trusted) zygote over a Unix socket, with the runner's pipes and shared buffers as
passed file descriptors:

- ``{"op": "run", ...limits}`` + fds [commands in, replies out, shared buffer, log]: fork a
  runner; answer ``{"pid": <pid inside the sandbox>}`` (a host-timed verification asks twice:
  the answer's runner, then one for the reference, timed in alternation);
- ``{"op": "end"}``: kill every process of the sandbox but this one (a runner's leftovers
  included, whatever session they moved to), wipe /tmp, answer ``{"ended": true}``.

As PID 1 of its namespace it cannot be killed by a signal sent from inside the sandbox.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _steady_malloc() -> None:
    """Fixed glibc malloc thresholds for a timed runner: allocations up to 32 MiB come from the heap
    and the heap is not trimmed after each call. glibc otherwise moves its mmap threshold with each
    process's allocation history, so two runners (the reference's, the answer's) could differ in
    whether an output costs fresh, zero-filled pages on every call."""
    libc = ctypes.CDLL(None)
    libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    libc.mallopt(_M_TRIM_THRESHOLD, 256 << 20)


def _start_runner(request: dict[str, Any], fds: list[int], host_socket: socket.socket) -> int:
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    try:
        commands, replies, shared, log = fds
        host_socket.close()
        os.setsid()
        os.dup2(log, 1)
        os.dup2(log, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd in (log, devnull):
            os.close(fd)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full log fails the write, not the runner
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        workdir = tempfile.mkdtemp(prefix="run-", dir="/tmp")
        os.chdir(workdir)
        threads = str(int(request.get("threads", 1)))
        os.environ.clear()
        os.environ.update(
            {
                "HOME": workdir,
                "TMPDIR": workdir,
                "PATH": "/usr/bin:/bin",
                "OMP_NUM_THREADS": threads,
                "MKL_NUM_THREADS": threads,
                "KERNEL_GYM_SANDBOXED": "1",
                "PYTHONDONTWRITEBYTECODE": "1",
                "KERNEL_GYM_CACHE": request["cache_root"],
                **{str(k): str(v) for k, v in dict(request.get("env") or {}).items()},
            }
        )
        from kernel_gym.verify import isolation, runner

        if request.get("self_only"):  # timed beside another runner
            _steady_malloc()
        cpus = request.get("cpus")
        if cpus:  # timing steadiness only: a machine that refuses keeps the runner unpinned
            try:
                os.sched_setaffinity(0, [int(c) for c in cpus])
            except OSError:
                pass
        isolation.set_runner_limits(
            int(request["memory_limit_mb"]),
            int(request["cpu_seconds"]),
            int(request["file_size_mb"]),
            limit_address_space=bool(request.get("limit_address_space", True)),
            open_files=int(request.get("open_files", 64)),
        )
        if request.get("seccomp", True):
            isolation.install_runner_filter(
                allow_exec=bool(request.get("runner_exec", False)),
                unix_sockets=bool(request.get("unix_sockets", False)),
                self_only=bool(request.get("self_only", False)),
            )
        runner.serve(commands, replies, shared)
    finally:
        os._exit(70)


def _exit_status(runner: int | None) -> int | None:
    """The runner's exit code (negative: killed by that signal) if it already ended."""
    if runner is None:
        return None
    try:
        pid, status = os.waitpid(runner, os.WNOHANG)
    except ChildProcessError:
        return None
    return os.waitstatus_to_exitcode(status) if pid else None


def _end_all(runners: list[int]) -> None:
    """SIGKILL every process of the namespace but this one, reap them, wipe /tmp.

    Without a PID namespace (isolation off) only the runners' process groups can be found.
    """
    if os.getpid() == 1:
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and entry.name != "1":
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
    else:
        for runner in runners:
            try:
                os.killpg(runner, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == 0:
            break
    if os.getpid() != 1:
        return  # /tmp is the host's: the runner's own work dir went with its session
    for child in Path("/tmp").iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            try:
                child.unlink()
            except OSError:
                pass


def main(argv: list[str]) -> int:
    import torch  # noqa: F401 - preloaded for the runners
    import torch._dynamo  # noqa: F401 - dispatch modes import it lazily (~1.5 s per runner otherwise)

    import kernel_gym.verify.runner  # noqa: F401
    from kernel_gym.verify import isolation

    host_socket = socket.socket(fileno=int(argv[1]))
    _prctl(_PR_SET_DUMPABLE, 0)  # runners forked from here cannot open this process's memory
    if os.environ.get("KERNEL_GYM_SANDBOX_SECCOMP", "1") == "1":
        isolation.install_host_filter(unix_sockets=os.environ.get("KERNEL_GYM_SANDBOX_UNIX_SOCKETS") == "1")
    runners: list[int] = []  # the answer's runner first; a reference's runner beside it when timed so
    host_socket.send(json.dumps({"ready": True, "pid": os.getpid()}).encode())
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(host_socket, 1 << 16, 8)
        except OSError:
            return 0
        if not data:
            return 0
        request = json.loads(data)
        if request["op"] == "run":
            runners.append(_start_runner(request, list(fds), host_socket))
            reply: dict[str, Any] = {"pid": runners[-1]}
        else:
            for fd in fds:
                os.close(fd)
            status = _exit_status(runners[0] if runners else None)
            _end_all(runners)
            runners = []
            reply = {"ended": True, "status": status}
        host_socket.send(json.dumps(reply).encode())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
