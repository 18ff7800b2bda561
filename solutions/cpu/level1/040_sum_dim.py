"""Sum over one dim (keepdim): x viewed as [outer, red, inner]; rows of `inner` are added
into the output with a contiguous, vectorised inner loop (no strided gathers)."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void sum_dim_kernel(const float* __restrict x, float* __restrict y,
                               int64_t outer, int64_t red, int64_t inner) {
    #pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < outer; ++o) {
        const float* src = x + o * red * inner;
        float* dst = y + o * inner;
        if (inner == 1) {  // reducing the last dim: a dot-product style reduction
            float acc = 0.f;
            #pragma omp simd reduction(+:acc)
            for (int64_t r = 0; r < red; ++r) acc += src[r];
            dst[0] = acc;
            continue;
        }
        #pragma omp simd
        for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
        for (int64_t r = 1; r < red; ++r) {
            const float* row = src + r * inner;
            #pragma omp simd
            for (int64_t i = 0; i < inner; ++i) dst[i] += row[i];
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
        shape = list(x.shape)
        outer = 1
        for s in shape[:dim]:
            outer *= s
        inner = 1
        for s in shape[dim + 1:]:
            inner *= s
        red = shape[dim]
        shape[dim] = 1
        y = torch.empty(shape, dtype=x.dtype)
        self.lib.sum_dim_kernel(x, y, outer, red, inner)
        return y
