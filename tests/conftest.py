import os
import pathlib

import pytest

# Tests share one compile/verify cache under the repo unless the caller chose one.
os.environ.setdefault("KERNEL_GYM_CACHE", str(pathlib.Path(__file__).resolve().parent.parent / ".kg_cache"))

RELU_ANSWER = '''
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void relu_kernel(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.relu_kernel(x, y, x.numel())
        return y
'''


@pytest.fixture
def relu_answer() -> str:
    return RELU_ANSWER
