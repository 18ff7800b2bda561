"""Sum over the last dim of a 128 x 4093 tensor: 4 independent SIMD accumulators per row
hide the add latency; the odd tail of each row is handled by the simd epilogue."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
extern "C" void row_sum_kernel(const float* __restrict x, float* __restrict y,
                               int64_t rows, int64_t cols) {
    #pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = x + r * cols;
        float acc = 0.f;
        #pragma omp simd reduction(+:acc) simdlen(16)
        for (int64_t c = 0; c < cols; ++c) acc += row[c];
        y[r] = acc;
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)

    def forward(self, x):
        x = x.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        y = torch.empty(x.shape[:-1], dtype=x.dtype)
        self.lib.row_sum_kernel(x, y, rows, cols)
        return y
