"""Runtime anti-hack guards used inside the verification worker.

- ComputeGuard: a TorchDispatchMode that flags every aten op the answer's forward runs
  other than allocation, views and copies. Static checks can be dodged (getattr chains,
  nn modules called from forward); the dispatcher sees every torch op whatever its origin.
- PatchSnapshot: identities of the functions the harness relies on (time, torch, numpy),
  taken before the answer is loaded; any replacement afterwards is a monkey patch.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["ALLOWED_ATEN_OPS", "ComputeGuard", "PatchSnapshot", "clone_inputs", "inputs_equal"]

# Ops that allocate, reshape, view or copy: what a forward needs around its kernel call.
ALLOWED_ATEN_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "zero_", "fill_", "full", "full_like", "new_full", "ones", "ones_like", "new_ones",
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand", "expand_as",
    "permute", "transpose", "t", "unsqueeze", "squeeze", "flatten", "unflatten", "view_as",
    "contiguous", "clone", "copy_", "detach", "detach_", "alias", "slice", "select", "narrow",
    "split", "split_with_sizes", "unbind", "lift_fresh", "lift_fresh_copy", "_to_copy", "to",
    "resize_", "_local_scalar_dense", "is_same_size", "set_", "_has_compatible_shallow_copy_type",
    "scalar_tensor", "record_stream",
})


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


class PatchSnapshot:
    """Identity snapshot of time, torch, torch.Tensor, torch.nn.functional and numpy callables."""

    def __init__(self) -> None:
        import torch.nn.functional as F

        self._spaces: dict[str, Any] = {"time": time, "torch": torch, "torch.Tensor": torch.Tensor,
                                         "torch.nn.functional": F, "numpy": np, "threading": threading}
        self._ids = {name: _namespace_snapshot(ns) for name, ns in self._spaces.items()}

    def changed(self) -> list[str]:
        """Names whose object was replaced, added or removed since the snapshot."""
        found = []
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
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if not torch.equal(torch.nan_to_num(x), torch.nan_to_num(y)):
                return False
    return True
