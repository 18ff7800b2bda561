"""Calibrate the Ascend C simulator against a real NPU: Spearman rank correlation of latencies.

    python -m experiments.calibrate_npu --answers <dir or suite> [--tasks ID ...] [--answer-format python]

``--answers`` is a directory of answers (``<level>/<NNN_name>.py``, or ``<NNN_name>.py`` with
``--level``) or a task suite (``level1``), whose answers are then read from
``solutions/ascend_sim/<suite>/``. Every answer is verified on ``ascend_sim`` and on ``ascend_npu``;
the tasks feasible on both are ranked by latency on each and the command prints the table and
Spearman's rho with n. Without an NPU it refuses with the backend's BackendUnavailable message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["average_ranks", "rank_correlation_table", "main"]

ROOT = Path(__file__).resolve().parents[1]


def average_ranks(values: list[float]) -> list[float]:
    """Ranks 1..n of ``values`` (ascending), ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rank_correlation_table(sim: Mapping[str, float], npu: Mapping[str, float]) -> dict[str, Any]:
    """Spearman's rank correlation of two latency dicts (task -> seconds) over their common tasks.

    Returns ``{"n", "rho", "rows"}``: ``rows`` lists per task the two latencies and ranks (sorted by
    the NPU rank); ``rho`` is None when fewer than two tasks are common or a side has one value."""
    tasks = sorted(set(sim) & set(npu))
    a = [float(sim[t]) for t in tasks]
    b = [float(npu[t]) for t in tasks]
    ra, rb = average_ranks(a), average_ranks(b)
    rho: float | None = None
    n = len(tasks)
    if n >= 2:
        ma, mb = sum(ra) / n, sum(rb) / n
        cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
        va = sum((x - ma) ** 2 for x in ra)
        vb = sum((y - mb) ** 2 for y in rb)
        if va > 0 and vb > 0:
            rho = cov / (va * vb) ** 0.5
    rows = [
        {"task": t, "sim_s": a[i], "npu_s": b[i], "sim_rank": ra[i], "npu_rank": rb[i]} for i, t in enumerate(tasks)
    ]
    rows.sort(key=lambda r: (r["npu_rank"], r["task"]))
    return {"n": n, "rho": rho, "rows": rows}


def format_table(table: Mapping[str, Any]) -> str:
    lines = ["| task | ascend_sim (us) | ascend_npu (us) | sim rank | npu rank |", "|---|---|---|---|---|"]
    for r in table["rows"]:
        lines.append(
            f"| {r['task']} | {r['sim_s'] * 1e6:.2f} | {r['npu_s'] * 1e6:.2f} | {r['sim_rank']:g} | {r['npu_rank']:g} |"
        )
    rho = table["rho"]
    lines.append(f"\nSpearman rho = {'n/a' if rho is None else f'{rho:.3f}'} (n = {table['n']})")
    return "\n".join(lines)


def collect_answers(answers: str, level: str | None, tasks: list[str] | None) -> dict[str, Path]:
    """task id -> answer file, from a directory or a suite's ascend_sim solutions."""
    path = Path(answers)
    found: dict[str, Path] = {}
    if path.is_dir():
        for f in sorted(path.rglob("*.py")):
            if f.name.startswith("_"):
                continue
            lvl = level or f.parent.name
            found[f"{lvl}/{f.stem}"] = f
    else:
        from kernel_gym.tasks import load_suite

        folder = ROOT / "solutions" / "ascend_sim" / answers
        for t in load_suite(answers):
            f = folder / f"{t.id.split('/')[-1]}.py"
            if f.is_file():
                found[t.id] = f
    if tasks:
        found = {k: v for k, v in found.items() if k in tasks or k.split("/")[-1] in tasks}
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--answers", required=True, help="a directory of answers, or a suite (level1) of ascend_sim solutions"
    )
    ap.add_argument("--tasks", nargs="*", help="task ids (or their names) to keep")
    ap.add_argument("--level", help="the level of answers in a flat directory")
    ap.add_argument("--answer-format", default="python", choices=("python", "six_string"))
    ap.add_argument("--soc", default="Ascend910B2")
    args = ap.parse_args(argv)

    from kernel_gym.backends import BackendUnavailable, get_backend

    npu = get_backend("ascend_npu")
    npu.configure({"soc": args.soc})
    try:
        npu.check_available()
    except BackendUnavailable as exc:
        print(f"calibrate_npu: {exc}", file=sys.stderr)
        return 2

    from kernel_gym.tasks import get_task
    from kernel_gym.verify import verify

    found = collect_answers(args.answers, args.level, args.tasks)
    if not found:
        print(f"calibrate_npu: no answers found for {args.answers!r}", file=sys.stderr)
        return 1
    latency: dict[str, dict[str, float]] = {"ascend_sim": {}, "ascend_npu": {}}
    for task_id, f in found.items():
        task = get_task(task_id)
        source = f.read_text()
        for backend in latency:
            r = verify(
                task,
                source,
                backend=backend,
                answer_format=args.answer_format,
                backend_options={"soc": args.soc},
            )
            if r.feasible and r.latency_s:
                latency[backend][task_id] = float(r.latency_s)
            else:
                print(f"# {task_id} on {backend}: {r.error_class}: {str(r.message)[:160]}")
    print(format_table(rank_correlation_table(latency["ascend_sim"], latency["ascend_npu"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
