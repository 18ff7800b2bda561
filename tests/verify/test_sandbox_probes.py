"""The OS layer of the verification sandbox, probed from inside an answer.

Each probe answer first disarms the in-process guards (it finds the audit guard through
``gc``, which only the static stage forbids, and the static stage is skipped here), then
tries one forbidden thing in ``__init__``. When the attempt works, the answer computes relu
correctly and the verification passes; when the OS refuses it, the answer returns wrong
output. So every probe must fail verification, and the control (an allowed action through
the same mechanism) must pass, which shows that a probe that escaped would be seen.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from kernel_gym.native import cache_root
from kernel_gym.tasks import get_task
from kernel_gym.verify import VerifySettings, sandbox_stage, verify
from kernel_gym.verify.isolation import namespaces_available

RELU = get_task("level1/021_relu")
SETTINGS = VerifySettings(measure_time=False, use_cache=False, timeout_s=60)
ISOLATED, WHY = namespaces_available()
needs_namespaces = pytest.mark.skipif(not ISOLATED, reason=f"no namespaces on this machine: {WHY}")

TEMPLATE = '''
import gc
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void relu_kernel(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""

def _disarm():
    import gc
    for o in gc.get_objects():
        if type(o).__name__ == "AuditGuard":
            o.armed = False

def _probe():
@PROBE@

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)
        _disarm()
        try:
            self.escaped = bool(_probe())
        except BaseException:
            self.escaped = False

    def forward(self, x):
        y = torch.empty_like(x)
        if self.escaped:
            self.lib.relu_kernel(x, y, x.numel())
        return y
'''


def probe_answer(body: str) -> str:
    return TEMPLATE.replace("@PROBE@", textwrap.indent(textwrap.dedent(body).strip(), "    "))


def run_probe(body: str):
    return sandbox_stage(RELU, probe_answer(body), "cpu", SETTINGS)


def test_control_probe_passes() -> None:
    """An allowed action (a file in the runner's own temp dir) lets the answer pass."""
    r = run_probe("""
        with open("scratch.txt", "w") as f:
            f.write("x")
        return open("scratch.txt").read() == "x"
    """)
    assert r.error_class == "ok", r.summary()


PROBES = {
    "socket": """
        import socket
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        return True
    """,
    "unix_socket": """
        import socket
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        return True
    """,
    "read_passwd": """
        return "root:" in open("/etc/passwd").read()
    """,
    "read_reference_answers": f"""
        import os
        d = {str(Path(__file__).resolve().parents[2] / "solutions")!r}
        return any(n.endswith(".py") for _, _, files in os.walk(d) for n in files)
    """,
    "read_judge_key": f"""
        return len(open({str(cache_root() / "judge.key")!r}, "rb").read()) > 0
    """,
    "read_result_cache": f"""
        import os
        return os.path.isdir({str(cache_root() / "verify")!r})
    """,
    "read_home": f"""
        return open({os.path.expanduser("~/.kg_probe_marker")!r}).read() == "marker"
    """,
    "fork": """
        import os
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        return True
    """,
    "exec": """
        import os
        os.execv("/bin/true", ["/bin/true"])
    """,
    "poison_compile_cache": f"""
        import os, glob
        libs = glob.glob({str(cache_root() / "cpp")!r} + "/*.so")
        open(libs[0], "ab").write(b"x")
        return True
    """,
    "write_cache_root": f"""
        open({str(cache_root() / "cpp" / "forged.so")!r}, "wb").write(b"x")
        return True
    """,
    "ptrace_parent": """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.ptrace(16, os.getppid(), 0, 0) == 0
    """,
}


@pytest.fixture(scope="module", autouse=True)
def home_marker():
    path = os.path.expanduser("~/.kg_probe_marker")
    with open(path, "w") as f:
        f.write("marker")
    yield
    os.unlink(path)


@needs_namespaces
@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe_is_contained(name: str) -> None:
    r = run_probe(PROBES[name])
    assert r.error_class != "ok", f"{name} escaped: {r.summary()}"


@needs_namespaces
def test_caller_secrets_and_processes_are_invisible() -> None:
    """The caller's environment (an API key) and pid are out of reach from the sandbox."""
    os.environ["KG_PROBE_SECRET"] = "sk-probe-secret-value"
    caller = os.getpid()
    r = run_probe(f"""
        import os
        found = False
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    found |= b"sk-probe-secret" in open(f"/proc/{{pid}}/environ", "rb").read()
                except OSError:
                    pass
        try:
            found |= b"sk-probe-secret" in open("/proc/{caller}/environ", "rb").read()
        except OSError:
            pass
        return found or "KG_PROBE_SECRET" in os.environ
    """)
    assert r.error_class != "ok", r.summary()


@needs_namespaces
def test_signals_to_parent_and_caller_do_not_land() -> None:
    caller = os.getpid()
    r = run_probe(f"""
        import os, signal
        for target in (os.getppid(), 1, {caller}):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        return True
    """)
    # the answer passes (its kills were harmless) and the verifier still works afterwards
    assert r.error_class == "ok", r.summary()
    again = sandbox_stage(RELU, probe_answer("return True"), "cpu", SETTINGS)
    assert again.error_class == "ok", again.summary()


def test_huge_output_is_capped() -> None:
    r = run_probe("""
        import sys
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return True
    """)
    tail = r.details.get("worker_output_tail", "")
    assert len(tail) <= 4000, len(tail)
    again = sandbox_stage(RELU, probe_answer("return True"), "cpu", SETTINGS)
    assert again.error_class == "ok", again.summary()


@needs_namespaces
def test_no_process_outlives_a_verification() -> None:
    """Threads blocked forever and a new session leave nothing behind once the verdict is in."""
    before = _sandbox_processes()
    run_probe("""
        import os, threading, time
        os.setsid()
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        return True
    """)
    assert _sandbox_processes() <= before


def _sandbox_processes() -> int:
    out = subprocess.run(["ps", "-eo", "uid,comm"], capture_output=True, text=True, check=False).stdout
    return sum(1 for line in out.splitlines()[1:] if "sleep" in line)


def test_forged_cache_entry_is_ignored(tmp_path, monkeypatch) -> None:
    """A result-cache entry edited outside the caller (no valid MAC) is not trusted."""
    import json

    from kernel_gym.verify.cache import ResultCache, cache_key

    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path))
    answer = probe_answer("return False")  # fails verification (statically: it imports gc)
    first = verify(RELU, answer, "cpu", measure_time=False, timeout_s=60)
    assert first.error_class != "ok"
    cache = ResultCache()
    key = cache_key(RELU, answer, "cpu", VerifySettings(measure_time=False, timeout_s=60))
    path = cache._path(key)
    entry = json.loads(path.read_text())
    forged = json.loads(entry["result"])
    forged.update(error_class="ok", correct=True, compiled=True, speedup=100.0)
    entry["result"] = json.dumps(forged)
    path.write_text(json.dumps(entry))
    again = verify(RELU, answer, "cpu", measure_time=False, timeout_s=60)
    assert again.error_class != "ok" and not again.cached, again.summary()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 0, "10", None])
