"""Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))), erff vectorised through libmvec."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cmath>
#include <cstdint>
extern "C" void gelu_kernel(const float* __restrict x, float* __restrict y, int64_t n) {
    const float inv_sqrt2 = 0.70710678118654752f;
    #pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        y[i] = 0.5f * v * (1.f + erff(v * inv_sqrt2));
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # -ffast-math lets GCC call the SIMD erff of glibc's libmvec
        self.lib = load_cpp(CPP, extra_flags=["-ffast-math"])

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.gelu_kernel(x, y, x.numel())
        return y
