"""Sum over dim 1 of [B, R, C] with keepdim: each thread owns one (b, c) column and walks R,
so consecutive threads read consecutive addresses (coalesced)."""
import torch
import torch.nn as nn
from kernel_gym.backends.cuda import load_cuda

CUDA = r"""
#include <cstdint>
__global__ void sum_mid_kernel(const float* __restrict__ x, float* __restrict__ y,
                               int64_t outer, int64_t reduce, int64_t inner) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    int64_t o = idx / inner, c = idx % inner;
    const float* p = x + o * reduce * inner + c;
    float acc = 0.f;
    for (int64_t r = 0; r < reduce; ++r) acc += p[r * inner];
    y[idx] = acc;
}
extern "C" void sum_mid(const float* x, float* y, int64_t outer, int64_t reduce, int64_t inner) {
    int64_t total = outer * inner;
    sum_mid_kernel<<<(unsigned)((total + 255) / 256), 256>>>(x, y, outer, reduce, inner);
}
"""


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.lib = load_cuda(CUDA, functions=["sum_mid"])

    def forward(self, x):
        x = x.contiguous()
        d = self.dim % x.dim()
        shape = list(x.shape)
        outer = 1
        for s in shape[:d]:
            outer *= s
        inner = 1
        for s in shape[d + 1 :]:
            inner *= s
        shape[d] = 1
        y = torch.empty(shape, dtype=x.dtype, device=x.device)
        self.lib.sum_mid(x, y, outer, x.shape[d], inner)
        return y
