"""Runtime anti-hack guards used inside the verification worker.

- ComputeGuard: a TorchDispatchMode that flags every aten op the answer's forward runs
  other than allocation, views and copies. Static checks can be dodged (getattr chains,
  nn modules called from forward); the dispatcher sees every torch op whatever its origin.
- PatchSnapshot: identities of the functions the harness relies on (time, torch, numpy),
  taken before the answer is loaded; any replacement afterwards is a monkey patch.
- AuditGuard: a PEP 578 audit hook, armed while answer code runs, that refuses processes,
  sockets and signals, and a wrapper that refuses Python thread starts: the backstop for
  the static OS and thread rules (a kernel calling back into Python meets it too).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["ALLOWED_ATEN_OPS", "AuditGuard", "ComputeGuard", "PatchSnapshot", "clone_inputs", "inputs_equal"]

# Ops that allocate, reshape, view or copy: what a forward needs around its kernel call.
ALLOWED_ATEN_OPS = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "zero_",
        "fill_",
        "full",
        "full_like",
        "new_full",
        "ones",
        "ones_like",
        "new_ones",
        "view",
        "_unsafe_view",
        "reshape",
        "_reshape_alias",
        "as_strided",
        "expand",
        "expand_as",
        "permute",
        "transpose",
        "t",
        "unsqueeze",
        "squeeze",
        "flatten",
        "unflatten",
        "view_as",
        "contiguous",
        "clone",
        "copy_",
        "detach",
        "detach_",
        "alias",
        "slice",
        "select",
        "narrow",
        "split",
        "split_with_sizes",
        "unbind",
        "lift_fresh",
        "lift_fresh_copy",
        "_to_copy",
        "to",
        "resize_",
        "_local_scalar_dense",
        "is_same_size",
        "set_",
        "_has_compatible_shallow_copy_type",
        "scalar_tensor",
        "record_stream",
    }
)


class ComputeGuard(TorchDispatchMode):
    """Records aten ops outside ALLOWED_ATEN_OPS (and dtype-changing copies) while active."""

    def __init__(self) -> None:
        super().__init__()
        self.violations: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name not in ALLOWED_ATEN_OPS:
            self.violations.append(f"aten.{name}")
        elif name in ("_to_copy", "to") and "dtype" in kwargs and args and isinstance(args[0], torch.Tensor):
            if kwargs["dtype"] is not None and kwargs["dtype"] != args[0].dtype:
                self.violations.append(f"aten.{name} (dtype {args[0].dtype} -> {kwargs['dtype']})")
        return func(*args, **kwargs)


def _namespace_snapshot(ns: Any) -> dict[str, int]:
    out = {}
    for k, v in list(vars(ns).items()):
        if callable(v) or isinstance(v, (staticmethod, classmethod, property)):
            out[k] = id(v)
    return out


def _torch_settings() -> dict[str, Any]:
    import torch.utils.deterministic

    return {
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "fill_uninitialized_memory": torch.utils.deterministic.fill_uninitialized_memory,  # type: ignore[attr-defined]  # torch sets it through a module-class property that mypy cannot see
        "num_threads": torch.get_num_threads(),
    }


class PatchSnapshot:
    """Identity snapshot of time, torch, torch.Tensor, torch.nn.functional and numpy callables."""

    def __init__(self) -> None:
        import torch.nn.functional as F

        self._spaces: dict[str, Any] = {
            "time": time,
            "torch": torch,
            "torch.Tensor": torch.Tensor,
            "torch.nn.functional": F,
            "numpy": np,
            "threading": threading,
        }
        self._ids = {name: _namespace_snapshot(ns) for name, ns in self._spaces.items()}
        self._settings = _torch_settings()

    def changed(self) -> list[str]:
        """Names whose object was replaced, added or removed since the snapshot, and torch
        settings the verifier relies on that changed (NaN-filled allocations, threads)."""
        now = _torch_settings()
        found = [f"torch setting {k}" for k in self._settings if now[k] != self._settings[k]]
        for name, ns in self._spaces.items():
            now = _namespace_snapshot(ns)
            before = self._ids[name]
            for k in before.keys() | now.keys():
                if before.get(k) != now.get(k):
                    found.append(f"{name}.{k}")
        return sorted(found)


def clone_inputs(inputs: list[Any]) -> list[Any]:
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def inputs_equal(a: list[Any], b: list[Any]) -> bool:
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if not torch.equal(torch.nan_to_num(x), torch.nan_to_num(y)):
                return False
    return True


# Audit events an answer's Python may not cause, with the rule each breaks.
AUDIT_RULES: dict[str, str] = {
    "os.system": "os_access",
    "os.exec": "os_access",
    "os.posix_spawn": "os_access",
    "os.spawn": "os_access",
    "os.fork": "os_access",
    "os.forkpty": "os_access",
    "os.kill": "os_access",
    "os.killpg": "os_access",
    "pty.spawn": "os_access",
    "subprocess.Popen": "os_access",
    "socket.__new__": "os_access",
    "socket.connect": "os_access",
    "socket.bind": "os_access",
    "socket.getaddrinfo": "os_access",
    "webbrowser.open": "os_access",
    "os.putenv": "os_access",
    "os.unsetenv": "os_access",
}
# libc/CPython symbols a ctypes lookup may not resolve while armed (the kernel loader only
# looks up the kernel's own extern "C" functions)
_LIBC_ESCAPES = re.compile(
    r"system|popen|fork|vfork|exec\w*|posix_spawn\w*|dlopen|dlsym|syscall|ptrace|mmap|mprotect|kill|"
    r"socket|connect|open|openat|fopen|unlink|remove|rename|getenv|setenv|putenv|clone|Py\w+|_Py\w+"
)
# Processes the kernel loaders may start while armed: the C/C++ compiler, without the
# flags that make it run or read other programs.
COMPILER_EXECUTABLES = re.compile(r"(g\+\+|gcc|c\+\+|cc|clang|clang\+\+)(-\d+)?")
_COMPILER_ESCAPES = ("-wrapper", "--wrapper", "-fplugin", "-B", "-specs", "--specs", "@")


# Programs the backend's runtime starts itself (SandboxPolicy.runner_programs: Triton's JIT runs
# ptxas and lists the linker cache), set once by the runner before any answer code runs
BACKEND_PROGRAMS: frozenset[str] = frozenset()


def allow_backend_programs(names: Sequence[str]) -> None:
    """Let ``subprocess`` start these programs (by file name) while the guard is armed."""
    global BACKEND_PROGRAMS
    BACKEND_PROGRAMS = frozenset(names)


_SPAWN_EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.exec")  # (program, argv, ...) each


def _program(args: tuple[Any, ...]) -> str:
    argv = args[1] if len(args) > 1 else None
    if isinstance(argv, (str, bytes)) or not argv:
        return ""
    return os.path.basename(os.fsdecode(argv[0]))


def _is_compiler_call(args: tuple[Any, ...]) -> bool:
    argv = args[1] if len(args) > 1 else None
    if isinstance(argv, (str, bytes)) or not argv:
        return False
    argv = [os.fsdecode(a) for a in argv]
    if os.path.basename(argv[0]) in BACKEND_PROGRAMS:
        return True
    return COMPILER_EXECUTABLES.fullmatch(os.path.basename(argv[0])) is not None and not any(
        a.startswith(_COMPILER_ESCAPES) for a in argv[1:]
    )


class AuditGuard:
    """One per process (audit hooks cannot be removed); ``armed`` while answer code may run.

    A refused operation raises PermissionError in the answer and is recorded; ``failure()``
    turns the first record into the hack the worker reports, whatever error it caused.
    """

    _instance: AuditGuard | None = None

    def __init__(self) -> None:
        self.armed = False
        self.violations: list[tuple[str, str]] = []

    @classmethod
    def install(cls) -> AuditGuard:
        if cls._instance is None:
            guard = cls()
            sys.addaudithook(guard._hook)
            guard._wrap_thread_start()
            cls._instance = guard
        cls._instance.violations.clear()
        return cls._instance

    def _refuse(self, rule: str, what: str) -> None:
        self.violations.append((rule, what))
        raise PermissionError(f"{what} is not allowed in an answer (kernel-gym sandbox)")

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.armed:
            return
        if event == "ctypes.dlsym" and len(args) > 1 and isinstance(args[1], str) and _LIBC_ESCAPES.fullmatch(args[1]):
            self._refuse("os_access", f"resolving the native symbol {args[1]!r}")
        rule = AUDIT_RULES.get(event)
        # subprocess may start the program through os.posix_spawn (Python 3.12): the same argv
        if rule is None or (event in _SPAWN_EVENTS and _is_compiler_call(args)):
            return
        program = _program(args) if event in _SPAWN_EVENTS else ""
        self._refuse(rule, f"{event} ({program})" if program else event)

    def _wrap_thread_start(self) -> None:
        # Python 3.11 has no audit event for thread starts; threading calls this alias
        original = threading._start_new_thread  # type: ignore[attr-defined]  # private alias, not in typeshed

        def start_new_thread(*args: Any, **kwargs: Any) -> Any:
            if self.armed:
                self._refuse("threads_or_streams", "starting a Python thread")
            return original(*args, **kwargs)

        threading._start_new_thread = start_new_thread  # type: ignore[attr-defined]  # private alias, not in typeshed

    def failure(self) -> tuple[str, str] | None:
        """(rule, what) of the first refused operation, or None."""
        return self.violations[0] if self.violations else None
