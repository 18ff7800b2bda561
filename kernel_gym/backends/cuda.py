"""The ``cuda`` backend: inline CUDA C++ built with nvcc, run and timed on an NVIDIA GPU.

An answer is KernelBench's format with a lighter loader: ModelNew holds CUDA source whose
``extern "C"`` host functions launch its kernels, builds it with :func:`load_cuda` and calls the
functions with CUDA tensors (device pointers) and numbers. The build is one nvcc call into a
shared library cached by content (``<cache root>/cuda``), bound with ctypes: no torch headers,
no extension build (torch's ``load_inline`` takes about half a minute cold). Inside the verifier
the judge's compile service runs nvcc, outside the answer's sandbox.

Timing: CUDA events on a dedicated blocking stream with L2 flushed before every call, and a
device-wide synchronisation check (:mod:`kernel_gym.backends.gpu_timing`). TF32 stays off.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel_gym.backends.base import Backend, BackendUnavailable, OwnCodeCalls, SandboxPolicy

if TYPE_CHECKING:  # imported on use: registering the backend must not import torch
    import torch

    from kernel_gym.native.cabi import CFunction

__all__ = [
    "CUDA_ANSWER_FORMAT",
    "CudaBackend",
    "CudaLibrary",
    "DEFAULT_CUDA_FLAGS",
    "cuda_arch",
    "load_cuda",
]

DEFAULT_CUDA_FLAGS = ("-O3", "-std=c++17")
# appended to every source: the loader reads launch errors after each call through it
_ERROR_PROBE = (
    '\nextern "C" int kg_cuda_last_error(void) { return (int)cudaGetLastError(); }\n'
    'extern "C" const char* kg_cuda_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }\n'
)
_DEFAULT_ARCH = "sm_90"


def cuda_arch() -> str:
    """The ``-arch`` value: $KERNEL_GYM_CUDA_ARCH, else the visible GPU's, else sm_90 (compile-only)."""
    forced = os.environ.get("KERNEL_GYM_CUDA_ARCH", "").strip()
    if re.fullmatch(r"sm_\d+a?", forced):
        return forced
    import torch

    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    return _DEFAULT_ARCH


class CudaFunction:
    """A bound ``extern "C"`` host function: CUDA tensors in as device pointers, numbers as scalars;
    a launch error (``cudaGetLastError`` after the call) raises."""

    def __init__(self, cfunc: CFunction, raw: Any, last_error: Callable[[], int], error_string: Any) -> None:
        from kernel_gym.native.cabi import _scalar_type

        self.cfunc = cfunc
        self._raw = raw
        self._raw.argtypes = [ctypes.c_void_p if p.is_pointer else _scalar_type(p) for p in cfunc.params]
        self._raw.restype = None if cfunc.return_type == "void" else _scalar_type_of(cfunc.return_type)
        self._last_error = last_error
        self._error_string = error_string

    def _convert(self, p: Any, value: Any) -> Any:
        import torch

        from kernel_gym.native.cabi import _POINTEE_DTYPES

        name = self.cfunc.name
        if not p.is_pointer:
            if isinstance(value, torch.Tensor):
                if value.numel() != 1:
                    raise TypeError(f"{name}(): argument {p.name!r} is a scalar {p.ctype}; got a tensor")
                return value.item()
            return value
        if value is None:
            return None
        if not isinstance(value, torch.Tensor):
            got = type(value).__name__
            raise TypeError(f"{name}(): argument {p.name!r} is {p.ctype}; pass a torch.Tensor, got {got}")
        if value.device.type != "cuda":
            raise TypeError(
                f"{name}(): argument {p.name!r} must be a CUDA tensor, got device {value.device} "
                "(the verifier moves the inputs and ModelNew to the GPU; allocate outputs like the inputs)"
            )
        if not value.is_contiguous():
            raise ValueError(f"{name}(): argument {p.name!r} is not contiguous; call .contiguous() first")
        allowed = _POINTEE_DTYPES.get(p.pointee or "", None)
        if allowed is not None and value.dtype not in allowed:
            raise TypeError(f"{name}(): argument {p.name!r} is {p.ctype} but the tensor is {value.dtype}")
        return value.data_ptr()

    def __call__(self, *args: Any) -> Any:
        params = self.cfunc.params
        if len(args) != len(params):
            raise TypeError(
                f"{self.cfunc.name}() takes {len(params)} arguments ({self.cfunc.signature()}), got {len(args)}"
            )
        OwnCodeCalls.count += 1
        result = self._raw(*[self._convert(p, a) for p, a in zip(params, args, strict=True)])
        code = self._last_error()
        if code != 0:
            message = self._error_string(code) if self._error_string is not None else None
            text = message.decode() if isinstance(message, bytes) else f"error {code}"
            raise RuntimeError(f"CUDA error after {self.cfunc.name}(): {text}")
        return result

    def __repr__(self) -> str:
        return f"<cuda {self.cfunc.signature()}>"


