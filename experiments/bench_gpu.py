"""GPU timing and compile benchmark of the cuda and triton backends (needs an NVIDIA GPU).

For five tasks with reference answers: the answer's median latency measured the verifier's way
(kernel_gym.backends.gpu_timing: dedicated blocking stream, L2 flushed before each call, events,
sync check) and KernelBench's simple way (events on the current stream, no flush), each repeated
5 times (100 trials each) with the coefficient of variation of the 5 medians; then cold and cached
build times of a CUDA answer (nvcc through load_cuda) and a Triton answer (first launch, JIT),
each in a fresh process. Prints markdown tables.

    python -m experiments.bench_gpu [--repeats 5] [--trials 100] [--backend cuda]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import types
from typing import Any

TASKS = [
    "level1/021_relu",
    "level1/025_gelu_tanh",
    "level1/040_sum_dim",
    "level1/061_softmax",
    "level1/074_matmul_square",
]


def _module(source: str, name: str) -> types.ModuleType:
    import linecache

    linecache.cache[name] = (len(source), None, source.splitlines(True), name)  # Triton's @jit reads it
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)  # noqa: S102 - our own reference answers
    return module


def _cv(values: list[float]) -> float:
    return statistics.pstdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


def time_task(task_id: str, backend: str, repeats: int, trials: int) -> dict[str, Any]:
    import torch

    from kernel_gym.backends.gpu_timing import DeviceSession, time_events, time_events_simple
    from kernel_gym.tasks import get_task
    from solutions import reference_answer

    answer = reference_answer(task_id, backend)
    if answer is None:
        return {}
    task = get_task(task_id).module()
    torch.manual_seed(0)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    ref = task.Model(*task.get_init_inputs()).cuda().eval()
    new = _module(answer, f"answer_{backend}").ModelNew(*task.get_init_inputs()).cuda().eval()
    session = DeviceSession()
    row: dict[str, Any] = {"task": task_id}
    with torch.no_grad():
        expected = ref(*inputs)
        got = new(*inputs)
        row["max_abs_err"] = float((got - expected).abs().max())
        for who, model in (("answer", new), ("eager", ref)):
            call = functools.partial(model, *inputs)
            ours = [time_events(call, trials=trials, session=session) for _ in range(repeats)]
            simple = [time_events_simple(call, trials=trials) for _ in range(repeats)]
            row[f"{who}_ours"] = [r["device_median_s"] for r in ours]
            row[f"{who}_simple"] = [r["median_s"] for r in simple]
        try:
            compiled = torch.compile(ref)
            compiled(*inputs)
            row["compile_simple"] = [time_events_simple(lambda: compiled(*inputs), trials=trials)["median_s"]]
        except Exception as exc:  # noqa: BLE001 - the optional baseline is reported when it works
            row["compile_error"] = f"{type(exc).__name__}: {str(exc)[:80]}"
    row["gpu"] = session.info.get("gpu")
    row["clocks"] = {k: v for k, v in session.info.items() if "clock" in k}
    return row


_BUILD_CHILD = r"""
import sys, time, torch
backend, task_id = sys.argv[1], sys.argv[2]
from solutions import reference_answer
from kernel_gym.tasks import get_task
src = reference_answer(task_id, backend)
task = get_task(task_id).module()
x = [t.cuda() for t in task.get_inputs()]
t0 = time.perf_counter()
ns = {}
import linecache
linecache.cache["answer"] = (len(src), None, src.splitlines(True), "answer")
exec(compile(src, "answer", "exec"), ns)
m = ns["ModelNew"](*task.get_init_inputs()).cuda()
m(*x)
torch.cuda.synchronize()
print(f"BUILD {time.perf_counter() - t0:.4f}")
"""


def build_times(backend: str, task_id: str) -> tuple[float, float]:
    """(cold, cached) seconds from loading the answer module to its first output, fresh processes."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "KERNEL_GYM_CACHE": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton")}
        times = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", _BUILD_CHILD, backend, task_id], capture_output=True, text=True, env=env
            )
            line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BUILD")), None)
            if line is None:
                raise RuntimeError(out.stderr[-2000:])
            times.append(float(line.split()[1]))
        return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--backend", action="append", choices=["cuda", "triton"])
    args = parser.parse_args()
    backends = args.backend or ["cuda", "triton"]
    us = 1e6
    for backend in backends:
        print(f"\n### {backend}: median latency (us), {args.repeats} repeats x {args.trials} trials\n")
        print(
            "| task | answer ours (L2 flushed) | CV | answer simple (KernelBench) | CV | eager ours | CV "
            "| eager simple | CV | torch.compile simple | max abs err |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        gpu = clocks = None
        for task_id in TASKS:
            row = time_task(task_id, backend, args.repeats, args.trials)
            if not row:
                continue
            gpu, clocks = row["gpu"], row["clocks"]
            cells = []
            for key in ("answer_ours", "answer_simple", "eager_ours", "eager_simple"):
                values = row[key]
                cells += [f"{statistics.median(values) * us:.2f}", f"{_cv(values) * 100:.1f}%"]
            comp = f"{row['compile_simple'][0] * us:.2f}" if "compile_simple" in row else row.get("compile_error", "-")
            print(f"| {task_id} | " + " | ".join(cells) + f" | {comp} | {row['max_abs_err']:.2e} |")
        print(f"\nGPU: {gpu}; clocks at the end: {clocks}")
    print("\n### build times (fresh process each; cold = empty cache, cached = second process)\n")
    print("| backend | task | cold s | cached s |")
    print("|---|---|---|---|")
    for backend in backends:
        for task_id in ("level1/021_relu", "level1/061_softmax"):
            cold, cached = build_times(backend, task_id)
            print(f"| {backend} | {task_id} | {cold:.3f} | {cached:.3f} |")


if __name__ == "__main__":
    main()
