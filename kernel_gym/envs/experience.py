"""How one generation step becomes memory: a ``trace`` item plus a summarised experience.

The environment calls :func:`write_step` after every verification. The formats are part of the
contract: generators read these items back as context (a trace's code shows API usage; a
failure experience names the error class and its cause), and agents update their Q-values.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kernel_gym.memory import MemoryItem, MemoryStore
from kernel_gym.tasks.spec import TaskSpec

__all__ = ["code_hash", "experience_text", "task_query_text", "write_step"]


def code_hash(code: str) -> str:
    """Short content hash of an answer source (16 hex digits of SHA-256)."""
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def task_query_text(task: TaskSpec) -> str:
    """The text a task is recalled by: id, category, description, traced ops and the source."""
    ops = ", ".join(task.torch_ops) if task.torch_ops else ""
    return f"task {task.id} category {task.category} dtype {task.dtype}\n{task.description}\nops: {ops}\n{task.source}"


def _first_line(text: str, limit: int = 240) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line[:limit]


def experience_text(task: TaskSpec, verifier: dict[str, Any], stage: str, reward: float) -> tuple[str, str]:
    """(title, text) of the summarised experience of one step: what was tried, what happened."""
    if verifier.get("feasible"):
        sp = verifier.get("speedup")
        sp_s = f"{sp:.2f}x" if isinstance(sp, (int, float)) else "n/a"
        title = f"success on {task.category} task {task.name}: speedup {sp_s}"
        text = (
            f"{stage} step on {task.id} ({task.category}, {task.dtype}) produced a feasible kernel "
            f"with speedup {sp_s} over the reference (reward {reward:+.3f})."
        )
    else:
        err = verifier.get("error_class", "internal_error")
        rule = f" rule {verifier['hack_rule']}" if verifier.get("hack_rule") else ""
        msg = _first_line(verifier.get("message", "")) or _first_line(verifier.get("compile_log", ""))
        title = f"failure on {task.category} task {task.name}: {err}"
        text = f"{stage} step on {task.id} ({task.category}, {task.dtype}) failed with error class {err}{rule}: {msg}"
    return title, text


def write_step(
    store: MemoryStore,
    task: TaskSpec,
    backend: str,
    *,
    stage: str,
    code: str,
    verifier: dict[str, Any],
    reward: float,
    context_ids: list[int],
    parent_id: int | None,
    depth: int = 0,
    episode: str | None = None,
    step: int | None = None,
    extra: dict[str, Any] | None = None,
) -> tuple[int, int]:
    """Write one step to ``store``: a ``trace`` (code + verifier result + reward + context ids)
    and an ``experience_success`` / ``experience_failure`` summary pointing at it.

    Returns ``(trace_id, experience_id)``. Both items carry the task's id, level, category and
    the backend, so recall filters work on them.
    """
    feasible = bool(verifier.get("feasible"))
    title, text = experience_text(task, verifier, stage, reward)
    payload = {
        "code": code,
        "code_hash": code_hash(code),
        "verifier": verifier,
        "reward": float(reward),
        "context_ids": [int(i) for i in context_ids],
        "stage": stage,
        "parent_id": None if parent_id is None else int(parent_id),
        "depth": int(depth),
        "feasible": feasible,
        "speedup": verifier.get("speedup") if feasible else None,
        "latency_s": verifier.get("latency_s") if feasible else None,
        "error_class": verifier.get("error_class"),
        "episode": episode,
        "step": step,
    }
    if extra:
        payload.update(extra)
    trace = MemoryItem(
        kind="trace",
        title=f"trace {task.name} {stage}: {title.split(': ', 1)[-1]}",
        text=f"{text}\n```python\n{code}\n```",
        payload=payload,
        task_id=task.id,
        level=task.level,
        category=task.category,
        backend=backend,
    )
    added = store.add(trace)
    assert not isinstance(added, list)  # one item in, one id out
    trace_id = int(added)
    exp = MemoryItem(
        kind="experience_success" if feasible else "experience_failure",
        title=title,
        text=text,
        payload={
            "trace_id": trace_id,
            "error_class": verifier.get("error_class"),
            "speedup": payload["speedup"],
            "stage": stage,
            "feasible": feasible,
        },
        task_id=task.id,
        level=task.level,
        category=task.category,
        backend=backend,
    )
    added = store.add(exp)
    assert not isinstance(added, list)
    exp_id = int(added)
    return trace_id, exp_id
