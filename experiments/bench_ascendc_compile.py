"""Compile time of Ascend C answers in each public format, cold and cached.

    python -m experiments.bench_ascendc_compile [--repeats 5]

Formats: a direct kernel (``kernel_gym.ascendc.load``), an operator project
(``load_op_project``) and a MultiKernelBench six-string answer (``load_multikernelbench``);
with ``--cann-ops DIR...``, also cann-ops projects built as their examples run them (the project,
its generated aclnn pair and the example's ``main``: ``kernel_gym.ascendc.aclnn``), and with
``--evokernel DIR...`` EvoKernel operator projects with their binding (as
``experiments.calibrate_timing`` builds them), one run per project, the median over the projects.
*cold*: the answer's source has never been compiled (a fresh comment makes it new; the
simulator runtime and the precompiled headers are built once beforehand and reported
separately, as the verifier's judge builds them at start-up). *cached*: the same answer again
in a fresh process (the compiled library is found by content hash and signature). Each child
process first loads the simulator runtime library (a fixed cost per process, reported in its own
column), then times the load call. Each figure is the median over ``--repeats`` child processes.
*CPU*: the child's own and its compilers' CPU seconds for the load call (what the build costs on
a shared machine, where wall time depends on the other jobs: the load average is printed too).
*kernel edited*: the answer again with only its kernel file changed (objects of the units that
did not change, the project's host side and an example's ``main``, are reused).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loader import runtime_library
from tests.ascendc import kernels
from tests.ascendc.compat.six_string_answers import MSE_LOSS
from pathlib import Path
fmt, token = sys.argv[1], sys.argv[2]
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
t0 = time.perf_counter()
runtime_library()
runtime_s = time.perf_counter() - t0
tag = "\n// " + token + "\n"
if fmt == "direct":
    start, cpu0 = time.perf_counter(), cpu()
    asc.load(kernels.STREAM_ADD + tag, name="stream_add.cpp")
elif fmt == "op_project":
    root = Path({root!r}) / "solutions" / "ascend_op_projects" / "leaky_relu_custom"
    files = {{str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}}
    kernel = next(k for k in files if "op_kernel" in k)
    files[kernel] += tag
    start, cpu0 = time.perf_counter(), cpu()
    asc.load_op_project(files)
elif fmt == "aclnn_example":  # a cann-ops project built as the corpus builds it (run_aclnn_example)
    from kernel_gym.ascendc.aclnn import AclnnOp
    from kernel_gym.ascendc.loader import compile_module
    from kernel_gym.ascendc.sample import _unity_source
    root = Path(sys.argv[3])
    files = {{f"{{d}}/{{p.name}}": p.read_text() for d in ("op_host", "op_kernel") for p in sorted((root / d).iterdir())
             if p.is_file()}}
    kernel = next(k for k in files if k.startswith("op_kernel/") and k.endswith(".cpp"))
    files[kernel] += tag
    main = (root / "examples" / "AclNNInvocationNaive" / "main.cpp").read_text()
    start, cpu0 = time.perf_counter(), cpu()
    op = AclnnOp(files)
    sources, _ = _unity_source(op.sample_files({{"main.cpp": main}}, op.default_dtypes()))
    unit = "kgsim_sample.cpp"
    compile_module({{unit: sources.pop(unit), **sources}}, pch="host")
elif fmt == "evokernel":  # an EvoKernel operator project with its binding, as calibrate_timing loads it
    proj = Path(sys.argv[3])
    jsons = [p for p in proj.glob("*.json") if p.name != "result.json"]
    six = {{
        "project_json_src": jsons[0].read_text() if jsons else "[]",
        "host_tiling_src": next(proj.glob("op_host/*tiling*.h")).read_text(),
        "host_operator_src": next(proj.glob("op_host/*.cpp")).read_text(),
        "kernel_src": next(proj.glob("op_kernel/*.cpp")).read_text() + tag,
        "python_bind_src": (proj / "CppExtension" / "csrc" / "op.cpp").read_text(),
        "model_src": "class ModelNew:\n    pass\n",
    }}
    start, cpu0 = time.perf_counter(), cpu()
    asc.load_multikernelbench(six)
else:
    six = dict(MSE_LOSS)
    six["kernel_src"] += tag
    start, cpu0 = time.perf_counter(), cpu()
    asc.load_multikernelbench(six)
print(json.dumps([time.perf_counter() - start, runtime_s, cpu() - cpu0]))
"""


