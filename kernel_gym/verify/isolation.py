"""OS isolation of untrusted code: bubblewrap namespaces, seccomp filters and resource limits.

Two kinds of untrusted process exist:
- the answer runner (``kernel_gym.verify.runner``), forked per verification from a sandbox
  host process that lives inside a bubblewrap sandbox;
- the compiler, run on answer sources by the judge (``compile_in_sandbox``).

Each layer and what it stops (docs/verification.md has the full table):
- user namespace, running as an unprivileged uid: no capability over anything outside;
- PID namespace (the sandbox host is its PID 1): nothing outside is visible or signalable,
  and every process of a verification is killed when it ends;
- network namespace: no network, loopback included;
- filesystem view: read-only system libraries, Python, the kernel_gym package and the
  compiled-kernel caches; a private tmpfs for /tmp; nothing else (no home, no project data,
  no memory store, no fixtures, no result cache, no judge key);
- seccomp: no sockets, ptrace, process_vm_*, namespace or mount calls, and for the runner no
  new processes and no exec;
- rlimits: address space, CPU seconds, open files, processes, file size, no core dumps.

``KERNEL_GYM_ISOLATION`` chooses the policy: ``auto`` (default: full isolation where the OS
allows it, otherwise a loud warning and reduced isolation), ``require`` (refuse to verify
without namespaces) or ``off`` (no namespaces; for debugging only, with the same warning).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import resource
import shutil
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "IsolationUnavailable",
    "install_runner_filter",
    "install_host_filter",
    "isolation_mode",
    "namespaces_available",
    "sandbox_command",
    "set_runner_limits",
    "RUNNER_UID",
]

log = logging.getLogger("kernel_gym.verify")

RUNNER_UID = 65534  # "nobody": the sandbox's processes own nothing on the host
_PACKAGE_DIR = Path(__file__).resolve().parent.parent


class IsolationUnavailable(RuntimeError):
    """Namespaces are unavailable and KERNEL_GYM_ISOLATION=require refuses to run without them."""


def isolation_mode() -> str:
    mode = os.environ.get("KERNEL_GYM_ISOLATION", "auto").strip().lower()
    if mode not in ("auto", "require", "off"):
        raise ValueError(f"KERNEL_GYM_ISOLATION={mode!r}: choose auto, require or off")
    return mode


@functools.lru_cache(maxsize=1)
def namespaces_available() -> tuple[bool, str]:
    """(True, "") when bubblewrap can create the sandbox here, else (False, why)."""
    if not sys.platform.startswith("linux"):
        return False, f"namespaces are Linux-only (this is {sys.platform})"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    probe = subprocess.run(
        [*_bwrap_prefix(), *_view_args(()), "--", "/bin/true"], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0:
        return False, f"bubblewrap cannot create namespaces here: {probe.stderr.strip()[:300]}"
    return True, ""


def _world_readable(path: Path) -> bool:
    """Whether an unprivileged user can reach ``path`` (every ancestor searchable)."""
    try:
        for p in [path, *path.parents]:
            mode = p.stat().st_mode
            if not mode & 0o001:
                return False
        return bool(path.stat().st_mode & 0o004)
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def _run_as_nobody() -> bool:
    """Root runs bubblewrap as nobody when everything the sandbox needs is world-readable;
    otherwise (e.g. Python under /root) as root with the sandbox's uid mapped in a user
    namespace: no capability outside it either way."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    return all(_world_readable(p) for p in [*_python_dirs(), _PACKAGE_DIR])


def _bwrap_prefix() -> list[str]:
    bwrap = shutil.which("bwrap") or "bwrap"
    prefix: list[str] = []
    ids: list[str] = []
    if _run_as_nobody():
        # the sandbox then owns nothing on the host, even through a path we forgot to hide
        prefix = ["setpriv", f"--reuid={RUNNER_UID}", f"--regid={RUNNER_UID}", "--clear-groups", "--inh-caps=-all"]
    else:
        ids = ["--uid", str(RUNNER_UID), "--gid", str(RUNNER_UID)]
    # --as-pid-1: the command itself is PID 1, which no process of the sandbox can signal
    return [
        *prefix,
        bwrap,
        "--unshare-all",
        "--as-pid-1",
        "--die-with-parent",
        "--new-session",
        *ids,
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--clearenv",
    ]


