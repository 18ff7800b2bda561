"""Export step-centric training data from run directories (Kernel-Smith's post-training recipe).

    python -m experiments.export_trajectories <run dir> [--out F] [--min-gain 1.0] [--include-drafts]
                                              [--memory PATH]

Each JSONL record is one refinement step of a run: the prompt context (the texts of the memory
items that were in the generator's context, read from the run's ``memory.db``), the parent's code
and verifier result, the new code and verifier result, and ``gain = parent latency / new
latency``. Only correctness-preserving steps are kept (parent feasible and new kernel feasible)
with ``gain > min_gain`` (1.0: strictly faster), i.e. the supervision Kernel-Smith keeps from long
evolution trajectories; ``gain`` is also the RL reward "speedup over the parent".

``--include-drafts`` also keeps feasible steps written from scratch (no parent): their
``parent_code`` is null and ``gain`` is the speedup over the PyTorch reference (the implicit
parent), filtered by the same ``min_gain``.

``<run dir>`` is one run (it holds ``steps.jsonl``) or a multirun / comparison directory: every
sub-directory with a ``steps.jsonl`` is exported (records carry ``run``, the path relative to the
given directory). The store is ``<run>/memory.db`` unless ``--memory`` names a shared one. The
output defaults to ``<run dir>/trajectories.jsonl``.

Record keys: ``run, agent, seed, episode, task_id, level, category, step, global_step, stage,
mode, parent_id, trace_id, context_ids, context [{id, kind, title, text}], parent_code,
parent_code_hash, parent_latency_s, parent_verifier, code, code_hash, latency_s, verifier,
speedup, gain, reward``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents.base import json_default
from experiments import metrics
from kernel_gym.envs.experience import code_hash
from kernel_gym.memory import MemoryStore

__all__ = ["find_runs", "iter_records", "export_trajectories", "main"]


def find_runs(path: str | Path) -> list[Path]:
    """Run directories under ``path`` (itself when it holds ``steps.jsonl``); FileNotFoundError
    naming the fix when there is none."""
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such directory")
    runs = metrics.find_runs(root)
    if not runs:
        raise FileNotFoundError(
            f"{root}: no steps.jsonl here or in any sub-directory; pass a run directory "
            "written by python -m experiments.run (see docs/run_format.md)"
        )
    return runs


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def _progress(total: int, desc: str, enabled: bool | None) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(
        total=total, desc=desc, unit="step", disable=(None if enabled is None else not enabled), file=sys.stderr
    )


def iter_records(
    run_dir: Path,
    memory_path: Path | None = None,
    min_gain: float = 1.0,
    include_drafts: bool = False,
    stats: dict[str, int] | None = None,
    progress: bool | None = None,
    label: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Training records of one run directory (see the module doc); ``stats`` counts why steps were dropped."""
    stats = stats if stats is not None else {}
    for k in (
        "steps",
        "kept",
        "no_parent",
        "infeasible",
        "parent_infeasible",
        "low_gain",
        "missing_item",
        "hash_mismatch",
        "bad_json",
    ):
        stats.setdefault(k, 0)
    mem_path = memory_path or run_dir / "memory.db"
    if not Path(mem_path).is_file():
        raise FileNotFoundError(f"{run_dir}: no memory store at {mem_path}; pass --memory with the store the run used")
    steps_path = run_dir / "steps.jsonl"
    bar = _progress(_count_lines(steps_path), label or run_dir.name, progress)
    store = MemoryStore(mem_path, create=False, save_index_on_close=False)
    try:
        with open(steps_path) as fh:
            for line in fh:
                if bar is not None:
                    bar.update(1)
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    stats["bad_json"] += 1  # e.g. a half-written last line of an interrupted run
                    continue
                stats["steps"] += 1
                out = _record(store, rec, min_gain, include_drafts, stats)
                if out is not None:
                    out["run"] = label or str(run_dir)
                    stats["kept"] += 1
                    yield out
    finally:
        store.close()
        if bar is not None:
            bar.close()


