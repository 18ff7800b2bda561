"""Cumulative sum along a dim: x viewed as [outer, len, inner]. With inner == 1 (the last
dim) each row is a serial scan, done in float like torch; with inner > 1 whole rows of
`inner` are added at once (vectorised)."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void cumsum_kernel(const float* __restrict x, float* __restrict y,
                              int64_t outer, int64_t len, int64_t inner) {
    #pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
        const float* src = x + o * len * inner;
        float* dst = y + o * len * inner;
        if (inner == 1) {
            float acc = 0.f;
            for (int64_t i = 0; i < len; ++i) {
                acc += src[i];
                dst[i] = acc;
            }
            continue;
        }
        #pragma omp simd
        for (int64_t j = 0; j < inner; ++j) dst[j] = src[j];
        for (int64_t i = 1; i < len; ++i) {
            const float* row = src + i * inner;
            const float* prev = dst + (i - 1) * inner;
            float* out = dst + i * inner;
            #pragma omp simd
            for (int64_t j = 0; j < inner; ++j) out[j] = prev[j] + row[j];
        }
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.lib = load_cpp(CPP)

    def forward(self, x):
        x = x.contiguous()
        dim = self.dim % x.dim()
        outer = 1
        for s in x.shape[:dim]:
            outer *= s
        inner = 1
        for s in x.shape[dim + 1:]:
            inner *= s
        y = torch.empty_like(x)
        self.lib.cumsum_kernel(x, y, outer, x.shape[dim], inner)
        return y
