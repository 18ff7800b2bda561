"""Compile-only checks: an answer's kernel sources built without running them, so a machine with a
toolchain but no device (nvcc without a GPU) still turns compile errors into feedback. The static
kernel rules apply first, as in a full verification."""

from __future__ import annotations

import ast
import re
from typing import Any

__all__ = ["compile_only"]


def _cuda_strings(answer: str) -> list[str]:
    """The string constants of an answer that hold CUDA source."""
    return [
        node.value
        for node in ast.walk(ast.parse(answer))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.search(r"__global__|extern\s+\"C\"", node.value)
    ]


def compile_only(answer: str, arch: str | None = None) -> list[dict[str, Any]]:
    """Compile every CUDA source string of an answer with nvcc, without a GPU: compile errors as
    feedback on a machine that has the toolkit but no device. One entry per source (per
    ``load_inline`` call for KernelBench-format answers):
    ``{"ok": bool, "message": str, "log": str, "seconds": float}``. Static rules apply first."""
    import time

    if "load_inline" in answer:
        return _compile_extensions(answer, arch)

    from kernel_gym.backends.cuda import _ERROR_PROBE, DEFAULT_CUDA_FLAGS, cuda_arch
    from kernel_gym.native import CompileError, compile_shared
    from kernel_gym.verify.static_checks import check_kernel_source

    results = []
    for text in _cuda_strings(answer):
        t0 = time.perf_counter()
        violations = check_kernel_source(text)
        if violations:
            results.append({"ok": False, "message": str(violations[0]), "log": "", "seconds": 0.0})
            continue
        flags = [*DEFAULT_CUDA_FLAGS, f"-arch={arch or cuda_arch()}"]
        try:
            compile_shared({"kernel.cu": text + _ERROR_PROBE}, flags=flags, compiler="nvcc", cache_subdir="cuda")
            results.append({"ok": True, "message": "compiled", "log": "", "seconds": time.perf_counter() - t0})
        except CompileError as exc:
            results.append(_compile_failure(exc, time.perf_counter() - t0))
    return results


def _compile_extensions(answer: str, arch: str | None) -> list[dict[str, Any]]:
    """KernelBench's format: each load_inline call read from the answer's syntax tree (module-level
    string constants resolved), checked, and compiled to objects (no link: a CPU-only torch has no
    CUDA libraries to link against, and the compile errors are what an answer needs)."""
    import os
    import time

    from kernel_gym.backends.cuda_extension import build_extension, check_flags, extract_calls
    from kernel_gym.native import CompileError
    from kernel_gym.verify.static_checks import check_kernel_source

    if arch:
        os.environ["KERNEL_GYM_CUDA_ARCH"] = arch  # the build's TORCH_CUDA_ARCH_LIST follows it
    results: list[dict[str, Any]] = []
    for request in extract_calls(answer):
        if isinstance(request, str):
            results.append({"ok": False, "message": request, "log": "", "seconds": 0.0})
            continue
        problems = check_flags(request) + [
            str(v) for text in (*request.cpp_sources, *request.cuda_sources) for v in check_kernel_source(text)
        ]
        if problems:
            results.append({"ok": False, "message": problems[0], "log": "", "seconds": 0.0})
            continue
        t0 = time.perf_counter()
        try:
            built = build_extension(request, objects_only=True)
            results.append(
                {
                    "ok": True,
                    "message": "compiled",
                    "log": built.log,
                    "seconds": time.perf_counter() - t0,
                    "pch": built.pch,
                    "header": built.header,
                }
            )
        except CompileError as exc:
            results.append(_compile_failure(exc, time.perf_counter() - t0))
    return results


def _compile_failure(exc: Any, seconds: float) -> dict[str, Any]:
    """A failed build's result; a toolkit missing a library header torch includes is named as the
    machine's gap, not the answer's."""
    message = str(exc)
    missing = re.search(r"fatal error: ((cusparse|cublas\w*|cusolver\w*|cufft\w*|curand\w*|nvtx\w*)[\w/]*\.h)", exc.log)
    if missing:
        message = (
            f"this CUDA toolkit has no {missing.group(1)} (torch's ATen/cuda headers include it): install the "
            "toolkit's library headers (e.g. the cuda-libraries-dev package) for compile-only checks"
        )
    return {"ok": False, "message": message, "log": exc.log, "seconds": seconds}
