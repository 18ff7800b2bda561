"""How the runner names an answer's failure: running out of memory, on the host or on a GPU,
is ``memory_limit`` (never cached: on a shared GPU it may be other tenants' doing), not a
runtime error of the answer."""

from __future__ import annotations

import torch

from kernel_gym.verify.runner import _classify


def test_out_of_memory_on_a_gpu_or_the_host_is_memory_limit():
    gpu = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB.")
    assert _classify(gpu, "runtime_error").error_class == "memory_limit"
    assert _classify(MemoryError(), "runtime_error").error_class == "memory_limit"
    assert _classify(RuntimeError("std::bad_alloc"), "runtime_error").error_class == "memory_limit"
    assert _classify(ValueError("shapes do not match"), "runtime_error").error_class == "runtime_error"