def _scalar_type_of(ctype: str) -> Any:
    from kernel_gym.native.cabi import CParam, _scalar_type

    return ctypes.c_void_p if "*" in ctype else _scalar_type(CParam(ctype, "ret", None))


class CudaLibrary:
    """A built CUDA source whose ``extern "C"`` host functions are attributes."""

    def __init__(self, path: Path, functions: Sequence[CFunction]) -> None:
        self.path = Path(path)
        self._dll = ctypes.CDLL(str(self.path))
        last_error = self._dll.kg_cuda_last_error
        last_error.argtypes, last_error.restype = [], ctypes.c_int
        error_string = self._dll.kg_cuda_error_string
        error_string.argtypes, error_string.restype = [ctypes.c_int], ctypes.c_char_p
        self.functions = {
            f.name: CudaFunction(f, getattr(self._dll, f.name), last_error, error_string) for f in functions
        }

    def __getattr__(self, name: str) -> CudaFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        have = ", ".join(functions) or "none"
        raise AttributeError(f'no extern "C" function {name!r} in this library; it has: {have}')

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self.functions]


def load_cuda(source: str, functions: Sequence[str] | None = None, *, extra_flags: Sequence[str] = ()) -> CudaLibrary:
    """Compile CUDA source with nvcc (cached by content) and bind its ``extern "C"`` host functions.

    Args:
        source: CUDA C++ defining ``__global__`` kernels and ``extern "C"`` host functions that
            launch them (on the default stream: ``kernel<<<grid, block>>>(...)``). Pointer
            parameters take contiguous CUDA tensors (dtype checked against the pointee type),
            scalar parameters Python numbers.
        functions: the host functions to bind (default: every ``extern "C"`` host function).
        extra_flags: more nvcc flags (e.g. ``["--use_fast_math"]``, ``["-maxrregcount=64"]``).

    Returns:
        A library whose attributes are the functions, e.g. ``lib.relu(x, y, x.numel())``.

    Raises:
        kernel_gym.native.CompileError: nvcc rejected the source (``.log`` has its output).
    """
    from kernel_gym.native import compile_shared, parse_extern_c

    found = parse_extern_c(source)
    if functions is not None:
        by_name = {f.name: f for f in found}
        missing = [n for n in functions if n not in by_name]
        if missing:
            raise ValueError(
                f'no extern "C" host function {", ".join(missing)} in the source; it defines: '
                f"{', '.join(by_name) or 'none'}"
            )
        found = [by_name[n] for n in functions]
    if not found:
        raise ValueError(
            'the CUDA source defines no extern "C" host function to call; declare the launcher as: '
            'extern "C" void relu(const float* x, float* y, int64_t n) { relu_kernel<<<blocks, 256>>>(x, y, n); }'
        )
    flags = [*DEFAULT_CUDA_FLAGS, f"-arch={cuda_arch()}", *extra_flags]
    path = compile_shared({"kernel.cu": source + _ERROR_PROBE}, flags=flags, compiler="nvcc", cache_subdir="cuda")
    return CudaLibrary(path, found)