def test_bad_timeout_is_one_clear_error(bad) -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        verify(RELU, probe_answer("return True"), "cpu", timeout_s=bad)


@pytest.mark.parametrize("bad", [None, b"code", 42])
def test_non_str_answer_is_a_type_error(bad) -> None:
    with pytest.raises(TypeError, match="answer_source"):
        verify(RELU, bad, "cpu")


def test_signal_during_verify_leaves_the_server_in_step() -> None:
    """An exception raised in the caller mid-verification (SIGALRM) restarts the server; the
    next verifications are correct."""
    import signal

    def boom(signum, frame):
        raise TimeoutError("alarm")

    old = signal.signal(signal.SIGALRM, boom)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(TimeoutError):
            sandbox_stage(RELU, probe_answer("return True"), "cpu", SETTINGS)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    for _ in range(2):
        r = sandbox_stage(RELU, probe_answer("return True"), "cpu", SETTINGS)
        assert r.error_class == "ok", r.summary()


@needs_namespaces
def test_a_read_only_path_that_is_a_link_inside_a_bound_folder(tmp_path) -> None:
    # a toolkit reached through a link: /usr/local/cuda -> cuda-13.0, both named, /usr bound
    from kernel_gym.verify.isolation import sandbox_command

    toolkit, holder = tmp_path / "toolkit-13.0", tmp_path / "local"
    toolkit.mkdir()
    holder.mkdir()
    (toolkit / "version.txt").write_text("13.0\n")
    (holder / "toolkit").symlink_to(toolkit)
    cmd = sandbox_command(
        ["cat", str(holder / "toolkit" / "version.txt")],
        read_only=[holder, holder / "toolkit"],
        env={"PATH": "/usr/bin:/bin"},
    )
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "13.0\n", done.stderr[-500:]
