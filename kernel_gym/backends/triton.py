"""The ``triton`` backend: ``@triton.jit`` kernels, run and timed on an NVIDIA GPU.

An answer defines its kernels with ``@triton.jit`` and launches them from ModelNew's forward
(``kernel[grid](...)``). Triton compiles them on first launch in the answer's process (its JIT
runs ptxas and the host compiler, so this backend's sandbox allows exec), into Triton's cache
under the run's cache root (``<cache root>/triton``; a private directory of the job when that
is not writable in the sandbox). Timing is the cuda backend's: CUDA events on a dedicated
blocking stream (Triton launches on the current stream), L2 flushed, synchronisation checked.

``backend_options={"interpret": True}`` runs the kernels on the CPU with Triton's interpreter
(``TRITON_INTERPRET=1``): a functional check without a GPU, reported as such and never timed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from kernel_gym.backends.base import BackendUnavailable, SandboxPolicy
from kernel_gym.backends.cuda import GPU_SANDBOX, GpuBackend, check_gpu

__all__ = ["TRITON_ANSWER_FORMAT", "TritonBackend", "triton_cache_dir"]

INTERPRET_NOTE = "TRITON_INTERPRET=1: kernels ran on the CPU interpreter (functional check only, not timed)"


def triton_cache_dir() -> Path:
    """Triton's cache: ``<kernel_gym cache root>/triton`` when writable, else a directory under
    $TMPDIR (the sandbox's private /tmp, where the cache root is read-only)."""
    from kernel_gym.native import cache_root

    shared = cache_root() / "triton"
    try:
        shared.mkdir(parents=True, exist_ok=True)
        if os.access(shared, os.W_OK):
            return shared
    except OSError:
        pass
    private = Path(os.environ.get("TMPDIR", "/tmp")) / "triton-cache"
    private.mkdir(parents=True, exist_ok=True)
    return private


class TritonBackend(GpuBackend):
    name = "triton"
    language = "triton"
    env_id = "KernelBench-Triton-v0"
    compile_kinds = ()  # Triton builds its own kernels; no compile-service module
    compilers = ()
    answer_imports = {}
    sandbox = SandboxPolicy(
        env_vars=(*GPU_SANDBOX.env_vars, "TRITON_INTERPRET"),
        devices=GPU_SANDBOX.devices,
        read_only_paths=GPU_SANDBOX.read_only_paths,
        limit_address_space=False,
        runner_exec=True,  # Triton's JIT runs ptxas and compiles its launcher with the host compiler
        runner_programs=("ptxas", "ldconfig", "ldconfig.real", "file"),  # and lists the linker cache for libcuda
        open_files=GPU_SANDBOX.open_files,
        unix_sockets=GPU_SANDBOX.unix_sockets,
    )

    def __init__(self) -> None:
        self.interpret = False

    def check_available(self) -> None:
        if importlib.util.find_spec("triton") is None:
            raise BackendUnavailable("backend 'triton' needs the triton package (pip install triton)")
        if not self.interpret:
            try:
                check_gpu(self.name)
            except BackendUnavailable as exc:
                raise BackendUnavailable(
                    f"{exc}. Without a GPU, backend_options={{'interpret': True}} runs the kernels on "
                    "Triton's CPU interpreter (TRITON_INTERPRET=1: functional checks only, never timed)"
                ) from None

    def configure(self, options: dict[str, Any]) -> None:
        self.interpret = bool(options.get("interpret", False))

    def untimed_reason(self, options: dict[str, Any]) -> str | None:
        return INTERPRET_NOTE if options.get("interpret") else None

    def setup_worker(self, options: dict[str, Any]) -> None:
        import torch

        self.configure(options)
        torch.set_num_threads(int(options.get("threads", 1)))
        os.environ["TRITON_CACHE_DIR"] = str(triton_cache_dir())
        if self.interpret:
            os.environ["TRITON_INTERPRET"] = "1"
        else:
            os.environ.pop("TRITON_INTERPRET", None)

    def setup_judge(self, options: dict[str, Any]) -> None:
        self.configure(options)
        super().setup_judge(options)

    def device_session(self) -> Any:
        return None if self.interpret else super().device_session()

    def lock_options(self) -> None:
        if not self.interpret:
            super().lock_options()

    def timing_details(self) -> dict[str, Any]:
        return {"interpret": INTERPRET_NOTE} if self.interpret else {}

    def answer_format(self) -> str:
        return TRITON_ANSWER_FORMAT


TRITON_ANSWER_FORMAT = """\
Answer: one Python file defining `class ModelNew(nn.Module)` with the same constructor and
forward signatures as the reference `Model`. The computation runs in Triton kernels
(`@triton.jit`, `triton.language as tl`) that the forward launches with `kernel[grid](...)`;
the forward only allocates outputs (on the inputs' device) and launches kernels. Inputs and
weights are CUDA tensors. Choose block sizes explicitly (no @triton.autotune: its benchmarking
runs torch ops inside the forward). No torch compute, no streams, no try/except, no OS access.

For example, for a reference whose forward returns `2 * x + 1` (an illustration of the form; no
task asks for it):

```python
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_shift_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, 2.0 * x + 1.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        scale_shift_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
```"""
