"""Reference answers: hand-written kernels for built-in tasks, one file per task.

``solutions/<backend>/<task file stem>.py`` is a KernelBench-style answer (a Python source
defining ``ModelNew``) for task ``level1/<task file stem>``. They show the answer format
working end to end and back the tests and benchmarks. They live outside the installed package
(a wheel has none), so neither agents nor the answers under test can read them.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ANSWERS_DIR", "available_answers", "reference_answer"]

ANSWERS_DIR = Path(__file__).resolve().parent
_LEVEL = "level1"


def _answer_path(task_id: str, backend: str) -> Path:
    level, _, stem = task_id.rpartition("/")
    if level not in ("", _LEVEL):
        return ANSWERS_DIR / backend / "__none__"
    return ANSWERS_DIR / backend / f"{stem}.py"


def reference_answer(task_id: str, backend: str = "cpu") -> str | None:
    """The reference answer's source for ``task_id`` (``"level1/021_relu"``) on ``backend``,
    or None when there is none."""
    path = _answer_path(task_id, backend)
    return path.read_text() if path.is_file() else None


def available_answers(backend: str = "cpu") -> list[str]:
    """Task ids that have a reference answer on ``backend``, sorted."""
    folder = ANSWERS_DIR / backend
    if not folder.is_dir():
        return []
    return sorted(f"{_LEVEL}/{p.stem}" for p in folder.glob("*.py") if not p.name.startswith("_"))
