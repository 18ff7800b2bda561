"""Kernel targets and their registry.

A backend is one class (a :class:`Backend` subclass) named by ``"module:Class"``. The registry
holds the built-in ones, those other packages declare under the ``kernel_gym.backends`` entry-point
group (``[project.entry-points."kernel_gym.backends"] mybackend = "mypkg.backend:MyBackend"``), and
those registered at run time with :func:`register_backend`. Modules are imported on first use, so a
missing optional toolchain matters only to the runs that need it.
"""

from __future__ import annotations

import glob
import importlib
import re
import sys
from importlib.metadata import entry_points
from pathlib import Path

from kernel_gym.backends.base import Backend, BackendUnavailable, SandboxPolicy, TimingRejected

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendUnavailable",
    "SandboxPolicy",
    "TimingRejected",
    "backend_class",
    "backend_target",
    "compile_cache_dirs",
    "get_backend",
    "register_backend",
    "sandbox_policy",
]

ENTRY_POINT_GROUP = "kernel_gym.backends"
_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")

# name -> "module:Class"
BACKENDS: dict[str, str] = {
    "cpu": "kernel_gym.backends.cpu:CpuBackend",
    "ascend_sim": "kernel_gym.backends.ascend_sim:AscendSimBackend",
    "ascend_npu": "kernel_gym.backends.ascend_npu:AscendNpuBackend",
    "cuda": "kernel_gym.backends.cuda:CudaBackend",
    "triton": "kernel_gym.backends.triton:TritonBackend",
}


def _discover() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        BACKENDS.setdefault(ep.name, ep.value)


_discover()


def register_backend(name: str, target: str) -> None:
    """Add backend ``name`` implemented by ``target`` (``"module:Class"``) to the registry.

    The module must be importable by the verifier's processes too (an installed package, or a
    module under a directory on ``sys.path``): they import it by this name. Registering a
    name again with the same target is a no-op; with another target it is an error.
    Use ``kernel_gym.register_backend`` to also register the backend's environment id.
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"backend name {name!r}: use lower-case letters, digits and '_'")
    if not _TARGET.fullmatch(target):
        raise ValueError(f"backend target {target!r}: expected 'package.module:ClassName'")
    if BACKENDS.get(name, target) != target:
        raise ValueError(f"backend {name!r} is already registered as {BACKENDS[name]!r}")
    BACKENDS[name] = target
    cls = backend_class(name)
    if getattr(cls, "name", None) != name:
        del BACKENDS[name]
        raise ValueError(f"{target} has name {getattr(cls, 'name', None)!r}; register it as that name")


def backend_target(name: str) -> str:
    """The ``"module:Class"`` of backend ``name``; raises ValueError naming the valid choices."""
    target = BACKENDS.get(name)
    if target is None:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(sorted(BACKENDS))}")
    return target


def backend_class(name: str) -> type[Backend]:
    """The class of backend ``name`` (its module imported, nothing instantiated)."""
    target = backend_target(name)
    module_name, cls_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise TypeError(f"backend {name!r}: {target} is not a kernel_gym.backends.Backend subclass")
    return cls


def get_backend(name: str | Backend, target: str | None = None) -> Backend:
    """A new instance of backend ``name``; raises ValueError naming the valid choices.

    ``target`` (``"module:Class"``) registers the backend first when this process does not know
    it yet: the verifier passes it to its worker processes, which start with only the built-in
    and entry-point backends."""
    if isinstance(name, Backend):
        return name
    if target is not None and name not in BACKENDS:
        register_backend(name, target)
    return backend_class(name)()


def compile_cache_dirs() -> list[Path]:
    """The compile caches of every registered backend (what the verifier's sandbox may read)."""
    from kernel_gym.native import cache_root

    kinds = sorted({kind for name in BACKENDS for kind in backend_class(name).compile_kinds})
    return [cache_root() / kind for kind in kinds]


def sandbox_policy() -> SandboxPolicy:
    """The union of the registered backends' sandbox policies: what the verification server must
    pass through when it starts (each answer process then gets only its own backend's).

    Its ``import_roots`` make each backend's module importable inside the sandbox: a backend
    outside the kernel_gym package (a plug-in's directory) is bound read-only."""
    env: set[str] = set()
    devices: set[str] = set()
    paths: set[str] = set()
    roots: set[str] = set()
    for name in BACKENDS:
        cls = backend_class(name)
        env.update(cls.sandbox.env_vars)
        devices.update(d for pattern in cls.sandbox.devices for d in glob.glob(pattern))
        paths.update(cls.sandbox.read_only_paths)
        roots.update(plugin_roots(name))
    return SandboxPolicy(
        env_vars=tuple(sorted(env)),
        devices=tuple(sorted(devices)),
        read_only_paths=tuple(sorted(paths)),
        limit_address_space=all(backend_class(n).sandbox.limit_address_space for n in BACKENDS),
        import_roots=tuple(sorted(roots)),
        unix_sockets=any(backend_class(n).sandbox.unix_sockets for n in BACKENDS),
    )


def plugin_roots(name: str) -> tuple[str, ...]:
    """For a backend defined outside kernel_gym: its top-level package's directory, or its module's
    file (read-only in the sandbox). Empty for the built-in backends."""
    module_name = backend_target(name).split(":")[0]
    top = module_name.split(".")[0]
    if top == "kernel_gym":
        return ()
    module = sys.modules.get(top) or importlib.import_module(top)
    locations = list(getattr(module, "__path__", None) or [getattr(module, "__file__", "")])
    return tuple(str(Path(loc).resolve()) for loc in locations if loc)
