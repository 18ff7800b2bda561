"""Elementwise add: one fused vectorised pass over both inputs."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void add_kernel(const float* __restrict a, const float* __restrict b,
                           float* __restrict y, int64_t n) {
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        y = torch.empty_like(a)
        self.lib.add_kernel(a, b, y, a.numel())
        return y
