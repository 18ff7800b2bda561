"""KernelBench's own CUDA answers (load_inline) on the cuda backend: build times and a corpus run.

    python -m experiments.bench_cuda_extension builds
        cold build without the shared header, the header's own build, a build with it (warm header),
        a cached lookup; then N distinct answers built in parallel.
    python -m experiments.bench_cuda_extension compile-cpu [--answers DIR --names A B ...]
        CPU seconds (user + system, every compiler process) of compile_only's build (objects, no
        link: runs with a CPU-only torch and nvcc, no GPU) of the tests' ReLU and the named answers:
        cold with torch's header in the CUDA unit, cold with its light form, the shared header's own
        build, cold with the light form and the shared header ready, and a cached lookup.
    python -m experiments.bench_cuda_extension static --answers DIR
        the static stage over every answer (no GPU): how many pass, what refuses the others.
    python -m experiments.bench_cuda_extension corpus --answers DIR --references DIR [--sample N]
        answers in EvoKernel's layout (<task>/best_code.py) against KernelBench reference files
        (<references>/level*/<task>.py) at their published shapes: built in parallel, then verified
        (one by one, or spread over the GPUs with --gpus N: verifier=ray, one actor per GPU);
        one row per answer, every failure named. --time-limit S stops starting new answers after S s.
        --build-only builds the answers (a progress line per batch) and verifies none: a first call
        that fills the build cache with every core. --queue DIR lets several corpus processes (GPU
        shards, or calls one after another on one machine) share the list: each answer is claimed
        once through a file in DIR, and an answer whose claimer died is claimed again.
        --torch-ops beside_kernel (the default here: KernelBench's rule) lets torch ops run beside the
        answer's own kernels; refuse is the reward's rule. --module-mode train (the default here:
        KernelBench's evaluation never calls eval(), so BatchNorm uses the batch's statistics).
    python -m experiments.bench_cuda_extension pool --answers DIR --references DIR --names A B ...
        verifications/s of the GPU pool (verifier=ray, one actor per GPU) with 1, 2, 4 GPUs on the
        same batch (the named answers, --repeat times), against the local verifier's verdicts.

Needs a CUDA build of torch and nvcc (the corpus run also a GPU). Prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kernel_gym.backends.cuda_extension import ExtensionRequest, build_extension, extract_calls
from kernel_gym.verify.compile_service import prebuild_extensions as prebuild


def _wrap() -> Any:
    from kernel_gym.verify.compile_service import CompileService
    from kernel_gym.verify.isolation import namespaces_available

    return CompileService._wrap_extension if namespaces_available()[0] else None


def _relu_request(tag: str) -> ExtensionRequest:
    from tests.backends.extension_answers import RELU_EXTENSION

    [request] = extract_calls(RELU_EXTENSION)
    assert isinstance(request, ExtensionRequest)
    request.cuda_sources = [f"// variant {tag}\n" + request.cuda_sources[0]]  # a new content hash
    return request


def builds(parallel: int) -> None:
    tag = str(time.time_ns())
    wrap = _wrap()
    rows = []
    t0 = time.perf_counter()
    cold = build_extension(_relu_request(tag + "a"), wrap=wrap, use_pch=False)
    rows.append(("cold, no shared header", time.perf_counter() - t0, cold.pch))
    from kernel_gym.backends.cuda_extension import _ensure_pch, build_environment

    t0 = time.perf_counter()
    _, state = _ensure_pch(_relu_request(tag), build_environment()[0], wrap, 900.0)
    rows.append(
        (
            "shared header of torch/extension.h (once per torch, compiler and host flags)",
            time.perf_counter() - t0,
            state,
        )
    )
    warm = []
    for i in range(2):
        t0 = time.perf_counter()
        built = build_extension(_relu_request(f"{tag}w{i}"), wrap=wrap)
        warm.append(time.perf_counter() - t0)
        rows.append((f"cold, shared header ready ({i + 1})", warm[-1], built.pch))
    cached = []
    for _ in range(20):
        t0 = time.perf_counter()
        built = build_extension(_relu_request(f"{tag}w0"), wrap=wrap)
        cached.append(time.perf_counter() - t0)
    rows.append(("cached (median of 20 lookups)", statistics.median(cached), "cached" if built.cached else "REBUILT"))
    from tests.backends.extension_answers import RELU_EXTENSION

    answers = [
        RELU_EXTENSION.replace("// cuda", "").replace("#include <ATen", f"// {tag} p{i}\n#include <ATen", 1)
        for i in range(parallel)
    ]
    t0 = time.perf_counter()
    results = prebuild(answers)
    wall = time.perf_counter() - t0
    ok = sum(1 for r in results if not isinstance(r, str))
    rows.append((f"{parallel} distinct answers built in parallel (wall)", wall, f"{ok}/{len(results)} built"))
    print(f"machine: {os.cpu_count()} cores; sandboxed builds: {wrap is not None}")
    print("| build | seconds | header |\n|---|---|---|")
    for what, seconds, state in rows:
        print(f"| {what} | {seconds:.3f} | {state} |")


def _children_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compile_cpu(
    answers_dir: Path | None, names: list[str], arch: str, out: Path | None, cold: str = "both", relu: bool = True
) -> None:
    """CPU seconds of compile-only builds, each row a new content hash (a comment line added).
    ``cold``: the builds without the shared header to run per answer (full, light, both, none)."""
    from kernel_gym.backends.cuda_extension import _ensure_pch, build_environment, light_header_fits
    from tests.backends.extension_answers import RELU_EXTENSION

    os.environ["KERNEL_GYM_CUDA_ARCH"] = arch
    # ATen's CUDA context header includes cuSPARSE/cuBLAS headers, which a compiler-only toolkit
    # lacks; c10's stream header has the same current-stream call (as the compile-only test does)
    relu_source = RELU_EXTENSION.replace("#include <ATen/cuda/CUDAContext.h>", "#include <c10/cuda/CUDAStream.h>")
    relu_name = "tests' ReLU (c10 stream header)"
    answers = {relu_name: relu_source.replace("at::cuda::getCurrent", "c10::cuda::getCurrent")} if relu else {}
    for name in names:
        answers[name] = (answers_dir / name / "best_code.py").read_text()  # type: ignore[operator]
    requests: dict[str, list[ExtensionRequest]] = {}
    for name, answer in answers.items():
        found = extract_calls(answer)
        bad = [r for r in found if isinstance(r, str)]
        if bad:
            raise SystemExit(f"{name}: {bad[0]}")
        requests[name] = [r for r in found if isinstance(r, ExtensionRequest)]
    stamp = f"{time.time_ns()}"
    rows: list[dict[str, Any]] = []

    def build(name: str, row: str, light: bool, pch: bool) -> None:
        load0, cpu0, t0 = os.getloadavg()[0], _children_cpu_s(), time.perf_counter()
        headers = []
        for i, request in enumerate(requests[name]):
            variant = ExtensionRequest.from_json(request.to_json())
            variant.cuda_sources = [
                f"// variant {stamp} {row} {i}\n" + variant.cuda_sources[0],
                *variant.cuda_sources[1:],
            ]
            built = build_extension(variant, objects_only=True, use_pch=pch, light_header=light, timeout_s=3600.0)
            assert not built.cached, "a cold row found its build cached"
            headers.append(built.header)
            last[name] = variant
        rows.append(
            {
                "answer": name,
                "build": row,
                "cpu_s": _children_cpu_s() - cpu0,
                "wall_s": time.perf_counter() - t0,
                "header": ", ".join(headers),
                "load": f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
            }
        )
        print(json.dumps(rows[-1]), flush=True)

    last: dict[str, ExtensionRequest] = {}
    # one shared header per host-flag set (EvoKernel's answers all pass -O3, as the ReLU does)
    flag_sets = {tuple(r.extra_cflags): r for found in requests.values() for r in found}
    for flags, request in flag_sets.items():
        load0, cpu0, t0 = os.getloadavg()[0], _children_cpu_s(), time.perf_counter()
        _, state = _ensure_pch(request, build_environment()[0], None, 3600.0)
        rows.append(
            {
                "answer": "-",
                "build": f"the shared header of torch/extension.h ({' '.join(flags) or 'no flags'}), once: {state}",
                "cpu_s": _children_cpu_s() - cpu0,
                "wall_s": time.perf_counter() - t0,
                "header": "-",
                "load": f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    for name in answers:
        build(name, "cold, light header, shared header ready", light=True, pch=True)
        lookups = []
        for _ in range(20):
            t0 = time.perf_counter()
            hit = build_extension(last[name], objects_only=True, use_pch=True, light_header=True)
            lookups.append(time.perf_counter() - t0)
            assert hit.cached
        rows.append(
            {
                "answer": name,
                "build": "cached (median of 20 lookups)",
                "cpu_s": 0.0,
                "wall_s": statistics.median(lookups),
                "header": hit.header,
                "load": f"{os.getloadavg()[0]:.1f}",
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    # the builds without the shared header last: the longest, and a partial run keeps the rest
    for name in answers:
        print(f"{name}: light header fits {[light_header_fits(r) for r in requests[name]]}", flush=True)
        if cold in ("full", "both"):
            build(name, "cold, torch's header, no shared header", light=False, pch=False)
        if cold in ("light", "both"):
            build(name, "cold, light header, no shared header", light=True, pch=False)
    if out is not None:
        out.write_text(json.dumps(rows, indent=1))
    print("\n| answer | build | CPU s | wall s | CUDA unit header | load average |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['answer']} | {r['build']} | {r['cpu_s']:.1f} | {r['wall_s']:.3g} | {r['header']} | {r['load']} |")


def _reference(references: Path, name: str) -> Path | None:
    index = references / "dataset.json"  # EvoKernel's: the level of each task
    if index.is_file():
        level = json.loads(index.read_text()).get("ops", {}).get(name, {}).get("level")
        if level and (references / level / f"{name}.py").is_file():
            return references / level / f"{name}.py"
    for level in ("level1", "level2", "level3"):
        path = references / level / f"{name}.py"
        if path.is_file():
            return path
    return None


def _task(ref: Path, name: str) -> Any:
    from kernel_gym.tasks.spec import TaskSpec

    level = int(ref.parent.name.removeprefix("level"))
    return TaskSpec(id=f"kernelbench/level{level}/{name}", level=level, category="kernelbench", dtype="float32",
                    source=ref.read_text(), path=ref)  # fmt: skip


def _verdict(result: Any) -> str:
    verdict = "correct" if result.correct else (result.error_class or "?")
    return verdict + (f" ({result.hack_rule})" if result.hack_rule else "")


def corpus(
    answers_dir: Path,
    references: Path,
    sample: int,
    names: list[str],
    settings: dict[str, Any],
    gpus: int = 0,
    time_limit: float = 0.0,
    skip: int = 0,
    build_workers: int | None = None,
    build_batch: int = 8,
    build_only: bool = False,
    queue: Path | None = None,
) -> None:
    from kernel_gym.verify import verify
    from kernel_gym.verify.verifiers import VerifyJob

    started = time.perf_counter()
    all_names = sorted(p.parent.name for p in answers_dir.glob("*/best_code.py"))
    if not names:
        step = max(1, len(all_names) // sample) if sample else 1
        names = all_names[::step][:sample] if sample else all_names
    names = names[skip:]
    jobs = []
    for name in names:
        ref = _reference(references, name)
        answer = (answers_dir / name / "best_code.py").read_text()
        jobs.append((name, ref, answer))
    # Builds run ahead of the verifications, a batch at a time on a thread of their own, so the
    # GPU verifies the first answers while later ones compile (a cold build is ~30 s, mostly one core).
    buildable = [a for _, ref, a in jobs if ref is not None]
    if build_only:
        _build_all(buildable, build_workers, build_batch)
        return
    if queue is not None:  # the answers' builds come from the cache a --build-only call filled, or on demand
        buildable = []
    batches = [buildable[i : i + build_batch] for i in range(0, len(buildable), build_batch)] if buildable else []
    ready = [threading.Event() for _ in batches]
    stop = threading.Event()  # the time limit ended the run: build no further batches
    built: list[Any] = []

    def build_ahead() -> None:
        t0 = time.perf_counter()
        for batch, done in zip(batches, ready, strict=True):
            if stop.is_set():
                break
            built.extend(prebuild(batch, workers=build_workers))
            done.set()
        times = sorted(b.seconds for b in built if not isinstance(b, str))
        median = statistics.median(times) if times else float("nan")
        print(
            f"parallel build of {len(built)} extensions ({build_workers or 'default'} at once, batches of "
            f"{build_batch}): {time.perf_counter() - t0:.1f} s wall; per build median {median:.1f} s; "
            f"failed: {sum(isinstance(b, str) for b in built)}",
            flush=True,
        )

    builder = threading.Thread(target=build_ahead, daemon=True)
    builder.start()
    rows: list[tuple[str, ...]] = []
    verifier = None
    if gpus:
        from kernel_gym.verify.ray_verifier import RayVerifier

        verifier = RayVerifier(num_workers=1, num_gpu_workers=gpus)
    todo = [(n, r, a) for n, r, a in jobs if r is not None]
    rows.extend((n, "no reference", "", "", "", "") for n, r, _ in jobs if r is None)
    chunk = 2 * gpus if gpus else 1
    for first in range(0, len(todo), chunk):
        if time_limit and time.perf_counter() - started > time_limit:
            rows.extend((n, "not run (time limit)", "", "", "", "") for n, _, _ in todo[first:])
            break
        part = todo[first : first + chunk]
        if queue is not None:
            part = [job for job in part if _claim(queue, job[0])]
            if not part:
                continue
        needed = (first + len(part) - 1) // build_batch  # the build batch of the part's last answer
        if needed < len(ready):
            ready[needed].wait()  # its extension is built (or failed to build: verify says why)
        t0 = time.perf_counter()
        if verifier is not None:
            batch = [VerifyJob(_task(r, n), a, "cuda", {"use_cache": False, **settings}) for n, r, a in part]
            results = verifier.verify_many(batch)
        else:
            n, r, a = part[0]
            results = [verify(_task(r, n), a, backend="cuda", use_cache=False, **settings)]
        seconds = (time.perf_counter() - t0) / len(part)
        for (name, _, _), result in zip(part, results, strict=True):
            rows.append(_row(name, result, seconds))
            if queue is not None:
                (queue / f"{name}.claim").write_text("done\n")
    if verifier is not None:
        verifier.close()
    stop.set()
    builder.join()
    _corpus_table(rows)


def _build_all(answers: list[str], workers: int | None, batch: int) -> None:
    """Build every answer's extensions, a batch at a time, with a progress line per batch."""
    t0, built = time.perf_counter(), []
    for i in range(0, len(answers), batch):
        part = prebuild(answers[i : i + batch], workers=workers)
        built.extend(part)
        times = [b.seconds for b in built if not isinstance(b, str)]
        print(
            json.dumps(
                {
                    "built": len(built),
                    "of_answers": f"{min(i + batch, len(answers))}/{len(answers)}",
                    "failed": sum(isinstance(b, str) for b in built),
                    "wall_s": round(time.perf_counter() - t0, 1),
                    "per_build_median_s": round(statistics.median(times), 1) if times else None,
                }
            ),
            flush=True,
        )


