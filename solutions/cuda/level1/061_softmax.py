"""Row softmax: one block per row, online max/sum (one read pass for the statistics), block
reductions in shared memory, then one pass writing exp(x - max) / sum."""
import torch
import torch.nn as nn
from kernel_gym.backends.cuda import load_cuda

CUDA = r"""
#include <cstdint>
#include <cfloat>
constexpr int THREADS = 512;
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float s_max[THREADS];
    __shared__ float s_sum[THREADS];
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    float m = -FLT_MAX, s = 0.f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) {
        float v = xr[c];
        if (v > m) { s *= __expf(m - v); m = v; }
        s += __expf(v - m);
    }
    s_max[threadIdx.x] = m;
    s_sum[threadIdx.x] = s;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            float m1 = s_max[threadIdx.x], m2 = s_max[threadIdx.x + stride];
            float mm = fmaxf(m1, m2);
            s_sum[threadIdx.x] = s_sum[threadIdx.x] * __expf(m1 - mm) + s_sum[threadIdx.x + stride] * __expf(m2 - mm);
            s_max[threadIdx.x] = mm;
        }
        __syncthreads();
    }
    float row_max = s_max[0];
    float inv = 1.f / s_sum[0];
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) yr[c] = __expf(xr[c] - row_max) * inv;
}
extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
    softmax_rows<<<(unsigned)rows, THREADS>>>(x, y, cols);
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cuda(CUDA, functions=["softmax"])

    def forward(self, x):
        x = x.contiguous()
        cols = x.shape[-1]
        y = torch.empty_like(x)
        self.lib.softmax(x, y, x.numel() // cols, cols)
        return y
