"""The project's own task suite (kernel_gym/tasks/level1, level2) and its loader."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from kernel_gym.tasks.spec import TaskSpec

__all__ = ["SUITE_DIR", "load_suite", "get_task", "suite_names"]

SUITE_DIR = Path(__file__).resolve().parent
_LEVELS = {"level1": 1, "level2": 2}


def suite_names() -> list[str]:
    return [*_LEVELS, "all"]


@functools.cache
def _load_level(level_name: str) -> tuple[TaskSpec, ...]:
    folder = SUITE_DIR / level_name
    manifest = json.loads((folder / "manifest.json").read_text())
    tasks = []
    for entry in manifest:
        path = folder / entry["file"]
        tasks.append(
            TaskSpec(
                id=f"{level_name}/{path.stem}",
                level=_LEVELS[level_name],
                category=entry["category"],
                dtype=entry["dtype"],
                source=path.read_text(),
                description=entry.get("description", ""),
                path=path,
            )
        )
    return tuple(tasks)


def load_suite(name: str = "all") -> list[TaskSpec]:
    """Tasks of the built-in suite: ``"level1"``, ``"level2"`` or ``"all"`` (level1 then level2)."""
    if name == "all":
        return [t for level in _LEVELS for t in _load_level(level)]
    if name not in _LEVELS:
        raise ValueError(f"unknown suite {name!r}; choose one of {', '.join(suite_names())}")
    return list(_load_level(name))


def get_task(task_id: str) -> TaskSpec:
    """One built-in task by id (``"level1/019_relu"``) or by unique file stem suffix (``"relu"``)."""
    tasks = load_suite("all")
    for t in tasks:
        if t.id == task_id:
            return t
    matches = [t for t in tasks if t.name == task_id or t.name.split("_", 1)[-1] == task_id]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise KeyError(f"no task {task_id!r}; ids look like {tasks[0].id!r} (see load_suite())")
    raise KeyError(f"task name {task_id!r} is ambiguous: {', '.join(t.id for t in matches)}")