def _load_seconds(fmt: str, token: str, env: dict[str, str], project: str = "") -> tuple[float, float, float]:
    """(wall seconds of the load call, seconds of loading the runtime library first, CPU seconds of
    the load call: the process's and its compilers') in a fresh process."""
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
    load_s, runtime_s, cpu_s = json.loads(done.stdout.strip().splitlines()[-1])
    return float(load_s), float(runtime_s), float(cpu_s)


def _seed(seed: Path, cache: Path) -> None:
    """Copy the runtime library (with its signature and the key that signs it) and the precompiled
    headers of ``seed`` into ``cache``: nothing an answer built."""
    code = "import kernel_gym.ascendc as a; a.warmup(); print(a.loader.runtime_library()[0])"
    env = {**os.environ, "KERNEL_GYM_CACHE": str(seed)}
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT, capture_output=True, text=True)
    runtime = Path(done.stdout.strip().splitlines()[-1])
    (cache / "ascendc").mkdir(parents=True, exist_ok=True)
    shutil.copy2(seed / "judge.key", cache / "judge.key")
    for path in (runtime, Path(f"{runtime}.sig")):
        shutil.copy2(path, cache / "ascendc" / path.name)
    for pch in (seed / "ascendc").glob("pch-*"):
        shutil.copytree(pch, cache / "ascendc" / pch.name)


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
    parser.add_argument(
        "--seed-cache",
        type=Path,
        help="a kernel-gym cache whose simulator runtime library and precompiled headers are copied into the "
        "benchmark's fresh cache (saves building them; the answers' builds still start from nothing)",
    )
    parser.add_argument(
        "--evokernel",
        nargs="*",
        default=[],
        help="EvoKernel operator-project directories (<Op>Custom/ with op_host, op_kernel and CppExtension; format "
        "evokernel: built with their binding as experiments.calibrate_timing builds them; one repeat per project)",
    )
    args = parser.parse_args()
    formats = (
        list(args.formats) + (["aclnn_example"] if args.cann_ops else []) + (["evokernel"] if args.evokernel else [])
    )
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "KERNEL_GYM_CACHE": cache}
        if args.seed_cache:
            _seed(args.seed_cache, Path(cache))
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import kernel_gym.ascendc as a; a.warmup()"], env=env, check=True, cwd=ROOT
        )
        setup = time.perf_counter() - start
        rows = []
        for fmt in formats:
            cold, cold_cpu, edited, cached, cached_cpu, runtime = [], [], [], [], [], []
            projects = {"aclnn_example": args.cann_ops, "evokernel": args.evokernel}.get(fmt, [""] * args.repeats)
            for r, project in enumerate(projects):
                token = f"bench-{os.getpid()}-{r}-{time.time_ns()}"
                wall, _, cpu = _load_seconds(fmt, token, env, project)
                cold.append(wall)
                cold_cpu.append(cpu)
                load_s, runtime_s, cpu = _load_seconds(fmt, token, env, project)
                cached.append(load_s)
                cached_cpu.append(cpu)
                runtime.append(runtime_s)
                # the kernel edited, the rest of the answer as before (objects of unchanged units are reused)
                edited.append(_load_seconds(fmt, token + "-edited", env, project)[0])
                loads.append(os.getloadavg()[0])
                print(
                    f"[bench] {fmt} run {r + 1}/{len(projects)} {Path(project).name}: cold {cold[-1]:.2f} s "
                    f"({cold_cpu[-1]:.2f} s CPU), kernel edited {edited[-1]:.2f} s, cached {cached[-1] * 1000:.1f} ms "
                    f"({cached_cpu[-1] * 1000:.1f} ms CPU), "
                    f"load average {loads[-1]:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
            rows.append(
                (
                    fmt,
                    statistics.median(cold),
                    statistics.median(cold_cpu),
                    statistics.median(edited),
                    statistics.median(cached),
                    statistics.median(cached_cpu),
                    statistics.median(runtime),
                )
            )
    print(f"Runtime library and precompiled headers, once per machine: {setup:.1f} s")
    print(f"Load average (1 min) during the runs: {min(loads):.1f} to {max(loads):.1f}\n")
    print(
        "| format | cold (median s) | cold CPU (median s) | kernel edited (median s) | cached (median ms) "
        "| cached CPU (median ms) | runtime library load per process (median ms) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for fmt, cold_s, cpu_s, edited_s, cached_s, cached_cpu_s, runtime_s in rows:
        print(
            f"| {fmt} | {cold_s:.2f} | {cpu_s:.2f} | {edited_s:.2f} | {cached_s * 1000:.1f} | "
            f"{cached_cpu_s * 1000:.1f} | {runtime_s * 1000:.1f} |"
        )


if __name__ == "__main__":
    main()
