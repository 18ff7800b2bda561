"""LayerNorm over the trailing (64, 256) dims, fused per row: one pass for sum and sum of
squares (in double, so the one-pass variance is exact enough), one pass to normalise,
scale and shift."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cmath>
#include <cstdint>
extern "C" void layer_norm_kernel(const float* __restrict x, const float* __restrict w,
                                  const float* __restrict b, float* __restrict y,
                                  int64_t rows, int64_t cols, double eps) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        // float partial sums over blocks of 256, accumulated in double
        double s = 0.0, ss = 0.0;
        for (int64_t c0 = 0; c0 < cols; c0 += 256) {
            int64_t c1 = c0 + 256 < cols ? c0 + 256 : cols;
            float bs = 0.f, bss = 0.f;
            #pragma omp simd reduction(+:bs, bss)
            for (int64_t c = c0; c < c1; ++c) { bs += xr[c]; bss += xr[c] * xr[c]; }
            s += bs;
            ss += bss;
        }
        double mean = s / cols;
        double var = ss / cols - mean * mean;
        if (var < 0) var = 0;
        const float m = (float)mean;
        const float rstd = (float)(1.0 / std::sqrt(var + eps));
        #pragma omp simd
        for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - m) * rstd * w[c] + b[c];
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)  # holds weight, bias and eps (same init as the reference)
        self.lib = load_cpp(CPP)

    def forward(self, x):
        x = x.contiguous()
        cols = self.ln.weight.numel()
        y = torch.empty_like(x)
        self.lib.layer_norm_kernel(x, self.ln.weight, self.ln.bias, y, x.numel() // cols, cols, self.ln.eps)
        return y
