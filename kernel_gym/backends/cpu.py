"""The ``cpu`` backend: C++ kernels (OpenMP allowed) compiled with g++, timed for real.

An answer builds its kernel with :func:`load_cpp` and calls the ``extern "C"`` functions
with torch tensors. ctypes on a cached shared library is the binding: a compile costs only
g++ (about 0.3-1 s), where a torch C++ extension build costs tens of seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kernel_gym.backends.base import Backend

if TYPE_CHECKING:  # imported on use: registering the backend must not import torch
    import torch

    from kernel_gym.native import NativeLibrary

__all__ = ["CpuBackend", "load_cpp", "DEFAULT_CPP_FLAGS"]

DEFAULT_CPP_FLAGS = ("-O3", "-std=c++17", "-march=native", "-fno-math-errno")


def load_cpp(source: str, *, openmp: bool = True, extra_flags: Sequence[str] = ()) -> NativeLibrary:
    """Compile a C++ source (cached by content) and bind its ``extern "C"`` functions.

    Args:
        source: C++ text defining one or more ``extern "C"`` functions; pointer parameters
            take contiguous CPU tensors (dtype checked against the pointee type), scalar
            parameters take Python numbers.
        openmp: compile and link with -fopenmp.
        extra_flags: more g++ flags (e.g. ``["-ffast-math"]``).

    Returns:
        A library object whose attributes are the functions, e.g. ``lib.relu(x, y, n)``.

    Raises:
        kernel_gym.native.CompileError: g++ rejected the source (``.log`` has the output).
    """
    from kernel_gym.native import compile_shared, parse_extern_c

    flags = [*DEFAULT_CPP_FLAGS, *(["-fopenmp"] if openmp else []), *extra_flags]
    functions = parse_extern_c(source)
    if not functions:
        raise ValueError(
            'the C++ source defines no extern "C" function to call; declare the entry '
            'point as: extern "C" void my_kernel(const float* x, float* y, int64_t n) {...}'
        )
    path = compile_shared(source, flags=flags, cache_subdir="cpp")
    from kernel_gym.native import NativeLibrary

    return NativeLibrary(path, functions)


class CpuBackend(Backend):
    name = "cpu"
    language = "cpp"
    env_id = "KernelBench-CPU-v0"
    host_clock = True
    # the module also holds the raw compiler: answers use the loader only
    answer_imports = {"kernel_gym.backends.cpu": frozenset({"load_cpp", "CPU_ANSWER_FORMAT", "DEFAULT_CPP_FLAGS"})}

    def setup_worker(self, options: dict[str, Any]) -> None:
        import torch

        torch.set_num_threads(int(options.get("threads", 1)))

    def time_answer(self, run: Callable[[], Any], settings: Any) -> tuple[float, dict[str, Any]]:
        from kernel_gym.backends.timing import median_wallclock

        return median_wallclock(run, settings.warmup_runs, settings.timing_trials, settings.flush_cache_mb)

    def time_reference(
        self, run: Callable[[], Any], model: torch.nn.Module, inputs: list[Any], settings: Any
    ) -> tuple[float, dict[str, Any]]:
        from kernel_gym.backends.timing import median_wallclock

        return median_wallclock(run, settings.warmup_runs, settings.timing_trials, settings.flush_cache_mb)

    def answer_format(self) -> str:
        return CPU_ANSWER_FORMAT


CPU_ANSWER_FORMAT = '''\
C++ compiled with the system compiler (OpenMP available). Latency is the measured wall-clock
time of one forward.

Answer: one Python file defining `class ModelNew(nn.Module)` with the same constructor and
forward signatures as the reference `Model`. The computation runs in C++ (OpenMP allowed)
that ModelNew compiles with kernel_gym's loader; the forward only allocates outputs and
calls the kernel. No torch compute, no try/except, no threads, no file or OS access.

For example, for a reference whose forward returns `2 * x + 1` (an illustration of the form; no
task asks for it):

```python
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void scale_shift_kernel(const float* x, float* y, int64_t n) {
    #pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) y[i] = 2.f * x[i] + 1.f;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.scale_shift_kernel(x, y, x.numel())
        return y
```
'''
