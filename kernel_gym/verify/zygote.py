"""A pre-forked worker parent ("zygote") that makes each sandboxed verification cheap.

Starting a fresh Python and importing torch costs about 1.5 s; forking a process that has
already imported them costs milliseconds. The zygote is started (with the sandbox's
scrubbed environment) once per calling process, imports torch and the worker, and then,
for each job read from stdin, forks a child that drops into its own session, takes the
job's environment, working directory and resource limits, redirects its output to the job's
log and runs the worker. The zygote waits for the child (killing its process group at the
time limit) and answers with the exit status on stdout. It never runs torch ops itself, so
forking is safe (no thread pools exist yet), and it exits when its stdin closes.

    python -m kernel_gym.verify.zygote      (started by kernel_gym.verify.sandbox)
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time


def _child(request: dict) -> None:
    """In the forked child: isolate, limit, then run the worker (which ends with os._exit)."""
    os.setsid()
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    mem = request["memory_limit_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    fsize = request["file_size_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from kernel_gym.verify import worker

    worker.main(["worker", request["job"], request["result"]])


def _wait(pid: int, timeout_s: float) -> tuple[int, bool]:
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status), True
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def main() -> int:
    import torch  # noqa: F401 - preloaded for the children
    import torch._dynamo  # noqa: F401 - dispatch modes import it lazily (~1.5 s per child otherwise)

    import kernel_gym.verify.worker  # noqa: F401

    out = sys.stdout
    out.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                _child(request)
            finally:
                os._exit(70)
        returncode, timed_out = _wait(pid, request["timeout_s"])
        try:  # stray grandchildren go with the child's group
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out.write(json.dumps({"returncode": returncode, "timed_out": timed_out}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
