"""The verification server: a trusted zygote that forks a judge per job and keeps the sandbox.

    python -m kernel_gym.verify.zygote      (started by kernel_gym.verify.sandbox)

Per caller process, one zygote. It imports torch once, starts the sandbox host
(``kernel_gym.verify.sandbox_host``) inside bubblewrap, and for each job read from stdin:

1. makes the channel: two pipes, a shared buffer (memfd) and a log file (memfd);
2. has the sandbox host fork an answer runner holding the runner's ends (and, for a host-timed
   backend, a second runner for the reference, timed in alternation with the answer's);
3. forks a judge (``kernel_gym.verify.judge``) holding the other ends, and waits for its
   verdict on a pipe of its own (the runner cannot reach it);
4. has the sandbox host end every process of the verification and wipe its files;
5. answers on stdout with one JSON line: the verdict, the tail of the runner's output.

The zygote never runs torch ops itself, so forking it is safe; it exits when stdin closes.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

_OUTPUT_TAIL = 4000
log = logging.getLogger("kernel_gym.verify")


class SandboxHost:
    """The sandbox host process and the socket to it."""

    def __init__(self, isolated: bool) -> None:
        from kernel_gym.backends import BACKENDS, compile_cache_dirs, register_backend, sandbox_policy
        from kernel_gym.native import cache_root
        from kernel_gym.verify.isolation import sandbox_command
        from kernel_gym.verify.sandbox import BACKENDS_ENV, caller_python_path, python_path

        # the caller's registry: plug-in backends registered at run time are known here too
        for name, target in json.loads(os.environ.get(BACKENDS_ENV, "{}")).items():
            if name not in BACKENDS:
                register_backend(name, target)

        caches = compile_cache_dirs()
        for d in caches:
            d.mkdir(parents=True, exist_ok=True)
        policy = sandbox_policy()
        self.isolated = isolated
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-m", "kernel_gym.verify.sandbox_host", str(theirs.fileno())]
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
            "KERNEL_GYM_CACHE": str(cache_root()),
            "OMP_NUM_THREADS": "1",
            "LANG": "C.UTF-8",
            "PYTHONPATH": python_path(policy),
            # the host's seccomp must let through what a runner's may allow (filters stack)
            "KERNEL_GYM_SANDBOX_UNIX_SOCKETS": "1" if policy.unix_sockets else "0",
            **{k: os.environ[k] for k in policy.env_vars if k in os.environ},
        }
        if isolated:
            read_only = [*caches, *(Path(p) for p in (*policy.read_only_paths, *policy.import_roots))]
            read_only += caller_python_path()  # the caller's --target installs (torch there too)
            command = sandbox_command(command, read_only=read_only, env=env, devices=policy.devices)
            env = {}
        else:
            env = {**env, "HOME": os.environ.get("TMPDIR", "/tmp")}
        self.proc = subprocess.Popen(
            command,
            pass_fds=[theirs.fileno()],
            env=env or None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,  # read back when the host dies, so its error is reported
        )
        theirs.close()
        self.socket = ours
        ready = self._receive(90.0)
        if not ready.get("ready"):
            raise RuntimeError("the sandbox host did not start")
        self.host_pid = self._find_host_pid(int(ready["pid"]))

    def _receive(self, timeout_s: float) -> dict[str, Any]:
        if not select.select([self.socket], [], [], timeout_s)[0]:
            raise RuntimeError("no answer from the sandbox host")
        data = self.socket.recv(1 << 16)
        if not data:
            err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.stderr else ""
            raise RuntimeError(f"the sandbox host exited: {err}")
        return json.loads(data)

    def _find_host_pid(self, inner_pid: int) -> int:
        """The host pid of a sandbox process, from the NSpid lines under our child."""
        if not self.isolated:
            return inner_pid
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            nspid = next((ln.split()[1:] for ln in status.splitlines() if ln.startswith("NSpid:")), [])
            if len(nspid) >= 2 and int(nspid[-1]) == inner_pid and pid != self.proc.pid:
                return pid
            todo.extend(int(c) for c in children)
        raise RuntimeError(f"sandbox process {inner_pid} not found")

    def start_runner(self, request: dict[str, Any], fds: list[int]) -> int:
        socket.send_fds(self.socket, [json.dumps({"op": "run", **request}).encode()], fds)
        inner = int(self._receive(30.0)["pid"])
        return self._find_host_pid(inner) if self.isolated else inner

    def end_runner(self) -> int | None:
        """End the verification's processes; the runner's exit code if it had ended by itself."""
        self.socket.send(json.dumps({"op": "end"}).encode())
        return self._receive(30.0).get("status")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - best effort
            pass


def _log_tail(fd: int) -> str:
    size = os.fstat(fd).st_size
    return os.pread(fd, _OUTPUT_TAIL, max(0, size - _OUTPUT_TAIL)).decode(errors="replace")


def _judge_process(
    request: dict[str, Any],
    ends: dict[str, int],
    runner_pid: int,
    verdict_fd: int,
    reference: tuple[dict[str, int], int] | None = None,
) -> None:
    """In the forked judge: run the job, write the verdict, exit."""
    from kernel_gym.verify.compile_service import CompileService
    from kernel_gym.verify.judge import RunnerLink, run_job

    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # the zygote's stdout is the caller's channel: task code must not print into it
    started = time.perf_counter()
    try:
        from kernel_gym.backends import get_backend

        job = request["job"]
        service = CompileService(
            sandboxed=request["isolated"], backend=get_backend(job["backend"], job.get("backend_target"))
        )
        deadline = time.monotonic() + float(request["timeout_s"])

        def link() -> RunnerLink:
            return RunnerLink(ends["commands"], ends["replies"], ends["shared"], runner_pid, deadline, service.handle)

        reference_link = None
        if reference is not None:
            ref_ends, ref_pid = reference

            def reference_link() -> RunnerLink:
                return RunnerLink(
                    ref_ends["commands"], ref_ends["replies"], ref_ends["shared"], ref_pid, deadline, service.handle
                )

        result = run_job(request["job"], link, reference_link)
    except BaseException:  # noqa: BLE001 - the judge failing is reported, not raised
        job = request["job"]
        result = {
            "error_class": "internal_error",
            "message": traceback.format_exc()[-3000:],
            "task_id": job.get("task", {}).get("id", "?"),
            "backend": job.get("backend", "?"),
        }
    result["worker_seconds"] = time.perf_counter() - started
    data = json.dumps(result, default=str).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(verdict_fd, view) :]
    os._exit(0)


def _wait_verdict(pid: int, fd: int, timeout_s: float) -> tuple[dict[str, Any] | None, bool, str]:
    """The judge's verdict, whether it ran out of time, and how it ended when it gave none
    (a judge killed by the kernel's out-of-memory killer says so)."""
    deadline = time.monotonic() + timeout_s
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, True, ""
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        ended = f"killed by {signal.Signals(sig).name}" if sig in signal.valid_signals() else f"killed by signal {sig}"
        if sig == signal.SIGKILL:
            ended += " (on Linux usually the out-of-memory killer: the task's tensors and its reference's outputs)"
    else:
        ended = f"exit status {os.WEXITSTATUS(status)}"
    try:
        return json.loads(b"".join(chunks)), False, ended
    except ValueError:
        return None, False, ended


def _backend_limits(job: dict[str, Any]) -> dict[str, Any]:
    """What the answer's process gets from its backend's SandboxPolicy: its environment
    variables (from this process's environment) and whether its address space is capped."""
    from kernel_gym.backends import get_backend

    policy = get_backend(job["backend"], job.get("backend_target")).sandbox
    return {
        "env": {k: os.environ[k] for k in policy.env_vars if k in os.environ},
        "self_only": _reference_runner_needed(job),
        "limit_address_space": policy.limit_address_space,
        "runner_exec": policy.runner_exec,
        "unix_sockets": policy.unix_sockets,
        "open_files": policy.open_files,
    }


def _reference_runner_needed(job: dict[str, Any]) -> bool:
    """A host-timed backend's timed verification: the reference gets a runner of its own, timed
    in alternation with the answer's (kernel_gym.verify.timing)."""
    from kernel_gym.backends import get_backend

    backend = get_backend(job["backend"], job.get("backend_target"))
    return bool(backend.host_clock) and bool(job.get("settings", {}).get("measure_time", True))


def _start_one(host: SandboxHost, limits: dict[str, Any], log_fd: int) -> tuple[dict[str, int], int]:
    """A runner and the judge's ends of its pipes and shared buffer."""
    commands_r, commands_w = os.pipe()
    replies_r, replies_w = os.pipe()
    shared = os.memfd_create("kg-shared")
    sent = [commands_r, replies_w, os.dup(shared), os.dup(log_fd)]
    try:
        pid = host.start_runner(limits, sent)
    finally:  # the host holds its own copies now; ours would keep the buffers alive here
        for fd in sent:
            os.close(fd)
    return {"commands": commands_w, "replies": replies_r, "shared": shared}, pid


def run_request(host: SandboxHost, request: dict[str, Any]) -> dict[str, Any]:
    from kernel_gym.verify.timing import timing_cpus

    job = request["job"]
    log_fd = os.memfd_create("kg-log")
    limits = {k: request[k] for k in ("memory_limit_mb", "file_size_mb", "threads")}
    limits["cpu_seconds"] = int(float(request["timeout_s"])) + 5
    limits["cache_root"] = request["cache_root"]
    limits["seccomp"] = request.get("seccomp", True)
    limits.update(_backend_limits(job))
    if limits["self_only"]:  # both runners on the CPUs the judge takes while timing
        limits["cpus"] = timing_cpus(int(request["threads"]))
    ends, runner_pid = _start_one(host, limits, log_fd)
    reference = None
    opened = list(ends.values())
    if limits["self_only"]:
        ref_log = os.memfd_create("kg-ref-log")  # trusted code's output: not the answer's log tail
        reference = _start_one(host, limits, ref_log)
        os.close(ref_log)
        opened += list(reference[0].values())
    verdict_r, verdict_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(verdict_r)
        _judge_process(request, ends, runner_pid, verdict_w, reference)
    os.close(verdict_w)
    for fd in opened:
        os.close(fd)
    result, timed_out, ended = _wait_verdict(pid, verdict_r, float(request["timeout_s"]) + 60.0)
    os.close(verdict_r)
    try:
        status = host.end_runner()
    except (OSError, RuntimeError, ValueError):
        host.close()  # the sandbox host went down with this verification: a fresh one next time
        status = None
    tail = _log_tail(log_fd)
    os.close(log_fd)
    base = {"task_id": job["task"]["id"], "backend": job["backend"], "compiled": False, "correct": False}
    if result is None:
        result = {
            **base,
            "error_class": "timeout" if timed_out else "internal_error",
            "message": "the judge did not finish" + (" in time" if timed_out else f" (no verdict; it ended: {ended})"),
        }
    if result.get("error_class") == "crash":
        stage = result.get("stage", "?")
        if isinstance(status, int) and status < 0:
            try:
                how = f"by {signal.Signals(-status).name}"
            except ValueError:
                how = f"by signal {-status}"
            result["message"] = f"the answer's process died {how} during stage {stage!r}"
        elif isinstance(status, int):
            result["message"] = (
                f"the answer's process exited with code {status} during stage {stage!r} without a result"
            )
        if any(s in tail for s in ("MemoryError", "bad_alloc", "Cannot allocate memory")):
            result["error_class"] = "memory_limit"
            result["message"] = "the answer's process died after exceeding the memory limit"
    result.setdefault("details", {})["worker_output_tail"] = tail[-1000:] if result.get("error_class") == "ok" else tail
    return result


def main() -> int:
    import torch  # noqa: F401 - preloaded for the judges
    import torch._dynamo  # noqa: F401

    import kernel_gym.verify.compile_service  # noqa: F401
    import kernel_gym.verify.judge  # noqa: F401
    from kernel_gym.verify.isolation import isolation_mode, namespaces_available

    mode = isolation_mode()
    isolated, why = namespaces_available() if mode != "off" else (False, "KERNEL_GYM_ISOLATION=off")
    out = sys.stdout
    if not isolated and mode == "require":
        out.write(json.dumps({"ready": False, "error": f"isolation required but unavailable: {why}"}) + "\n")
        out.flush()
        return 1
    host: SandboxHost | None = None
    out.write(json.dumps({"ready": True, "pid": os.getpid(), "isolated": isolated, "why": why}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        request["isolated"] = isolated
        try:
            if host is None or not host.alive():
                if host is not None:
                    host.close()
                host = SandboxHost(isolated)
            result = run_request(host, request)
        except Exception:  # noqa: BLE001 - a broken sandbox is reported; it restarts next time
            if host is not None:
                host.close()
            host = None
            result = {
                "task_id": request["job"]["task"]["id"],
                "backend": request["job"]["backend"],
                "error_class": "internal_error",
                "message": traceback.format_exc()[-3000:],
            }
        result["request_id"] = request.get("request_id")
        out.write(json.dumps(result, default=str) + "\n")
        out.flush()
    if host is not None:
        host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