def _claim(queue: Path, name: str) -> bool:
    """Claim ``name`` for this process: True when no live process holds it and it is not done. A
    claim file holds its claimer's pid, or ``done``; creating it is atomic (O_EXCL)."""
    queue.mkdir(parents=True, exist_ok=True)
    path = queue / f"{name}.claim"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            holder = path.read_text().strip()
            if holder == "done" or not holder.isdigit():
                return False
            try:
                os.kill(int(holder), 0)
                return False  # a live process verifies it
            except ProcessLookupError:
                path.unlink(missing_ok=True)  # its claimer died (a call's time limit): claim again
                continue
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()}\n")
        return True
    return False


def _row(name: str, result: Any, seconds: float) -> tuple[str, ...]:
    verdict = _verdict(result)
    speed = f"{result.speedup:.2f}" if result.correct and result.speedup else ""
    lat = f"{result.latency_s * 1e6:.1f}" if result.correct and result.latency_s else ""
    cv = ""
    iqr = getattr(result, "latency_iqr_s", None)
    timed = int(((result.details or {}).get("answer_timing") or {}).get("trials") or 0)  # calls behind the median
    if result.correct and iqr is not None and result.latency_s and timed >= 3:  # fewer: no spread to see
        cv = f"{iqr / result.latency_s / 1.349:.4f}"  # IQR-based sigma / median
    message = "" if result.correct else (result.message or "").replace("|", "/").replace("\n", " ")[:160]
    print(
        json.dumps(
            {
                "task": name,
                "verdict": verdict,
                "latency_us": lat,
                "speedup": speed,
                "seconds": round(seconds, 1),
                "torch_ops": (result.details or {}).get("torch_ops", []),
                "stages_s": {k: round(v, 1) for k, v in ((result.details or {}).get("stage_seconds") or {}).items()},
                "cv": cv,
                "timed_calls": timed,
                "message": message,
            }
        ),
        flush=True,
    )
    return (name, verdict, lat, speed, cv, f"{seconds:.1f}s {message}")


