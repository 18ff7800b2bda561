"""How steady the cpu backend's speedup is: repeated verifications of the same answers, cache off.

    python -m experiments.bench_timing_noise                       # relu and matmul, 10 runs each
    python -m experiments.bench_timing_noise --runs 10 --load 2    # with 2 spinning processes

For each answer, ``--runs`` verifications with the result cache off (settings of
``conf/backend/cpu.yaml`` unless given), one after another in one verification server. The table
gives the speedups' median, min, max and spread (max / min), how many of the reported 95 %
intervals contain the median of the runs, how many converged (interval within +-5 % before the
timing budget ran out), the median interval width (high / low), paired rounds and timing seconds.
The load average (1 min, ``os.getloadavg``) before and after each answer is printed beside it: the
target (spread <= 1.10, every interval holding the median) is for an idle machine.

``--load N`` starts N processes that spin for the whole run (a loaded machine): the intervals
should widen or say ``converged=False``, not shrink around a wrong value.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from typing import Any

from kernel_gym.tasks import get_task
from kernel_gym.verify import verify
from solutions import reference_answer

DEFAULT_ANSWERS = ("level1/021_relu", "level1/074_matmul_square")


def _spin() -> None:
    while True:
        pass


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    from experiments.bench_verify import backend_settings

    settings = backend_settings("cpu")  # the result cache is off there
    if args.timing_trials is not None:
        settings["timing_trials"] = args.timing_trials
    if args.budget is not None:
        settings["timing_budget_s"] = args.budget
    return settings


def measure(task_id: str, runs: int, settings: dict[str, Any]) -> dict[str, Any]:
    task, answer = get_task(task_id), reference_answer(task_id, "cpu")
    if answer is None:
        raise SystemExit(f"no cpu answer for {task_id} in solutions/cpu")
    load_before = os.getloadavg()[0]
    results = []
    for _ in range(runs):
        r = verify(task, answer, "cpu", **settings)
        if r.error_class != "ok":
            raise SystemExit(f"{task_id}: {r.error_class}: {r.message}")
        results.append(r)
    speedups = [float(r.speedup) for r in results if r.speedup is not None]
    med = statistics.median(speedups)
    cis = [r.speedup_ci for r in results if r.speedup_ci is not None]
    paired = [r.details["answer_timing"].get("paired") or {} for r in results]
    return {
        "task": task_id,
        "median": med,
        "min": min(speedups),
        "max": max(speedups),
        "spread": max(speedups) / min(speedups),
        "holding": sum(1 for lo, hi in cis if lo <= med <= hi),
        "intervals": len(cis),
        "converged": sum(1 for r in results if r.timing_converged),
        "width": statistics.median(hi / lo for lo, hi in cis) if cis else float("nan"),
        "rounds": statistics.median(p.get("rounds", 0) for p in paired),
        "seconds": statistics.median(p.get("seconds", 0.0) for p in paired),
        "load": (load_before, os.getloadavg()[0]),
        "speedups": speedups,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", default=",".join(DEFAULT_ANSWERS), help="task ids with a cpu answer, comma-separated")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--timing-trials", type=int, default=None, help="least paired rounds (default: conf)")
    ap.add_argument("--budget", type=float, default=None, help="timing_budget_s (default: the setting's)")
    ap.add_argument("--load", type=int, default=0, help="spinning processes during the run")
    args = ap.parse_args(argv)
    settings = _settings(args)
    spinners = [multiprocessing.get_context("spawn").Process(target=_spin, daemon=True) for _ in range(args.load)]
    for p in spinners:
        p.start()
    started = time.perf_counter()
    try:
        rows = [measure(t, args.runs, settings) for t in args.answers.split(",")]
    finally:
        for p in spinners:
            p.kill()
            p.join()
    print(
        f"cpu backend, {args.runs} verifications per answer, result cache off, spinners: {args.load}, "
        f"cores: {os.cpu_count()}, settings: timing_trials={settings.get('timing_trials', 20)} "
        f"timing_budget_s={settings.get('timing_budget_s', 5.0)}"
    )
    print()
    print(
        "| answer | median | min | max | max/min | intervals holding the median | converged | "
        "median width hi/lo | median rounds | median timing s | load avg before / after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['task']} | {r['median']:.3f} | {r['min']:.3f} | {r['max']:.3f} | {r['spread']:.3f} | "
            f"{r['holding']}/{r['intervals']} | {r['converged']}/{args.runs} | {r['width']:.3f} | "
            f"{r['rounds']:.0f} | {r['seconds']:.2f} | {r['load'][0]:.2f} / {r['load'][1]:.2f} |"
        )
    print()
    for r in rows:
        print(f"{r['task']} speedups: " + " ".join(f"{s:.3f}" for s in r["speedups"]))
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
