"""Reference answers: hand-written kernels for built-in tasks, one file per task.

``solutions/<backend>/<level>/<task file stem>.py`` is a KernelBench-style answer (a Python
source defining ``ModelNew``) for task ``<level>/<task file stem>``. They show the answer format
working end to end and back the tests and benchmarks. They live outside the installed package
(a wheel has none), so neither agents nor the answers under test can read them.

Backends: ``cpu``; ``ascend_sim`` (optimised Ascend C: multi-block, double-buffered, fused where
the task allows) and ``ascend_sim_naive`` (the straightforward Ascend C a first attempt would
be, which must still verify).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ANSWERS_DIR", "available_answers", "reference_answer"]

ANSWERS_DIR = Path(__file__).resolve().parent
_LEVELS = ("level1", "level2")


def _answer_path(task_id: str, backend: str) -> Path | None:
    level, _, stem = task_id.rpartition("/")
    if level not in _LEVELS or not stem:
        return None
    return ANSWERS_DIR / backend / level / f"{stem}.py"


def reference_answer(task_id: str, backend: str = "cpu") -> str | None:
    """The reference answer's source for ``task_id`` (``"level1/021_relu"``) on ``backend``,
    or None when there is none."""
    path = _answer_path(task_id, backend)
    return path.read_text() if path is not None and path.is_file() else None


def available_answers(backend: str = "cpu") -> list[str]:
    """Task ids (``"level1/021_relu"``) that have a reference answer on ``backend``, sorted."""
    folder = ANSWERS_DIR / backend
    return sorted(f"{level}/{p.stem}" for level in _LEVELS
                  for p in (folder / level).glob("*.py") if not p.name.startswith("_"))