def _corpus_table(rows: list[tuple[str, ...]]) -> None:
    correct = sum(1 for r in rows if r[1] == "correct")
    print(f"\n{correct}/{len(rows)} correct\n")
    verdicts: dict[str, int] = {}
    for row in rows:
        verdicts[row[1]] = verdicts.get(row[1], 0) + 1
    print("| verdict | answers |\n|---|---|")
    for verdict, count in sorted(verdicts.items(), key=lambda kv: -kv[1]):
        print(f"| {verdict} | {count} |")
    print()
    print("| task | verdict | latency us | speedup vs eager | robust CV | verify time, message |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def pool(answers_dir: Path, references: Path, names: list[str], repeat: int, gpus: list[int], settings: dict) -> None:
    """Verifications/s of the Ray GPU pool at each GPU count, on one batch, with the local verdicts."""
    import ray
    import torch

    from kernel_gym.native import cache_root
    from kernel_gym.verify.ray_verifier import RayVerifier
    from kernel_gym.verify.verifiers import LocalVerifier, VerifyJob, prebuild_extensions

    jobs = []
    for name in names:
        ref = _reference(references, name)
        assert ref is not None, name
        answer = (answers_dir / name / "best_code.py").read_text()
        jobs.append(VerifyJob(_task(ref, name), answer, "cuda", {"use_cache": False, **settings}))
    batch = [jobs[i % len(jobs)] for i in range(repeat * len(jobs))]
    t0 = time.perf_counter()
    prebuild_extensions(jobs)  # every extension of the batch, in parallel: the timed runs find them built
    print(f"prebuild: {time.perf_counter() - t0:.1f} s", flush=True)
    t0 = time.perf_counter()
    once = [_verdict(r) for r in LocalVerifier().verify_many(jobs)]
    local_s = time.perf_counter() - t0
    local = [once[i % len(jobs)] for i in range(len(batch))]
    print(f"local verifier, 1 GPU: {len(jobs)} jobs in {local_s:.1f} s: {once}", flush=True)
    have = torch.cuda.device_count()
    ray.init(
        num_gpus=have,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"KERNEL_GYM_CACHE": str(cache_root())}},
    )
    rows = [("local (no Ray)", 1, len(jobs), len(jobs) / local_s, "-")]
    base = None
    for n in [g for g in gpus if g <= have]:
        verifier = RayVerifier(num_workers=1, num_gpu_workers=n)
        try:
            verifier.verify_many(jobs[:1] * n)  # every actor started, its server and GPU context warm
            t0 = time.perf_counter()
            results = verifier.verify_many(batch)
            seconds = time.perf_counter() - t0
        finally:
            verifier.close()
        verdicts = [_verdict(r) for r in results]
        same = verdicts == local
        for i, (got, want) in enumerate(zip(verdicts, local, strict=True)):
            if got != want:
                print(f"  job {i} ({names[i % len(jobs)]}): Ray {got!r}, local {want!r}", flush=True)
        rate = len(batch) / seconds
        base = base or rate
        rows.append((f"Ray, {n} GPU actor(s)", n, len(batch), rate, f"{rate / base:.2f}x, verdicts same: {same}"))
        print(rows[-1], flush=True)
    ray.shutdown()
    print(f"\n{torch.cuda.get_device_name(0)} x {have}, {os.cpu_count()} cores\n")
    print("| verifier | GPUs | jobs | verifications/s | vs 1 GPU on Ray |\n|---|---|---|---|---|")
    for what, n, count, rate, rel in rows:
        print(f"| {what} | {n} | {count} | {rate:.3f} | {rel} |")


