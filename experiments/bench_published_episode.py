"""Host seconds per verification of an env episode whose reward is at KernelBench's published shapes.

    python -m experiments.bench_published_episode --kernelbench <KernelBench checkout>   # 4 level-1 tasks
    python -m experiments.bench_published_episode --kernelbench <dir> --tasks 19_ReLU 23_Softmax --steps 2

Each task: a KernelBench level-1 file loaded with ``shrink=True`` (``tasks=kernelbench
tasks.shrink=true``: a simulation-scale source and the published one), a ``KernelBench-Ascend-v0``
env (``KernelSynthesisEnv``, backend ascend_sim, the synthetic coder, ``reward_shapes="published"``,
the default) on that one task, ``--steps`` steps with a fresh
memory store and the verifier's result cache off, so every step verifies its answer: in full at
simulation scale, then at the task's published shapes under sampled simulation (lazy inputs,
block and loop sampling) where the answer is correct. The table gives, per step, the outcome, the
wall seconds of verification (``info["timing"]["verify_s"]``; the verifier's worker processes
outlive the step, so their CPU time is not separable here: the load average is printed beside),
whether the reward came from the published-shape run, and its latency and bracket. Target (issue 27): <= 30 s
per verification on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernel_gym.envs import KernelSynthesisEnv  # noqa: E402
from kernel_gym.memory import MemoryStore  # noqa: E402
from kernel_gym.tasks import TaskSpec, load_kernelbench_dir  # noqa: E402

TASKS = ["19_ReLU", "23_Softmax", "47_Sum_reduction_over_a_dimension", "41_Max_Pooling_1D"]


def run_task(spec: TaskSpec, steps: int, workdir: Path, seed: int) -> list[dict[str, Any]]:
    task = spec.id.rsplit("/", 1)[-1]
    store = MemoryStore(workdir / f"{task}.db")
    env = KernelSynthesisEnv(
        tasks=[spec],
        task_stream="single",
        budget=steps + 1,
        memory=store,
        generator="synthetic",
        verify_settings={"use_cache": False},
    )
    rows = []
    try:
        env.reset(seed=seed)
        for step in range(steps):
            t0 = time.perf_counter()
            _, reward, _, _, info = env.step({"select": [1] * env.k, "parent": 0})
            wall = time.perf_counter() - t0
            basis = info.get("reward_basis") or {}
            pub = (((info.get("verifier") or {}).get("details") or {}).get("published")) or {}
            rows.append(
                {
                    "task": task,
                    "step": step,
                    "outcome": str(info.get("outcome", "")),
                    "verify_s": float(info["timing"]["verify_s"]),
                    "step_s": wall,
                    "shapes": basis.get("shapes", ""),
                    "fallback": basis.get("fallback", "") or "",
                    "latency_s": basis.get("latency_s") if basis.get("shapes") == "published" else None,
                    "bracket": basis.get("latency_bracket_s"),
                    "blocks": _blocks(pub),
                    "loop_sampled": pub.get("loop_sampled_blocks"),
                    "reward": float(reward),
                }
            )
    finally:
        env.close()
        store.close()
    return rows


def _blocks(pub: dict[str, Any]) -> str:
    run, skipped = pub.get("blocks_run"), pub.get("blocks_skipped")
    return f"{run} of {run + (skipped or 0)}" if isinstance(run, int) else ""


def _fmt_us(x: Any) -> str:
    return f"{x * 1e6:.1f}" if isinstance(x, (int, float)) else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernelbench", required=True, type=Path, help="a KernelBench checkout (holding level1/)")
    ap.add_argument("--tasks", nargs="+", default=TASKS, help="level-1 file names without .py")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    found = {t.id.rsplit("/", 1)[-1]: t for t in load_kernelbench_dir(args.kernelbench, 1, shrink=True).tasks}
    missing = [t for t in args.tasks if t not in found]
    if missing:
        raise SystemExit(f"not among the level-1 files of {args.kernelbench}: {', '.join(missing)}")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as d:
        for task in args.tasks:
            print(f"{task}: {args.steps} steps ...", file=sys.stderr, flush=True)
            rows += run_task(found[task], args.steps, Path(d), args.seed)
    print(
        "| task | step | outcome | verify wall (s) | reward shapes | published latency (us) "
        "| bracket (us) | blocks run | loop-sampled blocks |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        br = r["bracket"] if isinstance(r["bracket"], list) and len(r["bracket"]) == 2 else None
        bracket = f"{_fmt_us(br[0])} to {_fmt_us(br[1])}" if br else ""
        shapes = r["shapes"] + (f" ({r['fallback']})" if r["fallback"] else "")
        print(
            f"| {r['task']} | {r['step']} | {r['outcome']} | {r['verify_s']:.1f} | {shapes} | "
            f"{_fmt_us(r['latency_s'])} | {bracket} | {r['blocks']} | "
            f"{'' if r['loop_sampled'] is None else r['loop_sampled']} |"
        )
    walls = sorted(r["verify_s"] for r in rows)
    if rows:
        p95 = walls[min(len(walls) - 1, int(0.95 * len(walls)))]
        print(
            f"verifications {len(rows)}: wall median {statistics.median(walls):.1f} s, p95 {p95:.1f} s, "
            f"max {walls[-1]:.1f} s; load average {os.getloadavg()[0]:.1f}"
        )
    print("target: <= 30 s per verification on 2 cores (issue 27)")


if __name__ == "__main__":
    main()
