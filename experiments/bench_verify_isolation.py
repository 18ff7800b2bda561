"""What verification isolation costs: wall time of one verification of an already compiled answer.

    python -m experiments.bench_verify_isolation [--repeats 7] [--answers 6]

For each backend (cpu, ascend_sim) it verifies a fixed set of the reference answers (one per
category, compile cache warm, result cache off, the same timing settings) ``--repeats`` times
and prints the median wall seconds per verification, in two child processes:

- ``isolated``: the default (judge and answer in separate processes, answer in the sandbox);
- ``off``: KERNEL_GYM_ISOLATION=off (the same processes, no namespaces, seccomp or rlimits).

``--measure`` runs one pass in this process and prints JSON; it uses only ``verify`` and the
reference answers, so the same file measures an older checkout of the package too (run it with
that checkout as the working directory), which is how the "before" column of
docs/benchmarks.md was taken.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETTINGS = dict(correctness_trials=3, timing_trials=5, warmup_runs=1)


def _pick(backend: str, count: int) -> list[str]:
    from kernel_gym.tasks import get_task
    from solutions import available_answers

    seen, picked = set(), []
    for task_id in available_answers(backend):
        category = get_task(task_id).category
        if category not in seen:
            seen.add(category)
            picked.append(task_id)
    return picked[:count]


def _answer(source: str | None, task_id: str) -> str:
    if source is None:
        raise LookupError(f"{task_id} has no reference answer")
    return source


def measure(backends: list[str], repeats: int, count: int) -> dict[str, dict[str, float]]:
    from kernel_gym.tasks import get_task
    from kernel_gym.verify import verify
    from solutions import reference_answer

    out: dict[str, dict[str, float]] = {}
    for backend in backends:
        tasks = [(get_task(t), _answer(reference_answer(t, backend), t)) for t in _pick(backend, count)]
        for task, answer in tasks:  # compile, start the worker pool: not measured
            first = verify(task, answer, backend=backend, use_cache=False, **SETTINGS)
            assert first.feasible, first.summary()
        per_task = {}
        for task, answer in tasks:
            walls = []
            for _ in range(repeats):
                start = time.perf_counter()
                r = verify(task, answer, backend=backend, use_cache=False, **SETTINGS)
                walls.append(time.perf_counter() - start)
                assert r.feasible, r.summary()
            per_task[task.id] = statistics.median(walls)
        out[backend] = per_task
    return out


def _child(mode: str, args: argparse.Namespace, cache: str) -> dict[str, dict[str, float]]:
    env = {**os.environ, "KERNEL_GYM_ISOLATION": mode, "KERNEL_GYM_CACHE": cache}
    cmd = [
        sys.executable,
        "-m",
        "experiments.bench_verify_isolation",
        "--measure",
        "--repeats",
        str(args.repeats),
        "--answers",
        str(args.answers),
        "--backends",
        *args.backends,
    ]
    print(f"[bench] {mode}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise SystemExit(f"the {mode} pass failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="verifications per answer (median taken)")
    parser.add_argument("--answers", type=int, default=6, help="answers per backend (one per category)")
    parser.add_argument("--backends", nargs="+", default=["cpu", "ascend_sim"])
    parser.add_argument("--measure", action="store_true", help="one pass in this process, JSON on stdout")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.backends, args.repeats, args.answers)))
        return
    with tempfile.TemporaryDirectory() as cache:
        runs = {mode: _child(mode, args, cache) for mode in ("off", "auto")}
    print(
        f"Median wall seconds per verification ({SETTINGS}, compile cache warm, result cache off, "
        f"{args.repeats} repeats)\n"
    )
    print("| backend | task | isolation off | isolated | added |")
    print("| --- | --- | ---: | ---: | ---: |")
    for backend in args.backends:
        for task_id, off in runs["off"][backend].items():
            on = runs["auto"][backend][task_id]
            print(f"| {backend} | {task_id} | {off:.3f} | {on:.3f} | {1000 * (on - off):+.0f} ms |")
        off_m = statistics.median(runs["off"][backend].values())
        on_m = statistics.median(runs["auto"][backend].values())
        print(f"| {backend} | **median** | {off_m:.3f} | {on_m:.3f} | {1000 * (on_m - off_m):+.0f} ms |")


if __name__ == "__main__":
    main()
