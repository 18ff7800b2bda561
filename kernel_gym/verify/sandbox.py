"""Run the verification worker in a subprocess with time and memory limits.

Untrusted code (the answer and its kernel) only ever runs in that subprocess: a crash,
abort, hang or memory blow-up ends the subprocess, never the caller, and comes back as a
result dict with an error class. The child gets a fresh session (so the whole process group
can be killed), an address-space limit, no core dumps, a temp dir as HOME and cwd, and an
environment reduced to an allow-list (no API keys or tokens are inherited).

Children are forked from a zygote (kernel_gym.verify.zygote) that has torch imported
already, which saves ~1.5 s per verification; set KERNEL_GYM_SANDBOX=spawn to start a fresh
interpreter per job instead (same isolation, slower).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import threading
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import kernel_gym
from kernel_gym.native import cache_root

__all__ = ["SandboxLimits", "run_in_sandbox", "sandbox_env", "shutdown_zygote"]

_ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "VIRTUAL_ENV", "ASCEND_HOME_PATH",
              "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH")
_OUTPUT_TAIL = 4000


class SandboxLimits:
    def __init__(self, timeout_s: float, memory_limit_mb: int, threads: int = 1,
                 file_size_mb: int = 512) -> None:
        self.timeout_s = timeout_s
        self.memory_limit_mb = memory_limit_mb
        self.threads = threads
        self.file_size_mb = file_size_mb


def sandbox_env(tmp: Path, threads: int) -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_ALLOW if k in os.environ}
    package_parent = str(Path(kernel_gym.__file__).resolve().parent.parent)
    env.update({
        "HOME": str(tmp), "TMPDIR": str(tmp), "PYTHONPATH": package_parent,
        "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "KERNEL_GYM_CACHE": str(cache_root()), "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads), "KERNEL_GYM_SANDBOXED": "1",
    })
    return env


def _limit(limits: SandboxLimits) -> None:  # runs in the child between fork and exec
    mem = limits.memory_limit_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    fsize = limits.file_size_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_in_sandbox(job: dict[str, Any], limits: SandboxLimits) -> dict[str, Any]:
    """Run ``python -m kernel_gym.verify.worker`` on ``job``; always returns a result dict."""
    with tempfile.TemporaryDirectory(prefix="kg-verify-") as tmp_name:
        tmp = Path(tmp_name)
        job_path, result_path, log_path = tmp / "job.json", tmp / "result.json", tmp / "output.log"
        job_path.write_text(json.dumps(job))
        env = sandbox_env(tmp, limits.threads)
        returncode, timed_out = _launch(job_path, result_path, log_path, tmp, env, limits)
        output = (log_path.read_bytes() if log_path.exists() else b"")[-_OUTPUT_TAIL:].decode(errors="replace")
        progress_path = result_path.with_suffix(".progress")
        progress = json.loads(progress_path.read_text()) if progress_path.exists() else {}
        if result_path.exists() and not timed_out:
            result = json.loads(result_path.read_text())
            result.setdefault("details", {})["worker_output_tail"] = output[-1000:]
            return result
        stage = progress.get("stage", "start")
        base = {"task_id": job["task"]["id"], "backend": job["backend"],
                "compiled": bool(progress.get("compiled")), "correct": False,
                "details": {"worker_output_tail": output, "stage": stage}}
        if timed_out:
            return {**base, "error_class": "timeout",
                    "message": f"no result within {limits.timeout_s:.0f} s (stage: {stage}); "
                               "the answer hangs or is far too slow"}
        if returncode < 0:
            sig = _signal_name(returncode)
            oom = "bad_alloc" in output or "Cannot allocate memory" in output or "MemoryError" in output
            return {**base, "error_class": "memory_limit" if oom else "crash",
                    "message": f"the worker died by {sig} during stage {stage!r}"
                               + (" after exceeding the memory limit" if oom else "")}
        return {**base, "error_class": "crash",
                "message": f"the worker exited with code {returncode} during stage {stage!r} without a result"}


# ------------------------------------------------------------------------ launching
def _spawn(job_path: Path, result_path: Path, log_path: Path, cwd: Path, env: dict[str, str],
           limits: SandboxLimits) -> tuple[int, bool]:
    """A fresh interpreter per job (the fallback)."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernel_gym.verify.worker", str(job_path), str(result_path)],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=lambda: _limit(limits),
        )
        timed_out = False
        try:
            proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            try:  # grandchildren (an answer's stray processes) go with the group
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return proc.returncode, timed_out


class _ZygoteDied(RuntimeError):
    pass


class _Zygote:
    def __init__(self) -> None:
        import tempfile as _tempfile

        self.owner = os.getpid()
        self.home = _tempfile.mkdtemp(prefix="kg-zygote-")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kernel_gym.verify.zygote"], cwd=self.home,
            env=sandbox_env(Path(self.home), 1), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True,
        )
        if not self._read(60.0).get("ready"):
            raise _ZygoteDied("zygote did not start")

    def _read(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise _ZygoteDied("no answer from the zygote")
        return json.loads(line)

    def run(self, request: dict[str, Any]) -> tuple[int, bool]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _ZygoteDied(str(exc)) from None
        reply = self._read(request["timeout_s"] + 60.0)
        return int(reply["returncode"]), bool(reply["timed_out"])

    def close(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
        shutil.rmtree(self.home, ignore_errors=True)


_ZYGOTE: _Zygote | None = None
_ZYGOTE_LOCK = threading.Lock()


def shutdown_zygote() -> None:
    global _ZYGOTE
    if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid():
        _ZYGOTE.close()
    _ZYGOTE = None


def _launch(job_path: Path, result_path: Path, log_path: Path, cwd: Path, env: dict[str, str],
            limits: SandboxLimits) -> tuple[int, bool]:
    global _ZYGOTE
    if os.environ.get("KERNEL_GYM_SANDBOX", "fork") == "spawn" or not hasattr(os, "fork"):
        return _spawn(job_path, result_path, log_path, cwd, env, limits)
    request = {"job": str(job_path), "result": str(result_path), "log": str(log_path), "cwd": str(cwd),
               "env": env, "timeout_s": limits.timeout_s, "memory_limit_mb": limits.memory_limit_mb,
               "file_size_mb": limits.file_size_mb}
    with _ZYGOTE_LOCK:
        for _ in range(2):
            try:
                if _ZYGOTE is None or _ZYGOTE.owner != os.getpid() or _ZYGOTE.proc.poll() is not None:
                    _ZYGOTE = _Zygote()
                return _ZYGOTE.run(request)
            except _ZygoteDied:
                shutdown_zygote()
    return _spawn(job_path, result_path, log_path, cwd, env, limits)


atexit.register(shutdown_zygote)
