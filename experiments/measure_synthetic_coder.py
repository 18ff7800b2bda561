"""Compile and correctness rate of the synthetic coder on level1 under three memories.

    python -m experiments.measure_synthetic_coder [--tasks N] [--backend ascend_sim] [--k 6]

Conditions (one drafting generation per task each, same coder seed and request seed):
1. ``empty``: no memory in the context.
2. ``seed``: the k items most similar to the task (``store.recall(task_query_text(task), k)``)
   from a store holding the seed knowledge M0 only.
3. ``seed+exp``: the same recall from a store holding M0 plus the experiences of a previous pass;
   the previous pass is pass 2 itself, written with ``write_step`` exactly as the environment does.

Prints a rates table (compile rate, correctness = feasible rate, mean speedup of the feasible
kernels) and the error classes per condition. The synthetic coder is a stand-in for testing and
cheap ablations; these numbers say nothing about LLMs.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import sys
import tempfile
import time
from typing import Any

from tqdm import tqdm

from kernel_gym.envs.experience import task_query_text, write_step
from kernel_gym.llm.base import GenerationRequest
from kernel_gym.llm.synthetic import SyntheticCoder
from kernel_gym.memory import MemoryStore, load_seed_knowledge
from kernel_gym.tasks import load_suite
from kernel_gym.verify import verify


def run_pass(
    name: str,
    tasks: list,
    coder: SyntheticCoder,
    backend: str,
    store: MemoryStore | None,
    k: int,
    request_seed: int,
    write_to: MemoryStore | None = None,
    settings: dict[str, Any] | None = None,
) -> list[dict]:
    """Generate and verify one drafting kernel per task; optionally write each step to memory."""
    rows = []
    for task in tqdm(tasks, desc=name, file=sys.stderr, leave=False):
        mems = [it for it, _ in store.recall(task_query_text(task), k=k)] if store is not None else []
        req = GenerationRequest(task=task, backend=backend, stage="drafting", memories=mems, step=0, seed=request_seed)
        gen = coder.generate(req)
        res = verify(task, gen.source, backend=backend, **(settings or {}))
        vd = res.to_dict()
        rows.append(
            {
                "task": task.id,
                "compiled": bool(res.compiled),
                "feasible": bool(res.feasible),
                "error_class": res.error_class,
                "speedup": res.speedup if res.feasible else None,
                "faults": gen.notes.get("faults"),
                "unsupported": gen.notes.get("unsupported"),
            }
        )
        if write_to is not None:
            reward = 1.0 if res.feasible else -1.0
            write_step(
                write_to,
                task,
                backend,
                stage="drafting",
                code=gen.source,
                verifier=vd,
                reward=reward,
                context_ids=[int(m.id) for m in mems if m.id is not None],
                parent_id=None,
                episode=f"measure-{name}",
                step=0,
            )
    return rows


def summary(rows: list[dict]) -> dict[str, Any]:
    n = len(rows)
    sp = [r["speedup"] for r in rows if r["speedup"]]
    return {
        "n": n,
        "compile": sum(r["compiled"] for r in rows) / max(n, 1),
        "correct": sum(r["feasible"] for r in rows) / max(n, 1),
        "speedup": (sum(sp) / len(sp)) if sp else float("nan"),
        "errors": collections.Counter(r["error_class"] for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=0, help="first N tasks of level1 (0 = all 99)")
    ap.add_argument("--backend", default="ascend_sim", choices=["ascend_sim", "cpu"])
    ap.add_argument("--suite", default="level1")
    ap.add_argument("--k", type=int, default=6, help="context size: items recalled per task")
    ap.add_argument("--seed", type=int, default=0, help="coder seed")
    ap.add_argument("--request-seed", type=int, default=0)
    ap.add_argument("--correctness-trials", type=int, default=2)
    ap.add_argument("--timing-trials", type=int, default=3)
    ap.add_argument("--every", type=int, default=1, help="take every n-th task (spread a subset over categories)")
    args = ap.parse_args(argv)

    tasks = load_suite(args.suite)[:: max(1, args.every)]
    if args.tasks:
        tasks = tasks[: args.tasks]
    settings = {"correctness_trials": args.correctness_trials, "timing_trials": args.timing_trials}
    coder = SyntheticCoder(seed=args.seed)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="kg_synth_") as tmp:
        seed_store = MemoryStore(os.path.join(tmp, "seed.db"))
        load_seed_knowledge(seed_store, backend=args.backend)
        exp_store = MemoryStore(os.path.join(tmp, "exp.db"))
        load_seed_knowledge(exp_store, backend=args.backend)
        results = {}
        results["empty"] = run_pass(
            "empty", tasks, coder, args.backend, None, args.k, args.request_seed, settings=settings
        )
        # the seed pass is also the "previous pass" whose experiences go into exp_store
        results["seed"] = run_pass(
            "seed",
            tasks,
            coder,
            args.backend,
            seed_store,
            args.k,
            args.request_seed,
            write_to=exp_store,
            settings=settings,
        )
        results["seed+exp"] = run_pass(
            "seed+exp", tasks, coder, args.backend, exp_store, args.k, args.request_seed, settings=settings
        )
        seed_store.close()
        exp_store.close()
    print(
        f"# synthetic coder on {args.suite} ({len(tasks)} tasks), backend {args.backend}, k={args.k}, "
        f"seed {args.seed}, {time.time() - t0:.0f} s"
    )
    print("| memory | compile rate | correct rate | mean speedup (feasible) | top error classes |")
    print("|---|---|---|---|---|")
    sums = {}
    for name, rows in results.items():
        s = summary(rows)
        sums[name] = s
        errs = ", ".join(f"{e} {c}" for e, c in s["errors"].most_common(4))
        print(f"| {name} | {s['compile']:.1%} | {s['correct']:.1%} | {s['speedup']:.2f} | {errs} |")
    by_cat: dict[str, dict[str, list[bool]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    cat_of = {t.id: t.category for t in tasks}
    for name, rows in results.items():
        for r in rows:
            by_cat[cat_of[r["task"]]][name].append(r["feasible"])
    print("\n| category | " + " | ".join(f"correct ({n})" for n in results) + " |")
    print("|---|" + "---|" * len(results))
    for cat in sorted(by_cat):
        cells = " | ".join(f"{sum(v)}/{len(v)}" for v in (by_cat[cat][n] for n in results))
        print(f"| {cat} | {cells} |")
    order = [sums[n]["compile"] for n in results], [sums[n]["correct"] for n in results]
    rising = all(a < b for a, b in itertools.pairwise(order[1])) and all(a < b for a, b in itertools.pairwise(order[0]))
    print(f"\nrates rise empty < seed < seed+exp: {'yes' if rising else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
