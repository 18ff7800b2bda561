"""Compile time of Ascend C answers in each public format, cold and cached.

    python -m experiments.bench_ascendc_compile [--repeats 5]

Formats: a direct kernel (``kernel_gym.ascendc.load``), an operator project
(``load_op_project``) and a MultiKernelBench six-string answer (``load_multikernelbench``);
with ``--cann-ops DIR...``, also cann-ops projects built as their examples run them (the project,
its generated aclnn pair and the example's ``main``: ``kernel_gym.ascendc.aclnn``), one run per
project, the median over the projects.
*cold*: the answer's source has never been compiled (a fresh comment makes it new; the
simulator runtime and the precompiled headers are built once beforehand and reported
separately, as the verifier's judge builds them at start-up). *cached*: the same answer again
in a fresh process (the compiled library is found by content hash and signature). Each child
process first loads the simulator runtime library (a fixed cost per process, reported in its own
column), then times the load call. Each figure is the median over ``--repeats`` child processes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loader import runtime_library
from tests.ascendc import kernels
from tests.ascendc.compat.six_string_answers import MSE_LOSS
from pathlib import Path
fmt, token = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
runtime_library()
runtime_s = time.perf_counter() - t0
tag = "\n// " + token + "\n"
if fmt == "direct":
    start = time.perf_counter()
    asc.load(kernels.STREAM_ADD + tag, name="stream_add.cpp")
elif fmt == "op_project":
    root = Path({root!r}) / "solutions" / "ascend_op_projects" / "leaky_relu_custom"
    files = {{str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}}
    kernel = next(k for k in files if "op_kernel" in k)
    files[kernel] += tag
    start = time.perf_counter()
    asc.load_op_project(files)
elif fmt == "aclnn_example":  # a cann-ops project with its generated aclnn and its example's main
    from kernel_gym.ascendc.aclnn import AclnnOp
    from kernel_gym.ascendc.loader import compile_module
    root = Path(sys.argv[3])
    files = {{f"{{d}}/{{p.name}}": p.read_text() for d in ("op_host", "op_kernel") for p in sorted((root / d).iterdir())
             if p.is_file()}}
    kernel = next(k for k in files if k.startswith("op_kernel/") and k.endswith(".cpp"))
    files[kernel] += tag
    main = (root / "examples" / "AclNNInvocationNaive" / "main.cpp").read_text()
    start = time.perf_counter()
    op = AclnnOp(files)
    compile_module(op.sample_files({{"main.cpp": main}}, op.default_dtypes()), pch="host")
else:
    six = dict(MSE_LOSS)
    six["kernel_src"] += tag
    start = time.perf_counter()
    asc.load_multikernelbench(six)
print(json.dumps([time.perf_counter() - start, runtime_s]))
"""


def _load_seconds(fmt: str, token: str, env: dict[str, str], project: str = "") -> tuple[float, float]:
    """(seconds of the load call, seconds of loading the runtime library first) in a fresh process."""
    code = _CHILD.format(root=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code, fmt, token, project],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{fmt} failed:\n{done.stderr[-3000:]}")
    load_s, runtime_s = json.loads(done.stdout.strip().splitlines()[-1])
    return float(load_s), float(runtime_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--formats", nargs="*", default=["direct", "op_project", "six_string"])
    parser.add_argument(
        "--cann-ops",
        nargs="*",
        default=[],
        help="cann-ops project directories (format aclnn_example: the project with its generated aclnn pair "
        "and its example's main; one repeat per project, the median over projects)",
    )
    args = parser.parse_args()
    formats = list(args.formats) + (["aclnn_example"] if args.cann_ops else [])
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "KERNEL_GYM_CACHE": cache}
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import kernel_gym.ascendc as a; a.warmup()"], env=env, check=True, cwd=ROOT
        )
        setup = time.perf_counter() - start
        rows = []
        for fmt in formats:
            cold, cached, runtime = [], [], []
            projects = args.cann_ops if fmt == "aclnn_example" else [""] * args.repeats
            for r, project in enumerate(projects):
                token = f"bench-{os.getpid()}-{r}-{time.time_ns()}"
                cold.append(_load_seconds(fmt, token, env, project)[0])
                load_s, runtime_s = _load_seconds(fmt, token, env, project)
                cached.append(load_s)
                runtime.append(runtime_s)
                print(
                    f"[bench] {fmt} run {r + 1}/{len(projects)} {Path(project).name}: cold {cold[-1]:.2f} s, cached "
                    f"{cached[-1] * 1000:.1f} ms",
                    file=sys.stderr,
                    flush=True,
                )
            rows.append((fmt, statistics.median(cold), statistics.median(cached), statistics.median(runtime)))
    print(f"Runtime library and precompiled headers, once per machine: {setup:.1f} s\n")
    print("| format | cold (median s) | cached (median ms) | runtime library load per process (median ms) |")
    print("| --- | ---: | ---: | ---: |")
    for fmt, cold_s, cached_s, runtime_s in rows:
        print(f"| {fmt} | {cold_s:.2f} | {cached_s * 1000:.1f} | {runtime_s * 1000:.1f} |")


if __name__ == "__main__":
    main()
