"""Peak memory and wall time of one verification of a large elementwise task (cpu backend).

At KernelBench's published shapes one level-1 input is 6-16 GiB; this measures what the judge holds
for such a task, scaled to the machine: a ReLU task of ``--gib`` GiB of input, the repository's ReLU
answer, one verification each. Prints a markdown table: input size, whether timing ran, the judge's
peak resident memory (the verification server's process, sampled every 50 ms), that peak as a
multiple of the input, the machine's peak memory in use above the start, and the wall time.

    python -m experiments.bench_judge_memory --gib 0.5 2 --no-timing
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn({rows}, 65536)]


def get_init_inputs():
    return []
"""


def _in_use() -> int:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) * 1024


def _server_rss() -> int:
    """Largest resident size among this process's verification server and the judges it forks."""
    parent, rss = {}, {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"kernel_gym.verify.zygote" not in (proc / "cmdline").read_bytes():
                continue
            fields = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue
        parent[int(proc.name)] = int(fields["PPid"])
        rss[int(proc.name)] = int(fields["VmRSS"].split()[0]) * 1024

    def ours(pid: int) -> bool:
        while pid in parent:
            pid = parent[pid]
            if pid == os.getpid():
                return True
        return False

    return max((r for pid, r in rss.items() if ours(pid)), default=0)


def measure(gib: float, timing: bool) -> tuple[float, float, float, float]:
    from kernel_gym.tasks.spec import TaskSpec
    from kernel_gym.verify import verify

    rows = max(1, int(gib * 2**30) // 4 // 65536)
    task = TaskSpec(id="bench/relu_large", level=1, category="bench", dtype="float32", source=TASK.format(rows=rows))
    answer = (ROOT / "solutions/cpu/level1/021_relu.py").read_text()
    base, peak = _in_use(), {"server": 0, "machine": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak["server"] = max(peak["server"], _server_rss())
            peak["machine"] = max(peak["machine"], _in_use() - base)
            time.sleep(0.05)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    limit_mb = 4096 + int(6 * gib * 1024)  # the runner maps the shared buffer of inputs and output
    result = verify(
        task, answer, backend="cpu", use_cache=False, measure_time=timing, timing_trials=5,
        timeout_s=1800, memory_limit_mb=limit_mb,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    stop.set()
    watcher.join()
    if not result.correct:
        raise SystemExit(f"the verification failed: {result.summary()}")
    return rows * 65536 * 4 / 2**30, peak["server"] / 2**30, peak["machine"] / 2**30, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gib", type=float, nargs="+", default=[0.5], help="input sizes in GiB")
    ap.add_argument("--no-timing", action="store_true", help="correctness and re-check only")
    args = ap.parse_args()
    print("| input (GiB) | timing | judge peak RSS (GiB) | x input | machine peak above start (GiB) | wall (s) |")
    print("|---|---|---|---|---|---|")
    for gib in args.gib:
        size, server, machine, wall = measure(gib, not args.no_timing)
        timing = "no" if args.no_timing else "yes (paired rounds)"
        row = f"| {size:.2f} | {timing} | {server:.2f} | {server / size:.1f} | {machine:.2f} | {wall:.0f} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
