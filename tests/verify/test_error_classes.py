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


def test_the_judge_running_out_of_memory_is_memory_limit_not_internal_error():
    """The judge's own allocation failing (here the reference, as a GPU shared by several
    verifications does) is named memory_limit with the fix, not reported as the judge's crash."""
    from kernel_gym.tasks.spec import TaskSpec
    from kernel_gym.verify import verify

    source = (
        "import torch\nimport torch.nn as nn\n"
        "class Model(nn.Module):\n"
        "    def forward(self, x):\n"
        "        raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 16.00 GiB.')\n"
        "def get_inputs():\n    return [torch.rand(8)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    answer = (
        "import torch\nimport torch.nn as nn\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    task = TaskSpec(id="level1/900_judge_oom", level=1, category="activation", dtype="float32", source=source)
    result = verify(task, answer, "cpu", use_cache=False, timeout_s=60)
    assert result.error_class == "memory_limit", (result.error_class, result.message)
    assert "the judge ran out of memory in stage 'reference'" in result.message, result.message
    assert "verify fewer at once" in result.message
