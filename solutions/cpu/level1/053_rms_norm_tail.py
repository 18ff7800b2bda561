"""RMSNorm without weight on a tail shape (200 x 999): fused mean-square and scale per row."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cmath>
#include <cstdint>
extern "C" void rms_norm_kernel(const float* __restrict x, float* __restrict y,
                                int64_t rows, int64_t cols, double eps) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        float ss = 0.f;
        #pragma omp simd reduction(+:ss)
        for (int64_t c = 0; c < cols; ++c) ss += xr[c] * xr[c];
        const float inv = (float)(1.0 / std::sqrt((double)ss / cols + eps));
        #pragma omp simd
        for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv;
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps
        self.lib = load_cpp(CPP)

    def forward(self, x):
        x = x.contiguous()
        cols = x.shape[-1]
        y = torch.empty_like(x)
        self.lib.rms_norm_kernel(x, y, x.numel() // cols, cols, self.eps)
        return y