def _record(
    store: MemoryStore, rec: dict[str, Any], min_gain: float, include_drafts: bool, stats: dict[str, int]
) -> dict[str, Any] | None:
    if not rec.get("feasible"):
        stats["infeasible"] += 1
        return None
    parent_id = rec.get("parent_id")
    if parent_id is None and not include_drafts:
        stats["no_parent"] += 1
        return None
    try:
        new = store.get(int(rec["trace_id"]))
        parent = store.get(int(parent_id)) if parent_id is not None else None
    except (KeyError, TypeError):
        stats["missing_item"] += 1
        return None
    code = new.payload.get("code") or ""
    if rec.get("code_hash") and code_hash(code) != rec["code_hash"]:
        stats["hash_mismatch"] += 1  # the store does not belong to this step log
        return None
    lat = new.payload.get("latency_s") or (new.payload.get("verifier") or {}).get("latency_s")
    if not new.payload.get("feasible") or not lat:
        stats["infeasible"] += 1
        return None
    if parent is not None:
        p_lat = parent.payload.get("latency_s")
        if not parent.payload.get("feasible") or not p_lat:
            stats["parent_infeasible"] += 1
            return None
        gain = float(p_lat) / float(lat)
    else:
        p_lat = None
        speedup = new.payload.get("speedup") or (new.payload.get("verifier") or {}).get("speedup")
        gain = float(speedup) if speedup else 0.0
    if not gain > float(min_gain):
        stats["low_gain"] += 1
        return None
    ctx_ids = [int(i) for i in (rec.get("context_ids") or new.payload.get("context_ids") or [])]
    ctx = [{"id": it.id, "kind": it.kind, "title": it.title, "text": it.text} for it in store.get_many(ctx_ids)]
    p_code = parent.payload.get("code") if parent is not None else None
    return {
        "agent": rec.get("agent"),
        "seed": rec.get("seed"),
        "episode": rec.get("episode"),
        "task_id": rec.get("task_id", new.task_id),
        "level": rec.get("level", new.level),
        "category": rec.get("category", new.category),
        "step": rec.get("step"),
        "global_step": rec.get("global_step"),
        "stage": rec.get("stage", new.payload.get("stage")),
        "mode": rec.get("mode", new.payload.get("mode", "small")),
        "parent_id": None if parent is None else parent.id,
        "trace_id": new.id,
        "context_ids": ctx_ids,
        "context": ctx,
        "parent_code": p_code,
        "parent_code_hash": None if p_code is None else code_hash(p_code),
        "parent_latency_s": p_lat,
        "parent_verifier": None if parent is None else parent.payload.get("verifier"),
        "code": code,
        "code_hash": code_hash(code),
        "latency_s": float(lat),
        "verifier": new.payload.get("verifier"),
        "speedup": new.payload.get("speedup"),
        "gain": gain,
        "reward": rec.get("reward", new.payload.get("reward")),
    }


def export_trajectories(
    path: str | Path,
    out: str | Path | None = None,
    min_gain: float = 1.0,
    include_drafts: bool = False,
    memory: str | Path | None = None,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Write the records of every run under ``path`` to ``out`` (default ``<path>/trajectories.jsonl``).
    Returns ``{"out", "runs", **counts}``."""
    root = Path(path)
    runs = find_runs(root)
    out_path = Path(out) if out is not None else root / "trajectories.jsonl"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    stats: dict[str, int] = {}
    with open(out_path, "w") as fh:
        for run in runs:
            label = str(run.relative_to(root)) if run != root else "."
            for r in iter_records(
                run, Path(memory) if memory else None, min_gain, include_drafts, stats, progress, label
            ):
                fh.write(json.dumps(r, default=json_default) + "\n")
    return {"out": str(out_path), "runs": len(runs), **stats}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_dir", help="a run directory (with steps.jsonl) or a multirun/compare directory")
    ap.add_argument("--out", default=None, help="output JSONL (default <run_dir>/trajectories.jsonl)")
    ap.add_argument("--min-gain", type=float, default=1.0, help="keep steps with parent/new latency > this (1.0)")
    ap.add_argument(
        "--include-drafts",
        action="store_true",
        help="also keep feasible from-scratch steps (gain = speedup over the reference)",
    )
    ap.add_argument("--memory", default=None, help="the memory store the run used (default <run>/memory.db)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        res = export_trajectories(
            args.run_dir,
            args.out,
            args.min_gain,
            args.include_drafts,
            args.memory,
            progress=False if args.no_progress else None,
        )
    except FileNotFoundError as e:
        print(f"export_trajectories: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