def static(answers_dir: Path) -> None:
    """The static stage over every answer (no GPU needed): how many pass, and the first rule that
    refuses each of the others."""
    import collections
    import re

    from kernel_gym.verify.static_checks import check_answer_source

    first: collections.Counter[str] = collections.Counter()
    by_rule: collections.Counter[str] = collections.Counter()
    files = sorted(answers_dir.glob("*/best_code.py"))
    passed = watched = 0
    for path in files:
        found = check_answer_source(path.read_text(), "cuda")
        violations = [v for v in found if not v.runtime_checked]  # refused before running
        if not violations:
            passed += 1
            watched += any(v.runtime_checked for v in found)
            continue
        by_rule.update({v.rule for v in violations})
        v = violations[0]
        what = re.sub(r"line \d+: |\(string starting.*|'[^']*'", "", v.message)
        what = re.sub(r"\.\w+\(\)", ".<op>()", what)
        what = re.sub(r"kernel source: (cublas\w*|cudnn\w*|\w+Handle)", "kernel source: <vendor call>", what).strip()[
            :90
        ]
        first[f"{v.rule}: {what}"] += 1
    print(f"{passed}/{len(files)} answers pass the static rules on backend cuda")
    print(f"of them {watched} call torch in forward: the judge guards each of their calls\n")
    print("| first violation | answers |\n|---|---|")
    for what, n in first.most_common():
        print(f"| {what} | {n} |")
    print("\nanswers refused by each rule (an answer can break several):", dict(by_rule.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("builds")
    b.add_argument("--parallel", type=int, default=8)
    c = sub.add_parser("corpus")
    c.add_argument("--answers", type=Path, required=True)
    c.add_argument("--references", type=Path, required=True)
    c.add_argument("--sample", type=int, default=0)
    c.add_argument("--names", nargs="*", default=[])
    c.add_argument("--timing-trials", type=int, default=30)
    c.add_argument("--memory-limit-mb", type=int, default=65536)
    c.add_argument("--gpus", type=int, default=0, help="spread over N GPUs (verifier=ray); 0: one by one here")
    c.add_argument("--time-limit", type=float, default=0.0, help="start no answer after this many seconds")
    c.add_argument("--skip", type=int, default=0, help="leave out the first N answers of the list")
    c.add_argument("--timeout-s", type=float, default=300.0, help="one verification's time limit")
    c.add_argument("--build-workers", type=int, default=None, help="extensions built at once (default: cores / 2)")
    c.add_argument("--build-batch", type=int, default=8, help="answers per build batch ahead of the verifications")
    c.add_argument(
        "--module-mode",
        choices=("train", "eval"),
        default="train",
        help="modules as built, in training mode (KernelBench's rule, the default here) or after eval()",
    )
    c.add_argument("--build-only", action="store_true", help="build every answer's extensions, verify none")
    c.add_argument("--queue", type=Path, default=None, help="a directory shared by corpus processes: claim answers")
    c.add_argument(
        "--torch-ops",
        choices=("refuse", "beside_kernel"),
        default="beside_kernel",
        help="torch ops beside the answer's kernels: KernelBench's rule (default) or the reward's (refuse)",
    )
    p = sub.add_parser("pool")
    p.add_argument("--answers", type=Path, required=True)
    p.add_argument("--references", type=Path, required=True)
    p.add_argument("--names", nargs="+", required=True)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--gpus", default="1,2,4")
    p.add_argument("--timing-trials", type=int, default=20)
    p.add_argument("--module-mode", choices=("train", "eval"), default="train")
    p.add_argument("--torch-ops", choices=("refuse", "beside_kernel"), default="beside_kernel")
    cc = sub.add_parser("compile-cpu")
    cc.add_argument("--answers", type=Path, default=None, help="EvoKernel's layout: <dir>/<task>/best_code.py")
    cc.add_argument("--names", nargs="*", default=[])
    cc.add_argument("--arch", default="sm_90")
    cc.add_argument("--out", type=Path, default=None, help="the rows as JSON")
    cc.add_argument("--cold", choices=("full", "light", "both", "none"), default="both")
    cc.add_argument("--no-relu", action="store_true", help="leave out the tests' ReLU")
    st = sub.add_parser("static")
    st.add_argument("--answers", type=Path, required=True)
    args = parser.parse_args()
    if args.what == "builds":
        builds(args.parallel)
    elif args.what == "static":
        static(args.answers)
    elif args.what == "compile-cpu":
        compile_cpu(args.answers, args.names, args.arch, args.out, args.cold, not args.no_relu)
    elif args.what == "pool":
        settings = {
            "timing_trials": args.timing_trials,
            "memory_limit_mb": 65536,
            "timeout_s": 300,
            "torch_ops": args.torch_ops,
            "module_mode": args.module_mode,
        }
        gpus = [int(g) for g in args.gpus.split(",")]
        pool(args.answers, args.references, args.names, args.repeat, gpus, settings)
    else:
        settings = {
            "timing_trials": args.timing_trials,
            "memory_limit_mb": args.memory_limit_mb,
            "timeout_s": args.timeout_s,
            "torch_ops": args.torch_ops,
            "module_mode": args.module_mode,
        }
        corpus(
            args.answers,
            args.references,
            args.sample,
            args.names,
            settings,
            args.gpus,
            args.time_limit,
            args.skip,
            args.build_workers,
            max(1, args.build_batch),
            args.build_only,
            args.queue,
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
