"""KernelBench-format CUDA answers (``torch.utils.cpp_extension.load_inline``) for the cuda backend:
a plain ReLU, and the exploits the native format's tests cover, written in this form. Each
exploit: (task, answer, accepted error_class or hack_rule values)."""

from __future__ import annotations

RELU = "level1/021_relu"

RELU_EXTENSION = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.f ? v : 0.f;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "float32 CUDA x");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor relu_forward(torch::Tensor x);"

relu_ext = load_inline(
    name="relu_ext",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = relu_ext

    def forward(self, x):
        return self.ext.relu_forward(x.contiguous())
'''

_LAUNCH = "relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>"
_BODY = "    auto y = torch::empty_like(x);\n"
_FORWARD = "        return self.ext.relu_forward(x.contiguous())"


def _edit(*pairs: tuple[str, str]) -> str:
    answer = RELU_EXTENSION
    for old, new in pairs:
        assert old in answer, old
        answer = answer.replace(old, new)
    return answer


def extension_exploits() -> dict[str, tuple[str, str, set[str]]]:
    """name -> (task, answer, accepted error_class / hack_rule values)."""
    slow_loop = (
        "        float acc = 0.f;\n        for (int k = 0; k < 200000; ++k) acc = acc * 0.5f + v;\n"
        "        if (acc == 1e30f) v = -v;\n"
    )
    return {
        # a stream from torch's pool: named, refused before anything runs
        "pool_stream": (
            RELU,
            _edit((_LAUNCH, "relu_kernel<<<blocks, threads, 0, at::cuda::getStreamFromPool()>>>")),
            {"threads_or_streams"},
        ),
        # a stream of its own through the runtime API
        "stream_create": (
            RELU,
            _edit(
                (
                    _BODY,
                    _BODY
                    + "    static cudaStream_t side = nullptr;\n"
                    + "    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);\n",
                ),
                (_LAUNCH, "relu_kernel<<<blocks, threads, 0, side>>>"),
            ),
            {"threads_or_streams"},
        ),
        # the per-thread default stream, which the timed stream does not wait for, and work that outlasts the call
        # (the per-thread stream does not wait for the timed stream, so the output's NaN fill on a
        # guarded call can land after the kernel's writes: then a timed output is wrong before the
        # sync gaps' median is judged, and the refusal is nondeterministic; either way refused)
        "per_thread_stream": (
            RELU,
            _edit(
                (_LAUNCH, "relu_kernel<<<blocks, threads, 0, (cudaStream_t)2>>>"),
                ("        float v = x[i];\n", "        float v = x[i];\n" + slow_loop),
            ),
            {"threads_or_streams", "nondeterministic"},
        ),
        # a CUDA graph around the launch (Python side)
        "cuda_graph": (
            RELU,
            _edit((_FORWARD, "        g = torch.cuda.CUDAGraph()\n" + _FORWARD)),
            {"threads_or_streams"},
        ),
        # returns the previous call's output, computes this one for next time
        "deferred": (
            RELU,
            _edit(
                ("        self.ext = relu_ext\n", "        self.ext = relu_ext\n        self.prev = None\n"),
                (
                    _FORWARD,
                    "        y = self.ext.relu_forward(x.contiguous())\n"
                    "        out = y if self.prev is None else self.prev\n"
                    "        self.prev = y\n        return out",
                ),
            ),
            {"numerical_mismatch", "stale_or_constant_output", "nondeterministic"},
        ),
        # computes once per input address (in C++), then returns the cached output
        "pointer_cache": (
            RELU,
            _edit(
                (
                    "#include <ATen/cuda/CUDAContext.h>\n",
                    "#include <ATen/cuda/CUDAContext.h>\n#include <unordered_map>\n",
                ),
                (
                    _BODY,
                    "    static std::unordered_map<const void*, torch::Tensor> cache;\n"
                    "    auto hit = cache.find(x.data_ptr());\n    if (hit != cache.end()) return hit->second;\n"
                    + _BODY
                    + "    cache[x.data_ptr()] = y;\n",
                ),
            ),
            {"numerical_mismatch", "stale_or_constant_output", "nondeterministic"},
        ),
        # TF32 switched on from C++
        "tf32_from_cpp": (
            RELU,
            _edit((_BODY, "    at::globalContext().setAllowTF32CuBLAS(true);\n" + _BODY)),
            {"monkey_patch"},
        ),
        # writes the result into its input and returns the input
        "in_place": (
            RELU,
            _edit((_BODY, "    auto y = x;\n")),
            {"input_mutation"},
        ),
        # torch's own operator called from C++: the dispatcher still sees it
        "aten_from_cpp": (
            RELU,
            _edit((_BODY, "    if (x.numel() > 0) return at::relu(x);\n" + _BODY)),
            {"torch_compute"},
        ),
        # cuBLAS through torch's handle instead of a kernel of its own
        "cublas_handle": (
            RELU,
            _edit((_BODY, "    auto handle = at::cuda::getCurrentCUDABlasHandle();\n    (void)handle;\n" + _BODY)),
            {"vendor_library"},
        ),
        # an include path of the answer's choosing
        "include_path_flag": (
            RELU,
            _edit(('extra_cflags=["-O3"]', 'extra_cflags=["-O3", "-I/tmp"]')),
            {"os_access"},
        ),
        # a -D of a guard torch's headers test
        "guard_define": (
            RELU,
            _edit(
                (
                    'extra_cuda_cflags=["-O3", "--use_fast_math"]',
                    'extra_cuda_cflags=["-O3", "-U__CUDA_NO_HALF_OPERATORS__"]',
                )
            ),
            {"os_access"},
        ),
        # torch computes only once the answer is timed (past the correctness trials): a torch call in
        # forward is watched on every call, so the timed calls see it
        "torch_while_timed": (
            RELU,
            _edit(
                ("        self.ext = relu_ext\n", "        self.ext = relu_ext\n        self.calls = 0\n"),
                (
                    _FORWARD,
                    "        self.calls += 1\n        if self.calls > 8:\n            return torch.relu(x)\n"
                    + _FORWARD,
                ),
            ),
            {"torch_compute"},
        ),
        # host assembly (x86 can make system calls); PTX is allowed
        "host_assembly": (
            RELU,
            _edit((_BODY, '    asm volatile("syscall" ::: "memory");\n' + _BODY)),
            {"os_access"},
        ),
        # a library of the answer's choosing
        "ldflags": (
            RELU,
            _edit(("    verbose=False,\n", '    verbose=False,\n    extra_ldflags=["-lcublas"],\n')),
            {"os_access"},
        ),
    }


# exploits caught only when they run (on a GPU); the others are refused by the static rules too
RUNTIME_ONLY = {"per_thread_stream", "deferred", "pointer_cache", "in_place", "aten_from_cpp", "torch_while_timed"}

# accepted as KernelBench's answers write them: a torch fallback branch that never runs on the GPU
# (the judge watches it on every call) and PTX inline assembly (a streaming store)
RELU_WITH_FALLBACK = _edit(
    (_FORWARD, "        if not x.is_cuda:\n            return torch.relu(x)\n" + _FORWARD),
    (
        "        y[i] = v > 0.f ? v : 0.f;\n",
        "        float r = v > 0.f ? v : 0.f;\n"
        '        asm volatile("st.global.cs.f32 [%0], %1;" :: "l"(y + i), "f"(r));\n',
    ),
)

# KernelBench's partly-custom form: the answer's kernel and a torch op beside it (the output is still
# ReLU's: max(relu(x), 0)); verifies under torch_ops="beside_kernel", refused under "refuse"
RELU_BESIDE_TORCH = _edit(
    (
        _FORWARD,
        "        y = self.ext.relu_forward(x.contiguous())\n        return torch.maximum(y, torch.zeros_like(y))",
    ),
)

# torch only, the extension built but never called: refused under either policy
TORCH_ONLY_WITH_EXTENSION = _edit((_FORWARD, "        return torch.relu(x)"))

# exploits that beside_kernel accepts by design: at::relu called from the answer's C++ is a torch op
# beside the answer's own code (KernelBench's rule), which runs no faster than torch
ACCEPTED_BESIDE_KERNEL = {"aten_from_cpp"}
