"""Benchmark of the verification pipeline, per task category, on the reference answers.

    python -m experiments.bench_verify [--backend cpu] [--timing-trials 20]
    python -m experiments.bench_verify --throughput [--workers 1,2,4] [--backends cpu,ascend_sim] [--jobs 24]

Columns (medians over the category's answers, seconds):
- cold: first verification with empty caches (g++ compile + 5 correctness trials + timing);
- compile: the build stage of the cold run (answer module exec, g++, model construction);
- warm: verification with the compiled library cached but the result cache off;
- cached: a result-cache hit;
- sandbox: warm wall time minus the time spent inside the worker (fork from the zygote,
  job and result files, process teardown); ``spawn sandbox`` below is the same with a fresh
  interpreter per job (KERNEL_GYM_SANDBOX=spawn).

``--throughput``: verifications per second with 1, 2, 4 workers, a local process pool (each worker
a process with its own sandboxed verification server, as ``LocalVerifier`` has in one process) vs
``RayVerifier`` on a local Ray cluster started by the script (one actor per worker). Jobs are the
backend's reference answers, compiled beforehand (compile cache warm) and verified with the result
cache off, with the settings of ``conf/backend/<backend>.yaml``; each pool is warmed (its workers'
sandbox servers started) before the clock starts. "Ray overhead" = per-verification worker time on
Ray minus that of the local pool (``workers / throughput``, Ray minus local), at the same count.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from experiments.metrics import median_or_nan
from kernel_gym.tasks import get_task
from kernel_gym.verify import verify
from solutions import available_answers, reference_answer

CONF = Path(__file__).resolve().parent.parent / "conf" / "backend"


def backend_settings(backend: str) -> dict[str, Any]:
    """The verification settings a run uses for ``backend`` (conf/backend/<backend>.yaml), result cache off."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.load(CONF / f"{backend}.yaml"))
    assert isinstance(cfg, dict)
    return {**cfg["verify"], "use_cache": False}


def _pool_verify(job: Any) -> str:
    """One job in a pool worker (module level: the pool pickles it by name)."""
    from kernel_gym.verify.pipeline import verify

    return verify(job.task, job.answer_source, job.backend, **dict(job.settings)).error_class


def throughput(args: argparse.Namespace) -> None:
    """Verifications/s with 1, 2, 4 workers: local process pool vs Ray actors (see the module docstring)."""
    import ray

    from kernel_gym.native import cache_root
    from kernel_gym.verify.ray_verifier import RayVerifier
    from kernel_gym.verify.verifiers import VerifyJob

    workers = [int(w) for w in args.workers.split(",")]
    max_workers = max(workers)
    # one local cluster for the whole benchmark, with a logical CPU per actor of the largest pool
    ray.init(
        num_cpus=max_workers,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"KERNEL_GYM_CACHE": str(cache_root())}},
    )
    rows = []
    for backend in args.backends.split(","):
        settings = backend_settings(backend)
        ids = available_answers(backend)[: args.answers]
        jobs = []
        for task_id in ids:
            task, answer = get_task(task_id), reference_answer(task_id, backend)
            assert answer is not None, task_id
            first = verify(task, answer, backend=backend, **settings)  # compiles: the compile cache is warm after
            assert first.feasible, (task_id, first.summary())
            jobs.append(VerifyJob(task, answer, backend, settings))
        batch = [jobs[i % len(jobs)] for i in range(args.jobs)]
        for n in workers:
            # local pool: n processes, each with its own verification server
            with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn")) as pool:
                list(pool.map(_pool_verify, [jobs[i % len(jobs)] for i in range(n)]))  # start + warm every worker
                list(pool.map(_pool_verify, [jobs[i % len(jobs)] for i in range(2 * n)]))
                t0 = time.perf_counter()
                local = list(pool.map(_pool_verify, batch))
                local_s = time.perf_counter() - t0
            verifier = RayVerifier(num_workers=n)
            try:
                verifier.verify_many([jobs[i % len(jobs)] for i in range(2 * n)])  # actors started and warm
                t0 = time.perf_counter()
                on_ray = verifier.verify_many(batch)
                ray_s = time.perf_counter() - t0
            finally:
                verifier.close()
            assert [r.error_class for r in on_ray] == local == ["ok"] * len(batch), (local, on_ray)
            rows.append((backend, n, len(batch), len(batch) / local_s, len(batch) / ray_s, local_s, ray_s))
            print(f"done {backend} x {n} workers", flush=True, file=sys.stderr)
    ray.shutdown()
    print(
        f"verification throughput: {args.jobs} jobs per cell over {args.answers} reference answers per backend, "
        f"compile cache warm, result cache off; cpu_count={os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.1f} at the end ({time.strftime('%Y-%m-%d')})\n"
    )
    print(
        "| backend | workers | jobs | local pool verif/s | Ray verif/s | local s/verif/worker | "
        "Ray s/verif/worker | Ray overhead ms/verif |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for backend, n, count, thr_local, thr_ray, _, _ in rows:
        per_local, per_ray = n / thr_local, n / thr_ray
        print(
            f"| {backend} | {n} | {count} | {thr_local:.2f} | {thr_ray:.2f} | {per_local:.3f} | {per_ray:.3f} | "
            f"{1000 * (per_ray - per_local):+.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--timing-trials", type=int, default=20)
    parser.add_argument("--throughput", action="store_true", help="local pool vs Ray, verifications/s")
    parser.add_argument("--workers", default="1,2,4", help="--throughput: worker counts")
    parser.add_argument("--backends", default="cpu,ascend_sim", help="--throughput: backends")
    parser.add_argument("--jobs", type=int, default=24, help="--throughput: verifications timed per cell")
    parser.add_argument("--answers", type=int, default=6, help="--throughput: reference answers per backend")
    args = parser.parse_args()
    if args.throughput:
        throughput(args)
        return
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