def _cuda_home() -> tuple[str, ...]:
    from kernel_gym.native.compile import compiler_path

    nvcc = compiler_path("nvcc")
    return (str(Path(nvcc).resolve().parent.parent),) if nvcc else ()


def _precision_changed() -> str | None:
    import torch

    if torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32:
        return "the answer switched TF32 on; the verifier keeps float32 matmuls and convolutions in full fp32"
    if torch.get_float32_matmul_precision() != "highest":
        return "the answer lowered the float32 matmul precision; the verifier keeps it at 'highest'"
    return None


def check_gpu(backend: str) -> None:
    """Raise BackendUnavailable naming what is missing for a GPU backend."""
    import torch

    if not torch.backends.cuda.is_built():
        raise BackendUnavailable(
            f"backend {backend!r} needs PyTorch with CUDA; torch {torch.__version__} is a CPU-only build "
            "(install a CUDA wheel: pip install torch --index-url https://download.pytorch.org/whl/cu124)"
        )
    if torch.cuda.device_count() < 1:  # NVML-based where available: does not initialise CUDA here
        raise BackendUnavailable(
            f"backend {backend!r} needs an NVIDIA GPU: torch sees none "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')!s}; check nvidia-smi)"
        )


def lock_precision() -> None:
    """TF32 off on both sides, and an answer cannot lower the float32 matmul precision."""
    import torch

    from kernel_gym.backends.gpu_timing import SettingChanged

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")

    def refuse(precision: str) -> None:
        raise SettingChanged(
            f"the answer set the float32 matmul precision to {precision!r}; the verifier keeps 'highest' (no TF32)"
        )

    torch.set_float32_matmul_precision = refuse