def _existing(paths: Sequence[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = _link_target_if_inside(Path(p), out)
        if path.exists() and not any(path == q or q in path.parents for q in out):
            out.append(path)
    return out


def _link_target_if_inside(path: Path, bound: Sequence[Path]) -> Path:
    """A link inside a folder already bound (/usr/local/cuda -> cuda-13.0, /usr bound) is there as
    a link, and bubblewrap cannot mount onto a link: what it points to is bound instead."""
    if path.is_symlink() and any(b in path.parents for b in bound):
        return path.resolve()
    return path


def _python_dirs() -> list[Path]:
    dirs = {
        sys.base_prefix,
        sys.prefix,
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        str(Path(sys.executable).resolve().parent),
    }
    return _existing(sorted(dirs))


def _view_args(read_only: Sequence[Path]) -> list[str]:
    args: list[str] = ["--tmpfs", "/tmp"]  # first: binds below /tmp (a cache there) stay visible
    system = _existing(["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache", "/etc/alternatives"])
    bound: list[Path] = []
    for path in [*system, *_python_dirs(), *read_only]:
        path = _link_target_if_inside(path, bound)
        args += ["--ro-bind", str(path), str(path)]
        bound.append(path)
    args += ["--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp"]
    return args


def sandbox_command(
    command: Sequence[str],
    read_only: Sequence[Path],
    env: dict[str, str],
    writable: Sequence[Path] = (),
    chdir: Path | None = None,
    devices: Sequence[str] = (),
) -> list[str]:
    """The bubblewrap command line that runs ``command`` in the sandbox.

    ``read_only`` are extra paths visible read-only (compile caches, include dirs); the
    kernel_gym package is always visible. ``writable`` paths are bound
    read-write (a compiler's build directory); ``devices`` are device files bound in.
    """
    ro = [_PACKAGE_DIR, *read_only]  # the package holds no answers (they are in solutions/, outside it)
    args = [*_bwrap_prefix(), *_view_args(_existing(ro))]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    for device in devices:  # after --dev /dev: a backend's device files (a GPU's)
        args += ["--dev-bind", device, device]
    if chdir is not None:
        args += ["--chdir", str(chdir)]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *command]


# ------------------------------------------------------------------ seccomp and rlimits
_ALWAYS_DENIED = (
    "socket",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "unshare",
    "setns",
    "chroot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "swapon",
    "swapoff",
    "reboot",
    "io_uring_setup",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    "quotactl",
    "acct",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "syslog",
)
_RUNNER_DENIED = ("execve", "execveat", "fork", "vfork")
_CLONE_THREAD = 0x00010000


# what a GPU driver does at initialisation: a UNIX socket of its own, bound and listening
# (cudaGetDeviceCount fails with error 304 when any of these is refused); connect stays denied
_UNIX_LISTEN = ("socket", "bind", "listen")


def _filter(extra_denied: Sequence[str], deny_process_clone: bool, unix_sockets: bool = False):  # noqa: ANN202
    import pyseccomp as seccomp

    flt = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in (*_ALWAYS_DENIED, *extra_denied):
        if unix_sockets and name in _UNIX_LISTEN:
            continue
        try:
            flt.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):  # a syscall this kernel/arch does not have
            continue
    if unix_sockets:  # every other address family stays out of reach
        flt.add_rule(seccomp.ERRNO(errno.EPERM), "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    if deny_process_clone:
        # threads (CLONE_THREAD) stay allowed; a new process does not. clone3 passes its flags in
        # memory that seccomp cannot read: ENOSYS makes glibc fall back to clone.
        flt.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
        flt.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    return flt


def install_host_filter(unix_sockets: bool = False) -> None:
    """Seccomp for the sandbox host (it still forks runners). Filters stack, so the host's must
    let through what any runner's may allow (``unix_sockets``: a registered GPU backend's)."""
    _filter((), deny_process_clone=False, unix_sockets=unix_sockets).load()


# calls that act on another process by pid (arg 0): a runner may aim them at itself only, so an
# answer cannot stop, kill, renice or re-pin the reference's runner that is timed beside it
_OTHER_PROCESS_CALLS = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "setpriority")
_SELF_ONLY_SCHED = ("sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr")
_PRIO_PROCESS = 0


def _deny_other_processes(flt: Any) -> None:
    import pyseccomp as seccomp

    own = os.getpid()
    for name in _OTHER_PROCESS_CALLS:
        arg = 1 if name == "setpriority" else 0  # setpriority(which, who, prio)
        # one comparison per argument is all libseccomp takes: pid 0 (its group, itself) is refused too
        flt.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(arg, seccomp.NE, own))
    for name in _SELF_ONLY_SCHED:  # its own CPUs and policy too: the judge pinned it for timing
        flt.add_rule(seccomp.ERRNO(errno.EPERM), name)
    for name in ("tkill", "pidfd_open", "pidfd_send_signal", "ioprio_set"):
        try:
            flt.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):
            continue


def install_runner_filter(allow_exec: bool = False, unix_sockets: bool = False, self_only: bool = False) -> None:
    """Seccomp for an answer runner: the host's rules plus no exec and no new processes
    (``allow_exec``: a backend whose JIT runs its compiler in-process, Triton's, may;
    ``unix_sockets``: a GPU backend's driver may create, bind and listen on AF_UNIX sockets;
    ``self_only``: signals, priorities and scheduling only for its own process, for a runner
    timed beside another one)."""
    if allow_exec:
        flt = _filter((), deny_process_clone=False, unix_sockets=unix_sockets)
    else:
        flt = _filter(_RUNNER_DENIED, deny_process_clone=True, unix_sockets=unix_sockets)
    if self_only:
        _deny_other_processes(flt)
    flt.load()


def set_runner_limits(
    memory_limit_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    limit_address_space: bool = True,
    open_files: int = 64,
) -> None:
    """Resource limits of an answer process. ``limit_address_space`` False (a GPU backend's policy:
    its runtime reserves far more virtual memory than it uses) leaves memory uncapped by rlimits."""
    mem = memory_limit_mb << 20
    if limit_address_space:
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    # else (a GPU runtime): no cap here; the CUDA driver maps device-sized writable regions at
    # initialisation, which a data-segment cap refuses (cudaGetDeviceCount fails)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    fsize = file_size_mb << 20
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = open_files if hard == resource.RLIM_INFINITY else min(open_files, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
