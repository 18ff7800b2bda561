"""Benchmark of the verification pipeline, per task category, on the reference answers.

    python -m experiments.bench_verify [--backend cpu] [--timing-trials 20]

Columns (medians over the category's answers, seconds):
- cold: first verification with empty caches (g++ compile + 5 correctness trials + timing);
- compile: the build stage of the cold run (answer module exec, g++, model construction);
- warm: verification with the compiled library cached but the result cache off;
- cached: a result-cache hit;
- sandbox: warm wall time minus the time spent inside the worker (fork from the zygote,
  job and result files, process teardown); ``spawn sandbox`` below is the same with a fresh
  interpreter per job (KERNEL_GYM_SANDBOX=spawn).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict

from experiments.metrics import median_or_nan
from kernel_gym.tasks import get_task
from kernel_gym.verify import verify
from solutions import available_answers, reference_answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--timing-trials", type=int, default=20)
    args = parser.parse_args()
    settings = dict(timing_trials=args.timing_trials)
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["KERNEL_GYM_CACHE"] = cache  # cold: nothing compiled, nothing cached
        ids = available_answers(args.backend)
        # start the sandbox's zygote outside the measurements (an answer without ModelNew)
        verify(get_task(ids[0]), "import torch\n", backend=args.backend, use_cache=False)
        for task_id in ids:
            task, answer = get_task(task_id), reference_answer(task_id, args.backend)
            assert answer is not None, task_id  # ids come from available_answers
            cold = verify(task, answer, backend=args.backend, **settings)
            cached = verify(task, answer, backend=args.backend, **settings)
            warm = verify(task, answer, backend=args.backend, use_cache=False, **settings)
            assert cold.feasible and cached.cached, (task_id, cold.summary())
            r = rows[task.category]
            r["cold"].append(cold.verify_seconds)
            r["compile"].append(cold.details["stage_seconds"].get("build", float("nan")))
            r["warm"].append(warm.verify_seconds)
            r["cached"].append(cached.verify_seconds)
            r["sandbox"].append(warm.verify_seconds - warm.details["worker_seconds"])
            assert warm.speedup is not None, (task_id, warm.summary())
            r["speedup"].append(warm.speedup)
        os.environ["KERNEL_GYM_SANDBOX"] = "spawn"
        spawn = []
        for task_id in ids[:3]:
            answer = reference_answer(task_id, args.backend)
            assert answer is not None, task_id
            res = verify(
                get_task(task_id),
                answer,
                backend=args.backend,
                use_cache=False,
                **settings,
            )
            spawn.append(res.verify_seconds - res.details["worker_seconds"])
        os.environ.pop("KERNEL_GYM_SANDBOX")
    print(
        f"backend={args.backend}  answers={len(ids)}  timing_trials={args.timing_trials}  "
        f"cpu_count={os.cpu_count()}  ({time.strftime('%Y-%m-%d')})\n"
    )
    print("| category | answers | cold s | compile s | warm s | cached s | sandbox s | speedup (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for category in sorted(rows):
        r = rows[category]
        print(
            f"| {category} | {len(r['cold'])} | {median_or_nan(r['cold']):.3f} | {median_or_nan(r['compile']):.3f} | "
            f"{median_or_nan(r['warm']):.3f} | {median_or_nan(r['cached']):.4f} | {median_or_nan(r['sandbox']):.3f} | "
            f"{median_or_nan(r['speedup']):.2f}x |"
        )
    print(f"\nspawn sandbox (fresh interpreter per job), median over {len(spawn)}: {median_or_nan(spawn):.3f} s")


if __name__ == "__main__":
    main()
