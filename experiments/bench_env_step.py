"""Env step overhead, excluding generation and verification, at several memory sizes.

    python experiments/bench_env_step.py                 # sizes 1k, 10k, 100k items
    python experiments/bench_env_step.py --sizes 1000 --steps 100

Each size: a store filled with random items (random unit embeddings, the kinds and task ids of a
grown memory) plus the seed knowledge; a KernelBench-Ascend-v0 env on level1/021_relu with a
FixedGenerator (generation ~0) and the verifier's result cache warm (verification ~ms, and
excluded anyway). Overhead = step wall time - generation - verification: decoding the action,
reading the parent, writing trace + experience, use counts, re-recall of K candidates with the
task-slot recall, features, info. Target (issue 4): <= 20 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernel_gym.envs import KernelSynthesisEnv  # noqa: E402
from kernel_gym.llm.fixed import FixedGenerator  # noqa: E402
from kernel_gym.memory import ITEM_KINDS, MemoryItem, MemoryStore  # noqa: E402
from solutions import reference_answer  # noqa: E402

TASK = "level1/021_relu"


def fill(store: MemoryStore, n: int, seed: int = 0, batch: int = 10_000) -> None:
    rng = np.random.default_rng(seed)
    kinds = [k for k in ITEM_KINDS if k != "api_template"]
    for start in range(0, n, batch):
        m = min(batch, n - start)
        vecs = rng.standard_normal((m, store.embedder.dim), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        items = [
            MemoryItem(
                kind=kinds[int(k)],
                text=f"filler {start + i}",
                title=f"filler {start + i}",
                task_id=f"level1/{int(t):03d}_x",
                level=1,
                category="elementwise",
                backend="ascend_sim",
                payload={"feasible": bool(t % 2), "speedup": 1.0 + (t % 7) / 3},
            )
            for i, (k, t) in enumerate(zip(rng.integers(len(kinds), size=m), rng.integers(200, size=m), strict=True))
        ]
        store.add(items, embeddings=vecs)


def bench(n: int, steps: int, workdir: Path) -> dict:
    path = workdir / f"env_{n}.db"
    store = MemoryStore(path)
    fill(store, n)
    store.save_index(force=True)
    good = reference_answer(TASK, "ascend_sim")
    assert good is not None, TASK
    env = KernelSynthesisEnv(
        tasks=[TASK],
        task_stream="single",
        budget=steps + 1,
        memory=store,
        generator=FixedGenerator([good]),
        verify_settings={"correctness_trials": 2, "timing_trials": 3},
    )
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.step({"select": np.ones(env.k, np.int8), "parent": 0})  # warm the verifier cache
    over, total, reset_t = [], [], []
    for _ in range(steps):
        a = {"select": (rng.random(env.k) < 0.3).astype(np.int8), "parent": int(rng.integers(env.p + 1))}
        t0 = time.perf_counter()
        _, _, _, _, info = env.step(a)
        total.append(time.perf_counter() - t0)
        over.append(info["timing"]["overhead_s"])
    t0 = time.perf_counter()
    env.reset()
    reset_t.append(time.perf_counter() - t0)
    env.close()
    store.close()
    return {
        "n": len(MemoryStore(path)),
        "median_ms": 1e3 * statistics.median(over),
        "p95_ms": 1e3 * sorted(over)[int(0.95 * (len(over) - 1))],
        "step_ms": 1e3 * statistics.median(total),
        "reset_ms": 1e3 * reset_t[0],
        "load": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in args.sizes:
            print(f"filling {n} items and stepping {args.steps} times ...", file=sys.stderr, flush=True)
            rows.append(bench(n, args.steps, Path(d)))
    print("| memory items | step overhead median (ms) | p95 (ms) | whole step median (ms) | reset (ms) | load avg |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | {r['step_ms']:.1f} | {r['reset_ms']:.1f} | "
            f"{r['load']:.2f} |"
        )
    print("target: step overhead <= 20 ms (issue 4)")


if __name__ == "__main__":
    main()
