"""TaskSpec: one PyTorch reference operator in KernelBench's file format.

A task file defines ``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``.
The spec keeps the file's source text (what an LLM sees and what the verifier executes,
in a subprocess) plus metadata: id, level, category, dtype, description, and the aten ops
the reference runs (traced on first use).
"""

from __future__ import annotations

import functools
import hashlib
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

__all__ = ["TaskSpec", "TaskFormatError", "load_task_module"]


class TaskFormatError(ValueError):
    """A task source does not follow the KernelBench format."""


_REQUIRED = ("Model", "get_inputs", "get_init_inputs")


def load_task_module(source: str, name: str = "kernel_gym_task") -> types.ModuleType:
    """Execute a task source as a fresh module and check it has the KernelBench names."""
    module = types.ModuleType(name)
    module.__file__ = f"<task {name}>"
    try:
        code = compile(source, module.__file__, "exec")
    except SyntaxError as exc:
        raise TaskFormatError(f"task {name}: syntax error at line {exc.lineno}: {exc.msg}") from None
    exec(code, module.__dict__)  # noqa: S102 - task files are trusted project/user inputs
    missing = [n for n in _REQUIRED if n not in module.__dict__]
    if missing:
        raise TaskFormatError(
            f"task {name}: missing {', '.join(missing)}; a KernelBench task file "
            "defines class Model, get_inputs() and get_init_inputs()"
        )
    return module


@dataclass(frozen=True)
class TaskSpec:
    """A reference operator and its metadata.

    Attributes:
        id: unique id, ``"<level>/<file stem>"`` (e.g. ``"level1/019_relu"``).
        level: suite level, 1 = single operators, 2 = fused operators, 3 = models.
        category: operator family (e.g. ``"activation"``, ``"matmul_epilogue"``).
        dtype: dtype of the first floating-point input (``"float32"``, ``"float16"``...).
        source: the task file's text.
        description: one sentence saying what the operator computes.
        path: the file it came from, if any.
        published_source: the task file at its published shapes where ``source`` was shrunk to
            simulation scale (KernelBench files loaded with ``shrink=True``), else None.
    """

    id: str
    level: int
    category: str
    dtype: str
    source: str
    description: str = ""
    path: Path | None = field(default=None, compare=False)
    published_source: str | None = None

    @property
    def name(self) -> str:
        return self.id.split("/")[-1]

    @functools.cached_property
    def source_hash(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def module(self) -> types.ModuleType:
        """A fresh module object executing the task source."""
        return load_task_module(self.source, self.name)

    def build(self, seed: int = 0) -> tuple[torch.nn.Module, list[Any]]:
        """The reference model (weights from ``seed``) and one draw of inputs (from ``seed``)."""
        mod = self.module()
        torch.manual_seed(seed)
        model = mod.Model(*mod.get_init_inputs())
        torch.manual_seed(seed + 1)
        return model, list(mod.get_inputs())

    @functools.cached_property
    def torch_ops(self) -> tuple[str, ...]:
        """Aten ops the reference forward dispatches, in first-use order (e.g. ``aten.relu``)."""
        return trace_aten_ops(self)

    @functools.cached_property
    def input_shapes(self) -> tuple[tuple[int, ...], ...]:
        _, inputs = self.build(0)
        return tuple(tuple(x.shape) if isinstance(x, torch.Tensor) else () for x in inputs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "category": self.category,
            "dtype": self.dtype,
            "description": self.description,
            "source": self.source,
            "published_source": self.published_source,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaskSpec:
        return cls(
            id=d["id"],
            level=int(d["level"]),
            category=d["category"],
            dtype=d["dtype"],
            source=d["source"],
            description=d.get("description", ""),
            published_source=d.get("published_source"),
        )


def trace_aten_ops(task: TaskSpec) -> tuple[str, ...]:
    from kernel_gym.dispatch_mode import PlainDispatchMode

    seen: dict[str, None] = {}

    class _Recorder(PlainDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            seen.setdefault(f"aten.{func.overloadpacket.__name__}", None)
            return func(*args, **(kwargs or {}))

    model, inputs = task.build(0)
    with torch.no_grad(), _Recorder():
        model(*inputs)
    return tuple(seen)
