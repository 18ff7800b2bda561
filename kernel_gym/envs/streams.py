"""Task streams: which task each episode works on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kernel_gym.tasks import TaskSpec, get_task, load_suite

__all__ = ["STREAM_MODES", "TaskStream", "resolve_tasks"]

#: "single": the first task forever; "suite": the tasks in order, cycling; "curriculum": level 1
#: tasks, then level 2, then higher (each in suite order); "mixed": a permutation drawn from the
#: reset seed, redrawn each cycle.
STREAM_MODES: tuple[str, ...] = ("single", "suite", "curriculum", "mixed")


def resolve_tasks(tasks: str | Sequence[str | TaskSpec]) -> list[TaskSpec]:
    """A suite name (``"level1"``, ``"level2"``, ``"all"``) or a list of task ids / TaskSpecs."""
    if isinstance(tasks, str):
        return list(load_suite(tasks))
    out = [t if isinstance(t, TaskSpec) else get_task(str(t)) for t in tasks]
    if not out:
        raise ValueError("the task list is empty; pass a suite name such as 'level1' or some task ids")
    return out


class TaskStream:
    """An endless sequence of tasks. ``next()`` returns the next task; ``seed(s)`` draws the
    ``"mixed"`` order before the first task is handed out (later it changes nothing);
    ``restart(seed)`` goes back to the start (and reshuffles for ``"mixed"``)."""

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        mode: str = "suite",
        max_tasks: int | None = None,
        shard: tuple[int, int] | None = None,
    ) -> None:
        if mode not in STREAM_MODES:
            raise ValueError(f"task_stream must be one of {STREAM_MODES}, got {mode!r}")
        tasks = list(tasks)
        if mode == "curriculum":
            tasks = sorted(tasks, key=lambda t: t.level)  # stable: suite order within a level
        if max_tasks is not None:
            if max_tasks < 1:
                raise ValueError(f"max_tasks must be >= 1, got {max_tasks}")
            tasks = tasks[:max_tasks]
        if shard is not None:  # vectorised copies: copy i of n takes tasks i, i + n, ...
            index, count = (int(v) for v in shard)
            if not (count >= 1 and 0 <= index < count):
                raise ValueError(f"shard must be (index, count) with 0 <= index < count, got {shard!r}")
            tasks = tasks[index::count]
        if not tasks:
            raise ValueError("no tasks to stream (the task list, max_tasks or shard left none)")
        self.tasks = tasks
        self.mode = mode
        self._order = list(range(len(tasks)))
        self._pos = 0
        self._started = False
        self._rng = np.random.default_rng(0)

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def started(self) -> bool:
        """Whether a task has been handed out (since construction or the last restart)."""
        return self._started

    def seed(self, seed: int | None) -> None:
        """Seed the ``"mixed"`` order if no task has been handed out yet; otherwise nothing."""
        if not self._started:
            self.restart(seed)

    def restart(self, seed: int | None) -> None:
        self._rng = np.random.default_rng(seed)
        self._pos = 0
        self._started = False
        self._reshuffle()

    def _reshuffle(self) -> None:
        self._order = list(range(len(self.tasks)))
        if self.mode == "mixed":
            self._order = [int(i) for i in self._rng.permutation(len(self.tasks))]

    def next(self) -> TaskSpec:
        self._started = True
        if self.mode == "single":
            return self.tasks[0]
        if self._pos >= len(self._order):
            self._pos = 0
            self._reshuffle()
        task = self.tasks[self._order[self._pos]]
        self._pos += 1
        return task

    @property
    def position(self) -> int:
        """How many tasks of the current cycle have been handed out."""
        return self._pos

    def seek(self, position: int) -> None:
        """Skip to ``position`` within the current cycle (used when resuming a run)."""
        self._pos = int(position)