GPU_SANDBOX = SandboxPolicy(
    env_vars=("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "KERNEL_GYM_CUDA_ARCH"),
    devices=("/dev/nvidia*",),
    read_only_paths=tuple(p for p in ("/proc/driver/nvidia", "/usr/local/cuda") if Path(p).exists()),
    limit_address_space=False,  # the CUDA runtime reserves far more virtual memory than it uses
    open_files=1024,
    unix_sockets=True,  # the driver binds and listens on a UNIX socket when it starts (error 304 without)
)


class GpuBackend(Backend):
    """What the GPU backends share: the device session, event timing, TF32 lock, availability."""

    device = "cuda"
    sandbox = GPU_SANDBOX

    def check_available(self) -> None:
        check_gpu(self.name)

    def setup_worker(self, options: dict[str, Any]) -> None:
        import torch

        torch.set_num_threads(int(options.get("threads", 1)))

    def lock_options(self) -> None:
        lock_precision()

    def device_session(self) -> Any:
        import warnings

        import torch

        from kernel_gym.backends.gpu_timing import DeviceSession

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            visible = torch.cuda.is_available()
        if not visible:
            why = "; ".join(str(w.message) for w in caught)[:600]
            raise RuntimeError(
                f"backend {self.name!r}: no CUDA device is visible in the answer's process "
                f"(device files /dev/nvidia* not bound, or CUDA_VISIBLE_DEVICES empty){': ' + why if why else ''}"
            )
        return DeviceSession(check_state=_precision_changed)

    def call_latency(self, reply: dict[str, Any], wall_s: float, cpu_s: float) -> float:
        from kernel_gym.backends.gpu_timing import check_report

        return check_report(reply.get("device_timing"), reply, wall_s)

    def summarize_timing(self, reports: list[dict[str, Any]]) -> dict[str, Any]:
        from kernel_gym.backends.gpu_timing import summarize_reports

        return summarize_reports(reports)

    def _time(self, run: Callable[[], Any], settings: Any) -> tuple[float, dict[str, Any]]:
        from kernel_gym.backends.gpu_timing import time_events

        details = time_events(run, warmup=int(settings.warmup_runs), trials=max(1, int(settings.timing_trials)))
        return float(details["device_median_s"]), details

    def time_answer(self, run: Callable[[], Any], settings: Any) -> tuple[float, dict[str, Any]]:
        return self._time(run, settings)

    def time_reference(
        self, run: Callable[[], Any], model: torch.nn.Module, inputs: list[Any], settings: Any
    ) -> tuple[float, dict[str, Any]]:
        return self._time(run, settings)


class CudaBackend(GpuBackend):
    name = "cuda"
    language = "cuda"
    env_id = "KernelBench-CUDA-v0"
    # "torch_ext": KernelBench's own format, load_inline, built by the judge (backends/cuda_extension.py)
    compile_kinds = ("cuda", "torch_ext")
    compile_source_rules = {"cuda": "kernel", "torch_ext": "kernel"}
    compilers = ("nvcc",)
    counts_own_code = True
    answer_imports = {
        "kernel_gym.backends.cuda": frozenset({"load_cuda", "CUDA_ANSWER_FORMAT", "DEFAULT_CUDA_FLAGS"}),
        "torch.utils.cpp_extension": frozenset({"load_inline"}),
    }
    sandbox = SandboxPolicy(
        env_vars=GPU_SANDBOX.env_vars,
        devices=GPU_SANDBOX.devices,
        read_only_paths=tuple(dict.fromkeys((*GPU_SANDBOX.read_only_paths, *_cuda_home()))),
        limit_address_space=False,
        open_files=GPU_SANDBOX.open_files,
        unix_sockets=GPU_SANDBOX.unix_sockets,
    )

    def check_available(self) -> None:
        from kernel_gym.native.compile import compiler_path

        nvcc = compiler_path("nvcc")
        try:
            check_gpu(self.name)
        except BackendUnavailable as exc:
            if nvcc:
                raise BackendUnavailable(
                    f"{exc}. nvcc is installed ({nvcc}): compile-only checks work without a GPU "
                    "(kernel_gym.verify.compile_only.compile_only(answer) returns the compile errors)"
                ) from None
            raise BackendUnavailable(f"{exc}; nvcc is not installed either (install the CUDA toolkit)") from None
        if nvcc is None:
            raise BackendUnavailable(
                "backend 'cuda' builds kernels with nvcc, which is not on PATH, in $CUDA_HOME/bin or "
                "/usr/local/cuda/bin; install the CUDA toolkit (it must match the driver) or set CUDA_HOME"
            )
        if shutil.which("g++") is None:
            raise BackendUnavailable("nvcc needs a host compiler; install g++ (Debian: apt-get install g++)")

    def answer_format(self) -> str:
        return CUDA_ANSWER_FORMAT


CUDA_ANSWER_FORMAT = '''\
Answer: one Python file defining `class ModelNew(nn.Module)` with the same constructor and
forward signatures as the reference `Model` (KernelBench's format). The computation runs in
CUDA kernels; `extern "C"` host functions launch them and ModelNew builds the source with
kernel_gym's loader (one cached nvcc call, no torch headers). The forward only allocates
outputs (on the inputs' device) and calls the host functions; inputs and weights are CUDA
tensors. Launch on the default stream (`<<<grid, block, shared_bytes>>>`): no streams,
events, graphs or host callbacks. No torch compute, no try/except, no OS access.

For example, for a reference whose forward returns `2 * x + 1` (an illustration of the form; no
task asks for it):

```python
import torch
import torch.nn as nn
from kernel_gym.backends.cuda import load_cuda

CUDA = r"""
#include <cstdint>
__global__ void scale_shift_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaf(2.f, x[i], 1.f);
}
extern "C" void scale_shift(const float* x, float* y, int64_t n) {
    scale_shift_kernel<<<(unsigned)((n + 255) / 256), 256>>>(x, y, n);
}
"""

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cuda(CUDA, functions=["scale_shift"])

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.scale_shift(x, y, x.numel())
        return y
```'''
