"""Row softmax, fused: pass 1 max, pass 2 exp + sum (stored into y), pass 3 scale.
One 64 KiB row stays in L2 across the three passes; torch makes extra passes."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cfloat>
#include <cmath>
#include <cstdint>
extern "C" void softmax_kernel(const float* __restrict x, float* __restrict y,
                               int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        float m = -FLT_MAX;
        #pragma omp simd reduction(max:m)
        for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
        float s = 0.f;
        #pragma omp simd reduction(+:s)
        for (int64_t c = 0; c < cols; ++c) {
            float e = expf(xr[c] - m);
            yr[c] = e;
            s += e;
        }
        const float inv = 1.f / s;
        #pragma omp simd
        for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP, extra_flags=["-ffast-math"])

    def forward(self, x):
        x = x.contiguous()
        cols = x.shape[-1]
        y = torch.empty_like(x)
        self.lib.softmax_kernel(x, y, x.numel() // cols, cols)
        return y
