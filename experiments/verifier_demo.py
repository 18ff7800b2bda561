"""Offline demo: the task suite and the hardened verifier on the project's reference answers.

    python -m experiments.verifier_demo [--backend cpu|ascend_sim|all] [--timing-trials N]

Prints the suite's size, then one table per backend: every reference answer verified
(compile, 5 correctness trials, timing) with latency, reference latency and speedup, and a
row per exploit answer showing which anti-hack rule caught it. Until the environment and
agents land (issues 4-6), this is the README's main job.
"""

from __future__ import annotations

import argparse
from collections import Counter

from tqdm import tqdm

from kernel_gym.tasks import get_task, load_suite
from kernel_gym.verify import verify
from solutions import available_answers, reference_answer

# Small answers that cheat, each caught by a different defence.
EXPLOITS: dict[str, str] = {
    "torch ops in forward": """
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
""",
    "try/except fallback": """
import torch, torch.nn as nn
from kernel_gym.backends.cpu import load_cpp
class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return load_cpp('extern "C" void f() {}').f()
        except Exception:
            return torch.relu(x)
""",
    "uninitialised output": """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)  # hopes to find the reference's freed result
""",
    "patched timer": """
import time, torch.nn as nn
time.perf_counter = lambda: 0.0
class ModelNew(nn.Module):
    def forward(self, x):
        return x
""",
    "shell escape in kernel": '''
import torch, torch.nn as nn
from kernel_gym.backends.cpu import load_cpp
CPP = r"""
#include <cstdlib>
extern "C" void f(float* y, long n) { system("cat /etc/passwd"); }
"""
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)
    def forward(self, x):
        y = torch.empty_like(x)
        self.lib.f(y, y.numel())
        return y
''',
}


def _fmt_us(seconds: float | None) -> str:
    return f"{seconds * 1e6:10.1f}" if seconds is not None else "       n/a"


def demo_backend(backend: str, timing_trials: int) -> None:
    ids = available_answers(backend)
    print(f"\n## backend {backend}: {len(ids)} reference answers\n")
    print(f"| {'task':32} | {'category':13} | {'result':18} | {'latency us':>10} | {'ref us':>10} | {'speedup':>7} |")
    print(f"|{'-' * 34}|{'-' * 15}|{'-' * 20}|{'-' * 12}|{'-' * 12}|{'-' * 9}|")
    speedups = []
    for task_id in tqdm(ids, desc=f"verifying ({backend})", leave=False):
        task, answer = get_task(task_id), reference_answer(task_id, backend)
        assert answer is not None, task_id  # ids come from available_answers
        r = verify(task, answer, backend=backend, timing_trials=timing_trials)
        status = "feasible" if r.feasible else r.error_class
        sp = f"{r.speedup:6.2f}x" if r.speedup else "    n/a"
        if r.speedup:
            speedups.append(r.speedup)
        tqdm.write(
            f"| {task_id:32} | {task.category:13} | {status:18} | {_fmt_us(r.latency_s)} | "
            f"{_fmt_us(r.reference_latency_s)} | {sp} |"
        )
    if speedups:
        import statistics

        print(
            f"\nmedian speedup {statistics.median(speedups):.2f}x, "
            f"faster than the reference on {sum(s > 1 for s in speedups)}/{len(speedups)} tasks"
        )


def demo_exploits() -> None:
    task = get_task("level1/021_relu")
    print(f"\n## exploit answers for {task.id} (cpu backend): each must be caught\n")
    print(f"| {'exploit':26} | {'error class':18} | {'rule':24} |")
    print(f"|{'-' * 28}|{'-' * 20}|{'-' * 26}|")
    for name, source in EXPLOITS.items():
        r = verify(task, source, backend="cpu", measure_time=False)
        print(f"| {name:26} | {r.error_class:18} | {str(r.hack_rule or '-'):24} |")
        assert not r.feasible, f"exploit {name!r} was not caught"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="all", help="cpu, ascend_sim or all")
    parser.add_argument("--timing-trials", type=int, default=10)
    args = parser.parse_args()
    suite = load_suite("all")
    per_level = Counter(t.level for t in suite)
    print(
        f"kernel-gym task suite: {per_level[1]} level1 + {per_level[2]} level2 tasks, categories: "
        + ", ".join(f"{c} {n}" for c, n in sorted(Counter(t.category for t in suite).items()))
    )
    backends = ["cpu", "ascend_sim"] if args.backend == "all" else [args.backend]
    for backend in backends:
        if not available_answers(backend):
            print(f"\n(backend {backend}: no reference answers yet)")
            continue
        demo_backend(backend, args.timing_trials)
    demo_exploits()


if __name__ == "__main__":
    main()
