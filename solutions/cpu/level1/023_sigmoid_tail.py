"""Sigmoid on a tail shape (128 x 1003): one flat loop, so the odd row length costs nothing."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cmath>
#include <cstdint>
extern "C" void sigmoid_kernel(const float* __restrict x, float* __restrict y, int64_t n) {
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) y[i] = 1.f / (1.f + expf(-x[i]));
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP, extra_flags=["-ffast-math"])

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.sigmoid_kernel(x, y, x.numel())
        return y
