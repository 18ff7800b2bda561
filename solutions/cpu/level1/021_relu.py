"""ReLU: a branch-free max(x, 0) the compiler turns into vmaxps."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void relu_kernel(const float* __restrict x, float* __restrict y, int64_t n) {
    #pragma omp parallel for simd schedule(static)
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
