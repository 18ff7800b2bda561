"""Simulated latency of the ascend_sim reference answers: naive (every task) against optimised
(multi-block, double-buffered, fused; where written) against the eager-PyTorch reference estimate.

    .venv/bin/python -m experiments.bench_ascend_answers [task id substring ...]
"""

from __future__ import annotations

import sys

from kernel_gym.tasks import get_task
from kernel_gym.verify import verify
from solutions import available_answers, reference_answer


def _run(task_id: str, folder: str):
    answer = reference_answer(task_id, folder)
    if answer is None:
        raise RuntimeError(f"{task_id} ({folder}): no reference answer")
    r = verify(
        get_task(task_id),
        answer,
        backend="ascend_sim",
        use_cache=False,
        timing_trials=1,
        warmup_runs=0,
    )
    if not r.feasible:
        raise RuntimeError(f"{task_id} ({folder}): {r.error_class}: {r.message}")
    return r


def main(filters: list[str]) -> int:
    tasks = [t for t in available_answers("ascend_sim_naive") if not filters or any(f in t for f in filters)]
    print("| task | naive (us) | optimised (us) | eager ref. estimate (us) | opt. vs naive | opt. vs ref. |")
    print("|---|---:|---:|---:|---:|---:|")
    failed = 0
    for t in tasks:
        try:
            _row(t)
        except RuntimeError as e:  # one broken answer is reported, the table goes on
            failed += 1
            print(f"| {t} | FAILED: {str(e).splitlines()[0][:160]} | | | | |", flush=True)
    return 1 if failed else 0


def _row(t: str) -> None:
    n = _run(t, "ascend_sim_naive")
    ref = n.reference_latency_s
    if reference_answer(t, "ascend_sim") is None:
        print(
            f"| {t} | {n.latency_s * 1e6:.1f} | - | {ref * 1e6:.2f} | - | {ref / n.latency_s:.2f}x (naive) |",
            flush=True,
        )
        return
    o = _run(t, "ascend_sim")
    print(
        f"| {t} | {n.latency_s * 1e6:.1f} | {o.latency_s * 1e6:.2f} | {ref * 1e6:.2f} | "
        f"{n.latency_s / o.latency_s:.1f}x | {ref / o.latency_s:.2f}x |",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
