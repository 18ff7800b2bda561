"""Kernel targets. ``get_backend(name)`` returns one; modules are imported on first use."""

from __future__ import annotations

import importlib

from kernel_gym.backends.base import Backend, BackendUnavailable

__all__ = ["BACKENDS", "Backend", "BackendUnavailable", "get_backend"]

# name -> "module:Class"; imported lazily so a missing optional toolchain only matters when used
BACKENDS: dict[str, str] = {
    "cpu": "kernel_gym.backends.cpu:CpuBackend",
    "ascend_sim": "kernel_gym.backends.ascend_sim:AscendSimBackend",
    # ascend_npu (CANN + torch_npu) comes later; see docs/backends.md
}


def get_backend(name: str) -> Backend:
    """The backend called ``name``; raises ValueError naming the valid choices."""
    if isinstance(name, Backend):
        return name
    target = BACKENDS.get(name)
    if target is None:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    module_name, cls_name = target.split(":")
    return getattr(importlib.import_module(module_name), cls_name)()
